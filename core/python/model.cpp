#include "core/python/model.h"

#include <algorithm>

namespace kl::python {

StatementKind statementKind(std::string_view t) {
  static const std::pair<std::string_view, StatementKind> kKinds[] = {
      {"expression_statement", StatementKind::Expression},
      {"return_statement", StatementKind::Return},
      {"pass_statement", StatementKind::Pass},
      {"break_statement", StatementKind::Break},
      {"continue_statement", StatementKind::Continue},
      {"raise_statement", StatementKind::Raise},
      {"assert_statement", StatementKind::Assert},
      {"delete_statement", StatementKind::Delete},
      {"global_statement", StatementKind::Global},
      {"nonlocal_statement", StatementKind::Nonlocal},
      {"import_statement", StatementKind::Import},
      {"import_from_statement", StatementKind::ImportFrom},
      {"future_import_statement", StatementKind::FutureImport},
      {"print_statement", StatementKind::Print},
      {"exec_statement", StatementKind::Exec},
      {"type_alias_statement", StatementKind::TypeAlias},
      {"if_statement", StatementKind::If},
      {"for_statement", StatementKind::For},
      {"while_statement", StatementKind::While},
      {"try_statement", StatementKind::Try},
      {"with_statement", StatementKind::With},
      {"match_statement", StatementKind::Match},
      {"function_definition", StatementKind::FunctionDef},
      {"class_definition", StatementKind::ClassDef},
  };
  for (const auto& [name, kind] : kKinds)
    if (name == t) return kind;
  return StatementKind::Other;
}

int32_t Module::statementAt(uint32_t offset) const {
  // Statements are in pre-order and nest or are disjoint: the last one starting at or before
  // `offset` is the innermost candidate; its ancestors are the others.
  auto it = std::upper_bound(statements.begin(), statements.end(), offset,
                             [](uint32_t off, const Statement& s) { return off < s.bytes.start; });
  if (it == statements.begin()) return kNone;
  int32_t s = static_cast<int32_t>(it - statements.begin()) - 1;
  while (s != kNone && !statements[s].bytes.contains(offset)) s = statements[s].parent;
  return s;
}

int32_t Module::statementAtLine(uint32_t line) const {
  auto it = std::upper_bound(statements.begin(), statements.end(), line,
                             [](uint32_t l, const Statement& s) { return l < s.lines.first; });
  if (it == statements.begin()) return kNone;
  int32_t s = static_cast<int32_t>(it - statements.begin()) - 1;
  while (s != kNone && !statements[s].lines.contains(line)) s = statements[s].parent;
  if (s == kNone) return kNone;
  // Several statements on the line (`a; b`): the first of them.
  const std::vector<int32_t>& sib = blocks[statements[s].parentBlock].statements;
  auto pos = std::lower_bound(sib.begin(), sib.end(), s);
  while (pos != sib.begin() && statements[*(pos - 1)].lines.contains(line)) --pos;
  return pos != sib.end() ? *pos : s;
}

int32_t Module::functionAt(uint32_t offset) const {
  int32_t s = statementAt(offset);
  if (s == kNone) return kNone;
  const Statement& st = statements[s];
  if (st.definesFunction != kNone && functions[st.definesFunction].bytes.contains(offset)) return st.definesFunction;
  return st.function;
}

int32_t Module::findFunction(std::string_view qualName) const {
  for (size_t i = 0; i < functions.size(); ++i)
    if (functions[i].qualName == qualName) return static_cast<int32_t>(i);
  return kNone;
}

int32_t Module::findClass(std::string_view qualName) const {
  for (size_t i = 0; i < classes.size(); ++i)
    if (classes[i].qualName == qualName) return static_cast<int32_t>(i);
  return kNone;
}

std::span<const ByteRange> Module::multilineStringsIn(ByteRange r) const {
  auto first = std::upper_bound(multilineStrings.begin(), multilineStrings.end(), r.start,
                                [](uint32_t s, const ByteRange& m) { return s < m.end; });
  auto last = first;
  while (last != multilineStrings.end() && last->start < r.end) ++last;
  return {first, last};
}

bool Module::insideMultilineString(uint32_t offset) const {
  auto it = std::upper_bound(multilineStrings.begin(), multilineStrings.end(), offset,
                             [](uint32_t off, const ByteRange& m) { return off < m.end; });
  return it != multilineStrings.end() && it->start < offset && offset < it->end;
}

std::optional<std::string> Module::dottedName(int32_t e) const {
  std::string out;
  while (e != kNone) {
    const Expression& x = expressions[e];
    if (x.kind == Expression::Kind::Name) return x.name + out;
    if (x.kind != Expression::Kind::Attribute) return std::nullopt;
    out = "." + x.name + out;
    e = x.object;
  }
  return std::nullopt;
}

int32_t Module::argument(int32_t call, size_t position, std::string_view keyword) const {
  if (call == kNone || expressions[call].kind != Expression::Kind::Call) return kNone;
  size_t k = 0;
  bool splatBefore = false;
  for (const Expression::Argument& a : expressions[call].arguments) {
    if (a.splat == Expression::Argument::Splat::List) splatBefore = true;
    if (!a.positional()) continue;
    if (k++ == position) {
      if (!splatBefore) return a.value;
      break;
    }
  }
  if (!keyword.empty())
    for (const Expression::Argument& a : expressions[call].arguments)
      if (a.keyword == keyword) return a.value;
  return kNone;
}

std::span<const WithItem> Module::withItemsOf(int32_t statement) const {
  auto first = std::lower_bound(withItems.begin(), withItems.end(), statement,
                                [](const WithItem& w, int32_t s) { return w.statement < s; });
  auto last = first;
  while (last != withItems.end() && last->statement == statement) ++last;
  return {first, last};
}

std::string Module::resolve(std::string_view dotted) const {
  size_t dot = dotted.find('.');
  std::string_view head = dotted.substr(0, dot);
  // The last binding of the name wins (imports are not scoped here).
  for (auto it = imports.rbegin(); it != imports.rend(); ++it)
    if (it->local == head)
      return it->target + (dot == std::string_view::npos ? std::string() : std::string(dotted.substr(dot)));
  return std::string(dotted);
}

}  // namespace kl::python
