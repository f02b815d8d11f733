#include "lsp/transport/stdio_transport.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/support/log.h"

namespace kl::lsp {

StdioTransport::StdioTransport(int inFd, std::FILE* out, FrameLimits limits, Framing framing)
    : inFd_(inFd), out_(out), limits_(limits), framing_(framing) {}

StdioTransport::~StdioTransport() { stop(); }

void StdioTransport::start(MessageSink& sink) {
  reader_ = std::thread([this, &sink] { readLoop(sink); });
}

void StdioTransport::stop() {
  if (reader_.joinable()) reader_.join();
}

void StdioTransport::send(std::string_view body) {
  std::string framed = frameMessage(body, framing_);
  std::lock_guard<std::mutex> lock(writeMu_);
  if (std::fwrite(framed.data(), 1, framed.size(), out_) != framed.size() || std::fflush(out_) != 0)
    kl::log::error(std::string("lsp: cannot write to the client: ") + std::strerror(errno));
}

void StdioTransport::readLoop(MessageSink& sink) {
  FrameParser parser(limits_);
  LineParser lines(limits_);
  const bool byLine = framing_ == Framing::Lines;
  std::vector<FrameEvent> events;
  std::vector<char> buf(64 * 1024);
  bool reading = true;
  auto deliver = [&] {
    for (auto& e : events) {
      if (!reading) break;
      if (e.kind == FrameEvent::Kind::Error)
        sink.onFramingError(std::move(e.text));
      else if (!sink.onMessage(std::move(e.text)))
        reading = false;
    }
    events.clear();
  };
  while (reading) {
    ssize_t n = ::read(inFd_, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) kl::log::error(std::string("lsp: cannot read from the client: ") + std::strerror(errno));
    if (n <= 0) {
      if (byLine)
        lines.finish(events);
      else
        parser.finish(events);
      deliver();
      break;
    }
    std::string_view bytes(buf.data(), static_cast<size_t>(n));
    if (byLine)
      lines.feed(bytes, events);
    else
      parser.feed(bytes, events);
    deliver();
  }
  sink.onClose();
}

}  // namespace kl::lsp
