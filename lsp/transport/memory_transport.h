// In-memory transport for tests and the fuzzer: the "client" side writes raw bytes (framed by
// the test, so framing is exercised too) and reads back what the server sent. Input is parsed
// and delivered synchronously on the caller's thread inside clientWrite().
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "lsp/transport/framing.h"
#include "lsp/transport/transport.h"

namespace kl::lsp {

class MemoryTransport final : public Transport {
 public:
  explicit MemoryTransport(FrameLimits limits = {}) : parser_(limits) {}

  void start(MessageSink& sink) override { sink_ = &sink; }
  void send(std::string_view body) override;
  void stop() override {}

  /// Client → server: raw bytes (may hold partial or several messages).
  void clientWrite(std::string_view bytes);
  /// Client → server: one message body, framed with Content-Length.
  void clientSend(std::string_view body) { clientWrite(frameMessage(body)); }
  /// Client closes its end: the server sees end of input.
  void clientClose();
  /// Server → client: message bodies sent since the last call, in order.
  std::vector<std::string> takeSent();
  bool closed() const { return closed_; }

 private:
  void deliver(std::vector<FrameEvent>& events);

  FrameParser parser_;
  MessageSink* sink_ = nullptr;
  bool reading_ = true;  // false once the sink asked to stop, or after close
  bool closed_ = false;
  std::mutex mu_;
  std::vector<std::string> sent_;
};

}  // namespace kl::lsp
