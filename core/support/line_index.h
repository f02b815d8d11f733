// LineIndex: byte offset <-> (line, byte column) for one text. Lines are 0-based here;
// a line ends after '\n' ("\r\n" counts as one terminator; a lone '\r' does not end a line,
// matching tree-sitter's rows). UTF-16 columns exist only at the LSP edge (lsp/server).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace kl {

struct LineCol {
  uint32_t line = 0;
  uint32_t col = 0;  // bytes from the start of the line
  friend bool operator==(const LineCol&, const LineCol&) = default;
};

class LineIndex {
 public:
  LineIndex() : starts_{0}, size_(0) {}
  explicit LineIndex(std::string_view text);

  uint32_t lineCount() const { return static_cast<uint32_t>(starts_.size()); }
  /// Byte offset where `line` starts; lineCount() maps to the end of the text.
  uint32_t lineStart(uint32_t line) const;
  /// Byte offset just past the line's content, before its "\n" or "\r\n".
  uint32_t lineEnd(uint32_t line, std::string_view text) const;
  LineCol toLineCol(uint32_t offset) const;
  /// Clamps past-the-end lines and columns to the text.
  uint32_t toOffset(LineCol lc) const;
  uint32_t size() const { return size_; }

 private:
  std::vector<uint32_t> starts_;
  uint32_t size_;
};

}  // namespace kl
