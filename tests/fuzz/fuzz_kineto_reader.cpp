// libFuzzer target: Kineto JSON reader (streaming pull parser) + attribution on arbitrary bytes
// (plain or gzip); the work per input is tests/fuzz/reader_input.h.
// Seeds: tests/fuzz/corpus/fuzz_kineto_reader/ (small real traces).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/reader_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kl::fuzz::readKinetoInput(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
