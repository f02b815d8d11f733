// libFuzzer target: framing + JSON-RPC dispatch + lifecycle + documents, fed whole client byte
// streams (see lsp_session.h). Seeds: tests/fuzz/corpus/fuzz_lsp/; dictionary: fuzz_lsp.dict.
#include <cstddef>
#include <cstdint>

#include "core/support/log.h"
#include "tests/fuzz/lsp_session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool quiet = [] {
    kl::log::setSink([](kl::log::Level, std::string_view) {});
    return true;
  }();
  (void)quiet;
  kl::lsp::fuzz::runSession(data, size);
  return 0;
}
