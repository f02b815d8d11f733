// ResultSet: what kernlens knows about GPU time per source line, editor-neutral.
//
// One ResultSet = one run (or one loaded profile): per workspace file, per source line (the
// first line of the statement or range the GPU work was attributed to), the kernels launched
// there with their statistics; per function, the totals; the run's provenance; and, when the
// store has one, the previous run's function totals for "change vs previous run".
//
// Both producers fill it: buildFromProfile() (core/results/from_profile.h, kernlens.loadProfile)
// and the results store (core/store, runs of the profiling loop). Consumers (lsp/features,
// CLI) read it; it is plain data, copyable, and safe to share read-only between threads.
//
// Lines are 0-based and count '\n' only (the core/python convention), in the file's SNAPSHOT
// (the text that was profiled). Mapping onto a live, edited buffer is core/results/remap.h.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/attribution/line_result.h"

namespace kl::python {
class SourceFile;
struct FunctionExtent;
}  // namespace kl::python

namespace kl::results {

/// The per-line result is the one LineResult of kernlens (core/attribution/line_result.h),
/// shared with the planner and the store; here its lines are those of the file's snapshot.
using attribution::CalleeLine;
using attribution::KernelStat;
using attribution::LineResult;

/// Totals of one function (sum over the LineResults inside its line span).
struct FunctionResult {
  std::string qualName;
  uint32_t defLine = 0;  // line of `def` (0-based, snapshot)
  uint32_t lastLine = 0;
  int64_t gpuNs = 0;
  uint64_t ops = 0;
  uint32_t distinctKernels = 0;
  int64_t backwardNs = 0;  // part of gpuNs launched by the backward pass
};

struct FileResult {
  std::string path;  // workspace-relative, '/'-separated
  /// The file's text when it was profiled; results are positioned in it. Empty with
  /// hasSnapshot == false when the producer had no text (results then apply as they are).
  std::string snapshot;
  bool hasSnapshot = false;
  std::vector<LineResult> lines;          // sorted by line, one per line
  std::vector<FunctionResult> functions;  // functions with GPU time, sorted by defLine
  const LineResult* lineAt(uint32_t line) const;
  const FunctionResult* function(std::string_view qualName) const;
};

/// How GPU ops were attributed to lines: through `kl:` NVTX ranges, or the innermost workspace
/// frame of the launch call's Python stack.
enum class AttributionSource : uint8_t { KlRanges, PythonStacks };
/// "kl-ranges" | "python-stacks" (the JSON and text spelling).
const char* attributionSourceName(AttributionSource s);

/// Where a result set comes from: a run of the store, or a profile file loaded as it is.
enum class ResultOrigin : uint8_t { StoredRun, LoadedProfile };

/// Where the numbers come from (shown in hovers).
struct Provenance {
  ResultOrigin origin = ResultOrigin::StoredRun;  // decide on this, never on runId's spelling
  /// The display and JSON spelling: the store's run key, or "profile:<file name>" for a loaded
  /// profile.
  std::string runId;
  std::string profileFile;  // LoadedProfile: the file's name ("" for a stored run)
  std::string backend;      // "nsys", "torch", "emulate", or "loaded"
  AttributionSource source = AttributionSource::PythonStacks;
  std::string profilePath;  // the profile file(s) read
  std::string gpu;          // GPU name(s), "" when unknown
  std::string gitCommit;    // "" when unknown
  bool gitDirty = false;
  std::string command;      // the entry command, "" for loaded profiles
  int64_t createdUnix = 0;  // seconds since the epoch; 0 = unknown
  bool emulated = false;    // emulate backend: every number is modelled, say so
};

/// Attribution bookkeeping for the "K kernels unmapped" diagnostic.
struct Unmapped {
  uint64_t ops = 0;  // GPU ops that map to no workspace line
  int64_t gpuNs = 0;
  uint32_t distinctKernels = 0;
  std::vector<std::string> topKernels;  // up to 5 names, by time
};

struct ResultSet {
  Provenance provenance;
  std::vector<FileResult> files;  // sorted by path
  int64_t totalGpuNs = 0;         // every GPU op in the profile (the denominator of shares)
  uint64_t totalOps = 0;
  Unmapped unmapped;
  /// The previous run's function totals, key functionKey(path, qualName); empty when none.
  std::map<std::string, FunctionResult> previousFunctions;
  std::string previousRunId;

  const FileResult* file(std::string_view path) const;
  bool empty() const { return files.empty(); }
};

/// "path::qualName", the key of previousFunctions.
std::string functionKey(std::string_view path, std::string_view qualName);

/// Sorts lines and functions and recomputes every FileResult's functions from its lines and
/// `spans` (qualName -> [defLine, lastLine], the functions of the snapshot). A line belongs to
/// the innermost function span containing it (the one that starts last). Used by producers
/// after filling `lines` and by remapping after every edit: one sweep over lines and spans
/// sorted by line, O((lines + spans) log + kernels x nesting depth).
struct FunctionSpan {
  std::string qualName;
  uint32_t defLine = 0, lastLine = 0;
};
void computeFunctions(FileResult& file, const std::vector<FunctionSpan>& spans);

/// Function spans of a parsed Python file (python::functionExtents over its tree: statements
/// only, no Module built), in definition order.
std::vector<FunctionSpan> functionSpans(const python::SourceFile& source);
/// The spans of python::functionExtents / flatten(topLevelExtents) (unnamed ones dropped).
std::vector<FunctionSpan> functionSpans(const std::vector<python::FunctionExtent>& extents);
/// The same for a text, parsed here; empty when the text cannot be parsed.
std::vector<FunctionSpan> functionSpans(const std::string& text);

}  // namespace kl::results
