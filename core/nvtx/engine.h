// The NVTX annotation engine: pure functions of (source snapshot, request) -> text.
//
// Vocabulary. The ORIGINAL text is a file without kernlens ranges (what strip() gives back).
// A RangeRequest asks for one managed range over original lines; instrument() applies a whole
// set of them at once (nested or disjoint, never partially overlapping) and returns the
// instrumented text, the edits on the original that produce it, and the line map back.
// A managed range is written as
//     with <torch-alias>.cuda.nvtx.range("kl:<path>:<first>-<last>[:<label>]"):
// with the body re-indented by the block's own indentation step (see docs/annotations.md for
// every rule: selections, `;`-joined lines, one-line bodies, clauses, docstrings, `from
// __future__`, multi-line strings, BOM/CRLF/tabs/form feeds, the import marker).
//
// Contract: strip(instrument(X, R).text).text == X byte for byte, for every X and R that
// instrument() accepts (it checks this itself before answering, see Options::verify), and the
// instrumented text parses without syntax errors whenever X did. Files with syntax errors are
// refused (Error::Invalid): wrapping broken code cannot be checked.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/nvtx/naming.h"
#include "core/python/source_file.h"
#include "core/python/text_edit.h"
#include "core/support/result.h"

namespace kl::nvtx {

using python::LineSpan;
using python::SourceFile;
using python::TextEdit;

/// One range to place. Lines are 0-based and refer to the ORIGINAL text for instrument(), and
/// to the given (possibly already annotated) text for annotate().
struct RangeRequest {
  enum class Kind {
    Statements,    // the statements overlapping [firstLine, lastLine], resolved as documented
    FunctionBody,  // a function's body after its docstring and leading global/nonlocal
  };
  Kind kind = Kind::Statements;
  uint32_t firstLine = 0;           // Statements
  uint32_t lastLine = 0;            // Statements (inclusive)
  std::string qualName;             // FunctionBody: Function::qualName ("Outer.method", "f.<locals>.g")
  std::optional<uint32_t> defLine;  // FunctionBody: line of `def`, to pick among redefinitions
  /// The full range name to use instead of the generated one (ranges recovered by strip keep
  /// their names this way). Must be a valid managed name.
  std::optional<std::string> name;
  std::optional<std::string> label;  // label to use instead of the generated one

