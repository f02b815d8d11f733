// The real transport: a blocking reader thread on a file descriptor (stdin) and a locked
// writer (stdout). We deliberately do not put the inherited descriptors under asio: async I/O
// would switch the shared open file description to non-blocking mode (see
// shared/reference/cpp-style.md §6). Reading stops after the sink returns false (`exit`) or
// at end of input, so stop() can join the thread without closing stdin.
#pragma once

#include <cstdio>
#include <mutex>
#include <thread>

#include "lsp/transport/framing.h"
#include "lsp/transport/transport.h"

namespace kl::lsp {

class StdioTransport final : public Transport {
 public:
  /// Reads from `inFd`, writes to `out`. Neither is closed by the transport.
  StdioTransport(int inFd, std::FILE* out, FrameLimits limits = {}, Framing framing = Framing::ContentLength);
  ~StdioTransport() override;

  void start(MessageSink& sink) override;
  void send(std::string_view body) override;
  void stop() override;

 private:
  void readLoop(MessageSink& sink);

  int inFd_;
  std::FILE* out_;
  FrameLimits limits_;
  Framing framing_;
  std::mutex writeMu_;
  std::thread reader_;
};

}  // namespace kl::lsp
