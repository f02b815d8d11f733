#include "lsp/server/server.h"

#include <algorithm>

#include "core/support/format.h"
#include "core/support/log.h"
#include "core/support/version.h"

namespace kl::lsp {

// ---------------------------------------------------------------------------------------------
// Replies

ResponseError toResponseError(const kl::Error& e) {
  switch (e.code) {
    case Error::Code::Cancelled: return {ErrorCode::RequestCancelled, e.message};
    case Error::Code::Invalid: return {ErrorCode::InvalidParams, e.message};
    case Error::Code::Internal: return {ErrorCode::InternalError, e.message};
    default: return {ErrorCode::RequestFailed, e.message};
  }
}

namespace detail {

ReplyState::ReplyState(Server& server, json id, std::string method, uint64_t cookie, CancellationToken token)
    : server_(server),
      id_(std::move(id)),
      method_(std::move(method)),
      cookie_(cookie),
      token_(std::move(token)),
      start_(std::chrono::steady_clock::now()) {}

ReplyState::~ReplyState() {
  if (replied_.load() || server_.closing_.load()) return;
  kl::log::error("lsp: " + method_ + " handler dropped its reply");
  server_.deliverReply(id_, method_, cookie_,
                       ResponseError{ErrorCode::InternalError, "server failed to reply to " + method_}, start_);
}

void ReplyState::send(ReplyOutcome outcome) {
  if (replied_.exchange(true)) {
    kl::log::error("lsp: second reply to " + method_ + " (id " + id_.dump() + ") dropped");
    return;
  }
  server_.deliverReply(id_, method_, cookie_, std::move(outcome), start_);
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Construction and registration

namespace {

/// Nesting depth of a JSON text, ignoring brackets inside strings. Bounds every recursive
/// walk over untrusted messages (parser, dump, fromJson).
bool nestingExceeds(std::string_view body, int limit) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (char c : body) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

/// The "id" of a request whose body is not valid JSON, when it can still be read: an integer
/// or a simple string right after `"id":`; null otherwise.
json readableId(std::string_view body) {
  for (size_t at = body.find("\"id\""); at != std::string_view::npos; at = body.find("\"id\"", at + 1)) {
    size_t i = at + 4;
    while (i < body.size() && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n')) ++i;
    if (i >= body.size() || body[i] != ':') continue;
    ++i;
    while (i < body.size() && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n')) ++i;
    if (i < body.size() && (body[i] == '-' || (body[i] >= '0' && body[i] <= '9'))) {
      size_t j = i + 1;
      while (j < body.size() && body[j] >= '0' && body[j] <= '9') ++j;
      json id = json::parse(body.substr(i, j - i), nullptr, false);
      if (id.is_number_integer()) return id;
    } else if (i < body.size() && body[i] == '"') {
      size_t j = body.find('"', i + 1);
      if (j != std::string_view::npos && j - i <= 256) {
        std::string_view s = body.substr(i + 1, j - i - 1);
        if (s.find('\\') == std::string_view::npos) return json(std::string(s));
      }
    }
  }
  return json();
}

std::string excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 60)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return s.size() > 60 ? out + "..." : out;
}

bool validId(const json& id) { return id.is_number_integer() || id.is_string(); }

}  // namespace

const std::vector<std::string>& mcpProtocolVersions() {
  static const std::vector<std::string> versions = {"2025-11-25", "2025-06-18", "2025-03-26"};
  return versions;
}

Server::Server(Transport& transport, ServerOptions options)
    : transport_(transport), dialect_(options.dialect), scheduler_(options.threads) {
  if (dialect_ == Dialect::Mcp) {
    workspace_ = Workspace(options.root);
    registerMcpBuiltins();
  } else {
    registerBuiltins();
  }
}

Server::~Server() {
  closing_ = true;
  cancelAll();
  transport_.stop();
}

void Server::addMethod(std::string name, RawMethod handler) { methods_[std::move(name)] = std::move(handler); }

void Server::addNotification(std::string name, RawNotification handler) {
  notifications_[std::move(name)] = std::move(handler);
}

void Server::command(std::string name, std::function<void(const json&, Reply<json>)> handler) {
  commands_[std::move(name)] = std::move(handler);
}

void Server::addCapabilities(const json& patch) { capabilityPatch_.merge_patch(patch); }

void Server::logBadNotification(const std::string& method, const std::string& error) {
  kl::log::error("lsp: " + method + " ignored: invalid params: " + error);
}

std::vector<std::string> Server::commandNames() const {
  std::vector<std::string> names;
  for (const auto& [name, h] : commands_) names.push_back(name);
  return names;  // std::map: already sorted
}

json Server::serverCapabilities() const {
  if (dialect_ == Dialect::Mcp) return capabilityPatch_;
  json caps = {
      {"positionEncoding", encodingName(encoding())},
      {"textDocumentSync", {{"openClose", true}, {"change", 2 /* Incremental */}}},
  };
  if (!commands_.empty()) caps["executeCommandProvider"] = {{"commands", commandNames()}};
  caps.merge_patch(capabilityPatch_);
  return caps;
}

void Server::registerBuiltins() {
  method<InitializeParams, json>("initialize",
                                 [this](const InitializeParams& p, Reply<json> r) { onInitialize(p, std::move(r)); });
  method<json, json>("shutdown", [this](const json&, Reply<json> r) { onShutdown(std::move(r)); });
  method<ExecuteCommandParams, json>("workspace/executeCommand", [this](const ExecuteCommandParams& p, Reply<json> r) {
    onExecuteCommand(p, std::move(r));
  });
  // Test hook (clangd's "sync"): answers null once all background work started before it ended.
  method<json, json>("kernlens/sync",
                     [this](const json&, Reply<json> r) { scheduler_.whenIdle([r] { r(json(nullptr)); }); });

  notification<json>("initialized", [this](const json&) {
    for (auto& h : initializedHooks_) h();
  });
  notification<DidOpenTextDocumentParams>("textDocument/didOpen", [this](const DidOpenTextDocumentParams& p) {
    DocumentPtr doc = documents_.open(p.textDocument);
    for (auto& h : documentHooks_) h(doc);
  });
  notification<DidChangeTextDocumentParams>("textDocument/didChange", [this](const DidChangeTextDocumentParams& p) {
    auto doc = documents_.change(p);
    if (!doc) return kl::log::error("lsp: " + doc.error().message);
    for (auto& h : documentHooks_) h(*doc);
  });
  notification<DidCloseTextDocumentParams>("textDocument/didClose", [this](const DidCloseTextDocumentParams& p) {
    if (!documents_.close(p.textDocument.uri))
      return kl::log::warn("lsp: didClose of a document that is not open: " + p.textDocument.uri);
    for (auto& h : closeHooks_) h(p.textDocument.uri);
  });
  notification<DidChangeConfigurationParams>(
      "workspace/didChangeConfiguration",
      [this](const DidChangeConfigurationParams& p) { onDidChangeConfiguration(p); });
  notification<CancelParams>("$/cancelRequest", [this](const CancelParams& p) { onCancelRequest(p); });
  notification<WorkDoneProgressCancelParams>("window/workDoneProgress/cancel",
                                             [this](const WorkDoneProgressCancelParams& p) {
                                               auto it = progressCancel_.find(p.token.dump());
                                               if (it != progressCancel_.end() && it->second) it->second();
                                             });
}

void Server::registerMcpBuiltins() {
  method<json, json>("initialize", [this](const json& params, Reply<json> r) {
    if (!params.is_object()) return r.error(ErrorCode::InvalidParams, "params: expected an object");
    auto v = params.find("protocolVersion");
    if (v == params.end() || !v->is_string())
      return r.error(ErrorCode::InvalidParams, "params.protocolVersion: expected a string");
    const auto& known = mcpProtocolVersions();
    std::string version = v->get<std::string>();
    if (std::find(known.begin(), known.end(), version) == known.end()) version = known.front();
    phase_ = Phase::Running;
    kl::log::info("mcp: initialized, protocol revision " + version);
    r(json{{"protocolVersion", version},
           {"capabilities", serverCapabilities()},
           {"serverInfo", {{"name", "kernlens"}, {"version", versionString()}}}});
  });
  method<json, json>("ping", [](const json&, Reply<json> r) { r(json::object()); });
  method<json, json>("kernlens/sync",
                     [this](const json&, Reply<json> r) { scheduler_.whenIdle([r] { r(json(nullptr)); }); });
  notification<json>("notifications/initialized", [this](const json&) {
    for (auto& h : initializedHooks_) h();
  });
  notification<json>("notifications/cancelled", [this](const json& p) {
    auto id = p.is_object() ? p.find("requestId") : p.end();
    if (!p.is_object() || id == p.end() || !validId(*id))
      return logBadNotification("notifications/cancelled", "params.requestId: expected an integer or a string");
    CancelParams c;
    c.id = *id;
    onCancelRequest(c);
  });
}

// ---------------------------------------------------------------------------------------------
// Running

void Server::start() {
  if (started_) return;
  started_ = true;
  transport_.start(*this);
}

int Server::run() {
  start();
  scheduler_.run();
  transport_.stop();
  return exitCode_;
}

void Server::exit() {
  exited_ = true;
  cancelAll();
  scheduler_.stop();
}

void Server::cancelAll() {
  for (auto& [key, f] : inFlight_)
    if (f.method != "shutdown") f.source.cancel();
  for (auto& h : cancelHooks_) h();
}

// Reader thread: parse, hand over to the main loop. Stop reading after `exit`.
bool Server::onMessage(std::string body) {
  if (nestingExceeds(body, 128)) {
    kl::log::error("lsp: message nested deeper than 128 levels ignored: " + excerpt(body));
    scheduler_.post([this, id = readableId(body)] {
      if (!exited_) sendError(id, ErrorCode::InvalidRequest, "message nested deeper than 128 levels");
    });
    return true;
  }
  json msg = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (msg.is_discarded()) {
    // JSON-RPC: a parse error is answered (id null); when an id can still be read from the
    // text, the answer carries it so the client's request does not wait forever.
    kl::log::error("lsp: message is not valid JSON: " + excerpt(body));
    scheduler_.post([this, id = readableId(body)] {
      if (!exited_) sendError(id, ErrorCode::ParseError, "parse error: the message body is not valid JSON");
    });
    return true;
  }
  bool isExit =
      dialect_ == Dialect::Lsp && msg.is_object() && !msg.contains("id") && msg.value("method", json()) == "exit";
  scheduler_.post([this, msg = std::move(msg)] { handleMessage(msg); });
  return !isExit;
}

void Server::onFramingError(std::string message) { kl::log::error("lsp: bad message framing: " + message); }

void Server::onClose() {
  scheduler_.post([this] {
    if (exited_) return;
    if (dialect_ == Dialect::Mcp) {  // MCP's shutdown: running work is stopped, what it answers is sent
      kl::log::info("mcp: the client closed the input");
      cancelAll();
      scheduler_.whenIdle([this] {
        if (exited_) return;
        exitCode_ = 0;
        exit();
      });
      return;
    }
    kl::log::info("lsp: the client closed the input without `exit`");
    exitCode_ = phase_ == Phase::ShutDown || dialect_ == Dialect::Mcp ? 0 : 1;
    exit();
  });
}

// ---------------------------------------------------------------------------------------------
// Dispatch (main loop)

void Server::send(const json& msg) { transport_.send(msg.dump(-1, ' ', false, json::error_handler_t::replace)); }

void Server::sendError(const json& id, ErrorCode code, std::string message) {
  send({{"jsonrpc", "2.0"}, {"id", id}, {"error", toJson(ResponseError{code, std::move(message)})}});
}

void Server::handleMessage(const json& msg) {
  if (exited_) return;
  if (!msg.is_object()) return kl::log::error("lsp: message is not a JSON object, ignored");
  auto idIt = msg.find("id");
  const json* id = idIt == msg.end() ? nullptr : &*idIt;
  const json replyId = id && validId(*id) ? *id : json();
  auto methodIt = msg.find("method");
  if (msg.value("jsonrpc", json()) != "2.0") {
    if (id) return sendError(replyId, ErrorCode::InvalidRequest, "\"jsonrpc\" must be \"2.0\"");
    return kl::log::error("lsp: message without \"jsonrpc\": \"2.0\" ignored");
  }
  if (methodIt != msg.end()) {
    if (!methodIt->is_string()) {
      if (id) return sendError(replyId, ErrorCode::InvalidRequest, "\"method\" must be a string");
      return kl::log::error("lsp: notification with a non-string method ignored");
    }
    const std::string& method = methodIt->get_ref<const std::string&>();
    auto paramsIt = msg.find("params");
    const json params = paramsIt == msg.end() ? json() : *paramsIt;
    if (!id) return handleNotification(method, params);
    if (!validId(*id)) return sendError(json(), ErrorCode::InvalidRequest, "request id must be an integer or a string");
    return handleRequest(*id, method, params);
  }
  if (id && (msg.contains("result") || msg.contains("error"))) return handleResponse(msg);
  if (id) return sendError(replyId, ErrorCode::InvalidRequest, "message is neither a request nor a response");
  kl::log::error("lsp: message is neither a request, a notification nor a response; ignored");
}

void Server::handleRequest(const json& id, const std::string& method, const json& params) {
  kl::log::debug("lsp: --> " + method + "(" + id.dump() + ")");
  if (method == "initialize" && phase_ != Phase::Uninitialized)
    return sendError(id, ErrorCode::InvalidRequest, "initialize may only be sent once");
  if (phase_ == Phase::Uninitialized && method != "initialize" && !(dialect_ == Dialect::Mcp && method == "ping")) {
    // MCP: an unknown method is that (a client probing `server/discover` falls back to initialize).
    if (dialect_ == Dialect::Mcp && !methods_.count(method))
      return sendError(id, ErrorCode::MethodNotFound, "method not found: " + method);
    return sendError(id, ErrorCode::ServerNotInitialized, "server not initialized: send initialize first");
  }
  if (phase_ == Phase::ShutDown)
    return sendError(id, ErrorCode::InvalidRequest, "server is shutting down: only exit is accepted");
  auto it = methods_.find(method);
  if (it == methods_.end()) return sendError(id, ErrorCode::MethodNotFound, "method not found: " + method);

  uint64_t cookie = nextCookie_++;
  InFlight& entry = inFlight_[id.dump()];
  entry = InFlight{cookie, method, CancellationSource(), false};
  Reply<json> reply(std::make_shared<detail::ReplyState>(*this, id, method, cookie, entry.source.token()));
  try {
    it->second(params, reply);
  } catch (const std::exception& e) {
    if (!reply.replied())
      reply.error(ErrorCode::InternalError, method + " failed: " + e.what());
    else
      kl::log::error("lsp: " + method + " threw after replying: " + e.what());
  } catch (...) {
    if (!reply.replied()) reply.error(ErrorCode::InternalError, method + " failed");
  }
}

void Server::deliverReply(json id, std::string method, uint64_t cookie, ReplyOutcome outcome,
                          std::chrono::steady_clock::time_point start) {
  if (closing_) return;
  if (!onLoop()) {
    post([this, id = std::move(id), method = std::move(method), cookie, outcome = std::move(outcome), start]() mutable {
      deliverReply(std::move(id), std::move(method), cookie, std::move(outcome), start);
    });
    return;
  }
  if (exited_) return;
  auto it = inFlight_.find(id.dump());
  if (it != inFlight_.end() && it->second.cookie == cookie) {
    bool cancelled = it->second.source.isCancelled(), byClient = it->second.cancelledByClient;
    inFlight_.erase(it);
    if (dialect_ == Dialect::Mcp) {
      if (byClient) {  // MCP: a request the client cancelled is not answered
        kl::log::debug("mcp: " + method + "(" + id.dump() + ") cancelled, not answered");
        return;
      }
    } else if (cancelled) {
      outcome = ResponseError{ErrorCode::RequestCancelled, method + " cancelled"};
    }
  }
  bool isError = std::holds_alternative<ResponseError>(outcome);
  if (auto* raw = std::get_if<RawJson>(&outcome)) {
    // The same message as below, keys in the same (sorted) order, the result spliced in.
    std::string msg = R"({"id":)" + id.dump() + R"(,"jsonrpc":"2.0","result":)";
    msg += raw->text;
    msg += '}';
    transport_.send(msg);
  } else {
    json msg = {{"jsonrpc", "2.0"}, {"id", id}};
    if (auto* err = std::get_if<ResponseError>(&outcome))
      msg["error"] = toJson(*err);
    else
      msg["result"] = std::move(std::get<json>(outcome));
    send(msg);
  }
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  kl::log::debug("lsp: <-- " + method + "(" + id.dump() + ") " + formatDuration(static_cast<double>(ns)) +
                 (isError ? " error" : ""));
}

void Server::handleNotification(const std::string& method, const json& params) {
  kl::log::debug("lsp: --> " + method);
  if (method == "exit" && dialect_ == Dialect::Lsp) {
    exitCode_ = phase_ == Phase::ShutDown ? 0 : 1;
    return exit();
  }
  if (phase_ == Phase::Uninitialized) return kl::log::warn("lsp: " + method + " before initialize dropped");
  if (phase_ == Phase::ShutDown) return kl::log::warn("lsp: " + method + " after shutdown dropped");
  auto it = notifications_.find(method);
  if (it == notifications_.end()) {
    // "$/" notifications are optional by spec; others are merely not implemented.
    if (method.rfind("$/", 0) != 0) kl::log::debug("lsp: unhandled notification " + method);
    return;
  }
  try {
    it->second(params);
  } catch (const std::exception& e) {
    kl::log::error("lsp: " + method + " failed: " + e.what());
  } catch (...) {
    kl::log::error("lsp: " + method + " failed");
  }
}

void Server::handleResponse(const json& msg) {
  const json& id = msg["id"];
  auto it = id.is_number_integer() ? pendingCalls_.find(id.get<int64_t>()) : pendingCalls_.end();
  if (it == pendingCalls_.end())
    return kl::log::warn("lsp: response to an unknown request id " + excerpt(id.dump()) + " ignored");
  auto callback = std::move(it->second);
  pendingCalls_.erase(it);
  if (!callback) return;
  Result<json> result = json();
  if (auto err = msg.find("error"); err != msg.end()) {
    std::string code = err->is_object() ? err->value("code", json()).dump() : "?";
    std::string text;
    if (err->is_object() && err->contains("message") && (*err)["message"].is_string())
      text = (*err)["message"].get<std::string>();
    result = Error::invalid(code + ": " + text);
  } else {
    result = msg["result"];
  }
  try {
    callback(std::move(result));
  } catch (const std::exception& e) {
    kl::log::error(std::string("lsp: response handler failed: ") + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Built-in methods

void Server::onInitialize(const InitializeParams& params, Reply<json> reply) {
  init_ = params;
  workspace_ = Workspace::fromInitialize(params);
  documents_.setEncoding(negotiateEncoding(params.capabilities.positionEncodings));
  settings_.replace(Settings::kernlensSection(params.initializationOptions));
  phase_ = Phase::Running;
  kl::log::info(std::string("lsp: initialized, position encoding ") + encodingName(encoding()));
  for (auto& h : settingsHooks_) h();
  reply(json{{"capabilities", serverCapabilities()},
             {"serverInfo", {{"name", "kernlens"}, {"version", versionString()}}}});
}

void Server::onShutdown(Reply<json> reply) {
  phase_ = Phase::ShutDown;
  cancelAll();
  scheduler_.whenIdle([reply] { reply(json(nullptr)); });
}

void Server::onExecuteCommand(const ExecuteCommandParams& params, Reply<json> reply) {
  auto it = commands_.find(params.command);
  if (it == commands_.end()) return reply.error(ErrorCode::InvalidParams, "unknown command: " + params.command);
  it->second(params.arguments, reply);
}

void Server::onDidChangeConfiguration(const DidChangeConfigurationParams& params) {
  settings_.replace(Settings::kernlensSection(params.settings));
  for (auto& h : settingsHooks_) h();
}

void Server::onCancelRequest(const CancelParams& params) {
  auto it = inFlight_.find(params.id.dump());
  if (it == inFlight_.end()) {
    // Answered already; work it started may still run (a profiling run).
    if (auto w = afterReplyCancel_.find(params.id.dump()); w != afterReplyCancel_.end() && w->second) w->second();
    return;
  }
  kl::log::debug("lsp: cancelling " + it->second.method + "(" + params.id.dump() + ")");
  it->second.cancelledByClient = true;
  it->second.source.cancel();
}

// ---------------------------------------------------------------------------------------------
// Talking to the client

void Server::notify(std::string method, json params) {
  if (!onLoop()) {
    post([this, method = std::move(method), params = std::move(params)]() mutable {
      notify(std::move(method), std::move(params));
    });
    return;
  }
  if (exited_) return;
  json msg = {{"jsonrpc", "2.0"}, {"method", std::move(method)}};
  if (!params.is_null()) msg["params"] = std::move(params);
  send(msg);
}

void Server::call(std::string method, json params, std::function<void(Result<json>)> onReply) {
  if (!onLoop()) {
    post([this, method = std::move(method), params = std::move(params), onReply = std::move(onReply)]() mutable {
      call(std::move(method), std::move(params), std::move(onReply));
    });
    return;
  }
  if (exited_) return;
  int64_t id = nextCallId_++;
  pendingCalls_[id] = std::move(onReply);
  json msg = {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::move(method)}};
  if (!params.is_null()) msg["params"] = std::move(params);
  send(msg);
}

void Server::logMessage(MessageType type, std::string message) {
  notify("window/logMessage", {{"type", static_cast<int>(type)}, {"message", std::move(message)}});
}

void Server::showMessage(MessageType type, std::string message) {
  notify("window/showMessage", {{"type", static_cast<int>(type)}, {"message", std::move(message)}});
}

void Server::refreshInlayHints() {
  post([this] {
    if (init_.capabilities.inlayHintRefresh) call("workspace/inlayHint/refresh", json());
  });
}

void Server::refreshCodeLenses() {
  post([this] {
    if (init_.capabilities.codeLensRefresh) call("workspace/codeLens/refresh", json());
  });
}

std::shared_ptr<Progress> Server::beginProgress(std::string title, ProgressOptions options) {
  return std::make_shared<Progress>(*this, std::move(title), std::move(options));
}

}  // namespace kl::lsp
