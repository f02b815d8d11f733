// RangeTable: what every managed (`kl:`) range launched in one profile — THE per-range
// aggregation of a round. Computed once per round (tabulateRanges) from one attribution run; the
// planner decides on it, the store persists it (runner::spanResults), and the results layer
// publishes it (results::buildFromProfile). Plain data with strings (no StrId), so it outlives
// the ProfileModel and can be built by hand in tests.
//
// Rules (exactly):
//  - Managed ranges: counted ranges (attribution Options) whose text starts with
//    nvtx::kNamePrefix. Each distinct text is one RangeEntry (all its invocations), when
//    nvtx::parseName accepts it; texts it rejects are listed in badRangeNames and own nothing.
//  - Inclusive numbers: every GPU op whose launch happened while an invocation was open
//    (attribution's RangeStats, summed over invocations). Per invocation the distinct kernel
//    names launched inside it (inclusive) give min/max and the distinct inclusive kernelSets.
//  - Exclusive numbers: the op's OWNER is the innermost managed range of its stack (non-managed
//    ranges in the stack are skipped). Every GPU op (kernel, memcpy, memset) counts as one
//    launch. Per invocation: the number and the distinct names of its exclusive ops give
//    maxExclusivePerInvocation / maxDistinctPerInvocation and the exclusive `variants`.
//  - Unmapped ops, grouped by (name, reason): UnmappedReason.
//  - parentRange: the tightest enclosing managed range of the first invocation that has one;
//    depth follows parentRange by name; leaf: no managed range names it as parent.
//
// Extending: a new per-kernel fact (a flag, an observed callee, a reason) is a field of
// KernelEntry filled in addLaunch() (every attributed op passes through it, here and in the
// Python-stack results) and combined in mergeKernel(); a per-range fact is a field of RangeEntry
// filled in tabulateRanges().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/attribution/attribution.h"
#include "core/profile/model.h"
#include "core/support/cancel.h"
#include "core/support/result.h"

