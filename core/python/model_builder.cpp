// buildModule: one walk over the statement structure (definitions, blocks, clauses, and the
// assignment / for / with / parameter / base-class facts with their expressions), one pre-order
// walk for calls and strings, then grammars/queries/imports.scm on the import statements.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <optional>

#include "core/python/query.h"
#include "core/python/source_file.h"
#include "core/support/text_delta.h"

namespace kl::python {

namespace {

enum class Cat : uint8_t {
  Other,
  Simple,
  Compound,
  Decorated,
  FunctionDef,
  ClassDef,
  Block,
  Clause,
  Error,
  Comment,
  Call,
  String
};

/// Category of every grammar symbol, by node type name (aliases included), built once.
Cat categoryOf(TSNode n) {
  static const std::vector<Cat> table = [] {
    std::vector<Cat> t;
    auto lang = pythonLanguage();
    if (!lang) return t;
    static const std::map<std::string, Cat, std::less<>> byName = {{"expression_statement", Cat::Simple},
                                                                   {"return_statement", Cat::Simple},
                                                                   {"pass_statement", Cat::Simple},
                                                                   {"import_statement", Cat::Simple},
                                                                   {"import_from_statement", Cat::Simple},
                                                                   {"future_import_statement", Cat::Simple},
                                                                   {"assert_statement", Cat::Simple},
                                                                   {"delete_statement", Cat::Simple},
                                                                   {"raise_statement", Cat::Simple},
                                                                   {"break_statement", Cat::Simple},
                                                                   {"continue_statement", Cat::Simple},
                                                                   {"global_statement", Cat::Simple},
                                                                   {"nonlocal_statement", Cat::Simple},
                                                                   {"exec_statement", Cat::Simple},
                                                                   {"print_statement", Cat::Simple},
                                                                   {"type_alias_statement", Cat::Simple},
                                                                   {"if_statement", Cat::Compound},
                                                                   {"for_statement", Cat::Compound},
                                                                   {"while_statement", Cat::Compound},
                                                                   {"try_statement", Cat::Compound},
                                                                   {"with_statement", Cat::Compound},
                                                                   {"match_statement", Cat::Compound},
                                                                   {"decorated_definition", Cat::Decorated},
                                                                   {"function_definition", Cat::FunctionDef},
                                                                   {"class_definition", Cat::ClassDef},
                                                                   {"block", Cat::Block},
                                                                   {"elif_clause", Cat::Clause},
                                                                   {"else_clause", Cat::Clause},
                                                                   {"except_clause", Cat::Clause},
                                                                   {"except_group_clause", Cat::Clause},
                                                                   {"finally_clause", Cat::Clause},
                                                                   {"case_clause", Cat::Clause},
                                                                   {"comment", Cat::Comment},
                                                                   {"call", Cat::Call},
                                                                   {"string", Cat::String}};
    uint32_t count = ts_language_symbol_count(*lang);
    t.assign(count, Cat::Other);
    for (uint32_t s = 0; s < count; ++s) {
      if (ts_language_symbol_type(*lang, static_cast<TSSymbol>(s)) != TSSymbolTypeRegular) continue;
      auto it = byName.find(std::string_view(ts_language_symbol_name(*lang, static_cast<TSSymbol>(s))));
      if (it != byName.end()) t[s] = it->second;
    }
    return t;
  }();
  TSSymbol s = ts_node_symbol(n);
  if (s == static_cast<TSSymbol>(-1)) return Cat::Error;  // ts_builtin_sym_error
  return s < table.size() ? table[s] : Cat::Other;
}

bool isStatementCat(Cat c) {
  return c == Cat::Simple || c == Cat::Compound || c == Cat::Decorated || c == Cat::FunctionDef || c == Cat::ClassDef;
}

bool typeIs(TSNode n, const char* type) { return std::strcmp(ts_node_type(n), type) == 0; }

ByteRange rangeOf(TSNode n) { return {ts_node_start_byte(n), ts_node_end_byte(n)}; }

/// Calls f(child) for each child of `n` in order (named only when `namedOnly`). A cursor makes
/// this O(children); ts_node_child(n, i) is O(i) in tree-sitter 0.20, quadratic in a loop.
template <class F>
void forEachChild(TSNode n, F&& f, bool namedOnly = false) {
  if (ts_node_child_count(n) == 0) return;
  TreeCursor c(n);
  if (!ts_tree_cursor_goto_first_child(c.get())) return;
  do {
    TSNode child = c.node();
    if (!namedOnly || ts_node_is_named(child)) f(child);
  } while (ts_tree_cursor_goto_next_sibling(c.get()));
}

/// Calls f(clause, block) for each body of compound statement `node` in source order: its own
/// blocks, those of its elif/else/except/finally clauses, and each `case` of a match.
template <class F>
void forEachClauseBlock(TSNode node, F&& f) {
  bool isMatch = typeIs(node, "match_statement");
  forEachChild(node, [&](TSNode c) {
    Cat cat = categoryOf(c);
    if (cat == Cat::Block) {
      if (isMatch) {
        forEachChild(
            c,
            [&](TSNode cc) {
              if (!typeIs(cc, "case_clause")) return;
              TSNode cb = ts_node_child_by_field_name(cc, "consequence", 11);
              if (!ts_node_is_null(cb)) f(cc, cb);
            },
            true);
      } else {
        f(node, c);
      }
    } else if (cat == Cat::Clause) {
      forEachChild(c, [&](TSNode cb) {
        if (categoryOf(cb) == Cat::Block) f(c, cb);
      });
    }
  });
}

/// The definition a statement makes: under a decorated_definition its `definition` child (and
/// `cat` becomes that child's category), else the statement itself.
TSNode definitionOf(TSNode node, Cat& cat) {
  if (cat != Cat::Decorated) return node;
  TSNode d = ts_node_child_by_field_name(node, "definition", 10);
  if (ts_node_is_null(d)) return node;
  cat = categoryOf(d);
  return d;
}

/// End of the header of `clause` whose block starts at `blockStart`: after its last ':' token
/// before the block (the block's start when there is none).
uint32_t headerEnd(TSNode clause, uint32_t blockStart) {
  uint32_t he = blockStart;
  forEachChild(clause, [&](TSNode c) {
    if (ts_node_start_byte(c) < blockStart && !ts_node_is_named(c) && typeIs(c, ":")) he = ts_node_end_byte(c);
  });
  return std::min(he, blockStart);
}

TSNode field(TSNode n, const char* name) {
  return ts_node_child_by_field_name(n, name, static_cast<uint32_t>(std::strlen(name)));
}

TSNode firstNamedChild(TSNode n) {
  TSNode out{};
  bool found = false;
  forEachChild(
      n,
      [&](TSNode c) {
        if (!found) {
          out = c;
          found = true;
        }
      },
      true);
  return out;
}

std::string_view leadingWhitespace(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\f')) ++i;
  return line.substr(0, i);
}

/// Context of the statements of one block.
struct Ctx {
  int32_t fn = kNone;     // innermost enclosing function
  int32_t klass = kNone;  // class whose body holds the block (not through a def)
  std::string prefix;     // qualified-name prefix for definitions here ("C.", "f.<locals>.")
};

class Builder {
 public:
  Builder(std::string_view text, const LineIndex& lines) : text_(text), lines_(lines) {}

