// libFuzzer target: nsys SQLite reader + attribution on arbitrary bytes (plain or gzip images);
// the work per input is tests/fuzz/reader_input.h.
// Seeds: tests/fuzz/corpus/fuzz_nsys_reader/ (small real exports, reduced).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/reader_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kl::fuzz::readNsysInput(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
