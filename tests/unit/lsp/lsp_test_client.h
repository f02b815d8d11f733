// In-process LSP client for tests: a Server over a MemoryTransport, driven deterministically.
// Messages are framed and written as bytes, so framing is exercised on every test.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "lsp/server/server.h"
#include "lsp/transport/memory_transport.h"

namespace kl::lsp::test {

/// Captures kl::log output while alive (restores the stderr sink afterwards).
class LogCapture {
 public:
  LogCapture();
  ~LogCapture();
  /// Lines logged since the last take().
  std::vector<std::string> take();
  bool contains(const std::string& needle);

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

class TestClient {
 public:
  /// `setup` registers extra methods/features before the server starts.
  explicit TestClient(std::function<void(Server&)> setup = {}, unsigned threads = 0, FrameLimits limits = {});

  Server& server() { return server_; }
  MemoryTransport& transport() { return transport_; }

  /// Sends a message ("jsonrpc" added when missing). Does not run the server.
  void send(json msg);
  void request(const json& id, const std::string& method, json params = json());
  void notify(const std::string& method, json params = json());
  /// Runs the server until idle and returns (and forgets) everything it sent.
  std::vector<json> take();
  /// request() + take(); requires exactly one message back and returns it.
  json call(const std::string& method, json params = json());
  /// initialize (with `capabilities` and `initOptions`) + initialized; returns the result.
  json initialize(json capabilities = json::object(), json initOptions = json());
  void open(const std::string& uri, const std::string& text, int version = 1);

 private:
  MemoryTransport transport_;
  Server server_;
  int nextId_ = 1000;
};

/// Test-only methods (never registered by the real server), used by unit and transcript tests:
///   test/echo       → replies its params
///   test/throw      → the handler throws std::runtime_error("boom")
///   test/drop       → the handler drops its reply
///   test/twice      → replies "first", then "second" (dropped)
///   test/block      → background work that waits (max 10 s) until cancelled; "finished" if not
///   test/position   → typed params (TextDocumentPositionParams); replies the position
///   test/document   → {uri} → {text, version, lineCount, parsed, sexpEqualsFresh}
///   test/setting    → {key} → settings().get<json>(key, null)
///   test/progress   → begins a progress, reports 50%, ends it, replies null
///   test/call       → sends server→client request "client/thing" and replies with its answer
///   command test.command (typed: {"n": int}) → n + 1
void registerTestMethods(Server& server);

/// Subset match (Verible's json_contains): every key of `expected` must be in `actual` with a
/// matching value; arrays match element-wise with equal length; numbers compare numerically.
/// Special strings: "<any>" (present, any value), "<absent>" (key must be absent),
/// "<contains:TEXT>" (a string containing TEXT). Returns "" on match, else what differs.
std::string jsonMismatch(const json& expected, const json& actual, const std::string& path = "$");

}  // namespace kl::lsp::test
