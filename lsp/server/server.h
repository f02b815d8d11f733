// Server: the LSP 3.17 server core (clangd's ClangdLSPServer analogue): JSON-RPC 2.0
// dispatch, lifecycle, exactly-one-reply, cancellation, open documents, settings, and the
// registration API that feature files (lsp/features/<feature>.cpp) use.
//
// Threading: all state below is owned by the main loop (Scheduler). Handlers run on it.
// Background work runs on the pool over snapshots (background(), backgroundReply()) and posts
// back. Functions marked "any thread" hop to the main loop themselves.
//
// Lifecycle: before `initialize` every request gets ServerNotInitialized (-32002) and
// notifications are dropped; after `shutdown` requests get InvalidRequest; `exit` ends run()
// with 0 if `shutdown` came first, else 1 (end of input counts as `exit`). `shutdown`, `exit`
// and end of input cancel all running work (cancelAll()).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/result.h"
#include "lsp/protocol/protocol.h"
#include "lsp/server/documents.h"
#include "lsp/server/progress.h"
#include "lsp/server/reply.h"
#include "lsp/server/scheduler.h"
#include "lsp/server/settings.h"
#include "lsp/server/workspace.h"
#include "lsp/transport/transport.h"

namespace kl::lsp {

/// The JSON-RPC dialect the server speaks. Dispatch, exactly-one-reply, cancellation, the
/// background pool and the workspace rules are the same; what differs is the lifecycle:
///  - Lsp: LSP 3.17 (initialize → shutdown → exit, $/cancelRequest, documents, commands).
///  - Mcp: the Model Context Protocol (initialize answers protocolVersion/serverInfo and the
///    capabilities added with addCapabilities; `ping`; notifications/cancelled {requestId}
///    cancels a request, which then gets no answer (the MCP rule); end of input is the shutdown:
///    running work is cancelled, whatever it still answers is sent, then run() returns 0; no
///    documents, no shutdown/exit). The workspace root is ServerOptions::root, fixed at start.
enum class Dialect { Lsp, Mcp };

struct ServerOptions {
  /// Background pool threads; 0 = deterministic inline mode (tests, fuzzer, --threads 0).
  unsigned threads = 0;
  Dialect dialect = Dialect::Lsp;
  /// Mcp: the workspace root (an absolute directory). Lsp: ignored (initialize names it).
  std::filesystem::path root;
};

/// The MCP protocol revisions `kernlens mcp` speaks, newest first; initialize answers the
/// client's revision when listed, else the newest.
const std::vector<std::string>& mcpProtocolVersions();

class Server final : private MessageSink {
 public:
  /// The transport must outlive the server. Nothing is read until run() / start().
  Server(Transport& transport, ServerOptions options = {});
  ~Server() override;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // ---- Registration: call before the first message (e.g. from registerAllFeatures). ----

  /// Binds request `name`. Params are parsed with fromJson(json, P&, JPath) — a failure
  /// answers InvalidParams naming the JSON path — and the handler answers through `reply`.
  /// A handler that throws answers InternalError. Use P = json for raw params.
  template <typename P, typename R>
  void method(std::string name, std::function<void(const P&, Reply<R>)> handler) {
    addMethod(std::move(name), [handler = std::move(handler)](const json& params, Reply<json> raw) {
      P p{};
      std::string error;
      if (!parseJson(params, p, error)) return raw.error(ErrorCode::InvalidParams, error);
      handler(p, Reply<R>(raw.state_));
    });
  }
  /// Binds notification `name`; bad params are logged and the notification is dropped.
  template <typename P>
  void notification(std::string name, std::function<void(const P&)> handler) {
    addNotification(std::move(name), [name, handler = std::move(handler)](const json& params) {
      P p{};
      std::string error;
      if (!parseJson(params, p, error)) return logBadNotification(name, error);
      handler(p);
    });
  }
  /// Binds workspace/executeCommand command `name` with the raw `arguments` array ([] when
  /// absent). The command is listed in executeCommandProvider.commands.
  void command(std::string name, std::function<void(const json& arguments, Reply<json>)> handler);
  /// Binds a command whose single argument (arguments[0], null when absent) parses as Arg.
  template <typename Arg>
  void command(std::string name, std::function<void(const Arg&, Reply<json>)> handler) {
    command(std::move(name), [handler = std::move(handler)](const json& args, Reply<json> reply) {
      Arg a{};
      std::string error;
      json first = args.is_array() && !args.empty() ? args[0] : json();
      if (!parseJson(first, a, error, "arguments[0]")) return reply.error(ErrorCode::InvalidParams, error);
      handler(a, reply);
    });
  }
  /// Merges `patch` (RFC 7386 merge patch) into the ServerCapabilities sent by initialize.
  /// Declare only what is implemented.
  void addCapabilities(const json& patch);

