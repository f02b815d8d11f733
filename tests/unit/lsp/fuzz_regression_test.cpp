// Replays the fuzz_lsp seed corpus and every input the fuzzer ever crashed on
// (tests/fuzz/regressions/fuzz_lsp/) through the same session harness as the fuzzer, so fixed
// crashes stay fixed in every `make test`, without clang.
#include <doctest/doctest.h>

#include <filesystem>

#include "core/support/log.h"
#include "tests/fuzz/lsp_session.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;

TEST_CASE("fuzz regressions: corpus and past crash inputs run cleanly") {
  kl::log::setSink([](kl::log::Level, std::string_view) {});
  size_t n = 0;
  for (const char* dir : {"tests/fuzz/corpus/fuzz_lsp", "tests/fuzz/regressions/fuzz_lsp"}) {
    fs::path p = kl::test::sourcePath(dir);
    if (!fs::exists(p)) continue;
    for (const auto& e : fs::directory_iterator(p)) {
      if (!e.is_regular_file() || e.path().extension() == ".md") continue;
      CAPTURE(e.path().string());
      std::string bytes = kl::test::readFile(e.path());
      kl::lsp::fuzz::runSession(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++n;
    }
  }
  kl::log::setSink({});
  CHECK(n >= 5);
}
