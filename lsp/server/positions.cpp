#include "lsp/server/positions.h"

#include <algorithm>

namespace kl::lsp {

const char* encodingName(PositionEncoding e) { return e == PositionEncoding::Utf8 ? "utf-8" : "utf-16"; }

PositionEncoding negotiateEncoding(const std::vector<std::string>& clientEncodings) {
  for (const auto& e : clientEncodings)
    if (e == "utf-8") return PositionEncoding::Utf8;
  return PositionEncoding::Utf16;
}

uint32_t utf8SequenceLength(std::string_view text, size_t i) {
  auto b = static_cast<unsigned char>(text[i]);
  uint32_t len = b < 0x80                   ? 1
                 : (b >= 0xC2 && b <= 0xDF) ? 2
                 : (b >= 0xE0 && b <= 0xEF) ? 3
                 : (b >= 0xF0 && b <= 0xF4) ? 4
                                            : 0;
  if (len == 0 || i + len > text.size()) return 1;
  for (uint32_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return 1;
  return len;
}

namespace {
/// Code units of one UTF-8 sequence of `bytes` bytes.
uint32_t unitsOf(uint32_t bytes, PositionEncoding enc) {
  if (enc == PositionEncoding::Utf8) return bytes;
  return bytes == 4 ? 2 : 1;  // outside the BMP: a surrogate pair
}
}  // namespace

LineTable::LineTable(std::string_view text) {
  starts_.push_back(0);
  for (uint32_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) starts_.push_back(i + 1);
  }
}

std::pair<uint32_t, uint32_t> LineTable::lineBounds(std::string_view text, uint32_t line) const {
  uint32_t start = starts_[line];
  uint32_t end = line + 1 < starts_.size() ? starts_[line + 1] : static_cast<uint32_t>(text.size());
  if (end > start && text[end - 1] == '\n') --end;
  if (end > start && text[end - 1] == '\r') --end;
  return {start, end};
}

uint32_t LineTable::offsetAt(std::string_view text, Position pos, PositionEncoding enc) const {
  if (pos.line >= starts_.size()) return static_cast<uint32_t>(text.size());
  auto [i, end] = lineBounds(text, pos.line);
  uint32_t units = 0;
  while (i < end) {
    uint32_t len = utf8SequenceLength(text, i);
    uint32_t u = unitsOf(len, enc);
    if (units + u > pos.character) break;
    units += u;
    i += len;
  }
  return i;
}

Position LineTable::positionAt(std::string_view text, uint32_t offset, PositionEncoding enc) const {
  offset = std::min(offset, static_cast<uint32_t>(text.size()));
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - starts_.begin()) - 1;
  auto [i, end] = lineBounds(text, line);
  uint32_t stop = std::min(offset, end);
  uint32_t units = 0;
  while (i < stop) {
    uint32_t len = utf8SequenceLength(text, i);
    if (i + len > stop) break;  // offset inside a code point: round down
    units += unitsOf(len, enc);
    i += len;
  }
  return {line, units};
}

}  // namespace kl::lsp