  void onInitialized(std::function<void()> fn) { initializedHooks_.push_back(std::move(fn)); }
  /// After initializationOptions were read and after each didChangeConfiguration.
  void onSettingsChanged(std::function<void()> fn) { settingsHooks_.push_back(std::move(fn)); }
  /// After didOpen and after each applied didChange.
  void onDocumentChanged(std::function<void(const DocumentPtr&)> fn) { documentHooks_.push_back(std::move(fn)); }
  void onDocumentClosed(std::function<void(const std::string& uri)> fn) { closeHooks_.push_back(std::move(fn)); }
  /// Work not tied to a request (e.g. a profiling run): `fn` cancels it. Run by cancelAll().
  void onCancelAll(std::function<void()> fn) { cancelHooks_.push_back(std::move(fn)); }

  /// Cancels all running work: the token of every in-flight request (a pending `shutdown`
  /// excepted: it is answered once the work has ended) and every onCancelAll hook. Run on
  /// `shutdown`, on `exit` (with or without `shutdown`), at end of input and by ~Server, so that
  /// no background job keeps the pool — and the process — alive. Idempotent; main loop only.
  void cancelAll();
  /// Work that outlives its request's reply (a profiling run a command started): a later
  /// $/cancelRequest for `id` calls `cancel`. forgetCancel(id) when the work ends. Main loop only.
  void cancelAfterReply(const json& id, std::function<void()> cancel) {
    afterReplyCancel_[id.dump()] = std::move(cancel);
  }
  void forgetCancel(const json& id) { afterReplyCancel_.erase(id.dump()); }

  // ---- Running ----

  /// Starts the transport and runs the main loop on this thread until `exit` or end of input.
  /// Returns the process exit code.
  int run();
  /// Tests and the fuzzer: start the transport without running the loop; then feed input and
  /// call runUntilIdle().
  void start();
  /// Runs the main loop until no handler is ready and no background job is pending.
  void runUntilIdle() { scheduler_.runUntilIdle(); }
  bool exited() const { return exited_; }
  int exitCode() const { return exitCode_; }

  // ---- State (main loop only) ----

  bool isInitialized() const { return phase_ == Phase::Running || phase_ == Phase::ShutDown; }
  bool isShutDown() const { return phase_ == Phase::ShutDown; }
  const InitializeParams& initializeParams() const { return init_; }
  const ClientCapabilities& clientCapabilities() const { return init_.capabilities; }
  PositionEncoding encoding() const { return documents_.encoding(); }
  DocumentStore& documents() { return documents_; }
  const DocumentStore& documents() const { return documents_; }
  const Settings& settings() const { return settings_; }
  /// The workspace root, computed once from the initialize params (see workspace.h).
  const Workspace& workspace() const { return workspace_; }
  /// The capabilities answered (or to be answered) by initialize.
  json serverCapabilities() const;
  /// Registered command names, sorted.
  std::vector<std::string> commandNames() const;

  // ---- Talking to the client (any thread) ----

  void notify(std::string method, json params);
  /// Sends a server→client request; `onReply` runs on the main loop with the result or an
  /// error (kl::Error, message "<code>: <message>"). Never called if the server exits first.
  void call(std::string method, json params, std::function<void(Result<json>)> onReply = {});
  void logMessage(MessageType type, std::string message);
  void showMessage(MessageType type, std::string message);
  /// workspace/inlayHint/refresh, if the client supports it.
  void refreshInlayHints();
  /// workspace/codeLens/refresh, if the client supports it.
  void refreshCodeLenses();
  /// A work-done progress (see progress.h).
  std::shared_ptr<Progress> beginProgress(std::string title, ProgressOptions options = {});

  // ---- Background work ----

