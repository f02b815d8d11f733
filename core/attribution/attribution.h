// Attribution: every GPU op -> the API call that launched it -> every range open on the
// launching thread around that call (DESIGN.md §5). Pure function of a ProfileModel.
//
// Rules (exactly):
//  1. op -> launch call: same correlationId AND same process (GpuOp::process == the call's
//     thread's process). Never by correlation id alone (ids are per process). Kineto: never
//     via "External id". CUDA graphs: node kernels carry the correlation id of their
//     cudaGraphLaunch, so they land on the graph launch and inherit its ranges.
//  2. launch call -> ranges: ranges of the counted kinds on the SAME thread as the call (the
//     range's START thread) with range.start <= call.start and call.end <= range.end. The GPU
//     execution time plays no part (a range that closed before its kernels ran still owns
//     them). A start/end range that ended on another thread still belongs to its start
//     thread (nsys' own reports drop such ranges; we keep them — see Options).
//  3. stack = all such ranges ordered outermost -> innermost by (start asc, end desc, index);
//     innermost = the latest start.
//  4. Backward work (Options::linkBackward): a launch inside an autograd backward-node range is
//     looked up, by rule 2, at the forward op that created the node (its thread, its interval)
//     instead of at the call — on a GPU the backward runs on the autograd device thread, outside
//     every range of the thread that called backward(). See autograd_link.h.
//  5. Training-step scopes (with linkBackward): a forward-pass launch inside an optimizer step,
//     zero_grad, gradient clipping or AMP GradScaler range (stepKindOf) takes that kind as its
//     pass; its ranges are looked up as usual (it stays on the line that called the step).
// Algorithm: launch calls found through a dense per-process correlation-id index; ranges and
// launch calls (already in start order in the model) swept together once, with a set of open
// ranges per thread whose prefix is the call's stack (shared by consecutive calls under the
// same ranges); no general sorts for nested data, no per-thread copies of the tables, no range
// x launch loops, no SQL.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/attribution/autograd_link.h"
#include "core/profile/model.h"
#include "core/support/cancel.h"
#include "core/support/result.h"

