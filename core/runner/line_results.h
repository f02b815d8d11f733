// Per-line results: an attributed profile with `kl:` ranges -> one SpanResult per managed range
// name (a line span of a file), plus the GPU ops no span owns, with the reason. The planner calls
// this every round; the store persists the result as is.
//
// Rules:
//  - Only ranges whose text starts with `kl:` count; each name goes through nvtx::parseName
//    (strict). Names that fail are listed in badRangeNames and own nothing.
//  - Inclusive numbers of a span: every GPU op whose launch happened while one of its
//    invocations was open (attribution's RangeStats, summed over invocations).
//  - Exclusive numbers and the span's kernel list: ops whose INNERMOST kl: range (walking the
//    op's range stack from the inside out, skipping non-kl ranges) is this span. Every GPU op
//    (kernel, memcpy, memset) counts as one launch.
//  - Per invocation: the distinct kernel names launched inside it (inclusive); min/max of their
//    count and the distinct sets (the planner's "one kernel per invocation?" test).
//  - Unmapped ops: no launch call in the capture ("no_launch_call"), launched outside every kl:
//    range ("outside_kl_ranges"), innermost kl: range name unparsable ("bad_range_name").
//  - Lines: names carry ORIGINAL 1-based lines; disk lines come from the overlay's diskLines
//    (files holding kept ranges), else equal. The enclosing function (qualname) comes from the
//    original text (overlay, else the workspace file stripped of kernlens ranges).
//  - Ranges the overlay placed but that never ran appear with invocations == 0.
#pragma once

#include <filesystem>

#include "core/attribution/attribution.h"
#include "core/nvtx/overlay.h"
#include "core/profile/model.h"
#include "core/store/results.h"
#include "core/support/cancel.h"
#include "core/support/result.h"

namespace kl::runner {

struct LineResultOptions {
  /// The overlay the round ran with (disk lines, functions, ranges that never ran). Optional.
  const nvtx::Overlay* overlay = nullptr;
  /// Workspace root, to read files a range names that the overlay does not hold. Optional.
  std::filesystem::path workspace;
  size_t maxKernelSets = 16;
  CancellationToken cancel;
};

/// Attributes (kl: ranges only) and aggregates. Fails only when cancelled.
Result<store::LineResults> lineResults(const profile::ProfileModel& model, const LineResultOptions& opts = {});

/// Same from an existing attribution (any Options; non-kl ranges in stacks are skipped).
Result<store::LineResults> lineResults(const profile::ProfileModel& model, const attribution::Attribution& attr,
                                       const LineResultOptions& opts = {});

}  // namespace kl::runner
