#include "core/support/line_index.h"

#include <doctest/doctest.h>

#include "core/support/result.h"

using kl::LineCol;
using kl::LineIndex;

TEST_CASE("LineIndex maps offsets to lines and back") {
  std::string text = "ab\ncd\r\n\nxyz";
  LineIndex idx(text);
  CHECK(idx.lineCount() == 4);
  CHECK(idx.toLineCol(0) == LineCol{0, 0});
  CHECK(idx.toLineCol(3) == LineCol{1, 0});
  CHECK(idx.toLineCol(7) == LineCol{2, 0});
  CHECK(idx.toLineCol(8) == LineCol{3, 0});
  CHECK(idx.toLineCol(11) == LineCol{3, 3});
  CHECK(idx.toOffset({1, 1}) == 4);
  CHECK(idx.lineEnd(1, text) == 5);  // before "\r\n"
  CHECK(idx.lineEnd(3, text) == 11);
  SUBCASE("clamping") {
    CHECK(idx.toOffset({0, 99}) == 3);
    CHECK(idx.toOffset({99, 0}) == 11);
    CHECK(idx.toLineCol(999) == LineCol{3, 3});
  }
}

TEST_CASE("Result carries a value or an error") {
  kl::Result<int> ok = 3;
  REQUIRE(ok.ok());
  CHECK(*ok == 3);
  kl::Result<int> bad = kl::Error::invalid("nope");
  CHECK(!bad.ok());
  CHECK(bad.error().message == "nope");
  kl::Result<void> v;
  CHECK(v.ok());
}
