#include "core/python/source_file.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace kl::python {

namespace {

bool startsWithBom(std::string_view t) {
  return t.size() >= 3 && static_cast<unsigned char>(t[0]) == 0xEF && static_cast<unsigned char>(t[1]) == 0xBB &&
         static_cast<unsigned char>(t[2]) == 0xBF;
}

/// Row/column (bytes) of `offset` in `text`, as tree-sitter counts them (rows end at '\n').
TSPoint pointAt(std::string_view text, uint32_t offset) {
  std::string_view before = text.substr(0, offset);
  uint32_t row = static_cast<uint32_t>(std::count(before.begin(), before.end(), '\n'));
  size_t nl = before.rfind('\n');
  uint32_t col = nl == std::string_view::npos ? offset : offset - static_cast<uint32_t>(nl) - 1;
  return {row, col};
}

TSPoint advancePoint(TSPoint p, std::string_view inserted) {
  size_t nl = inserted.rfind('\n');
  if (nl == std::string_view::npos) return {p.row, p.column + static_cast<uint32_t>(inserted.size())};
  uint32_t rows = static_cast<uint32_t>(std::count(inserted.begin(), inserted.end(), '\n'));
  return {p.row + rows, static_cast<uint32_t>(inserted.size() - nl - 1)};
}

void appendEscaped(std::string& out, const char* s) {
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') out += '\\';
    if (*s == '\n') {
      out += "\\n";
      continue;
    }
    out += *s;
  }
}

}  // namespace

SourceFile::SourceFile(Private, std::string text, Tree tree, bool incremental)
    : text_(std::move(text)),
      lines_(text_),
      bom_(startsWithBom(text_)),
      incremental_(incremental),
      tree_(std::move(tree)) {}

Result<SourceFilePtr> SourceFile::parse(std::string text, const CancellationToken& cancel) {
  return parseImpl(std::move(text), nullptr, cancel);
}

Result<SourceFilePtr> SourceFile::parseImpl(std::string text, const Tree* old, const CancellationToken& cancel) {
  if (text.size() >= std::numeric_limits<uint32_t>::max())
    return Error::invalid("Python file too large (" + std::to_string(text.size()) + " bytes)");
  // One parser per thread, reused: a TSParser must not be shared between threads.
  thread_local Result<Parser> parser = makePythonParser();
  if (!parser) return parser.error();
  TSParser* p = parser->get();

  // A BOM is not Python: tree-sitter sees only the bytes after it, offsets stay absolute.
  if (startsWithBom(text)) {
    TSRange r{{0, 3},
              {std::numeric_limits<uint32_t>::max(), std::numeric_limits<uint32_t>::max()},
              3,
              std::numeric_limits<uint32_t>::max()};
    ts_parser_set_included_ranges(p, &r, 1);
  } else {
    ts_parser_set_included_ranges(p, nullptr, 0);
  }
  const size_t* flag = reinterpret_cast<const size_t*>(cancel.rawFlag());
  ts_parser_set_cancellation_flag(p, flag);
  TSTree* t = ts_parser_parse_string(p, old ? old->get() : nullptr, text.data(), static_cast<uint32_t>(text.size()));
  ts_parser_set_cancellation_flag(p, nullptr);
  if (!t) {
    ts_parser_reset(p);  // drop the half-done parse: the next call is a different document
    if (cancel.isCancelled()) return Error::cancelled();
    return Error::internal("tree-sitter failed to parse the file");
  }
  return SourceFilePtr(std::make_shared<SourceFile>(Private{}, std::move(text), Tree(t), old != nullptr));
}

Result<SourceFilePtr> SourceFile::edit(const TextEdit& e, const CancellationToken& cancel) const {
  return edit(std::vector<TextEdit>{e}, cancel);
}