  /// `recover`: build from recovered segments when there are any (else an empty Module with
  /// `recovered` false is still returned by build; see buildModule).
  Module build(TSNode root, bool recover, bool* recovered = nullptr) {
    m_.bom = text_.size() >= 3 && text_.substr(0, 3) == "\xEF\xBB\xBF";
    Block mod;
    mod.clause = "module";
    m_.blocks.push_back(std::move(mod));
    m_.errors = errorRanges(root);
    // Broken code: where an ERROR swallowed top-level definitions, the model is built from
    // separately parsed segments (the file's tree itself is unchanged).
    std::vector<Tree> segments;
    if (recover) segments = recoverSegments();
    if (recovered) *recovered = !segments.empty();
    if (recover && segments.empty()) return std::move(m_);
    std::vector<TSNode> roots;
    if (segments.empty()) roots.push_back(root);
    for (const Tree& t : segments) roots.push_back(t.root());
    Ctx top;
    for (TSNode r : roots) fillBlock(0, r, top);
    finishBlock(0, m_.bom ? 3 : 0);
    inferIndentation();
    detectLineEnding();
    for (TSNode r : roots) walkExpressions(r);
    for (Statement& st : m_.statements) st.containsMultilineString = !m_.multilineStringsIn(st.bytes).empty();
    confirmDocstrings();
    collectImports();
    return std::move(m_);
  }

 private:
  uint32_t line(uint32_t off) const { return lines_.toLineCol(off).line; }
  LineSpan span(ByteRange r) const { return {line(r.start), line(r.end > r.start ? r.end - 1 : r.start)}; }
  std::string_view textOf(ByteRange r) const { return text_.substr(r.start, r.end - r.start); }
  std::string_view lineIndent(uint32_t ln) const {
    uint32_t s = lines_.lineStart(ln);
    return leadingWhitespace(text_.substr(s, lines_.lineEnd(ln, text_) - s));
  }

  /// Adds the statements among `container`'s children to block `b`. ERROR children are
  /// flattened: statements recovered inside them join the block.
  void fillBlock(int32_t b, TSNode container, const Ctx& ctx) {
    int32_t prevStmt = kNone;
    bool semicolonSincePrev = false;
    forEachChild(container, [&](TSNode c) {
      Cat cat = categoryOf(c);
      if (isStatementCat(cat)) {
        int32_t s = addStatement(c, b, ctx);
        if (prevStmt != kNone && semicolonSincePrev) {
          m_.statements[prevStmt].joinedBySemicolon = true;
          m_.statements[s].joinedBySemicolon = true;
        }
        prevStmt = s;
        semicolonSincePrev = false;
      } else if (cat == Cat::Error) {
        fillBlock(b, c, ctx);
        prevStmt = kNone;
      } else if (!ts_node_is_named(c) && typeIs(c, ";")) {
        semicolonSincePrev = true;
      }
    });
  }

  int32_t addStatement(TSNode node, int32_t b, const Ctx& ctx) {
    int32_t idx = static_cast<int32_t>(m_.statements.size());
    {
      Statement s;
      s.nodeType = ts_node_type(node);
      s.kind = statementKind(s.nodeType);
      s.bytes = rangeOf(node);
      s.parent = m_.blocks[b].owner;
      s.parentBlock = b;
      s.function = ctx.fn;
      s.klass = ctx.klass;
      s.hasError = ts_node_has_error(node);
      s.futureImport = s.kind == StatementKind::FutureImport;
      m_.statements.push_back(std::move(s));
    }
    m_.blocks[b].statements.push_back(idx);
    Cat cat = categoryOf(node);
    TSNode def = definitionOf(node, cat);
    if (def.id != node.id) {
      m_.statements[idx].nodeType = ts_node_type(def);
      m_.statements[idx].kind = statementKind(m_.statements[idx].nodeType);
      m_.statements[idx].decorated = true;
    }
    Statement& st = m_.statements[idx];
    st.compound = cat != Cat::Simple;
    // Nodes the targeted query looks at (imports.scm).
    if (st.isImport()) importNodes_.push_back(node);
    if (st.kind == StatementKind::Expression) {
      TSNode e = firstNamedChild(node);
      if (!ts_node_is_null(e) && typeIs(e, "assignment")) addAssignment(idx, e);
    } else if (st.kind == StatementKind::For) {
      addForLoop(idx, node);
    } else if (st.kind == StatementKind::With) {
      addWithItems(idx, node);
    }
    if (cat == Cat::FunctionDef) {
      addFunction(idx, node, def, ctx);
    } else if (cat == Cat::ClassDef) {
      addClass(idx, node, def, ctx);
    } else if (cat == Cat::Compound) {
      addClauses(idx, node, ctx);
    } else if (cat == Cat::Decorated) {
      // A decorated_definition without a definition (broken code): decorators only.
    }
    // Exact extent: through the last statement of the last body (tree-sitter extends a block
    // over trailing comments, even dedented ones).
    Statement& s = m_.statements[idx];
    if (!s.blocks.empty()) {
      const Block& last = m_.blocks[s.blocks.back()];
      s.bytes.end = last.bytes.end;
    }
    s.lines = span(s.bytes);
    return idx;
  }

