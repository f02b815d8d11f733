#include "core/support/line_index.h"

#include <algorithm>

namespace kl {

LineIndex::LineIndex(std::string_view text) : size_(static_cast<uint32_t>(text.size())) {
  starts_.push_back(0);
  for (uint32_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts_.push_back(i + 1);
}

uint32_t LineIndex::lineStart(uint32_t line) const { return line < starts_.size() ? starts_[line] : size_; }

uint32_t LineIndex::lineEnd(uint32_t line, std::string_view text) const {
  if (line >= starts_.size()) return size_;
  uint32_t end = line + 1 < starts_.size() ? starts_[line + 1] : size_;
  if (end > starts_[line] && end <= text.size() && text[end - 1] == '\n') {
    --end;
    if (end > starts_[line] && text[end - 1] == '\r') --end;
  }
  return end;
}

LineCol LineIndex::toLineCol(uint32_t offset) const {
  offset = std::min(offset, size_);
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - starts_.begin()) - 1;
  return {line, offset - starts_[line]};
}

uint32_t LineIndex::toOffset(LineCol lc) const {
  if (lc.line >= starts_.size()) return size_;
  uint32_t next = lc.line + 1 < starts_.size() ? starts_[lc.line + 1] : size_;
  return std::min(starts_[lc.line] + lc.col, next);
}

}  // namespace kl
