// Per-line results of one profiling round: what every `kl:` range (a line span of a file)
// launched. Plain data, converted by runner::lineResults() from the round's RangeTable, written by
// Store::writeRound() and read back by the store's queries (editor hints/hovers/lenses).
//
// Lines: `firstLine/lastLine` are the 1-based lines of the ORIGINAL (kernlens-range-free) text,
// exactly as in the range name; `diskFirst/diskLast` are the same span on the file as it was on
// disk when profiled (they differ only when the file held kept kernlens ranges). Editors use the
// disk lines against the snapshot of the file (Store::snapshot) to re-map onto edited buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kl::store {

/// One kernel (or memcpy/memset) name and what it cost within a span.
struct KernelStat {
  std::string name;       // GpuOp name (demangled kernel name, "[CUDA memcpy HtoD]", ...)
  std::string shortName;  // kernel short name when known, else == name
  std::string kind;       // "kernel" | "memcpy" | "memset" | "graph"
  int64_t launches = 0;
  int64_t gpuNs = 0;
  /// "forward", "backward" / "recompute" or a training-step kind ("optimizer", "zero_grad",
  /// "grad-clip", "amp-scaler"; attribution::passName): launched by the backward pass for a forward op of
  /// this span (attribution::passName). A backward kernel is a separate entry from a forward one.
  std::string pass = "forward";
  bool backward() const { return pass == "backward" || pass == "recompute"; }
};

/// One managed range (a line span): statistics over all its invocations in the round.
struct SpanResult {
  std::string rangeName;      // "kl:pkg/model.py:12-14:label"
  std::string path;           // workspace-relative, '/'-separated
  uint32_t firstLine = 0, lastLine = 0;  // 1-based, original text (as in the name)
  uint32_t diskFirst = 0, diskLast = 0;  // 1-based, the file as it was on disk
  std::string label;
  std::string function;       // qualname of the innermost function containing the span ("" = module)
  bool functionBody = false;  // the span is a whole function body (round 0's outer range)
  std::string parentRange;    // name of the enclosing kl: range ("" = outermost)
  int32_t depth = 0;          // nesting depth among kl: ranges
  int64_t invocations = 0;
  // Inclusive: every op launched while the range was open (nested ranges included).
  int64_t launches = 0;
  int64_t gpuNs = 0;
  uint32_t distinctKernels = 0;
  // Exclusive: ops whose innermost kl: range is this one.
  int64_t exclusiveLaunches = 0;
  int64_t exclusiveGpuNs = 0;
  int64_t exclusiveBackwardGpuNs = 0;  // part of exclusiveGpuNs launched by the backward pass
  // Per invocation (inclusive) distinct kernel names: min/max count and the distinct sets.
  uint32_t minKernelsPerInvocation = 0, maxKernelsPerInvocation = 0;
  uint32_t distinctKernelSets = 0;
  std::vector<std::vector<std::string>> kernelSets;  // the distinct sets (names sorted), at most 16
  /// Exclusive kernels by name, most GPU time first: the kernel -> source mapping of this span.
  std::vector<KernelStat> kernels;
  /// Atomic: no kl: range nested inside it was seen (a leaf line span).
  bool leaf = true;
  /// The loop's verdict (RangeVerdict, written after its decisions; "" when none or not atomic).
  std::string atomicReason;
  std::string note;
  std::string suggestFocus;
};

/// What the convergence loop concluded about one range of a recorded round, written onto it by
/// Store::annotateRanges once the loop has decided (planner::LineResult holds the same facts).
struct RangeVerdict {
  std::string rangeName;
  /// "library" | "unfollowed" | "budget" | "no_source" when the range is an atomic line, else "".
  std::string atomicReason;
  std::string note;          // why atomic / other remark ("launches no kernel matching --kernel")
  std::string suggestFocus;  // FILE::QUALNAME to profile as the focus instead ("" = none)
};

/// GPU ops that no span owns, grouped by (name, reason).
struct UnmappedKernel {
  std::string name;
  std::string kind;
  /// "no_launch_call" (no API call with its correlation id), "outside_kl_ranges" (launched
  /// outside every kl: range), "bad_range_name" (innermost kl: range name does not parse).
  std::string reason;
  int64_t launches = 0;
  int64_t gpuNs = 0;
};

struct LineResults {
  std::vector<SpanResult> spans;       // sorted by (path, firstLine, lastLine desc)
  std::vector<UnmappedKernel> unmapped;  // most GPU time first
  int64_t totalOps = 0;                // GPU ops in the profile
  int64_t totalGpuNs = 0;
  int64_t mappedOps = 0;               // ops owned by some span
  int64_t klRanges = 0;                // kl: range invocations seen
  std::vector<std::string> badRangeNames;  // kl: names that failed the strict parser (distinct)
  bool emulated = false;               // from ProfileModel::meta.emulated
  std::vector<std::string> warnings;
};

}  // namespace kl::store
