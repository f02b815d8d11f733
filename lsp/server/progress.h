// Server-initiated work-done progress (LSP 3.17 §"Work Done Progress"): a token created with
// window/workDoneProgress/create, then $/progress begin, any number of reports, one end.
//
// Usage (any thread):
//   auto p = server.beginProgress("Profiling train.py", {.cancellable = true,
//                                                        .onCancel = [src] { src.cancel(); }});
//   p->report("round 2", 40);
//   p->end("done");           // also sent by ~Progress if never called
// When the client lacks window.workDoneProgress, or refuses the token, a Progress is inert.
// Reports made before the client accepted the token are folded into the begin message (only the
// latest is kept). onCancel runs on the main loop when the client sends
// window/workDoneProgress/cancel for this token.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "lsp/protocol/json_io.h"

namespace kl::lsp {

class Server;

struct ProgressOptions {
  bool cancellable = false;
  std::function<void()> onCancel;
  std::string message;
  std::optional<unsigned> percentage;  // 0..100; set it on begin to get a progress bar
};

namespace detail {
struct ProgressState;
}

class Progress {
 public:
  Progress(Server& server, std::string title, ProgressOptions options);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void report(std::string message, std::optional<unsigned> percentage = std::nullopt);
  void end(std::string message = {});
  const json& token() const;

 private:
  std::shared_ptr<detail::ProgressState> state_;
};

}  // namespace kl::lsp
