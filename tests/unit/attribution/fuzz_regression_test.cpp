// Replays the reader fuzz targets' seed corpora and every input they ever crashed on
// (tests/fuzz/regressions/fuzz_{nsys,kineto}_reader/) through the same code as the fuzzers
// (tests/fuzz/reader_input.h), so fixed crashes stay fixed in every `make test`, without clang.
#include <doctest/doctest.h>

#include <filesystem>

#include "core/support/log.h"
#include "tests/fuzz/reader_input.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;

TEST_CASE("reader fuzz regressions: corpora and past crash inputs read cleanly") {
  kl::log::setSink([](kl::log::Level, std::string_view) {});
  size_t n = 0;
  for (const char* target : {"fuzz_nsys_reader", "fuzz_kineto_reader"}) {
    for (const char* kind : {"corpus", "regressions"}) {
      fs::path p = kl::test::sourcePath(std::string("tests/fuzz/") + kind + "/" + target);
      if (!fs::exists(p)) continue;
      for (const auto& e : fs::directory_iterator(p)) {
        if (!e.is_regular_file() || e.path().extension() == ".md") continue;
        CAPTURE(e.path().string());
        std::string bytes = kl::test::readFile(e.path());
        if (std::string_view(target) == "fuzz_nsys_reader")
          kl::fuzz::readNsysInput(bytes);
        else
          kl::fuzz::readKinetoInput(bytes);
        ++n;
      }
    }
  }
  kl::log::setSink({});
  CHECK(n >= 5);
}