Result<SourceFilePtr> SourceFile::edit(const std::vector<TextEdit>& edits, const CancellationToken& cancel) const {
  std::string text = text_;
  // Reuse only an error-free tree (see the header); a BOM change also parses from scratch.
  bool fresh = hasErrors();
  Tree tree = fresh ? Tree() : tree_.copy();
  for (size_t i = 0; i < edits.size(); ++i) {
    const TextEdit& e = edits[i];
    if (e.start > e.end || e.end > text.size())
      return Error::invalid("edit " + std::to_string(i) + ": range [" + std::to_string(e.start) + ", " +
                            std::to_string(e.end) + ") outside the text (" + std::to_string(text.size()) + " bytes)");
    if (e.newText.size() >= std::numeric_limits<uint32_t>::max() - text.size())
      return Error::invalid("edit " + std::to_string(i) + ": text too large");
    bool bomBefore = startsWithBom(text);
    TSInputEdit in;
    in.start_byte = e.start;
    in.old_end_byte = e.end;
    in.new_end_byte = e.start + static_cast<uint32_t>(e.newText.size());
    if (i == 0) {
      LineCol s = lines_.toLineCol(e.start), oe = lines_.toLineCol(e.end);
      in.start_point = {s.line, s.col};
      in.old_end_point = {oe.line, oe.col};
    } else {
      in.start_point = pointAt(text, e.start);
      in.old_end_point = pointAt(text, e.end);
    }
    in.new_end_point = advancePoint(in.start_point, e.newText);
    text.replace(e.start, e.end - e.start, e.newText);
    if (bomBefore != startsWithBom(text) || (bomBefore && e.start < 3)) fresh = true;
    if (!fresh) ts_tree_edit(tree.get(), &in);
  }
  if (fresh) return parseImpl(std::move(text), nullptr, cancel);
  auto r = parseImpl(text, &tree, cancel);
  if (!r || !(*r)->hasErrors()) return r;
  // The edit introduced a syntax error: tree-sitter's recovery with a reused tree may differ
  // from a fresh parse (see the header), so the snapshot is the fresh parse.
  return parseImpl(std::move(text), nullptr, cancel);
}

const Module& SourceFile::model() const {
  std::call_once(modelOnce_, [this] { model_ = std::make_unique<Module>(buildModule(root(), text_, lines_)); });
  return *model_;
}

namespace {

bool findLastCode(TSNode n, uint32_t start, uint32_t end, uint32_t& out) {
  uint32_t count = ts_node_child_count(n);
  for (uint32_t k = count; k-- > 0;) {
    TSNode c = ts_node_child(n, k);
    uint32_t cs = ts_node_start_byte(c), ce = ts_node_end_byte(c);
    if (ce <= start) return false;
    if (cs >= end || cs == ce) continue;
    std::string_view type = ts_node_type(c);
    if (type == "comment") continue;
    if (ts_node_child_count(c) > 0 && type != "string") {  // a string is one token, even over lines
      if (findLastCode(c, start, end, out)) return true;
      continue;
    }
    out = std::min(ce, end);
    return true;
  }
  return false;
}

}  // namespace

std::optional<uint32_t> SourceFile::codeEnd(uint32_t start, uint32_t end) const {
  uint32_t out = end;
  if (findLastCode(root(), start, end, out)) return out;
  return std::nullopt;
}

std::string SourceFile::sexp() const {
  std::string out;
  out.reserve(text_.size() * 4);
  TreeCursor cursor(root());
  TSTreeCursor& c = *cursor.get();
  for (;;) {
    TSNode n = ts_tree_cursor_current_node(&c);
    out += '(';
    if (const char* field = ts_tree_cursor_current_field_name(&c)) {
      out += field;
      out += ':';
    }
    if (ts_node_is_named(n)) {
      out += ts_node_type(n);
    } else {
      out += '"';
      appendEscaped(out, ts_node_type(n));
      out += '"';
    }
    if (ts_node_is_missing(n)) out += " MISSING";
    TSPoint sp = ts_node_start_point(n), ep = ts_node_end_point(n);
    out += ' ' + std::to_string(ts_node_start_byte(n)) + '-' + std::to_string(ts_node_end_byte(n)) + ' ' +
           std::to_string(sp.row) + ':' + std::to_string(sp.column) + '-' + std::to_string(ep.row) + ':' +
           std::to_string(ep.column);
    if (ts_tree_cursor_goto_first_child(&c)) {
      out += ' ';
      continue;
    }
    out += ')';
    for (;;) {
      if (ts_tree_cursor_goto_next_sibling(&c)) {
        out += ' ';
        break;
      }
      if (!ts_tree_cursor_goto_parent(&c)) return out;
      out += ')';
    }
  }
}

}  // namespace kl::python
