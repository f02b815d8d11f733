// LineResult: THE per-source-location result of kernlens — GPU work attributed to one line span
// of one workspace file. One type for every layer that speaks of lines: the planner decides on
// and reports them (planner::LoopResult::lines), the store writes and reads them (one per managed
// range of a round), and the results layer publishes them to editors and the CLI
// (results::FileResult::lines). Plain data, copyable, safe to share read-only between threads.
//
// Lines are 0-based and count '\n' only (the core/python convention), in the text the result
// is positioned in: the planner's model of the file, the file as it was on disk when profiled
// (store), or the snapshot (results). Front ends add 1 where users read line numbers.
//
// Producers fill what they know and leave the rest at its default: the loop's verdict (atomic,
// notes) only comes from the planner, the range's inclusive numbers (`range`) from managed
// ranges, CPU sync time and call-line callees from the results layer.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/attribution/autograd_link.h"
#include "core/attribution/range_table.h"

namespace kl::attribution {

/// One GPU op name (kernel, memcpy, memset) launched exclusively from one line span, over all its
/// launches, per pass: the published form of a KernelEntry (kernelStat()).
struct KernelStat {
  std::string name;      // short name for display ("vectorized_elementwise_kernel")
  std::string fullName;  // demangled name when known, else == opName
  std::string opName;    // the GpuOp name as the profile has it (the store's key), else == fullName
  profile::GpuOpKind kind = profile::GpuOpKind::Kernel;  // spelled by profile::gpuOpKindName
  uint64_t launches = 0;
  int64_t totalNs = 0;
  int64_t minNs = 0;  // 0 = not known (results read back from the store)
  int64_t maxNs = 0;
  std::array<int32_t, 3> grid{0, 0, 0};  // of the first launch; 0 = unknown
  std::array<int32_t, 3> block{0, 0, 0};
  bool shapeVaries = false;       // later launches had another grid/block
  std::vector<uint32_t> streams;  // distinct stream ids, ascending
  /// Forward, Backward / Recompute (launched by the backward pass for a forward op of this line),
  /// or a training-step kind (Optimizer, ZeroGrad, GradClip, AmpScaler), spelled by passName. A
  /// line's kernels of each pass are separate entries, even with the same name.
  Pass pass = Pass::Forward;
  /// Backward work of no forward op (gradient accumulation, engine housekeeping): it stays on the
  /// line that called backward().
  bool noForwardOwner = false;
  /// Launched by autograd's backward pass (backward or recompute).
  bool backward() const { return isBackwardPass(pass); }
  /// Launched inside a training-step scope (optimizer, zero_grad, grad-clip, amp-scaler).
  bool stepPass() const { return isStepPass(pass); }
  int64_t avgNs() const { return launches ? totalNs / static_cast<int64_t>(launches) : 0; }
};

/// The published form of an aggregated kernel entry.
KernelStat kernelStat(const KernelEntry& k);

/// A workspace line that ran inside a call line (a callee's statement or body), with the GPU
/// time measured inside it during the call line's invocations.
struct CalleeLine {
  std::string path;      // workspace-relative
  uint32_t line = 0;     // 0-based, in that file's snapshot
  std::string label;     // the statement head / range label (may be empty)
  std::string function;  // qualname of the function holding it ("" = module level)
  int64_t gpuNs = 0;     // inclusive, during this call line
};

/// How a line span was measured when a managed (`kl:`) range wrapped it: the range and its
/// inclusive numbers over all its invocations (the stored round's view of a RangeEntry).
struct RangeInfo {
  std::string name;                      // "kl:pkg/model.py:12-14:label"; "" = no managed range
  uint32_t firstLine = 0, lastLine = 0;  // 1-based, ORIGINAL (kernlens-range-free) text, as in the name
  std::string parent;                    // the enclosing managed range ("" = outermost)
  int32_t depth = 0;                     // nesting depth among managed ranges
  bool leaf = true;                      // no managed range nested inside it was seen
  // Inclusive: every op launched while the range was open (nested ranges included).
  int64_t launches = 0;
  int64_t gpuNs = 0;
  uint32_t distinctKernels = 0;
  // Per invocation (inclusive) distinct kernel names: min/max count and the distinct sets.
  uint32_t minKernelsPerInvocation = 0, maxKernelsPerInvocation = 0;
  uint32_t distinctKernelSets = 0;
  std::vector<std::vector<std::string>> kernelSets;  // the distinct sets (names sorted), at most a few
};

/// Why the convergence loop left a line atomic (it launches several kernels per invocation and
/// nothing finer was wrapped). Spelled by atomicReasonName wherever it is written out.
enum class AtomicReason : uint8_t {
  None,        // not atomic, or atomic with no reason given (rounds stored before verdicts were)
  Library,     // its launches come from code outside the workspace: a final answer
  Unfollowed,  // a workspace function ran beneath it that could not be wrapped (the note says which and why)
  Budget,      // a finer range was refused for the NVTX budget
  NoSource,    // a workspace function beneath it has no readable source
};
/// "" (None), "library", "unfollowed", "budget", "no_source" (the JSON / store / text spelling).
const char* atomicReasonName(AtomicReason r);
/// The reason atomicReasonName spells `name` ("" is None); nullopt for any other text.
std::optional<AtomicReason> atomicReasonFromName(std::string_view name);

/// GPU work attributed to one source location (a statement, a range of lines, a function body).
struct LineResult {
  std::string path;       // workspace-relative, '/'-separated
  uint32_t line = 0;      // first line (0-based) of the statement / range
  uint32_t lastLine = 0;  // last line (0-based, inclusive)
  std::string function;   // qualified name of the enclosing function ("" = module level)
  std::string label;      // the range label or statement head, for messages (may be empty)

