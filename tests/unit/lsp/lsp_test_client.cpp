#include "tests/unit/lsp/lsp_test_client.h"

#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <utility>

#include "core/support/log.h"

namespace kl::lsp::test {

LogCapture::LogCapture() {
  kl::log::setMinLevel(kl::log::Level::Info);
  kl::log::setSink([this](kl::log::Level l, std::string_view m) {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.push_back(std::string(kl::log::levelName(l)) + ": " + std::string(m));
  });
}
LogCapture::~LogCapture() { kl::log::setSink({}); }

std::vector<std::string> LogCapture::take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(lines_, {});
}

bool LogCapture::contains(const std::string& needle) {
  for (const auto& l : take())
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

TestClient::TestClient(std::function<void(Server&)> setup, unsigned threads, FrameLimits limits)
    : transport_(limits), server_(transport_, ServerOptions{threads}) {
  if (setup) setup(server_);
  server_.start();
}

void TestClient::send(json msg) {
  if (msg.is_object() && !msg.contains("jsonrpc")) msg["jsonrpc"] = "2.0";
  transport_.clientSend(msg.dump());
}

void TestClient::request(const json& id, const std::string& method, json params) {
  json msg = {{"id", id}, {"method", method}};
  if (!params.is_null()) msg["params"] = std::move(params);
  send(std::move(msg));
}

void TestClient::notify(const std::string& method, json params) {
  json msg = {{"method", method}};
  if (!params.is_null()) msg["params"] = std::move(params);
  send(std::move(msg));
}

std::vector<json> TestClient::take() {
  server_.runUntilIdle();
  std::vector<json> out;
  for (const auto& body : transport_.takeSent()) out.push_back(json::parse(body));
  return out;
}

json TestClient::call(const std::string& method, json params) {
  request(nextId_++, method, std::move(params));
  auto msgs = take();
  REQUIRE(msgs.size() == 1);
  return msgs[0];
}

json TestClient::initialize(json capabilities, json initOptions) {
  json params = {{"processId", nullptr}, {"rootUri", nullptr}, {"capabilities", capabilities}};
  if (!initOptions.is_null()) params["initializationOptions"] = initOptions;
  json r = call("initialize", params);
  REQUIRE(r.contains("result"));
  notify("initialized", json::object());
  CHECK(take().empty());
  return r["result"];
}

void TestClient::open(const std::string& uri, const std::string& text, int version) {
  notify("textDocument/didOpen",
         {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", version}, {"text", text}}}});
}

namespace {
struct CommandArg {
  int64_t n = 0;
};
bool fromJson(const json& j, CommandArg& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("n", out.n);
}
}  // namespace

void registerTestMethods(Server& server) {
  server.method<json, json>("test/echo", [](const json& p, Reply<json> r) { r(p); });
  server.method<json, json>("test/throw", [](const json&, Reply<json>) { throw std::runtime_error("boom"); });
  server.method<json, json>("test/drop", [](const json&, Reply<json>) {});
  server.method<json, std::string>("test/twice", [](const json&, Reply<std::string> r) {
    r(std::string("first"));
    r(std::string("second"));
  });
  server.method<json, std::string>("test/block", [&server](const json&, Reply<std::string> r) {
    server.backgroundReply<std::string>(r, [](const kl::CancellationToken& token) -> kl::Result<std::string> {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!token.isCancelled() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (token.isCancelled()) return kl::Error::cancelled();
      return std::string("finished");
    });
  });
  server.method<TextDocumentPositionParams, Position>(
      "test/position", [](const TextDocumentPositionParams& p, Reply<Position> r) { r(p.position); });
  server.method<TextDocumentIdentifier, json>("test/document",
                                              [&server](const TextDocumentIdentifier& p, Reply<json> r) {
                                                DocumentPtr doc = server.documents().get(p.uri);
                                                if (!doc)
                                                  return r.error(ErrorCode::InvalidParams, "not open: " + p.uri);
                                                bool same = false;
                                                if (doc->source()) {
                                                  auto fresh = kl::python::SourceFile::parse(doc->text());
                                                  same = fresh.ok() && (*fresh)->sexp() == doc->source()->sexp();
                                                }
                                                r(json{{"text", doc->text()},
                                                       {"version", doc->version()},
                                                       {"lineCount", doc->lineCount()},
                                                       {"parsed", doc->source() != nullptr},
                                                       {"sexpEqualsFresh", same}});
                                              });
  server.method<json, json>("test/setting", [&server](const json& p, Reply<json> r) {
    r(server.settings().get<json>(p.value("key", ""), json()));
  });
  server.method<json, json>("test/progress", [&server](const json&, Reply<json> r) {
    auto progress = server.beginProgress("Testing", {.cancellable = true, .message = "start"});
    progress->report("half", 50);
    progress->end("done");
    r(json(nullptr));
  });
  server.method<json, json>("test/call", [&server](const json&, Reply<json> r) {
    server.call("client/thing", {{"q", 1}}, [r](kl::Result<json> answer) {
      if (answer) return r(*answer);
      r.error(ErrorCode::RequestFailed, answer.error().message);
    });
  });
  server.command<CommandArg>("test.command", [](const CommandArg& a, Reply<json> r) { r(json(a.n + 1)); });
}

std::string jsonMismatch(const json& expected, const json& actual, const std::string& path) {
  if (expected.is_string()) {
    const auto& s = expected.get_ref<const std::string&>();
    if (s == "<any>") return "";
    if (s.rfind("<contains:", 0) == 0 && s.size() > 11 && s.back() == '>') {
      std::string needle = s.substr(10, s.size() - 11);
      if (actual.is_string() && actual.get<std::string>().find(needle) != std::string::npos) return "";
      return path + ": expected a string containing '" + needle + "', got " + actual.dump();
    }
  }
  if (expected.is_object()) {
    if (!actual.is_object()) return path + ": expected an object, got " + actual.dump();
    for (const auto& [key, value] : expected.items()) {
      bool absent = value.is_string() && value.get<std::string>() == "<absent>";
      auto it = actual.find(key);
      if (absent) {
        if (it != actual.end()) return path + "." + key + ": expected absent, got " + it->dump();
        continue;
      }
      if (it == actual.end()) return path + "." + key + ": missing (expected " + value.dump() + ")";
      if (auto m = jsonMismatch(value, *it, path + "." + key); !m.empty()) return m;
    }
    return "";
  }
  if (expected.is_array()) {
    if (!actual.is_array() || actual.size() != expected.size())
      return path + ": expected an array of " + std::to_string(expected.size()) + ", got " + actual.dump();
    for (size_t i = 0; i < expected.size(); ++i)
      if (auto m = jsonMismatch(expected[i], actual[i], path + "[" + std::to_string(i) + "]"); !m.empty()) return m;
    return "";
  }
  if (expected.is_number() && actual.is_number()) {
    if (expected.get<double>() == actual.get<double>()) return "";
  } else if (expected == actual) {
    return "";
  }
  return path + ": expected " + expected.dump() + ", got " + actual.dump();
}

}  // namespace kl::lsp::test
