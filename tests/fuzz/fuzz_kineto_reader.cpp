// libFuzzer target: Kineto JSON reader (streaming pull parser) + attribution on arbitrary bytes
// (plain or gzip). Any input must yield a model or a Result error.
// Seeds: tests/fuzz/corpus/fuzz_kineto_reader/ (small real traces).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/attribution/attribution.h"
#include "core/profile/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = kl::profile::readKinetoJsonText(text, "fuzz.json");
  if (m.ok()) {
    auto a = kl::attribution::attribute(*m);
    if (a.ok())
      for (uint32_t i = 0; i < m->gpuOps.size(); ++i) (void)kl::attribution::sourceOf(*m, *a, i);
  }
  return 0;
}
