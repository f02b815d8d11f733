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
  int32_t map(uint32_t oldLine) const { return oldLine < oldToNew.size() ? oldToNew[oldLine] : -1; }
};

/// Error::Internal only when libgit2 itself fails.
Result<LineMap> diffLines(std::string_view oldText, std::string_view newText);

struct RemappedFile {
  FileResult file;       // lines/functions positioned in the live text; snapshot unchanged
  bool stale = false;    // live text != snapshot
  uint32_t dropped = 0;  // LineResults removed because their lines changed
  /// Per file.lines[i]: its index in the FileResult it was remapped from (so that per-line
  /// data derived once from that FileResult, e.g. labels, follows the line).
  std::vector<uint32_t> sourceIndex;
};

/// `file` onto `liveText`. Without a snapshot the results are returned as they are (not stale).
/// On a diff failure every line is dropped and the file is stale (never wrong positions).
/// Function totals use the live text's spans: `liveSpans` when given (e.g. from the editor's
/// own parsed tree), else functionSpans(liveText).
RemappedFile remapFile(const FileResult& file, std::string_view liveText);
RemappedFile remapFile(const FileResult& file, std::string_view liveText, const std::vector<FunctionSpan>& liveSpans);

/// Where the lines of `oldText` are in `newText` when the two differ in one contiguous region
/// (their common prefix and suffix are kept): the effect of one edit, or of a batch of edits
/// that are close together, found in O(text) without a diff. Old lines [0, head) are
/// unchanged at the same line; old lines >= tail are unchanged, moved by `shift`; the lines
/// between are changed. A line is unchanged only with its line break (as in diffLines).
struct LineDelta {
  uint32_t head = 0;
  uint32_t tail = 0;
  int32_t shift = 0;
  bool identical = false;  // the texts are equal (every line maps to itself)
  int32_t map(uint32_t oldLine) const {
    if (identical || oldLine < head) return static_cast<int32_t>(oldLine);
    return oldLine >= tail ? static_cast<int32_t>(static_cast<int64_t>(oldLine) + shift) : -1;
  }
  /// Lines [first, last] are all unchanged (they move together).
  bool keeps(uint32_t first, uint32_t last) const { return identical || last < head || first >= tail; }
};
LineDelta lineDelta(std::string_view oldText, std::string_view newText);

/// Moves an already remapped file from the text it is positioned in to the next version of
/// that text: LineResults on changed lines are dropped (counted in `dropped`, removed from
/// `sourceIndex` too), the others move; functions are recomputed with `liveSpans` (the new
/// text's) and `stale` is set to `stale`. Returns the number of LineResults dropped.
/// Unlike remapFile against the snapshot, a line edited back to its profiled text stays
/// dropped: a caller that wants exact positions remaps from the snapshot when edits settle.
uint32_t applyLineDelta(RemappedFile& file, const LineDelta& delta, const std::vector<FunctionSpan>& liveSpans,
                        bool stale);

}  // namespace kl::results
