// TextDelta: where two versions of a text differ, as one contiguous region — their common
// prefix and (non-overlapping) common suffix. What one edit, or a batch of edits close
// together, did; found with two memcmp-speed scans, no diff.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace kl {

struct TextDelta {
  size_t prefix = 0;  // bytes equal at the start of both texts
  size_t suffix = 0;  // bytes equal at the end of both texts, not overlapping the prefix
  size_t oldSize = 0, newSize = 0;
  bool identical() const { return prefix == oldSize && oldSize == newSize; }
  /// Where the common suffix starts in each text.
  size_t oldCut() const { return oldSize - suffix; }
  size_t newCut() const { return newSize - suffix; }
};

inline TextDelta textDelta(std::string_view oldText, std::string_view newText) {
  TextDelta d;
  d.oldSize = oldText.size();
  d.newSize = newText.size();
  size_t n = std::min(oldText.size(), newText.size());
  d.prefix = static_cast<size_t>(
      std::mismatch(oldText.begin(), oldText.begin() + static_cast<std::ptrdiff_t>(n), newText.begin()).first -
      oldText.begin());
  d.suffix = static_cast<size_t>(
      std::mismatch(oldText.rbegin(), oldText.rbegin() + static_cast<std::ptrdiff_t>(n - d.prefix), newText.rbegin())
          .first -
      oldText.rbegin());
  return d;
}

}  // namespace kl
