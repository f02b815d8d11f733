#include "lsp/server/progress.h"

#include <atomic>

#include "lsp/server/server.h"

namespace kl::lsp {
namespace detail {

struct ProgressState {
  enum class Phase { Creating, Active, Done };
  ProgressState(Server& s, json t, std::string title, ProgressOptions o)
      : server(s), token(std::move(t)), title(std::move(title)), options(std::move(o)) {}
  Server& server;
  json token;
  std::string title;
  ProgressOptions options;
  Phase phase = Phase::Creating;
  std::optional<std::string> message;  // latest report while Creating
  std::optional<unsigned> percentage;
  bool endRequested = false;
  std::string endMessage;
};

}  // namespace detail

namespace {

using State = detail::ProgressState;

void onLoop(Server& server, std::function<void()> fn) {
  if (server.onLoop())
    fn();
  else
    server.post(std::move(fn));
}

void sendProgress(State& s, json value) {
  s.server.notify("$/progress", {{"token", s.token}, {"value", std::move(value)}});
}

}  // namespace

// Friend of Server: reads the client capabilities and keeps the cancel table.
Progress::Progress(Server& server, std::string title, ProgressOptions options) {
  static std::atomic<uint64_t> counter{1};
  json token = "kernlens/progress/" + std::to_string(counter++);
  state_ = std::make_shared<State>(server, std::move(token), std::move(title), std::move(options));
  if (!state_->options.message.empty()) state_->message = state_->options.message;
  state_->percentage = state_->options.percentage;

  onLoop(server, [s = state_] {
    Server& srv = s->server;
    if (!srv.clientCapabilities().workDoneProgress || srv.exited()) {
      s->phase = State::Phase::Done;
      return;
    }
    std::string key = s->token.dump();
    srv.progressCancel_[key] = [weak = std::weak_ptr<State>(s)] {
      if (auto st = weak.lock(); st && st->options.onCancel) st->options.onCancel();
    };
    srv.call("window/workDoneProgress/create", {{"token", s->token}}, [s, key](Result<json> r) {
      if (!r.ok()) {
        s->phase = State::Phase::Done;
        s->server.progressCancel_.erase(key);
        return;
      }
      s->phase = State::Phase::Active;
      json begin = {{"kind", "begin"}, {"title", s->title}, {"cancellable", s->options.cancellable}};
      if (s->message) begin["message"] = *s->message;
      if (s->percentage) begin["percentage"] = *s->percentage;
      sendProgress(*s, std::move(begin));
      if (s->endRequested) {
        json end = {{"kind", "end"}};
        if (!s->endMessage.empty()) end["message"] = s->endMessage;
        sendProgress(*s, std::move(end));
        s->phase = State::Phase::Done;
        s->server.progressCancel_.erase(key);
      }
    });
  });
}

Progress::~Progress() { end(); }

const json& Progress::token() const { return state_->token; }

void Progress::report(std::string message, std::optional<unsigned> percentage) {
  onLoop(state_->server, [s = state_, message = std::move(message), percentage] {
    if (s->endRequested) return;
    if (s->phase == State::Phase::Creating) {
      if (!message.empty()) s->message = message;
      if (percentage) s->percentage = percentage;
    } else if (s->phase == State::Phase::Active) {
      json v = {{"kind", "report"}};
      if (!message.empty()) v["message"] = message;
      if (percentage) v["percentage"] = *percentage;
      sendProgress(*s, std::move(v));
    }
  });
}

void Progress::end(std::string message) {
  onLoop(state_->server, [s = state_, message = std::move(message)] {
    if (s->endRequested) return;
    s->endRequested = true;
    s->endMessage = message;
    if (s->phase != State::Phase::Active) return;  // Creating: sent when the token exists
    json v = {{"kind", "end"}};
    if (!message.empty()) v["message"] = message;
    sendProgress(*s, std::move(v));
    s->phase = State::Phase::Done;
    s->server.progressCancel_.erase(s->token.dump());
  });
}

}  // namespace kl::lsp