  std::vector<Decorator> decoratorsOf(TSNode outer) {
    std::vector<Decorator> out;
    if (!typeIs(outer, "decorated_definition")) return out;
    forEachChild(
        outer,
        [&](TSNode c) {
          if (!typeIs(c, "decorator")) return;
          Decorator d;
          d.bytes = rangeOf(c);
          d.line = line(d.bytes.start);
          TSNode e = firstNamedChild(c);
          d.text = ts_node_is_null(e) ? std::string() : std::string(textOf(rangeOf(e)));
          d.expression = addExpression(e);
          out.push_back(std::move(d));
        },
        true);
    return out;
  }

  /// The Expression of node `n` (recorded once per node; kNone for a null node). Names,
  /// attributes, calls, subscripts and strings are structured, with their parts recorded.
  int32_t addExpression(TSNode n) {
    if (ts_node_is_null(n)) return kNone;
    auto key = std::make_pair(n.id, ts_node_start_byte(n));
    if (auto it = expressionOf_.find(key); it != expressionOf_.end()) return it->second;
    Expression e;
    e.nodeType = ts_node_type(n);
    e.bytes = rangeOf(n);
    std::string_view t = e.nodeType;
    if (t == "identifier") {
      e.kind = Expression::Kind::Name;
      e.name = std::string(textOf(e.bytes));
    } else if (t == "attribute") {
      TSNode attr = field(n, "attribute");
      TSNode object = field(n, "object");
      if (!ts_node_is_null(attr) && !ts_node_is_null(object)) {
        e.kind = Expression::Kind::Attribute;
        e.name = std::string(textOf(rangeOf(attr)));
        e.object = addExpression(object);
      }
    } else if (t == "call") {
      TSNode callee = field(n, "function");
      if (!ts_node_is_null(callee)) {
        e.kind = Expression::Kind::Call;
        e.object = addExpression(callee);
        e.arguments = argumentsOf(field(n, "arguments"));
      }
    } else if (t == "subscript") {
      TSNode value = field(n, "value");
      if (!ts_node_is_null(value)) {
        e.kind = Expression::Kind::Subscript;
        e.object = addExpression(value);
      }
    } else if (t == "string" || t == "concatenated_string") {
      e.kind = Expression::Kind::String;
      e.literal = literalValue(n);
    }
    int32_t idx = static_cast<int32_t>(m_.expressions.size());
    m_.expressions.push_back(std::move(e));
    expressionOf_.emplace(key, idx);
    return idx;
  }

  std::vector<Expression::Argument> argumentsOf(TSNode args) {
    std::vector<Expression::Argument> out;
    if (ts_node_is_null(args)) return out;
    if (!typeIs(args, "argument_list")) {  // f(x for x in y)
      out.push_back({std::string(), addExpression(args), Expression::Argument::Splat::None});
      return out;
    }
    forEachChild(
        args,
        [&](TSNode a) {
          if (typeIs(a, "comment")) return;
          Expression::Argument arg;
          if (typeIs(a, "keyword_argument")) {
            TSNode k = field(a, "name");
            arg.keyword = ts_node_is_null(k) ? std::string() : std::string(textOf(rangeOf(k)));
            arg.value = addExpression(field(a, "value"));
            if (arg.keyword.empty()) return;
          } else if (typeIs(a, "list_splat") || typeIs(a, "dictionary_splat")) {
            arg.splat = typeIs(a, "list_splat") ? Expression::Argument::Splat::List : Expression::Argument::Splat::Dict;
            arg.value = addExpression(firstNamedChild(a));
          } else {
            arg.value = addExpression(a);
          }
          out.push_back(std::move(arg));
        },
        true);
    return out;
  }

  /// The annotation expression of a parameter's `type` field (the grammar wraps it in a `type`).
  int32_t annotation(TSNode p) {
    TSNode t = field(p, "type");
    if (!ts_node_is_null(t) && typeIs(t, "type")) t = firstNamedChild(t);
    return addExpression(t);
  }

  std::vector<Parameter> parametersOf(TSNode params) {
    std::vector<Parameter> out;
    if (ts_node_is_null(params)) return out;
    forEachChild(
        params,
        [&](TSNode p) {
          Parameter par;
          TSNode name = p;
          if (typeIs(p, "typed_parameter")) {
            par.annotation = annotation(p);
            name = firstNamedChild(p);  // identifier, or *args / **kwargs
          } else if (typeIs(p, "default_parameter") || typeIs(p, "typed_default_parameter")) {
            par.annotation = annotation(p);
            par.hasDefault = true;
            name = field(p, "name");
          }
          if (ts_node_is_null(name)) return;
          if (typeIs(name, "list_splat_pattern") || typeIs(name, "dictionary_splat_pattern")) {
            par.splat = typeIs(name, "list_splat_pattern") ? Parameter::Splat::List : Parameter::Splat::Dict;
            name = firstNamedChild(name);
          }
          if (ts_node_is_null(name) || !typeIs(name, "identifier")) return;  // `*`, `/`, comments
          par.name = std::string(textOf(rangeOf(name)));
          out.push_back(std::move(par));
        },
        true);
    return out;
  }

