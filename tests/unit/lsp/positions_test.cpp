// LSP position <-> byte offset conversion (lsp/server/positions.h) with non-ASCII text.
#include "lsp/server/positions.h"

#include <doctest/doctest.h>

using namespace kl::lsp;

namespace {
constexpr auto U16 = PositionEncoding::Utf16;
constexpr auto U8 = PositionEncoding::Utf8;

uint32_t off(std::string_view text, uint32_t line, uint32_t ch, PositionEncoding e = U16) {
  return LineTable(text).offsetAt(text, {line, ch}, e);
}
Position pos(std::string_view text, uint32_t offset, PositionEncoding e = U16) {
  return LineTable(text).positionAt(text, offset, e);
}
}  // namespace

TEST_CASE("positions: ASCII, line breaks \\n, \\r\\n and lone \\r") {
  std::string_view t = "ab\ncd\r\nef\rgh";
  CHECK(LineTable(t).lineCount() == 4);
  CHECK(off(t, 0, 1) == 1);
  CHECK(off(t, 1, 0) == 3);
  CHECK(off(t, 2, 1) == 8);
  CHECK(off(t, 3, 2) == 12);
  CHECK(pos(t, 8) == Position{2, 1});
  CHECK(pos(t, 10) == Position{3, 0});
  // Offsets inside a "\r\n" belong to the line it ends, clamped to the line end.
  CHECK(pos(t, 6) == Position{1, 2});
}

TEST_CASE("positions: clamping past the line end and past the last line") {
  std::string_view t = "abc\nde";
  CHECK(off(t, 0, 99) == 3);  // before the '\n'
  CHECK(off(t, 1, 99) == 6);
  CHECK(off(t, 7, 0) == 6);  // past the last line: end of text
  CHECK(pos(t, 100) == Position{1, 2});
}

TEST_CASE("positions: CJK (3 bytes, 1 UTF-16 unit)") {
  std::string_view t = "x = \"日本語\"  # 注释";
  // '日' starts at byte 5, '本' at 8, '語' at 11, '"' at 14.
  CHECK(off(t, 0, 5) == 5);
  CHECK(off(t, 0, 6) == 8);
  CHECK(off(t, 0, 8) == 14);
  CHECK(pos(t, 14) == Position{0, 8});
  CHECK(off(t, 0, 14, U8) == 14);
  CHECK(pos(t, 14, U8) == Position{0, 14});
}

TEST_CASE("positions: emoji outside the BMP is a surrogate pair") {
  std::string_view t = "a🔥b";  // 🔥 is U+1F525: 4 bytes, 2 UTF-16 units
  CHECK(off(t, 0, 1) == 1);
  CHECK(off(t, 0, 3) == 5);  // 'b'
  CHECK(pos(t, 5) == Position{0, 3});
  // Inside the pair rounds down to the code point start.
  CHECK(off(t, 0, 2) == 1);
  CHECK(pos(t, 3) == Position{0, 1});
  // UTF-8 encoding counts bytes.
  CHECK(off(t, 0, 5, U8) == 5);
  CHECK(off(t, 0, 3, U8) == 1);  // inside the sequence: round down
}

TEST_CASE("positions: combining marks are separate code points") {
  std::string_view t = "e\xCC\x81t";  // e + U+0301 COMBINING ACUTE ACCENT + t
  CHECK(off(t, 0, 1) == 1);
  CHECK(off(t, 0, 2) == 3);
  CHECK(pos(t, 3) == Position{0, 2});
  CHECK(pos(t, 3, U8) == Position{0, 3});
}

TEST_CASE("positions: invalid UTF-8 counts one unit per byte") {
  std::string_view t = "a\xFF\xC3z";  // 0xFF invalid, 0xC3 truncated sequence
  CHECK(off(t, 0, 2) == 2);
  CHECK(off(t, 0, 3) == 3);
  CHECK(pos(t, 4) == Position{0, 4});
}

TEST_CASE("positions: round trip on every code point boundary") {
  std::string t = "def f(名前):\r\n    return '🔥é'\n\ttab\rlast";
  LineTable lines(t);
  for (auto enc : {U16, U8}) {
    for (uint32_t i = 0; i <= t.size(); i += utf8SequenceLength(t, i)) {
      if (i > 0 && t[i - 1] == '\r' && i < t.size() && t[i] == '\n') continue;  // inside CRLF
      Position p = lines.positionAt(t, i, enc);
      CHECK(lines.offsetAt(t, p, enc) == i);
      if (i == t.size()) break;
    }
  }
}

TEST_CASE("positions: negotiation") {
  CHECK(negotiateEncoding({}) == U16);
  CHECK(negotiateEncoding({"utf-32", "utf-16"}) == U16);
  CHECK(negotiateEncoding({"utf-16", "utf-8"}) == U8);
  CHECK(std::string(encodingName(U8)) == "utf-8");
}