  static RangeRequest statements(uint32_t first, uint32_t last) {
    RangeRequest r;
    r.firstLine = first;
    r.lastLine = last;
    return r;
  }
  static RangeRequest functionBody(std::string qualName, std::optional<uint32_t> defLine = {}) {
    RangeRequest r;
    r.kind = Kind::FunctionBody;
    r.qualName = std::move(qualName);
    r.defLine = defLine;
    return r;
  }
  friend bool operator==(const RangeRequest&, const RangeRequest&) = default;
};

/// Maps each line of an instrumented text to the original line it came from. Inserted lines
/// (a `with` header, the import) map to the original line they precede and are marked.
struct LineMap {
  std::vector<uint32_t> toOriginal;  // indexed by instrumented line (0-based)
  std::vector<uint8_t> inserted;     // 1 where the instrumented line was added by kernlens
  uint32_t originalLine(uint32_t line) const {
    return line < toOriginal.size() ? toOriginal[line] : (toOriginal.empty() ? 0 : toOriginal.back());
  }
  bool isInserted(uint32_t line) const { return line < inserted.size() && inserted[line]; }
  /// First instrumented line that maps to `original` and is not inserted (the line itself).
  std::optional<uint32_t> instrumentedLine(uint32_t original) const;
};

/// A range as placed in an instrumented text.
struct PlacedRange {
  RangeRequest::Kind kind = RangeRequest::Kind::Statements;
  std::string name;                 // the full kl: name
  LineSpan original;                // original lines of the wrapped statements (0-based)
  LineSpan instrumented;            // the `with` statement in the instrumented text: header..last line
  std::string qualName;             // FunctionBody: the function
  std::optional<uint32_t> defLine;  // FunctionBody: original line of `def`
  bool inlineBody = false;          // a one-line body (`def f(): return g()`) moved to its own lines
  /// The request that reproduces this range on the original (kind, lines or function, name).
  RangeRequest request() const;
};

/// A request instrument() did not place (only with Options::skipUnwrappable).
struct Skipped {
  RangeRequest request;
  std::string reason;
};

struct Options {
  /// Workspace-relative '/'-separated path of the file: the path part of every name.
  std::string relPath;
  /// Skip requests that cannot be placed (reported in Instrumented::skipped) instead of failing.
  bool skipUnwrappable = false;
  /// Re-parse the result, strip it and compare with the original before answering; any
  /// difference is an Error::Internal (and the edit is refused). On by default.
  bool verify = true;
};

struct Instrumented {
  std::string text;                 // the instrumented text
  std::vector<TextEdit> edits;      // on the original: applyEditsToOriginal(original, edits) == text
  LineMap lines;                    // instrumented line -> original line
  std::vector<PlacedRange> ranges;  // outer before inner, in source order
  std::vector<Skipped> skipped;
  bool addedImport = false;  // `import torch  # kl:import` was added
  std::string api;           // the callee used: "torch.cuda.nvtx.range", "th.cuda.nvtx.range"...
};

/// Places `requests` on `original` (which must hold no managed range: strip it first, or use
/// annotate()). Errors: Error::Invalid for a file with syntax errors, a request that resolves to
/// nothing or cannot be wrapped (unless skipUnwrappable), ranges that overlap without nesting;
/// Error::Unsupported for constructs refused on purpose (e.g. lone CR line endings).
Result<Instrumented> instrument(const SourceFile& original, std::span<const RangeRequest> requests,
                                const Options& options);

/// A FunctionBody request for every function of the file (methods, nested and async included,
/// lambdas excluded), in source order, each with its defLine.
std::vector<RangeRequest> allFunctionBodies(const SourceFile& original);

/// A managed range found in an annotated text.
struct ManagedRange {
  std::string name;                 // decoded name string ("kl:...")
  std::optional<RangeName> parsed;  // when the name parses strictly
  LineSpan lines;                   // the with-statement in the annotated text (header..last line)
  PlacedRange placed;               // the same range described on the stripped original
};

struct Stripped {
  std::string text;                  // the original: every managed range and the import marker gone
  std::vector<TextEdit> edits;       // on the annotated text
  LineMap lines;                     // annotated line -> original line
  std::vector<ManagedRange> ranges;  // outer before inner, source order
  bool removedImport = false;
};

/// Removes every managed (`kl:`) `with` range and the `import torch  # kl:import` line kernlens
/// added; ranges the user wrote (any other name, decorators, push/pop) are never touched.
/// Error::Invalid when the file has syntax errors, or a managed range was edited so that the
/// original bytes cannot be restored exactly (the message names the line).
Result<Stripped> strip(const SourceFile& annotated);

/// An edit of an editor buffer: the edits on the buffer's text and the text they produce.
struct FileEdit {
  std::vector<TextEdit> edits;  // on the given text (one minimal replacement, or none)
  std::string newText;
  std::vector<Skipped> skipped;  // requests not placed (Options::skipUnwrappable)
  size_t ranges = 0;             // managed ranges in newText
};

/// Adds ranges to a file that may already hold managed ranges (kept; their names unchanged).
/// `requests` use the lines of `file` as it is; they are mapped to the original through strip.
Result<FileEdit> annotate(const SourceFile& file, std::span<const RangeRequest> requests, const Options& options);

/// Removes every managed range of `file` (strip() as an edit).
Result<FileEdit> stripEdit(const SourceFile& file);

/// Replaces the innermost managed range whose lines contain `line` (0-based, lines of `file`) by
/// ranges around each of its child statements; a range around a single compound statement is
/// replaced by ranges around the statements of its bodies. Error::NotFound when no managed range
/// contains the line; Error::Invalid when the range has nothing finer to wrap.
Result<FileEdit> refine(const SourceFile& file, uint32_t line, const Options& options);

/// The children refine() would place for the managed range `index` of strip(file).ranges, as
/// requests on the ORIGINAL. For the planner: "what would refining this range wrap?".
Result<std::vector<RangeRequest>> refinedChildren(const SourceFile& original, const PlacedRange& range);

/// Keeps the annotations of a profiling run: the ranges `runRanges` (requests on the original the
/// run instrumented, e.g. OverlayFile::requests) are added to `file`, which may hold managed
/// ranges already. When `runOriginal` is given and differs from strip(file).text the file changed
/// since the run: Error::Invalid ("re-run or re-plan").
Result<FileEdit> keep(const SourceFile& file, std::span<const RangeRequest> runRanges, const Options& options,
                      std::optional<std::string_view> runOriginal = {});

/// One minimal replacement turning `from` into `to` (common prefix and suffix kept); empty when
/// equal.
std::vector<TextEdit> minimalEdit(std::string_view from, std::string_view to);

}  // namespace kl::nvtx