  /// `a = b = v` (right-nested assignments): one Assignment per target, all with v.
  void addAssignment(int32_t stmt, TSNode node) {
    std::vector<std::pair<TSNode, bool>> targets;
    TSNode value{};
    for (TSNode a = node;;) {
      TSNode left = field(a, "left"), right = field(a, "right");
      if (ts_node_is_null(left) || ts_node_is_null(right)) return;  // `x: int` (no value)
      targets.emplace_back(left, !ts_node_is_null(field(a, "type")));
      if (!typeIs(right, "assignment")) {
        value = right;
        break;
      }
      a = right;
    }
    int32_t v = addExpression(value);
    for (auto [t, annotated] : targets) m_.assignments.push_back({stmt, addExpression(t), v, annotated});
  }

  void addForLoop(int32_t stmt, TSNode node) {
    TSNode left = field(node, "left"), right = field(node, "right");
    if (ts_node_is_null(left) || ts_node_is_null(right)) return;
    ForLoop loop;
    loop.statement = stmt;
    if (typeIs(left, "pattern_list") || typeIs(left, "tuple_pattern")) {
      forEachChild(
          left,
          [&](TSNode t) {
            if (!typeIs(t, "comment")) loop.targets.push_back(addExpression(t));
          },
          true);
    } else {
      loop.targets.push_back(addExpression(left));
    }
    loop.iterable = addExpression(right);
    m_.forLoops.push_back(std::move(loop));
  }

  void addWithItems(int32_t stmt, TSNode node) {
    forEachChild(
        node,
        [&](TSNode clause) {
          if (!typeIs(clause, "with_clause")) return;
          forEachChild(
              clause,
              [&](TSNode item) {
                if (!typeIs(item, "with_item")) return;
                TSNode value = field(item, "value");
                if (!ts_node_is_null(value) && typeIs(value, "as_pattern")) value = firstNamedChild(value);
                m_.withItems.push_back({stmt, rangeOf(item), addExpression(value)});
              },
              true);
        },
        true);
  }

  void addFunction(int32_t stmt, TSNode outer, TSNode def, const Ctx& ctx) {
    int32_t fi = static_cast<int32_t>(m_.functions.size());
    m_.statements[stmt].definesFunction = fi;
    {
      Function f;
      TSNode name = ts_node_child_by_field_name(def, "name", 4);
      if (!ts_node_is_null(name)) {
        f.nameBytes = rangeOf(name);
        f.name = std::string(textOf(f.nameBytes));
      }
      f.qualName = ctx.prefix + f.name;
      f.isAsync = ts_node_child_count(def) > 0 && typeIs(ts_node_child(def, 0), "async");
      f.klass = ctx.klass;
      f.isMethod = ctx.klass != kNone;
      f.parent = ctx.fn;
      f.statement = stmt;
      f.decorators = decoratorsOf(outer);
      f.defLine = line(ts_node_start_byte(def));
      f.parameters = parametersOf(field(def, "parameters"));
      m_.functions.push_back(std::move(f));
    }
    Ctx inner;
    inner.fn = fi;
    inner.klass = kNone;
    inner.prefix = m_.functions[fi].qualName + ".<locals>.";
    TSNode body = ts_node_child_by_field_name(def, "body", 4);
    int32_t b = kNone;
    if (!ts_node_is_null(body)) b = addBlock(stmt, def, def, body, inner);
    Function& f = m_.functions[fi];
    f.body = b;
    f.bytes = {ts_node_start_byte(outer), b != kNone ? m_.blocks[b].bytes.end : ts_node_end_byte(def)};
    f.lines = span(f.bytes);
    if (b != kNone) {
      f.oneLine = m_.blocks[b].sameLine;
      f.docstring = markDocstring(b);
    }
  }

  void addClass(int32_t stmt, TSNode outer, TSNode def, const Ctx& ctx) {
    int32_t ci = static_cast<int32_t>(m_.classes.size());
    m_.statements[stmt].definesClass = ci;
    {
      Class c;
      TSNode name = ts_node_child_by_field_name(def, "name", 4);
      if (!ts_node_is_null(name)) {
        c.nameBytes = rangeOf(name);
        c.name = std::string(textOf(c.nameBytes));
      }
      c.qualName = ctx.prefix + c.name;
      c.klass = ctx.klass;
      c.parent = ctx.fn;
      c.statement = stmt;
      c.decorators = decoratorsOf(outer);
      c.classLine = line(ts_node_start_byte(def));
      if (TSNode sup = field(def, "superclasses"); !ts_node_is_null(sup)) {
        forEachChild(
            sup,
            [&](TSNode a) {
              if (typeIs(a, "comment") || typeIs(a, "keyword_argument") || typeIs(a, "list_splat") ||
                  typeIs(a, "dictionary_splat"))
                return;
              c.bases.push_back(addExpression(a));
            },
            true);
      }
      m_.classes.push_back(std::move(c));
    }
    Ctx inner;
    inner.fn = ctx.fn;
    inner.klass = ci;
    inner.prefix = m_.classes[ci].qualName + ".";
    TSNode body = ts_node_child_by_field_name(def, "body", 4);
    int32_t b = kNone;
    if (!ts_node_is_null(body)) b = addBlock(stmt, def, def, body, inner);
    Class& c = m_.classes[ci];
    c.body = b;
    c.bytes = {ts_node_start_byte(outer), b != kNone ? m_.blocks[b].bytes.end : ts_node_end_byte(def)};
    c.lines = span(c.bytes);
    if (b != kNone) c.docstring = markDocstring(b);
  }

  /// Bodies and clauses of if/for/while/try/with/match, in source order.
  void addClauses(int32_t stmt, TSNode node, const Ctx& ctx) {
    forEachClauseBlock(node, [&](TSNode clause, TSNode block) { addBlock(stmt, clause, clause, block, ctx); });
  }