namespace kl::attribution {

using profile::kNone;
using profile::StrId;

enum class Unattributed : uint8_t {
  None,           // attributed: has a launch call and at least one counted range
  NoLaunchCall,   // no API call with its (process, correlationId) in the capture window
  OutsideRanges,  // launched, but by a call outside every counted range on its thread
};
const char* unattributedName(Unattributed u);  // "", "no_launch_call", "outside_ranges"

struct Options {
  // Which range kinds count for containment.
  bool nvtxPushPop = true;
  bool nvtxStartEnd = true;
  bool userAnnotation = true;  // Kineto record_function ranges
  bool cpuOp = false;          // Kineto ATen ops (off: they would become the innermost range)
  /// Start/end ranges whose end was recorded on another thread (kept by default, see rule 2).
  bool crossThreadStartEnd = true;
  /// Only ranges whose text starts with this prefix count (e.g. "kl:"); empty = all.
  std::string namePrefix;
  /// Only ranges in this NVTX domain count; empty = all domains.
  std::string domain;
  /// Kineto: link launches to python_function frames (innermost frame containing the call).
  bool pythonFrames = true;
  /// Backward launches take the ranges (and Python frames) of the forward op that created their
  /// autograd node, through sequence numbers (autograd_link.h). Off: rule 2 for every launch.
  bool linkBackward = true;
  /// Per-range and per-name statistics (ranges(), kernelSet(), names()). Off: only the per-op
  /// results (launch, stack, frame, reason) are computed and ranges()/names() are empty — for
  /// analyses that read nothing else (tree), at a fraction of the time and memory.
  bool rangeStats = true;
  CancellationToken cancel;
};

/// Attribution of one GPU op, as Attribution::op(i) assembles it (a value: everything but the
/// launch index is a property of the launch call and is stored once per call).
struct OpAttribution {
  uint32_t launch = kNone;        // index into apiCalls
  uint32_t stackSize = 0;         // ranges in stack(i); 0 when unattributed
  uint32_t pyFrame = kNone;       // Kineto: innermost python_function frame around the launch
  uint32_t backwardNode = kNone;  // innermost backward-node range around the launch (autograd link)
  uint32_t forwardOp = kNone;     // the forward op range whose ranges the op took (kNone: its own)
  Unattributed reason = Unattributed::NoLaunchCall;
  Pass pass = Pass::Forward;  // Backward / Recompute: launched inside a backward node; a step kind: inside its scope
};

/// Statistics of one range invocation (index-aligned with ProfileModel::ranges; ranges of
/// kinds not counted stay zero with counted == false).
struct RangeStats {
  uint32_t ops = 0;                  // GPU ops whose stack contains the range (inclusive)
  uint32_t exclusiveOps = 0;         // ... whose innermost range it is
  uint32_t launches = 0;             // distinct launch calls contained (inclusive)
  uint32_t distinctKernels = 0;      // distinct kernel names (GpuOp::name) among inclusive kernels
  int64_t inclusiveGpuNs = 0;        // sum of durations of inclusive ops (not a union of intervals)
  int64_t exclusiveGpuNs = 0;        // sum of durations of ops whose innermost range it is
  int64_t gpuStart = 0, gpuEnd = 0;  // envelope of inclusive ops (projection); 0,0 when none
  uint32_t kernelSetBegin = 0;       // this invocation's distinct kernel names, sorted by StrId,
  uint32_t kernelSetSize = 0;        //   in Attribution::kernelSetPool
  uint32_t parent = kNone;           // tightest enclosing counted range on the same thread
  uint32_t depth = 0;                // 0 = outermost
  bool counted = false;              // range passed Options (kind, prefix, domain)
};

/// Statistics aggregated per range text (all counted invocations with the same text).
struct NameStats {
  StrId name = profile::kEmptyStr;
  uint32_t invocations = 0;
  uint64_t ops = 0;                      // ops with this name anywhere in their stack (counted once per op)
  uint64_t launches = 0;                 // distinct launch calls, counted once per call
  uint32_t distinctKernels = 0;          // across all invocations
  int64_t inclusiveGpuNs = 0;            // each op counted once even if the name nests in itself
  int64_t exclusiveGpuNs = 0;            // ops whose innermost range has this name
  uint32_t minKernelsPerInvocation = 0;  // distinct kernels per invocation: min / max
  uint32_t maxKernelsPerInvocation = 0;
  uint32_t distinctKernelSets = 0;  // number of different per-invocation kernel sets
};

/// Memory: per GPU op only its launch call index (4 bytes); per API call the position of its
/// stack in a shared pool (4 bytes; consecutive calls under the same ranges share one stack),
/// plus the innermost Python frame (Kineto) and the autograd link when the profile has them.
class Attribution {
 public:
  /// Number of GPU ops attributed (== ProfileModel::gpuOps.size()).
  size_t opCount() const { return launch_.size(); }
  /// The attribution of op i (a value assembled from its launch call's results).
  OpAttribution op(uint32_t i) const {
    OpAttribution o;
    o.launch = launch_[i];
    if (o.launch == kNone) return o;  // reason NoLaunchCall
    const uint32_t c = o.launch;
    o.stackSize = static_cast<uint32_t>(stacks_.get(callStack_[c]).size());
    o.reason = o.stackSize ? Unattributed::None : Unattributed::OutsideRanges;
    if (!callFrame_.empty()) o.pyFrame = callFrame_[c];
    if (!links_.empty()) {
      o.pass = links_[c].pass;
      o.backwardNode = links_[c].node;
      o.forwardOp = links_[c].forwardOp;
    }
    return o;
  }
  /// Index of op i's launch call in apiCalls, kNone when it has none.
  uint32_t launch(uint32_t i) const { return launch_[i]; }
  /// Range indices of op i's stack, outermost -> innermost (empty when unattributed).
  std::span<const uint32_t> stack(uint32_t i) const {
    const uint32_t c = launch_[i];
    return c == kNone ? std::span<const uint32_t>() : callStack(c);
  }
  /// Innermost range of op i, or kNone.
  uint32_t innermost(uint32_t i) const {
    auto s = stack(i);
    return s.empty() ? kNone : s.back();
  }
  const std::vector<RangeStats>& ranges() const { return ranges_; }
  /// Kernel names (StrId, sorted) launched inside range invocation r (inclusive).
  std::span<const StrId> kernelSet(uint32_t r) const {
    const auto& s = ranges_[r];
    return {kernelSetPool_.data() + s.kernelSetBegin, s.kernelSetSize};
  }
  /// Per range text, sorted by inclusive GPU time (descending), then name.
  const std::vector<NameStats>& names() const { return names_; }
  /// Range texts joined outermost -> innermost with `sep` (the export's nvtx_path).
  std::string path(const profile::ProfileModel& m, uint32_t op, std::string_view sep = " > ") const;

