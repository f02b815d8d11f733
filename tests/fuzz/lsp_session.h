// One fuzzed LSP session: a whole client byte stream fed to a fresh server (deterministic mode,
// every feature registered) over the in-memory transport. Shared by the libFuzzer target
// (fuzz_lsp.cpp) and the regression test that replays the corpus and every crash ever found
// (tests/unit/lsp/fuzz_regression_test.cpp), so a fixed crash stays fixed under plain g++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lsp/features/all.h"
#include "lsp/server/server.h"
#include "lsp/transport/memory_transport.h"

namespace kl::lsp::fuzz {

/// Feeds `data` in chunks (sizes derived from the data itself, to vary partial reads), running
/// the server after each chunk, then closes the input. Must never crash or hang.
inline void runSession(const uint8_t* data, size_t size) {
  FrameLimits limits;
  limits.maxBodyBytes = 1u << 20;
  MemoryTransport transport(limits);
  Server server(transport, ServerOptions{0});
  registerAllFeatures(server);
  server.start();
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  size_t chunk = size > 0 ? 1 + static_cast<uint8_t>(bytes.back()) % 97 : 1;
  for (size_t i = 0; i < bytes.size() && !server.exited(); i += chunk) {
    transport.clientWrite(bytes.substr(i, chunk));
    server.runUntilIdle();
    (void)transport.takeSent();
  }
  transport.clientClose();
  server.runUntilIdle();
}

}  // namespace kl::lsp::fuzz
