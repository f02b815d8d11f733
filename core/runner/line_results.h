// Per-line results as the store keeps them: a round's RangeTable (core/attribution/range_table.h,
// the one per-range aggregation) -> one attribution::LineResult per managed range name (a line
// span of a file, attribution::lineResult), plus the GPU ops no span owns, with the reason. It
// only adds what needs the sources, never re-attributes:
//
//  - Lines: names carry ORIGINAL 1-based lines (kept in LineResult::range); `line/lastLine` are
//    the disk lines from the overlay's diskLines (files holding kept ranges), else the same.
//    The enclosing function (qualname) comes from the original text (overlay, else the
//    workspace file stripped of kernlens ranges).
//  - Ranges the overlay placed but that never ran appear with invocations == 0.
//  - body: the overlay placed the range around a whole function body.
#pragma once

#include <filesystem>

#include "core/attribution/range_table.h"
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

/// Converts one round's table. Fails only when cancelled.
Result<store::RoundResults> lineResults(const attribution::RangeTable& table, const LineResultOptions& opts = {});

}  // namespace kl::runner