  /// Adds the body `blockNode` of clause `clause` (header from `headerStart`'s start to the ':'
  /// before the block) as a block of statement `owner`, and fills it.
  int32_t addBlock(int32_t owner, TSNode clause, TSNode headerStart, TSNode blockNode, const Ctx& ctx) {
    int32_t b = static_cast<int32_t>(m_.blocks.size());
    {
      Block blk;
      blk.clause = ts_node_type(clause);
      blk.owner = owner;
      uint32_t hs = ts_node_start_byte(headerStart);
      uint32_t bs = ts_node_start_byte(blockNode);
      uint32_t he = headerEnd(clause, bs);
      blk.header = {hs, he};
      blk.headerLine = line(hs);
      m_.blocks.push_back(std::move(blk));
    }
    m_.statements[owner].blocks.push_back(b);
    fillBlock(b, blockNode, ctx);
    finishBlock(b, m_.blocks[b].header.end);
    return b;
  }

  /// Extent, lines, sameLine and (for blocks on their own lines) indentation of block `b`.
  void finishBlock(int32_t b, uint32_t emptyAt) {
    Block& blk = m_.blocks[b];
    if (blk.statements.empty()) {
      blk.bytes = {emptyAt, emptyAt};
    } else {
      blk.bytes = {m_.statements[blk.statements.front()].bytes.start, m_.statements[blk.statements.back()].bytes.end};
    }
    blk.lines = span(blk.bytes);
    if (b == 0) return;
    uint32_t colonLine = line(blk.header.end > blk.header.start ? blk.header.end - 1 : blk.header.start);
    if (blk.statements.empty()) {
      blk.sameLine = false;
      return;  // indent filled after inference
    }
    blk.sameLine = blk.lines.first == colonLine;
    if (blk.sameLine) {
      for (int32_t s : blk.statements) m_.statements[s].oneLineBody = true;
      return;
    }
    uint32_t ls = lines_.lineStart(blk.lines.first);
    blk.indent = std::string(leadingWhitespace(text_.substr(ls, blk.bytes.start - ls)));
  }

  /// Marks the first statement of block `b` as a docstring when it is a lone string literal.
  int32_t markDocstring(int32_t b) {
    const Block& blk = m_.blocks[b];
    if (blk.statements.empty()) return kNone;
    Statement& s = m_.statements[blk.statements.front()];
    if (s.kind != StatementKind::Expression || s.joinedBySemicolon) return kNone;
    std::string_view t = textOf(s.bytes);
    // A string (or implicit concatenation) statement: starts with an optional prefix and a quote,
    // and is not an f-string. The tree confirms below.
    size_t q = t.find_first_of("'\"");
    if (q == std::string_view::npos || q > 2) return kNone;
    for (size_t i = 0; i < q; ++i)
      if (t[i] == 'f' || t[i] == 'F' || t[i] == 'b' || t[i] == 'B') return kNone;
    docstringCandidates_.push_back(blk.statements.front());
    return blk.statements.front();
  }

  void inferIndentation() {
    std::map<uint32_t, uint32_t> spaceVotes;
    uint32_t tabVotes = 0;
    for (size_t b = 1; b < m_.blocks.size(); ++b) {
      const Block& blk = m_.blocks[b];
      if (blk.sameLine || blk.statements.empty()) continue;
      std::string_view outer = lineIndent(blk.headerLine);
      std::string_view inner = blk.indent;
      if (inner.size() <= outer.size() || inner.substr(0, outer.size()) != outer) continue;
      std::string_view delta = inner.substr(outer.size());
      if (delta.find_first_not_of('\t') == std::string_view::npos)
        ++tabVotes;
      else if (delta.find_first_not_of(' ') == std::string_view::npos)
        ++spaceVotes[static_cast<uint32_t>(delta.size())];
    }
    uint32_t bestWidth = 4, bestCount = 0, spaceTotal = 0;
    for (auto [w, c] : spaceVotes) {
      spaceTotal += c;
      if (c > bestCount) {
        bestWidth = w;
        bestCount = c;
      }
    }
    if (tabVotes > spaceTotal) {
      m_.indentation = {true, 1, true};
    } else if (spaceTotal > 0) {
      m_.indentation = {false, bestWidth, true};
    }
    std::string unit = m_.indentation.unit();
    for (size_t b = 1; b < m_.blocks.size(); ++b) {
      Block& blk = m_.blocks[b];
      if (blk.sameLine || blk.statements.empty()) blk.indent = std::string(lineIndent(blk.headerLine)) + unit;
    }
  }

  void detectLineEnding() {
    size_t crlf = 0, lf = 0;
    for (size_t i = text_.find('\n'); i != std::string_view::npos; i = text_.find('\n', i + 1)) {
      if (i > 0 && text_[i - 1] == '\r')
        ++crlf;
      else
        ++lf;
    }
    m_.lineEnding = crlf > lf ? LineEnding::CRLF : LineEnding::LF;
  }

  /// Outermost ERROR and MISSING nodes of a tree, in order.
  static std::vector<ByteRange> errorRanges(TSNode root) {
    std::vector<ByteRange> out;
    if (!ts_node_has_error(root)) return out;
    TreeCursor cur(root);
    TSTreeCursor* c = cur.get();
    for (;;) {
      TSNode n = ts_tree_cursor_current_node(c);
      bool descend = false;
      if (ts_node_is_missing(n) || categoryOf(n) == Cat::Error) {
        out.push_back(rangeOf(n));
      } else if (ts_node_has_error(n)) {
        descend = true;
      }
      if (descend && ts_tree_cursor_goto_first_child(c)) continue;
      while (!ts_tree_cursor_goto_next_sibling(c))
        if (!ts_tree_cursor_goto_parent(c)) return out;
    }
  }

  /// A line starting at column 0 with `def`, `async def`, `class` or a decorator.
  bool startsTopLevelDefinition(uint32_t at) const {
    std::string_view t = text_.substr(at);
    return t.starts_with("def ") || t.starts_with("class ") || t.starts_with("async def ") ||
           (t.size() > 1 && t[0] == '@' && (std::isalpha(static_cast<unsigned char>(t[1])) || t[1] == '_'));
  }

