// RAII owners for tree-sitter C handles (TSParser, TSTree, TSQuery, TSQueryCursor) and the
// Python grammar. Non-copyable, movable; get() exposes the raw pointer for C calls.
#pragma once

#include <tree_sitter/api.h>

#include <memory>
#include <string_view>

#include "core/support/result.h"

extern "C" const TSLanguage* tree_sitter_python();

namespace kl::python {

namespace detail {
struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};
struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};
struct QueryDeleter {
  void operator()(TSQuery* q) const { ts_query_delete(q); }
};
struct QueryCursorDeleter {
  void operator()(TSQueryCursor* c) const { ts_query_cursor_delete(c); }
};
}  // namespace detail

/// Owns a TSTree. copy() is cheap (tree-sitter shares structure) and is how a tree is handed to
/// another thread or edited without touching the original.
class Tree {
 public:
  Tree() = default;
  explicit Tree(TSTree* t) : p_(t) {}
  TSTree* get() const { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }
  TSNode root() const { return ts_tree_root_node(p_.get()); }
  Tree copy() const { return Tree(p_ ? ts_tree_copy(p_.get()) : nullptr); }

 private:
  std::unique_ptr<TSTree, detail::TreeDeleter> p_;
};

/// Owns a TSParser already set to the Python grammar (see makePythonParser()).
class Parser {
 public:
  Parser() = default;
  explicit Parser(TSParser* p) : p_(p) {}
  TSParser* get() const { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  std::unique_ptr<TSParser, detail::ParserDeleter> p_;
};

/// Owns a compiled TSQuery (immutable; shareable between threads).
class QueryHandle {
 public:
  QueryHandle() = default;
  explicit QueryHandle(TSQuery* q) : p_(q) {}
  TSQuery* get() const { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  std::unique_ptr<TSQuery, detail::QueryDeleter> p_;
};

/// Owns a TSQueryCursor (execution state: one per thread, reusable).
class QueryCursor {
 public:
  QueryCursor() : p_(ts_query_cursor_new()) {}
  TSQueryCursor* get() const { return p_.get(); }

 private:
  std::unique_ptr<TSQueryCursor, detail::QueryCursorDeleter> p_;
};

/// Owns a TSTreeCursor (a by-value struct holding a heap stack).
class TreeCursor {
 public:
  explicit TreeCursor(TSNode root) : c_(ts_tree_cursor_new(root)) {}
  ~TreeCursor() { ts_tree_cursor_delete(&c_); }
  TreeCursor(const TreeCursor&) = delete;
  TreeCursor& operator=(const TreeCursor&) = delete;
  TSTreeCursor* get() { return &c_; }
  TSNode node() const { return ts_tree_cursor_current_node(&c_); }

 private:
  TSTreeCursor c_;
};

/// The Python grammar after checking that this tree-sitter runtime can load it (ABI in
/// [TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION, TREE_SITTER_LANGUAGE_VERSION]); an Error
/// naming both versions otherwise. Checked once, thread-safe.
Result<const TSLanguage*> pythonLanguage();

/// A new parser set to the Python grammar; Error when ts_parser_set_language refuses it.
Result<Parser> makePythonParser();

/// Text of a node: the bytes [start, end) of `text` (clamped to text).
inline std::string_view nodeText(TSNode n, std::string_view text) {
  uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
  if (s > text.size()) s = static_cast<uint32_t>(text.size());
  if (e > text.size()) e = static_cast<uint32_t>(text.size());
  return e > s ? text.substr(s, e - s) : std::string_view{};
}

}  // namespace kl::python