  /// Runs `work(token)` on the pool; then `done(result)` on the main loop. If `work` throws,
  /// the error is logged and `done` is not called.
  template <typename T>
  void background(std::string name, CancellationToken token, std::function<T(const CancellationToken&)> work,
                  std::function<void(T)> done) {
    scheduler_.spawn(
        std::move(name),
        [token = std::move(token), work = std::move(work), done = std::move(done)]() -> std::function<void()> {
          auto result = std::make_shared<T>(work(token));
          return [result, done] { done(std::move(*result)); };
        });
  }
  /// Answers `reply` with `work(token)` computed on the pool, where token is the request's.
  /// A cancelled request answers RequestCancelled; a throwing `work` answers InternalError.
  template <typename R>
  void backgroundReply(Reply<R> reply, std::function<Result<R>(const CancellationToken&)> work) {
    scheduler_.spawn(reply.method(), [reply, work = std::move(work)]() -> std::function<void()> {
      if (reply.isCancelled()) return [reply] { reply(Error::cancelled()); };
      try {
        auto result = std::make_shared<Result<R>>(work(reply.token()));
        return [reply, result] { reply(std::move(*result)); };
      } catch (const std::exception& e) {
        return [reply, what = std::string(e.what())] {
          reply.error(ErrorCode::InternalError, reply.method() + " failed: " + what);
        };
      }
    });
  }
  /// Runs `fn` on the main loop (any thread).
  void post(std::function<void()> fn) { scheduler_.post(std::move(fn)); }
  bool onLoop() const { return scheduler_.onLoop(); }
  Scheduler& scheduler() { return scheduler_; }

 private:
  friend class detail::ReplyState;
  friend class Progress;
  template <typename>
  friend class Reply;

  using RawMethod = std::function<void(const json& params, Reply<json>)>;
  using RawNotification = std::function<void(const json& params)>;
  enum class Phase { Uninitialized, Running, ShutDown };
  struct InFlight {
    uint64_t cookie;
    std::string method;
    CancellationSource source;
    bool cancelledByClient = false;  // $/cancelRequest or notifications/cancelled (not cancelAll)
  };

  void addMethod(std::string name, RawMethod handler);
  void addNotification(std::string name, RawNotification handler);
  static void logBadNotification(const std::string& method, const std::string& error);
  void registerBuiltins();
  void registerMcpBuiltins();

  // MessageSink (reader thread).
  bool onMessage(std::string body) override;
  void onFramingError(std::string message) override;
  void onClose() override;

  // Main loop.
  void handleMessage(const json& msg);
  void handleRequest(const json& id, const std::string& method, const json& params);
  void handleNotification(const std::string& method, const json& params);
  void handleResponse(const json& msg);
  void sendError(const json& id, ErrorCode code, std::string message);
  void send(const json& msg);
  /// Delivers a reply decided by a ReplyState (any thread; hops to the loop).
  void deliverReply(json id, std::string method, uint64_t cookie, ReplyOutcome outcome,
                    std::chrono::steady_clock::time_point start);
  void exit();

  void onInitialize(const InitializeParams& params, Reply<json> reply);
  void onShutdown(Reply<json> reply);
  void onExecuteCommand(const ExecuteCommandParams& params, Reply<json> reply);
  void onDidChangeConfiguration(const DidChangeConfigurationParams& params);
  void onCancelRequest(const CancelParams& params);

  Transport& transport_;
  Dialect dialect_;
  Scheduler scheduler_;
  std::atomic<bool> closing_{false};  // set by ~Server: dropped replies are not sent

  std::map<std::string, RawMethod> methods_;
  std::map<std::string, RawNotification> notifications_;
  std::map<std::string, RawMethod> commands_;
  json capabilityPatch_ = json::object();
  std::vector<std::function<void()>> initializedHooks_, settingsHooks_, cancelHooks_;
  std::vector<std::function<void(const DocumentPtr&)>> documentHooks_;
  std::vector<std::function<void(const std::string&)>> closeHooks_;

  Phase phase_ = Phase::Uninitialized;
  bool started_ = false;
  bool exited_ = false;
  int exitCode_ = 1;
  InitializeParams init_;
  DocumentStore documents_;
  Settings settings_;
  Workspace workspace_;

  uint64_t nextCookie_ = 1;
  std::map<std::string, InFlight> inFlight_;  // key: id.dump()
  int64_t nextCallId_ = 1;
  std::map<int64_t, std::function<void(Result<json>)>> pendingCalls_;
  std::map<std::string, std::function<void()>> progressCancel_;    // key: token.dump()
  std::map<std::string, std::function<void()>> afterReplyCancel_;  // key: request id.dump()
};

}  // namespace kl::lsp