  /// Adds to `splits` the column-0 definition lines strictly inside the ERROR ranges `errs`.
  bool addSplits(const std::vector<ByteRange>& errs, std::vector<uint32_t>& splits) const {
    bool added = false;
    for (ByteRange e : errs) {
      if (e.size() < 2) continue;
      for (uint32_t ln = line(e.start), last = line(e.end - 1); ln <= last; ++ln) {
        uint32_t at = lines_.lineStart(ln);
        if (at < e.start || at >= e.end || !startsTopLevelDefinition(at)) continue;
        // A def under a decorator line splits at the decorator, not between them.
        if (ln > 0 && text_.substr(lines_.lineStart(ln - 1)).starts_with("@")) continue;
        auto it = std::lower_bound(splits.begin(), splits.end(), at);
        if (it != splits.end() && *it == at) continue;
        splits.insert(it, at);
        added = true;
      }
    }
    return added;
  }

  /// When ERROR nodes swallowed top-level `def`/`class` lines (an unclosed bracket, a
  /// half-typed signature), parses the text as segments split at those lines, each with an
  /// included range so offsets stay absolute. Empty when no recovery is needed.
  std::vector<Tree> recoverSegments() const {
    std::vector<uint32_t> splits;
    if (!addSplits(m_.errors, splits)) return {};
    thread_local Result<Parser> parser = makePythonParser();
    if (!parser) return {};
    std::vector<Tree> trees;
    for (int round = 0; round < 8; ++round) {
      trees.clear();
      std::vector<ByteRange> errs;
      uint32_t begin = m_.bom ? 3 : 0;
      for (size_t i = 0; i <= splits.size(); ++i) {
        uint32_t end = i < splits.size() ? splits[i] : std::numeric_limits<uint32_t>::max();
        LineCol b = lines_.toLineCol(begin);
        TSRange r{{b.line, b.col}, {std::numeric_limits<uint32_t>::max(), 0}, begin, end};
        if (i < splits.size()) r.end_point = {line(end), 0};
        ts_parser_set_included_ranges(parser->get(), &r, 1);
        Tree t(ts_parser_parse_string(parser->get(), nullptr, text_.data(), static_cast<uint32_t>(text_.size())));
        if (!t) {
          ts_parser_reset(parser->get());
          return {};
        }
        auto e = errorRanges(t.root());
        errs.insert(errs.end(), e.begin(), e.end());
        trees.push_back(std::move(t));
        begin = end;
      }
      if (!addSplits(errs, splits)) break;
    }
    return trees;
  }

  /// One pre-order walk over every node: call sites and string literals.
  void walkExpressions(TSNode root) {
    TreeCursor cur(root);
    TSTreeCursor* c = cur.get();
    uint32_t stringEnd = 0;  // end of the outermost string being walked
    bool inString = false;
    for (;;) {
      TSNode n = ts_tree_cursor_current_node(c);
      Cat cat = categoryOf(n);
      if (cat == Cat::Call) {
        addCall(n);
      } else if (cat == Cat::String) {
        uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
        stringStarts_.push_back(s);
        if (!inString || s >= stringEnd) {
          inString = true;
          stringEnd = e;
          if (textOf({s, e}).find('\n') != std::string_view::npos) m_.multilineStrings.push_back({s, e});
        }
      }
      if (ts_tree_cursor_goto_first_child(c)) continue;
      while (!ts_tree_cursor_goto_next_sibling(c))
        if (!ts_tree_cursor_goto_parent(c)) goto done;
    }
  done:;
  }

  void addCall(TSNode call) {
    TSNode callee = ts_node_child_by_field_name(call, "function", 8);
    if (ts_node_is_null(callee)) return;
    CallSite cs;
    cs.bytes = rangeOf(call);
    cs.calleeBytes = rangeOf(callee);
    cs.callee = std::string(textOf(cs.calleeBytes));
    // Error recovery can shape `def f(` into a "call" of a keyword: not a call site.
    static constexpr std::string_view kKeywords[] = {
        "def",     "class", "if",  "elif", "else",   "while",    "for",    "with",  "return", "import",  "from",
        "lambda",  "not",   "and", "or",   "in",     "is",       "yield",  "await", "async",  "try",     "except",
        "finally", "raise", "del", "pass", "global", "nonlocal", "assert", "as",    "break",  "continue"};
    for (std::string_view k : kKeywords)
      if (cs.callee == k) return;
    cs.line = line(cs.bytes.start);
    cs.lastLine = span(cs.bytes).last;
    cs.statement = m_.statementAt(cs.bytes.start);
    cs.function = cs.statement == kNone ? kNone : m_.statements[cs.statement].function;
    cs.expression = addExpression(call);
    if (cs.statement != kNone) {
      Statement& st = m_.statements[cs.statement];
      if (st.kind == StatementKind::Expression && st.bytes == cs.bytes) st.call = static_cast<int32_t>(m_.calls.size());
    }
    m_.calls.push_back(std::move(cs));
  }

  bool startsWithString(uint32_t offset) const {
    return std::binary_search(stringStarts_.begin(), stringStarts_.end(), offset);
  }

  /// Docstring candidates (a plain-string statement first in a body) confirmed by the tree.
  void confirmDocstrings() {
    for (int32_t d : docstringCandidates_) {
      if (startsWithString(m_.statements[d].bytes.start))
        m_.statements[d].docstring = true;
      else
        unmarkDocstring(d);
    }
    if (m_.blocks[0].statements.empty()) return;
    Statement& s = m_.statements[m_.blocks[0].statements.front()];
    if (s.kind != StatementKind::Expression || s.joinedBySemicolon) return;
    std::string_view t = textOf(s.bytes);
    size_t q0 = t.find_first_of("'\"");
    bool plain =
        q0 != std::string_view::npos && q0 <= 2 && t.substr(0, q0).find_first_of("fFbB") == std::string_view::npos;
    if (plain && startsWithString(s.bytes.start)) s.docstring = true;
  }

