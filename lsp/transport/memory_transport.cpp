#include "lsp/transport/memory_transport.h"

#include <cassert>
#include <utility>

namespace kl::lsp {

void MemoryTransport::send(std::string_view body) {
  std::lock_guard<std::mutex> lock(mu_);
  sent_.emplace_back(body);
}

std::vector<std::string> MemoryTransport::takeSent() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(sent_, {});
}

void MemoryTransport::deliver(std::vector<FrameEvent>& events) {
  assert(sink_ && "start() first");
  for (auto& e : events) {
    if (!reading_) break;
    if (e.kind == FrameEvent::Kind::Error) {
      sink_->onFramingError(std::move(e.text));
    } else if (!sink_->onMessage(std::move(e.text))) {
      reading_ = false;
      closed_ = true;
      sink_->onClose();
    }
  }
}

void MemoryTransport::clientWrite(std::string_view bytes) {
  if (!reading_) return;
  std::vector<FrameEvent> events;
  parser_.feed(bytes, events);
  deliver(events);
}

void MemoryTransport::clientClose() {
  if (!reading_) return;
  std::vector<FrameEvent> events;
  parser_.finish(events);
  deliver(events);
  if (reading_) {
    reading_ = false;
    closed_ = true;
    sink_->onClose();
  }
}

}  // namespace kl::lsp
