// libFuzzer target: nsys SQLite reader + attribution on arbitrary bytes (plain or gzip images).
// Any input must yield a model or a Result error; crashes, hangs and sanitizer reports are bugs.
// Seeds: tests/fuzz/corpus/fuzz_nsys_reader/ (small real exports, reduced).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/attribution/attribution.h"
#include "core/profile/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto m = kl::profile::readNsysSqliteImage(bytes, "fuzz.sqlite");
  if (m.ok()) {
    auto a = kl::attribution::attribute(*m);
    if (a.ok())
      for (uint32_t i = 0; i < m->gpuOps.size(); ++i) (void)a->path(*m, i);
  }
  return 0;
}