  void unmarkDocstring(int32_t stmt) {
    for (Function& f : m_.functions)
      if (f.docstring == stmt) f.docstring = kNone;
    for (Class& c : m_.classes)
      if (c.docstring == stmt) c.docstring = kNone;
  }

  void collectImports() {
    if (importNodes_.empty()) return;
    auto q = Query::embedded("imports");
    if (!q) return;
    const Query& query = **q;
    int32_t cStmt = query.captureIndex("import"), cModule = query.captureIndex("import.module"),
            cFrom = query.captureIndex("import.from"), cName = query.captureIndex("import.name"),
            cAlias = query.captureIndex("import.alias"), cItem = query.captureIndex("import.item");
    QueryCursor cur;
    std::vector<Match> matches;
    for (TSNode node : importNodes_) {
      auto ms = query.matches(node, text_, cur);
      std::move(ms.begin(), ms.end(), std::back_inserter(matches));
    }
    for (const Match& mt : matches) {
      auto get = [&](int32_t idx) { return idx < 0 ? TSNode{} : mt.get(static_cast<uint32_t>(idx)); };
      TSNode stmt = get(cStmt), module = get(cModule), from = get(cFrom), name = get(cName), alias = get(cAlias),
             item = get(cItem);
      ImportBinding ib;
      if (!ts_node_is_null(module)) {
        std::string path = compactDotted(rangeOf(module));
        ib.target = ts_node_is_null(alias) ? path.substr(0, path.find('.')) : path;
        ib.local = ts_node_is_null(alias) ? ib.target : std::string(textOf(rangeOf(alias)));
        ib.bytes = rangeOf(ts_node_is_null(item) ? module : item);
      } else if (!ts_node_is_null(from) && !ts_node_is_null(name)) {
        std::string base = compactDotted(rangeOf(from));
        std::string nm = compactDotted(rangeOf(name));
        ib.target = base.empty() || base.back() == '.' ? base + nm : base + "." + nm;
        ib.local = ts_node_is_null(alias) ? nm : std::string(textOf(rangeOf(alias)));
        ib.bytes = rangeOf(ts_node_is_null(item) ? name : item);
      } else {
        continue;
      }
      if (ib.local.empty()) continue;
      ib.statement = ts_node_is_null(stmt) ? kNone : m_.statementAt(ts_node_start_byte(stmt));
      m_.imports.push_back(std::move(ib));
    }
    std::sort(m_.imports.begin(), m_.imports.end(),
              [](const ImportBinding& a, const ImportBinding& b) { return a.bytes.start < b.bytes.start; });
  }

  /// Source text with whitespace, comments-free continuations and backslashes removed.
  std::string compactDotted(ByteRange r) const {
    std::string out;
    for (char ch : textOf(r))
      if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' && ch != '\\' && ch != '\f') out += ch;
    return out;
  }

  /// The value of a plain string literal (or an implicit concatenation of them); nullopt for
  /// f-strings with interpolations, bytes, and anything else.
  std::optional<std::string> literalValue(TSNode n) const {
    if (ts_node_is_null(n)) return std::nullopt;
    if (typeIs(n, "concatenated_string")) {
      std::string out;
      bool ok = true;
      forEachChild(
          n,
          [&](TSNode part) {
            if (!ok || typeIs(part, "comment")) return;
            auto v = literalValue(part);
            if (v)
              out += *v;
            else
              ok = false;
          },
          true);
      if (!ok) return std::nullopt;
      return out;
    }
    if (!typeIs(n, "string") || ts_node_has_error(n)) return std::nullopt;
    std::string out;
    bool raw = false, ok = true;
    forEachChild(n, [&](TSNode c) {
      if (!ok) return;
      if (typeIs(c, "string_start")) {
        std::string_view p = textOf(rangeOf(c));
        if (p.find_first_of("bB") != std::string_view::npos) ok = false;
        raw = p.find_first_of("rR") != std::string_view::npos;
      } else if (typeIs(c, "interpolation")) {
        ok = false;
      } else if (typeIs(c, "string_content")) {
        std::string_view t = textOf(rangeOf(c));
        if (raw)
          out += t;
        else
          appendUnescaped(out, t);
      }
    });
    if (!ok) return std::nullopt;
    return out;
  }

  static void appendUnescaped(std::string& out, std::string_view t) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] != '\\' || i + 1 >= t.size()) {
        out += t[i];
        continue;
      }
      char e = t[++i];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case '\n': break;  // line continuation inside the string
        default:
          out += '\\';
          out += e;
          break;  // kept verbatim
      }
    }
  }

  std::string_view text_;
  const LineIndex& lines_;
  Module m_;
  std::vector<int32_t> docstringCandidates_;
  std::vector<uint32_t> stringStarts_;  // every string node's start, ascending
  std::vector<TSNode> importNodes_;
  std::map<std::pair<const void*, uint32_t>, int32_t> expressionOf_;  // (node id, start) -> Expression
};

/// The function extents of a tree by the Builder's rules (fillBlock / addStatement / addBlock /
/// addClauses), visiting statements and their blocks only: no expressions, no queries, no
/// Module. Keep the two in step: the model test compares them on every corpus file.
class ExtentWalker {
 public:
  ExtentWalker(std::string_view text, const LineIndex& lines) : text_(text), lines_(lines) {}

  std::vector<FunctionExtent> walk(TSNode root) {
    (void)fillBlock(root, std::string());
    return std::move(out_);
  }
  /// The functions of one top-level statement.
  std::vector<FunctionExtent> walkStatement(TSNode node) {
    out_.clear();
    (void)statement(node, std::string());
    return std::move(out_);
  }

 private:
  uint32_t line(uint32_t off) const { return lines_.toLineCol(off).line; }

