// core/support/format.h (the one formatter of each quantity) and core/support/text_table.h (the
// one text table renderer): expected strings written out by hand.
#include <doctest/doctest.h>

#include "core/support/format.h"
#include "core/support/text_table.h"

using namespace kl;

TEST_CASE("formatDuration: 3 significant digits in the largest unit >= 1") {
  struct Row {
    double ns;
    Units units;
    const char* text;
  };
  const Row rows[] = {
      {850, Units::Auto, "850 ns"},           {850.6, Units::Auto, "851 ns"},
      {12'345, Units::Auto, "12.3 µs"},       {420'000, Units::Auto, "420 µs"},
      {1'920'000, Units::Auto, "1.92 ms"},    {12'400'000, Units::Auto, "12.4 ms"},
      {1'200'000'000, Units::Auto, "1.20 s"}, {0, Units::Auto, "0 ns"},
      {-2'500, Units::Auto, "-2.50 µs"},      {1'920'000, Units::Us, "1920 µs"},
      {420'000, Units::Ms, "0.42 ms"},        {1'500, Units::Ns, "1500 ns"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.ns);
    CHECK(formatDuration(r.ns, r.units) == r.text);
  }
  CHECK(formatPassTime(1'330'000, 910'000) == "420 µs + bwd 910 µs");
  CHECK(formatPassTime(1'000, 0) == "1.00 µs");
  CHECK(parseUnits("us") == Units::Us);
  CHECK(parseUnits("µs") == Units::Us);
  CHECK(parseUnits("weeks") == Units::Auto);
}

TEST_CASE("shares, changes, counts, bytes, bandwidth") {
  CHECK(formatShare(0.31) == "31 %");
  CHECK(formatShare(0.004) == "0.4 %");
  CHECK(formatShare(0.0001) == "<0.1 %");
  CHECK(formatShare(0) == "0 %");
  CHECK(formatShare(0.3126, ShareDigits::Table) == "31.3 %");
  CHECK(formatShare(0.0001, ShareDigits::Table) == "0.0 %");
  CHECK(formatChange(0.12) == "+12 %");
  CHECK(formatChange(-0.034) == "-3 %");
  CHECK(formatCount(1, "kernel") == "1 kernel");
  CHECK(formatCount(2, "kernel") == "2 kernels");
  CHECK(formatCount(1, "launch", "launches") == "1 launch");
  CHECK(formatCount(3, "launch", "launches") == "3 launches");
  CHECK(formatBytes(512) == "512 B");
  CHECK(formatBytes(1536) == "1.50 KiB");
  CHECK(formatBytes(3.2 * 1024 * 1024) == "3.20 MiB");
  CHECK(formatBandwidth(23.44) == "23.4 GB/s");
}

TEST_CASE("text tables: plain columns and Markdown from one model") {
  std::vector<TextColumn> cols{{"kernel", false, {"gemm", "relu_µ"}}, {"total", true, {"1.92 ms", "850 ns"}}};
  CHECK(plainTableWidth(cols) == 15);
  CHECK(renderPlainTable(cols) ==
        "kernel    total\n"
        "gemm    1.92 ms\n"
        "relu_µ   850 ns\n");
  CHECK(renderMarkdownTable(cols, [](size_t, const std::string& s) { return s; }) ==
        "| kernel | total |\n"
        "|---|--:|\n"
        "| gemm | 1.92 ms |\n"
        "| relu_µ | 850 ns |\n");
  // rows form, cut cells, trailing spaces dropped
  CHECK(renderPlainTable({"name", "n"}, {{"abcdefgh", "1"}, {"x", "10"}}, {false, true}, 5) ==
        "name    n\n"
        "abcd…   1\n"
        "x      10\n");
  CHECK(displayWidth("µs·") == 3);
}
