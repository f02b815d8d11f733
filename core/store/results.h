// What one profiling round stored: one attribution::LineResult per managed (`kl:`) range (a line
// span of a file, core/attribution/line_result.h), built by runner::lineResults() from the
// round's RangeTable, written by Store::writeRound() (the convergence loop's verdict on each,
// LineResult::atomicReason/note/suggestFocus, by Store::annotateRanges() once it has decided) and
// read back by the store's queries (editor hints/hovers/lenses).
//
// Lines of a stored LineResult: `line/lastLine` are the 0-based lines of the file as it was on
// disk when profiled (the columns disk_first/disk_last hold them 1-based), `range.firstLine/
// lastLine` the 1-based lines of the ORIGINAL (kernlens-range-free) text, exactly as in the range
// name; they differ only when the file held kept kernlens ranges. Editors use the disk lines
// against the snapshot of the file (Store::snapshot) to re-map onto edited buffers. `body` is
// the stored function_body flag.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/attribution/line_result.h"

namespace kl::store {

struct RoundResults {
  std::vector<attribution::LineResult> spans;        // sorted by (path, range.firstLine, range.lastLine desc)
  std::vector<attribution::UnmappedEntry> unmapped;  // GPU ops no span owns, most GPU time first
  int64_t totalOps = 0;                              // GPU ops in the profile
  int64_t totalGpuNs = 0;
  int64_t mappedOps = 0;                   // ops owned by some span
  int64_t klRanges = 0;                    // kl: range invocations seen
  std::vector<std::string> badRangeNames;  // kl: names that failed the strict parser (distinct)
  bool emulated = false;                   // from ProfileModel::meta.emulated
  std::vector<std::string> warnings;
};

}  // namespace kl::store
