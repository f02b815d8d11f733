// Reply<R>: the one way a request handler answers. Every request gets exactly one reply
// (clangd's ReplyOnce):
//  - the first reply wins; a second one is logged and dropped;
//  - if the last copy of a Reply is destroyed without replying, the client gets an
//    InternalError ("server failed to reply to <method>");
//  - if the client cancelled the request ($/cancelRequest) before the reply, the client gets
//    RequestCancelled (-32800) whatever the handler answered.
// A Reply is cheap to copy (copies share one state) and may be used from any thread: the
// answer is handed to the main loop, which alone writes to the transport.
// A Reply must not outlive the Server that created it.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>

#include "core/support/cancel.h"
#include "core/support/result.h"
#include "lsp/protocol/protocol.h"

namespace kl::lsp {

class Server;

/// A result already serialised as JSON text, written into the response as it is: for large
/// results assembled from pieces serialised once (inlay hints). The text must be valid JSON
/// made by the server (its strings escaped by json::dump); nothing checks it again.
struct RawJson {
  std::string text;
};

/// A result (any JSON, null included), a pre-serialised result, or an error.
using ReplyOutcome = std::variant<json, ResponseError, RawJson>;

/// kl::Error → LSP error: Cancelled → RequestCancelled, Invalid → InvalidParams,
/// Internal → InternalError, anything else → RequestFailed.
ResponseError toResponseError(const kl::Error& e);

namespace detail {
/// Shared state of one incoming request.
class ReplyState {
 public:
  ReplyState(Server& server, json id, std::string method, uint64_t cookie, CancellationToken token);
  ~ReplyState();
  ReplyState(const ReplyState&) = delete;
  ReplyState& operator=(const ReplyState&) = delete;

  void send(ReplyOutcome outcome);
  bool replied() const { return replied_.load(); }
  const std::string& method() const { return method_; }
  const json& id() const { return id_; }
  const CancellationToken& token() const { return token_; }

 private:
  Server& server_;
  json id_;
  std::string method_;
  uint64_t cookie_;
  CancellationToken token_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<bool> replied_{false};
};
}  // namespace detail

template <typename R>
class Reply {
 public:
  explicit Reply(std::shared_ptr<detail::ReplyState> state) : state_(std::move(state)) {}

  /// Answers with a value (serialised with toJson; a RawJson as it is) or, for an error
  /// Result, its error.
  void operator()(Result<R> result) const {
    if (!result.ok())
      state_->send(toResponseError(result.error()));
    else if constexpr (std::is_same_v<R, RawJson>)
      state_->send(std::move(result).value());
    else
      state_->send(toJson(result.value()));
  }
  void error(ErrorCode code, std::string message) const { state_->send(ResponseError{code, std::move(message)}); }
  void error(const ResponseError& e) const { state_->send(e); }

  /// Fires when the client cancels this request (and when the server shuts down).
  const CancellationToken& token() const { return state_->token(); }
  bool isCancelled() const { return state_->token().isCancelled(); }
  const std::string& method() const { return state_->method(); }
  /// The request's id.
  const json& id() const { return state_->id(); }
  bool replied() const { return state_->replied(); }

  /// The same reply, answering raw JSON (shares the exactly-once state).
  Reply<json> untyped() const { return Reply<json>(state_); }

 private:
  template <typename>
  friend class Reply;
  friend class Server;
  std::shared_ptr<detail::ReplyState> state_;
};

}  // namespace kl::lsp
