// The ONE place that converts between LSP positions and byte offsets.
//
// Text is UTF-8 inside kernlens; LSP Position::character counts code units of the negotiated
// encoding (UTF-16 by default, UTF-8 when the client offered it). Lines follow the LSP rules:
// "\n", "\r\n" and a lone "\r" each end a line (tree-sitter rows count only "\n"; features must
// therefore map byte offsets through here, never core line numbers, to build positions).
//
// Clamping (spec): a line past the end maps to the end of the text; a character past the end of
// its line maps to the line end (before its line break). A position inside a code point (e.g.
// between the two UTF-16 units of an emoji) rounds down to the code point's start. Invalid UTF-8
// bytes count as one unit each (what an editor shows as U+FFFD).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "lsp/protocol/protocol.h"

namespace kl::lsp {

enum class PositionEncoding { Utf16, Utf8 };
/// "utf-16" / "utf-8", as in LSP's PositionEncodingKind.
const char* encodingName(PositionEncoding e);
/// UTF-8 when the client lists "utf-8" in general.positionEncodings, else UTF-16 (mandatory).
PositionEncoding negotiateEncoding(const std::vector<std::string>& clientEncodings);

/// Line starts of one text under the LSP line-break rules. Immutable; build once per text.
class LineTable {
 public:
  explicit LineTable(std::string_view text);
  uint32_t lineCount() const { return static_cast<uint32_t>(starts_.size()); }

  /// Byte offset of `pos` in `text` (the text this table was built from), clamped.
  uint32_t offsetAt(std::string_view text, Position pos, PositionEncoding enc) const;
  /// Position of byte `offset` (clamped to the text) in `enc` units.
  Position positionAt(std::string_view text, uint32_t offset, PositionEncoding enc) const;

 private:
  /// [start, end of content) of `line`, i.e. without its line break.
  std::pair<uint32_t, uint32_t> lineBounds(std::string_view text, uint32_t line) const;
  std::vector<uint32_t> starts_;
};

/// Byte length of the UTF-8 sequence starting at text[i] (1 for an invalid byte).
uint32_t utf8SequenceLength(std::string_view text, size_t i);

}  // namespace kl::lsp