namespace kl::attribution {

/// Why a GPU op belongs to no range entry.
enum class UnmappedReason : uint8_t {
  NoLaunchCall,   // no API call with its (process, correlationId) in the capture window
  OutsideRanges,  // launched outside every managed range on its thread
  BadRangeName,   // its innermost managed range's name does not parse
};
/// "no_launch_call" | "outside_kl_ranges" | "bad_range_name" (the stored / JSON spelling).
std::string_view unmappedReasonName(UnmappedReason r);
/// The reason unmappedReasonName spells `name`; nullopt for any other text.
std::optional<UnmappedReason> unmappedReasonFromName(std::string_view name);

/// One GPU op name launched EXCLUSIVELY inside one range entry, over all its launches, per pass
/// (an entry's kernels are keyed by (name, pass, noForwardOwner)).
struct KernelEntry {
  std::string name;       // GpuOp name (demangled kernel name, "[CUDA memcpy HtoD]", ...)
  std::string shortName;  // base name when the profile has one, else == name
  std::string fullName;   // the demangled name when the profile has one, else == name
  profile::GpuOpKind kind = profile::GpuOpKind::Kernel;
  int64_t launches = 0;
  int64_t gpuNs = 0;
  int64_t minNs = 0, maxNs = 0;
  std::array<int32_t, 3> grid{0, 0, 0};  // of the first launch; 0 = unknown
  std::array<int32_t, 3> block{0, 0, 0};
  bool shapeVaries = false;       // a later launch had another grid/block
  std::vector<uint32_t> streams;  // distinct stream ids, ascending
  /// Forward, or launched by the backward pass (Backward / Recompute) for a forward op of this
  /// range, or inside a training-step scope (Optimizer, ZeroGrad, GradClip, AmpScaler)
  /// (attribution's OpAttribution::pass): a backward kernel is a separate entry from a forward
  /// kernel of the same name.
  Pass pass = Pass::Forward;
  /// Backward work of no forward op (gradient accumulation, engine housekeeping): it stays on the
  /// range that called backward().
  bool noForwardOwner = false;
  bool backward() const { return isBackwardPass(pass); }
};

/// Adds GPU op `op` of `m` to `k` (the first launch fills names, kind and shape; pass and
/// noForwardOwner come from `attr` when given and it covers the op).
void addLaunch(KernelEntry& k, const profile::ProfileModel& m, uint32_t op, const Attribution* attr = nullptr);
/// The pass of GPU op `op` in `attr` (Forward when `attr` does not cover it) and whether it is
/// backward work with no forward owner.
std::pair<Pass, bool> opPass(const Attribution& attr, uint32_t op);
/// Adds the launches of `k` (same op name) to `into`; `into` keeps its pass (a caller merging
/// across passes, such as the editor's per-line view, gets the first entry's pass).
void mergeKernel(KernelEntry& into, const KernelEntry& k);

/// A distinct set of kernel names (sorted) and how many invocations had exactly it.
struct KernelSet {
  std::vector<std::string> kernels;
  uint32_t invocations = 0;
};

/// One managed range text: statistics over all its invocations.
struct RangeEntry {
  std::string name;                      // "kl:pkg/model.py:12-14:label"
  std::string path;                      // parsed from the name (workspace-relative)
  uint32_t firstLine = 0, lastLine = 0;  // 1-based, original text (as in the name)
  std::string label;
  std::string parentRange;  // "" = outermost
  int32_t depth = 0;        // nesting depth among managed ranges
  bool leaf = true;         // no managed range nested inside it was seen
  uint32_t invocations = 0;
  // Inclusive.
  int64_t launches = 0;
  int64_t gpuNs = 0;
  std::vector<std::string> inclusiveKernels;  // distinct kernel names launched inside, sorted
  uint32_t minKernelsPerInvocation = 0, maxKernelsPerInvocation = 0;
  std::vector<KernelSet> kernelSets;  // distinct inclusive sets (empty included), most invocations first
  // Exclusive.
  int64_t exclusiveLaunches = 0;
  int64_t exclusiveGpuNs = 0;
  int64_t exclusiveBackwardGpuNs = 0;      // part of exclusiveGpuNs launched by the backward pass
  uint32_t maxExclusivePerInvocation = 0;  // the most exclusive ops one invocation launched
  uint32_t maxDistinctPerInvocation = 0;   // ... distinct exclusive names
  std::vector<KernelSet> variants;         // distinct non-empty exclusive sets, most invocations first
  std::vector<KernelEntry> kernels;        // most GPU time first, then name
  uint32_t distinctKernels() const { return static_cast<uint32_t>(inclusiveKernels.size()); }
};

/// GPU ops no entry owns, grouped by (name, reason).
struct UnmappedEntry {
  std::string name;
  profile::GpuOpKind kind = profile::GpuOpKind::Kernel;
  UnmappedReason reason = UnmappedReason::OutsideRanges;
  int64_t launches = 0;
  int64_t gpuNs = 0;
};

struct RangeTable {
  std::vector<RangeEntry> ranges;       // sorted by name
  std::vector<UnmappedEntry> unmapped;  // most GPU time first, then (name, reason)
  int64_t totalOps = 0, totalGpuNs = 0;
  int64_t mappedOps = 0;                   // ops owned by an entry
  int64_t invocations = 0;                 // managed range invocations (NVTX pushes), bad names included
  std::vector<std::string> badRangeNames;  // distinct, sorted
  bool emulated = false;                   // ProfileModel::meta.emulated
  std::vector<std::string> warnings;       // ProfileModel::meta.warnings

  /// The entry of range `name`, or nullptr.
  const RangeEntry* find(std::string_view name) const;
  RangeEntry* find(std::string_view name);
  /// The entry of `name`, added (name parsed, order kept) when absent; for tables built by hand.
  /// Error::Invalid when nvtx::parseName rejects the name.
  Result<RangeEntry*> insert(std::string_view name);
};

/// The attribution options of managed ranges (kl: prefix, no ATen ops, no Python frames).
Options managedRangeOptions(const CancellationToken& cancel = {});

/// Attributes `model` once (managedRangeOptions) and aggregates. Fails only when cancelled.
Result<RangeTable> tabulateRanges(const profile::ProfileModel& model, const CancellationToken& cancel = {});

/// Aggregates an existing attribution of `model` (any Options; non-managed ranges are skipped).
Result<RangeTable> tabulateRanges(const profile::ProfileModel& model, const Attribution& attr,
                                  const CancellationToken& cancel = {});

}  // namespace kl::attribution