  uint32_t attributedCount() const { return counts_[0]; }
  uint32_t noLaunchCount() const { return counts_[1]; }
  uint32_t outsideRangesCount() const { return counts_[2]; }

 private:
  friend Result<Attribution> attribute(const profile::ProfileModel&, const Options&);
  friend struct AttributeSteps;  // attribute()'s steps (attribution.cpp)
  /// The stack of launch call c.
  std::span<const uint32_t> callStack(uint32_t c) const { return stacks_.get(callStack_[c]); }
  /// Size-prefixed stacks in fixed blocks (a stack never straddles two), so the pool grows
  /// without reallocating or copying what it holds: its peak is its size plus one block.
  /// A handle is block << kPosBits | position; handle 0 is the empty stack.
  class StackPool {
   public:
    static constexpr uint32_t kPosBits = 18, kBlock = 1u << kPosBits;
    /// Room for a stack of k ranges: writes the size, returns where the k ranges go and
    /// sets `handle`. A stack longer than a block gets a block of its own. nullptr when the
    /// handles are used up (2^(32 - kPosBits) blocks, 2^32 entries: the limit of a 4-byte handle).
    uint32_t* append(uint32_t k, uint32_t& handle);
    std::span<const uint32_t> get(uint32_t handle) const {
      if (handle == 0) return {};
      const uint32_t* p = blocks_[handle >> kPosBits].get() + (handle & (kBlock - 1));
      return {p + 1, p[0]};
    }

   private:
    std::vector<std::unique_ptr<uint32_t[]>> blocks_;
    uint32_t used_ = kBlock;  // entries used in the last block (full: a new block next)
  };
  std::vector<uint32_t> launch_;     // per op: launch call, kNone = none
  std::vector<uint32_t> callStack_;  // per API call: its stack's handle in stacks_ (0 = empty)
  StackPool stacks_;
  std::vector<uint32_t> callFrame_;  // per API call: innermost Python frame; empty without frames
  struct CallLink {
    uint32_t node, forwardOp;  // LinkedCall::node / forwardOp
    Pass pass;
  };
  std::vector<CallLink> links_;  // per API call: autograd link / step pass; empty without either
  std::vector<RangeStats> ranges_;
  std::vector<StrId> kernelSetPool_;
  std::vector<NameStats> names_;
  uint32_t counts_[3] = {0, 0, 0};
};

/// Runs attribution. Fails when cancelled, and (unsupported) when the distinct stacks need more
/// than 2^32 pool entries.
Result<Attribution> attribute(const profile::ProfileModel& model, const Options& opts = {});

/// How many times attribute() ran in this process (a diagnostic: tests check that a profiling
/// round attributes its profile exactly once).
uint64_t attributionRuns();

/// Index of the launch call of every op by (process, correlationId), kNone where absent.
/// Exposed for analyses that need only the launch link (e.g. launch overhead).
std::vector<uint32_t> linkLaunches(const profile::ProfileModel& model);

/// Source location of a GPU op through its innermost Python frame (Kineto).
struct SourceLocation {
  std::string_view file;
  int32_t line = 0;
  std::string_view function;
  bool known() const { return !file.empty() && line > 0; }
};
SourceLocation sourceOf(const profile::ProfileModel& m, const Attribution& a, uint32_t op);

}  // namespace kl::attribution
