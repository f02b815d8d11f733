// Query: a compiled tree-sitter query (grammars/queries/<name>.scm) with capture names mapped
// and the text predicates evaluated here (the C library parses but never applies them).
//
// Supported predicates: #eq? / #not-eq? (capture vs string, or capture vs capture) and
// #match? / #not-match? (capture vs ECMAScript regex, searched anywhere in the capture's text;
// anchor with ^...$). Any other predicate is rejected at compile time (an Error), never ignored.
// A predicate whose capture is absent from a match (optional/quantified pattern parts) holds.
#pragma once

#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/python/ts_handles.h"
#include "core/support/result.h"

namespace kl::python {

/// One capture of a match: capture index (see Query::captureIndex) and the node.
struct Capture {
  uint32_t index = 0;
  TSNode node{};
};

/// One match that passed all predicates. Captures are in the order tree-sitter reports them.
struct Match {
  uint32_t pattern = 0;
  std::vector<Capture> captures;
  /// First node captured as `index`, or a null node (ts_node_is_null) when there is none.
  TSNode get(uint32_t index) const;
  bool has(uint32_t index) const { return !ts_node_is_null(get(index)); }
};

class Query {
 public:
  /// Compiles `source` for the Python grammar. `name` is used in error messages. Errors: the
  /// grammar cannot be loaded; a syntax/node-type/field/capture/structure error (message names
  /// the kind and the byte offset: "query calls: invalid node type at offset 12"); an unknown
  /// predicate or a bad regex.
  static Result<Query> compile(std::string_view name, std::string_view source);

  /// The embedded grammars/queries/<name>.scm, compiled once per process (thread-safe) and
  /// shared. Error when no such file is embedded or it does not compile.
  static Result<std::shared_ptr<const Query>> embedded(std::string_view name);

  const std::string& name() const { return name_; }
  uint32_t captureCount() const { return static_cast<uint32_t>(captureNames_.size()); }
  const std::string& captureName(uint32_t index) const { return captureNames_[index]; }
  /// Index of capture `@name` (without the '@'); -1 when the query has no such capture.
  int32_t captureIndex(std::string_view name) const;
  /// Like captureIndex but an Error when absent: for callers that require a capture.
  Result<uint32_t> requireCapture(std::string_view name) const;
  uint32_t patternCount() const;
  const TSQuery* get() const { return q_.get(); }

  /// All matches of the query under `node` whose predicates hold. `text` is the full text the
  /// tree was parsed from (node byte offsets index into it). Reuse one cursor per thread.
  std::vector<Match> matches(TSNode node, std::string_view text, QueryCursor& cursor) const;
  /// Same, restricted to nodes intersecting the byte range [start, end).
  std::vector<Match> matches(TSNode node, std::string_view text, QueryCursor& cursor, uint32_t start,
                             uint32_t end) const;

  /// Whether the predicates of match `m` hold (matches() already applies this).
  bool predicatesHold(const TSQueryMatch& m, std::string_view text) const;

  Query(Query&&) noexcept;
  Query& operator=(Query&&) noexcept;
  ~Query();

 private:
  Query() = default;
  struct Predicate {
    enum class Op { Eq, NotEq, Match, NotMatch } op;
    uint32_t capture;           // left operand
    int32_t otherCapture = -1;  // right operand when it is a capture
    std::string literal;        // right operand when it is a string
    std::shared_ptr<const std::regex> regex;
  };
  std::string name_;
  QueryHandle q_;
  std::vector<std::string> captureNames_;
  std::vector<std::vector<Predicate>> predicates_;  // by pattern index
};

}  // namespace kl::python
