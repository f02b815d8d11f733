// Results follow edits: map a file's results from its profiled snapshot onto the live text.
//
// A line diff (libgit2 git_diff_buffers, no context lines) of snapshot vs live text gives, per
// snapshot line, its live line or "changed". A LineResult survives when every line of its span
// [line, lastLine] is unchanged (it moves with its code); otherwise it is dropped. Function
// totals are recomputed over the surviving lines with the live text's function spans. The file
// is stale whenever the texts differ at all (the numbers were measured on other code).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/results/result_set.h"
#include "core/support/result.h"

namespace kl::results {

/// Per snapshot line (0-based, '\n' lines; size = count('\n') + 1): its live line, or -1 when
/// the line was changed or deleted.
struct LineMap {
  std::vector<int32_t> oldToNew;
  bool identical = true;
  int32_t map(uint32_t oldLine) const {
    return oldLine < oldToNew.size() ? oldToNew[oldLine] : -1;
  }
};

/// Error::Internal only when libgit2 itself fails.
Result<LineMap> diffLines(std::string_view oldText, std::string_view newText);

struct RemappedFile {
  FileResult file;        // lines/functions positioned in the live text; snapshot unchanged
  bool stale = false;     // live text != snapshot
  uint32_t dropped = 0;   // LineResults removed because their lines changed
};

/// `file` onto `liveText`. Without a snapshot the results are returned as they are (not stale).
/// On a diff failure every line is dropped and the file is stale (never wrong positions).
RemappedFile remapFile(const FileResult& file, std::string_view liveText);

}  // namespace kl::results
