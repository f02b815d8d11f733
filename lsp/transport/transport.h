// Transport: moves framed JSON-RPC messages between the server and a client. The server
// implements MessageSink; a transport calls it for every incoming message body (unparsed),
// every framing error, and once at end of input.
//
// Threading contract: the sink may be called on a transport-owned thread (stdio) or on the
// caller's thread (memory); it must only hand the work over to the server's main loop.
// send() may be called from any thread; sends are serialised.
#pragma once

#include <string>
#include <string_view>

namespace kl::lsp {

class MessageSink {
 public:
  virtual ~MessageSink() = default;
  /// One complete message body. Returns false to stop reading (the `exit` notification).
  virtual bool onMessage(std::string body) = 0;
  /// A framing problem (bad header, oversized message...); reading continues.
  virtual void onFramingError(std::string message) = 0;
  /// End of input (or reading stopped); called exactly once, last.
  virtual void onClose() = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  /// Starts delivering input to `sink`, which must outlive stop().
  virtual void start(MessageSink& sink) = 0;
  /// Writes one message body, framed. Thread-safe.
  virtual void send(std::string_view body) = 0;
  /// Waits until the sink receives no more calls (joins the reader thread, if any).
  virtual void stop() = 0;
};

}  // namespace kl::lsp