  /// The statements of `container` (ERROR children flattened); returns the end of the last
  /// statement's extent, nullopt when there is none.
  std::optional<uint32_t> fillBlock(TSNode container, const std::string& prefix) {
    std::optional<uint32_t> end;
    forEachChild(container, [&](TSNode c) {
      Cat cat = categoryOf(c);
      if (isStatementCat(cat)) {
        end = statement(c, prefix);
      } else if (cat == Cat::Error) {
        if (auto e = fillBlock(c, prefix)) end = e;
      }
    });
    return end;
  }

  /// End of statement `node`'s extent (through its last block, as Builder::addStatement).
  uint32_t statement(TSNode node, const std::string& prefix) {
    Cat cat = categoryOf(node);
    TSNode def = definitionOf(node, cat);
    std::optional<uint32_t> lastBlockEnd;
    if (cat == Cat::FunctionDef || cat == Cat::ClassDef) {
      TSNode name = ts_node_child_by_field_name(def, "name", 4);
      std::string qual = prefix;
      if (!ts_node_is_null(name))
        qual += text_.substr(ts_node_start_byte(name), ts_node_end_byte(name) - ts_node_start_byte(name));
      size_t fi = out_.size();
      if (cat == Cat::FunctionDef) out_.push_back({qual, line(ts_node_start_byte(def)), 0});
      TSNode body = ts_node_child_by_field_name(def, "body", 4);
      std::string inner = qual + (cat == Cat::FunctionDef ? ".<locals>." : ".");
      if (!ts_node_is_null(body)) lastBlockEnd = block(def, body, inner);
      if (cat == Cat::FunctionDef) {
        uint32_t start = ts_node_start_byte(node);
        uint32_t end = lastBlockEnd ? *lastBlockEnd : ts_node_end_byte(def);
        out_[fi].lastLine = line(end > start ? end - 1 : start);
      }
    } else if (cat == Cat::Compound) {
      forEachClauseBlock(node, [&](TSNode clause, TSNode b) { lastBlockEnd = block(clause, b, prefix); });
    }
    return lastBlockEnd ? *lastBlockEnd : ts_node_end_byte(node);
  }

  /// End of block `blockNode` of `clause` (Builder::addBlock + finishBlock: an empty block ends
  /// at its header's ':').
  uint32_t block(TSNode clause, TSNode blockNode, const std::string& prefix) {
    if (auto end = fillBlock(blockNode, prefix)) return *end;
    return headerEnd(clause, ts_node_start_byte(blockNode));
  }

  std::string_view text_;
  const LineIndex& lines_;
  std::vector<FunctionExtent> out_;
};

}  // namespace

Module buildModule(TSNode root, std::string_view text, const LineIndex& lines) {
  Module direct = Builder(text, lines).build(root, false);
  if (direct.errors.empty()) return direct;
  // Broken code: also build from segments split at swallowed top-level definitions, and keep
  // whichever model recovered more definitions (ties keep the direct one).
  bool recovered = false;
  Module segmented = Builder(text, lines).build(root, true, &recovered);
  if (recovered &&
      segmented.functions.size() + segmented.classes.size() > direct.functions.size() + direct.classes.size())
    return segmented;
  return direct;
}

std::vector<FunctionExtent> functionExtents(TSNode root, std::string_view text, const LineIndex& lines) {
  return ExtentWalker(text, lines).walk(root);
}

std::vector<TopLevelExtents> topLevelExtents(TSNode root, std::string_view text, const LineIndex& lines,
                                             const std::vector<TopLevelExtents>* previous,
                                             std::string_view previousText) {
  std::vector<TopLevelExtents> out;
  ExtentWalker walker(text, lines);
  if (ts_node_has_error(root)) {
    out.push_back({ts_node_start_byte(root), ts_node_end_byte(root), walker.walk(root)});
    return out;
  }
  TextDelta delta;
  int64_t lineShift = 0;
  if (previous) {
    delta = textDelta(previousText, text);
    auto newlines = [](std::string_view s) { return std::count(s.begin(), s.end(), '\n'); };
    lineShift = newlines(text.substr(delta.prefix, delta.newCut() - delta.prefix)) -
                newlines(previousText.substr(delta.prefix, delta.oldCut() - delta.prefix));
  }
  // The previous statement at old bytes [start, end), or null.
  auto reusable = [&](uint32_t start, uint32_t end) -> const TopLevelExtents* {
    if (!previous) return nullptr;
    auto it = std::lower_bound(previous->begin(), previous->end(), start,
                               [](const TopLevelExtents& t, uint32_t s) { return t.start < s; });
    return it != previous->end() && it->start == start && it->end == end ? &*it : nullptr;
  };
  forEachChild(root, [&](TSNode c) {
    if (!isStatementCat(categoryOf(c))) return;
    uint32_t a = ts_node_start_byte(c), e = ts_node_end_byte(c);
    TopLevelExtents t{a, e, {}};
    const TopLevelExtents* old = nullptr;
    int64_t shift = 0;
    if (previous && e <= delta.prefix) {
      old = reusable(a, e);
    } else if (previous && a >= delta.newCut()) {
      int64_t d = static_cast<int64_t>(delta.oldSize) - static_cast<int64_t>(delta.newSize);
      old = reusable(static_cast<uint32_t>(a + d), static_cast<uint32_t>(e + d));
      shift = lineShift;
    }
    if (old) {
      t.functions = old->functions;
      for (auto& f : t.functions) {
        f.defLine = static_cast<uint32_t>(f.defLine + shift);
        f.lastLine = static_cast<uint32_t>(f.lastLine + shift);
      }
    } else {
      t.functions = walker.walkStatement(c);
    }
    out.push_back(std::move(t));
  });
  return out;
}

std::vector<FunctionExtent> flatten(const std::vector<TopLevelExtents>& extents) {
  std::vector<FunctionExtent> out;
  for (const auto& t : extents) out.insert(out.end(), t.functions.begin(), t.functions.end());
  return out;
}

}  // namespace kl::python
