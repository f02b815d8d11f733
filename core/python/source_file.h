// SourceFile: an immutable snapshot of one Python file — text, line index, tree-sitter tree
// and (built on first use) its Module. Shared between threads as shared_ptr<const SourceFile>;
// every const member is safe to call concurrently (the tree is never mutated after creation).
//
// Text handling: a UTF-8 BOM is excluded from parsing (tree-sitter's included range starts
// after it) but every offset, here and in the Module, refers to the full text including it.
// CRLF and tabs are parsed as Python does. Broken Python never fails: the tree holds ERROR
// nodes and the Module is built around them.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/python/model.h"
#include "core/python/text_edit.h"
#include "core/python/ts_handles.h"
#include "core/support/cancel.h"
#include "core/support/line_index.h"
#include "core/support/result.h"

namespace kl::python {

class SourceFile;
using SourceFilePtr = std::shared_ptr<const SourceFile>;

class SourceFile {
 public:
  /// Parses `text` from scratch. Errors: Error::Cancelled when `cancel` fires during the parse;
  /// Error::Internal when the grammar cannot be loaded (ABI mismatch). Never fails on bad
  /// Python.
  static Result<SourceFilePtr> parse(std::string text, const CancellationToken& cancel = {});

  /// A new snapshot with `edit` applied (byte range in THIS text). Incremental: edits a copy of
  /// this tree (ts_tree_edit with byte offsets and row/column points) and reparses with it.
  /// This snapshot is unchanged. Error::Invalid when the range is out of bounds or
  /// start > end; Error::Cancelled as for parse().
  ///
  /// Guarantee: the result's tree equals a fresh parse of the new text. tree-sitter 0.20.7
  /// does not promise that once ERROR nodes are involved: its error recovery then depends on
  /// the edit history (about 1 in 1000 random edits gave a different tree; reproduced with the
  /// bare C API, so not a wrapper bug). Hence the old tree is reused only when it has no
  /// errors, and a reparse that yields errors is replaced by a fresh parse. Edits of valid
  /// code into valid code — the common case — are incremental (see incremental()); while the
  /// text is broken, every edit costs a full parse.
  Result<SourceFilePtr> edit(const TextEdit& edit, const CancellationToken& cancel = {}) const;
  /// Applies `edits` in order; each range refers to the text produced by the previous edits
  /// (LSP didChange semantics). One reparse at the end. An empty list returns a copy.
  Result<SourceFilePtr> edit(const std::vector<TextEdit>& edits, const CancellationToken& cancel = {}) const;

  const std::string& text() const { return text_; }
  const LineIndex& lines() const { return lines_; }
  bool hasBom() const { return bom_; }
  /// 3 when the text starts with a UTF-8 BOM, else 0: where the Python source starts.
  uint32_t sourceStart() const { return bom_ ? 3u : 0u; }

  TSNode root() const { return tree_.root(); }
  const Tree& tree() const { return tree_; }
  /// The tree contains an ERROR or MISSING node.
  bool hasErrors() const { return ts_node_has_error(root()); }
  /// This snapshot came from edit() reusing the previous tree (false: parsed from scratch).
  bool incremental() const { return incremental_; }

  /// The source model, built on first call (thread-safe) and cached.
  const Module& model() const;
  /// End of the last non-comment token of the syntax within [start, end) (a statement's range):
  /// where its code ends, ignoring comments tree-sitter may have attached to it; `end` when none.
  uint32_t lastCodeEnd(uint32_t start, uint32_t end) const { return codeEnd(start, end).value_or(end); }
  /// The same, nullopt when [start, end) holds no code (blank, or only a comment).
  std::optional<uint32_t> codeEnd(uint32_t start, uint32_t end) const;

  /// Debug s-expression of the whole tree: every node (named and anonymous) with its type,
  /// field name, byte range and start/end points, MISSING marks. Two trees print equal iff
  /// they are structurally identical, positions included (the property test relies on it).
  std::string sexp() const;

  SourceFile(const SourceFile&) = delete;
  SourceFile& operator=(const SourceFile&) = delete;

 private:
  struct Private {};

 public:
  SourceFile(Private, std::string text, Tree tree, bool incremental);

 private:
  static Result<SourceFilePtr> parseImpl(std::string text, const Tree* old, const CancellationToken& cancel);

  std::string text_;
  LineIndex lines_;
  bool bom_ = false;
  bool incremental_ = false;
  Tree tree_;
  mutable std::once_flag modelOnce_;
  mutable std::unique_ptr<Module> model_;
};

/// Builds the Module of `root` (a tree of `text`); what SourceFile::model() calls.
Module buildModule(TSNode root, std::string_view text, const LineIndex& lines);

/// A function's qualified name and lines, as Module::functions holds them
/// (Function::qualName, defLine, lines.last).
struct FunctionExtent {
  std::string qualName;
  uint32_t defLine = 0, lastLine = 0;
};
/// The functions of `root` in Module::functions order, without building a Module: a walk over
/// statements and blocks only (no expressions, no queries), cheap enough for every keystroke.
/// Equal to buildModule's functions whenever the tree has no ERROR; on broken code it is the
/// direct build's view (buildModule may instead keep a model recovered from segments).
std::vector<FunctionExtent> functionExtents(TSNode root, std::string_view text, const LineIndex& lines);

/// The functions of one top-level statement (bytes [start, end) of its node), for reuse.
struct TopLevelExtents {
  uint32_t start = 0, end = 0;
  std::vector<FunctionExtent> functions;
};
/// functionExtents grouped by top-level statement, reusing `previous` (the result for
/// `previousText`, the text before an edit) for every top-level statement whose node has the
/// same extent over unchanged text (inside the common prefix, or the common suffix shifted):
/// a top-level statement starts at column 0 with no enclosing context, so equal text and extent
/// give an equal subtree. The rest are walked. A tree with errors is walked whole (one entry).
/// Cost: the top-level statements plus the changed ones, instead of every statement.
std::vector<TopLevelExtents> topLevelExtents(TSNode root, std::string_view text, const LineIndex& lines,
                                             const std::vector<TopLevelExtents>* previous = nullptr,
                                             std::string_view previousText = {});
/// All functions of topLevelExtents, in Module::functions order.
std::vector<FunctionExtent> flatten(const std::vector<TopLevelExtents>& extents);

}  // namespace kl::python