  // Exclusive GPU work: ops whose innermost attributed location is this one.
  int64_t gpuNs = 0;                // sum of op durations (not a union)
  int64_t backwardNs = 0;           // part of gpuNs launched by the backward pass for this line's ops
  uint64_t ops = 0;                 // GPU ops (launches) attributed here
  uint32_t invocations = 0;         // range invocations (kl: ranges); 0 for Python-stack attribution
  std::vector<KernelStat> kernels;  // most GPU time first, then name
  /// > 1 entries: dynamic dispatch (different exclusive kernel sets per invocation).
  std::vector<KernelSet> variants;
  bool body = false;  // a whole function body (launches outside its statement ranges)

  // The loop's verdict (planner; written onto the round's stored range by Store::annotateRanges,
  // and read back with it).
  bool atomic = false;  // launches several kernels per invocation; nothing finer to wrap
  /// Why a line is atomic (None when it is not); `note` says more.
  AtomicReason atomicReason = AtomicReason::None;
  /// Unfollowed / Budget beneath a workspace function: that function as FILE::QUALNAME, to
  /// profile as the focus instead ("" otherwise).
  std::string suggestFocus;
  bool noMatchingKernel = false;  // --kernel: none of its kernels matches (shown, not counted)
  std::string note;               // why atomic / out of focus / not converged
  /// The note as text output and logs show it: with "; profile it as the focus: FILE::QUALNAME"
  /// when there is a function to focus on.
  std::string noteWithFocus() const {
    return suggestFocus.empty() ? note : note + "; profile it as the focus: " + suggestFocus;
  }

  // What editors add.
  /// CPU time blocked in synchronising CUDA calls made from this line (analysis/sync.h: explicit
  /// *Synchronize and implicit blocking copies), each call's duration once; loaded profiles only.
  int64_t syncNs = 0;
  uint32_t syncCalls = 0;
  /// The range spans more than one statement (its first and last lines differ), so kernels
  /// here could be split further by refining (the diagnostic "range covers N kernels").
  bool refinable = false;
  /// Inclusive GPU time: every op launched while this line ran, the work of the workspace
  /// functions it called included; 0 = not measured. A pure call line (its kernels are launched
  /// in workspace callees) has gpuNs == 0, no kernels and inclusiveNs > 0.
  int64_t inclusiveNs = 0;
  /// The callee lines (in other functions) measured inside it, most GPU time first.
  std::vector<CalleeLine> callees;

  /// The managed range that measured it (stored rounds); range.name is "" otherwise.
  RangeInfo range;

  /// Calls workspace code: its time is mostly its callees' (the hint says "total").
  bool isCallLine() const { return !callees.empty() && inclusiveNs > gpuNs; }
  /// Distinct kernel names (a name launched in two passes counts once).
  uint32_t distinctKernels() const;
  /// The training-step kinds of its kernels by passName, sorted and joined by '+'
  /// ("optimizer", "amp-scaler+optimizer"); "" when it launched none inside a step scope.
  std::string stepKind() const;
};

/// The exclusive result of one managed range entry, positioned at the range's own lines
/// (line = firstLine - 1): kernels, times, invocations, variants and `range` filled from `e`.
/// Every producer that publishes a RangeTable starts from this.
LineResult lineResult(const RangeEntry& e, size_t maxKernelSets = 16);

}  // namespace kl::attribution
