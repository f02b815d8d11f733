// The server core: dispatch, exactly-one-reply, cancellation, lifecycle, background work,
// server→client requests, progress, capabilities, settings. Most protocol-visible behaviour is
// also pinned by the transcripts (tests/lsp/transcripts); these cases need API access or threads.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "lsp/protocol/commands.h"
#include "tests/unit/lsp/lsp_test_client.h"

using namespace kl::lsp;
using kl::lsp::test::LogCapture;
using kl::lsp::test::registerTestMethods;
using kl::lsp::test::TestClient;

namespace {
json errorOf(const json& msg) { return msg.contains("error") ? msg["error"] : json(); }
int codeOf(const json& msg) { return msg.contains("error") ? msg["error"]["code"].get<int>() : 0; }
}  // namespace

TEST_CASE("server: every request gets exactly one reply") {
  LogCapture log;
  TestClient c(registerTestMethods);
  c.initialize();

  SUBCASE("second reply dropped") {
    c.request(1, "test/twice");
    auto msgs = c.take();
    REQUIRE(msgs.size() == 1);
    CHECK(msgs[0]["result"] == "first");
    CHECK(log.contains("second reply to test/twice"));
  }
  SUBCASE("dropped reply becomes an internal error") {
    auto r = c.call("test/drop");
    CHECK(codeOf(r) == -32603);
    CHECK(errorOf(r)["message"] == "server failed to reply to test/drop");
  }
  SUBCASE("a throwing handler becomes an internal error and the server survives") {
    auto r = c.call("test/throw");
    CHECK(codeOf(r) == -32603);
    CHECK(errorOf(r)["message"] == "test/throw failed: boom");
    CHECK(c.call("test/echo", {{"still", "alive"}})["result"]["still"] == "alive");
  }
  SUBCASE("a Reply dropped on another thread still answers, through the main loop") {
    std::optional<Reply<json>> kept;
    c.server().method<json, json>("test/keep", [&](const json&, Reply<json> r) { kept = r; });
    c.request(7, "test/keep");
    CHECK(c.take().empty());
    std::thread([&] { kept.reset(); }).join();
    auto msgs = c.take();
    REQUIRE(msgs.size() == 1);
    CHECK(msgs[0]["id"] == 7);
    CHECK(codeOf(msgs[0]) == -32603);
  }
}

TEST_CASE("server: cancellation of a running request, with and without pool threads") {
  for (unsigned threads : {0u, 2u}) {
    CAPTURE(threads);
    TestClient c(registerTestMethods, threads);
    c.initialize();
    c.request("abc", "test/block");
    c.notify("$/cancelRequest", {{"id", "abc"}});
    auto msgs = c.take();
    REQUIRE(msgs.size() == 1);
    CHECK(msgs[0]["id"] == "abc");
    CHECK(codeOf(msgs[0]) == -32800);
    // Cancelling something already answered (or unknown) is a no-op.
    c.notify("$/cancelRequest", {{"id", "abc"}});
    c.notify("$/cancelRequest", {{"id", 999}});
    CHECK(c.take().empty());
  }
}

TEST_CASE("server: a reply after the client cancelled is RequestCancelled") {
  TestClient c(registerTestMethods);
  c.initialize();
  std::optional<Reply<json>> kept;
  c.server().method<json, json>("test/keep", [&](const json&, Reply<json> r) { kept = r; });
  c.request(3, "test/keep");
  c.notify("$/cancelRequest", {{"id", 3}});
  CHECK(c.take().empty());
  CHECK(kept->isCancelled());
  (*kept)(json("late result"));
  auto msgs = c.take();
  REQUIRE(msgs.size() == 1);
  CHECK(codeOf(msgs[0]) == -32800);
}

TEST_CASE("server: background work on a real pool, and kernlens/sync waits for it") {
  TestClient c(
      [](Server& s) {
        registerTestMethods(s);
        s.method<json, int>("test/square", [&s](const json& p, Reply<int> r) {
          int n = p.get<int>();
          s.backgroundReply<int>(r, [n](const kl::CancellationToken&) -> kl::Result<int> {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return n * n;
          });
        });
      },
      4);
  c.initialize();
  for (int i = 0; i < 20; ++i) c.request(i, "test/square", i);
  c.request("sync", "kernlens/sync");
  auto msgs = c.take();
  REQUIRE(msgs.size() == 21);
  std::map<int, int> results;
  for (const auto& m : msgs)
    if (m["id"].is_number()) results[m["id"].get<int>()] = m["result"].get<int>();
  CHECK(results.size() == 20);
  for (auto [k, v] : results) CHECK(v == k * k);
  CHECK(msgs.back()["id"] == "sync");  // sync answers after every earlier background job
}

TEST_CASE("server: generic background() posts its result back to the main loop") {
  TestClient c({}, 2);
  c.initialize();
  std::vector<int> seen;
  kl::CancellationSource src;
  c.server().background<int>(
      "double", src.token(), [](const kl::CancellationToken&) { return 21 * 2; }, [&](int v) { seen.push_back(v); });
  c.take();
  CHECK(seen == std::vector<int>{42});
}

TEST_CASE("server: server→client requests and their responses") {
  LogCapture log;
  TestClient c(registerTestMethods);
  c.initialize();
  c.request(1, "test/call");
  auto msgs = c.take();
  REQUIRE(msgs.size() == 1);
  CHECK(msgs[0]["method"] == "client/thing");
  json callId = msgs[0]["id"];
  c.send({{"id", callId}, {"result", {{"answer", 42}}}});
  msgs = c.take();
  REQUIRE(msgs.size() == 1);
  CHECK(msgs[0]["id"] == 1);
  CHECK(msgs[0]["result"]["answer"] == 42);

  c.request(2, "test/call");
  callId = c.take()[0]["id"];
  c.send({{"id", callId}, {"error", {{"code", -32601}, {"message", "nope"}}}});
  msgs = c.take();
  CHECK(errorOf(msgs[0])["message"] == "-32601: nope");

  c.send({{"id", 12345}, {"result", nullptr}});
  CHECK(c.take().empty());
  CHECK(log.contains("response to an unknown request id 12345"));
}

TEST_CASE("server: work-done progress") {
  SUBCASE("client without window.workDoneProgress: nothing is sent") {
    TestClient c(registerTestMethods);
    c.initialize();
    auto msgs = c.take();
    CHECK(c.call("test/progress")["result"].is_null());
  }
  SUBCASE("create, then begin/report/end in order; reports before creation fold into begin") {
    TestClient c(registerTestMethods);
    c.initialize({{"window", {{"workDoneProgress", true}}}});
    c.request(1, "test/progress");
    auto msgs = c.take();
    REQUIRE(msgs.size() == 2);
    CHECK(msgs[0]["method"] == "window/workDoneProgress/create");
    json token = msgs[0]["params"]["token"];
    CHECK(msgs[1]["id"] == 1);
    c.send({{"id", msgs[0]["id"]}, {"result", nullptr}});
    msgs = c.take();
    REQUIRE(msgs.size() == 2);
    CHECK(msgs[0]["method"] == "$/progress");
    CHECK(msgs[0]["params"]["token"] == token);
    CHECK(
        msgs[0]["params"]["value"] ==
        json(
            {{"kind", "begin"}, {"title", "Testing"}, {"cancellable", true}, {"message", "half"}, {"percentage", 50}}));
    CHECK(msgs[1]["params"]["value"] == json({{"kind", "end"}, {"message", "done"}}));
  }
  SUBCASE("reports from a pool thread, cancel from the client") {
    TestClient c({}, 1);
    c.initialize({{"window", {{"workDoneProgress", true}}}});
    int cancelled = 0;
    auto p = c.server().beginProgress("Long", {.cancellable = true, .onCancel = [&] { ++cancelled; }});
    auto msgs = c.take();
    REQUIRE(msgs.size() == 1);
    c.send({{"id", msgs[0]["id"]}, {"result", nullptr}});
    CHECK(c.take()[0]["params"]["value"]["kind"] == "begin");
    std::thread([&] { p->report("from a thread", 10); }).join();
    msgs = c.take();
    REQUIRE(msgs.size() == 1);
    CHECK(msgs[0]["params"]["value"] == json({{"kind", "report"}, {"message", "from a thread"}, {"percentage", 10}}));
    c.notify("window/workDoneProgress/cancel", {{"token", p->token()}});
    c.take();
    CHECK(cancelled == 1);
    p.reset();  // destruction ends it
    msgs = c.take();
    REQUIRE(msgs.size() == 1);
    CHECK(msgs[0]["params"]["value"]["kind"] == "end");
  }
  SUBCASE("the client refuses the token: the progress is inert") {
    TestClient c;
    c.initialize({{"window", {{"workDoneProgress", true}}}});
    auto p = c.server().beginProgress("Refused");
    auto msgs = c.take();
    c.send({{"id", msgs[0]["id"]}, {"error", {{"code", -32603}, {"message", "no"}}}});
    p->report("x");
    p->end();
    CHECK(c.take().empty());
  }
}

TEST_CASE("server: capabilities come from registrations") {
  TestClient bare;
  json caps = bare.initialize()["capabilities"];
  CHECK(caps == json::parse(R"({"positionEncoding":"utf-16",
                                "textDocumentSync":{"openClose":true,"change":2}})"));

  TestClient c([](Server& s) {
    s.addCapabilities({{"hoverProvider", true}});
    s.addCapabilities({{"codeLensProvider", {{"resolveProvider", true}}}});
    s.command("kernlens.b", [](const json&, Reply<json> r) { r(json(nullptr)); });
    s.command("kernlens.a", [](const json& args, Reply<json> r) { r(args); });
  });
  caps = c.initialize({{"general", {{"positionEncodings", {"utf-8"}}}}})["capabilities"];
  CHECK(caps["positionEncoding"] == "utf-8");
  CHECK(caps["hoverProvider"] == true);
  CHECK(caps["codeLensProvider"]["resolveProvider"] == true);
  CHECK(caps["executeCommandProvider"]["commands"] == json({"kernlens.a", "kernlens.b"}));
  auto r = c.call("workspace/executeCommand", {{"command", "kernlens.a"}, {"arguments", {1, "x"}}});
  CHECK(r["result"] == json({1, "x"}));
  r = c.call("workspace/executeCommand", {{"command", "kernlens.a"}});
  CHECK(r["result"] == json::array());
}

TEST_CASE("server: settings from initializationOptions and didChangeConfiguration") {
  LogCapture log;
  int changes = 0;
  TestClient c([&](Server& s) { s.onSettingsChanged([&] { ++changes; }); });
  c.initialize(json::object(), {{"kernlens", {{"entry", "python train.py"}, {"hints", {{"minShare", 0.05}}}}}});
  const Settings& st = c.server().settings();
  CHECK(changes == 1);
  CHECK(st.get<std::string>("entry", "") == "python train.py");
  CHECK(st.get<double>("hints.minShare", 0) == doctest::Approx(0.05));
  CHECK(st.get<int64_t>("missing.key", 7) == 7);
  CHECK(st.get<int64_t>("entry", 7) == 7);  // wrong type: fallback, logged
  CHECK(log.contains("kernlens.entry: expected an integer"));

  c.notify("workspace/didChangeConfiguration", {{"settings", {{"kernlens", {{"entry", "x"}}}}}});
  c.take();
  CHECK(changes == 2);
  CHECK(st.get<std::string>("entry", "") == "x");
  CHECK(st.find("hints") == nullptr);
  // Some clients send the section itself.
  c.notify("workspace/didChangeConfiguration", {{"settings", {{"entry", "y"}}}});
  c.take();
  CHECK(st.get<std::string>("entry", "") == "y");
}

TEST_CASE("server: lifecycle exit codes") {
  SUBCASE("shutdown then exit: 0") {
    TestClient c;
    c.initialize();
    CHECK(c.call("shutdown")["result"].is_null());
    c.notify("exit");
    c.take();
    CHECK(c.server().exited());
    CHECK(c.server().exitCode() == 0);
    CHECK(c.transport().closed());  // reading stopped at exit
  }
  SUBCASE("exit without shutdown: 1") {
    TestClient c;
    c.initialize();
    c.notify("exit");
    c.take();
    CHECK(c.server().exitCode() == 1);
  }
  SUBCASE("end of input: 1, or 0 after shutdown") {
    TestClient a, b;
    a.initialize();
    a.transport().clientClose();
    a.take();
    CHECK(a.server().exited());
    CHECK(a.server().exitCode() == 1);
    b.initialize();
    b.call("shutdown");
    b.transport().clientClose();
    b.take();
    CHECK(b.server().exitCode() == 0);
  }
  SUBCASE("shutdown cancels running requests and waits for background work") {
    TestClient c(registerTestMethods, 2);
    c.initialize();
    c.request(1, "test/block");
    c.request(2, "shutdown");
    auto msgs = c.take();
    REQUIRE(msgs.size() == 2);
    CHECK(msgs[0]["id"] == 1);
    CHECK(codeOf(msgs[0]) == -32800);
    CHECK(msgs[1]["id"] == 2);
    CHECK(msgs[1]["result"].is_null());
  }
}

TEST_CASE("server: exit without shutdown and end of input cancel work not tied to a request") {
  // A long job like a profiling run: started by a command that answers at once, cancelled only
  // through its own source. Without cancelAll() on exit, ~Server would join the pool for 30 s.
  for (const char* how : {"exit", "end of input", "shutdown + exit"}) {
    CAPTURE(how);
    auto source = std::make_shared<kl::CancellationSource>();
    auto cancelledAfter = std::make_shared<std::atomic<int>>(-1);
    auto start = std::chrono::steady_clock::now();
    {
      TestClient c(
          [&](Server& s) {
            s.onCancelAll([source] { source->cancel(); });
            s.command<NoArguments>("test.longRun", [&s, source, cancelledAfter](const NoArguments&, Reply<json> r) {
              s.background<int>(
                  "test.longRun", source->token(),
                  [cancelledAfter](const kl::CancellationToken& t) {
                    int i = 0;
                    for (; i < 3000 && !t.isCancelled(); ++i)
                      std::this_thread::sleep_for(std::chrono::milliseconds(10));
                    *cancelledAfter = t.isCancelled() ? i : -2;
                    return i;
                  },
                  [](int) {});
              r(json("started"));
            });
          },
          2);
      c.initialize();
      // Sent together: take() would otherwise wait for the job (it runs until idle).
      c.request(1, "workspace/executeCommand", {{"command", "test.longRun"}});
      if (std::string(how) == "exit") {
        c.notify("exit");
      } else if (std::string(how) == "end of input") {
        c.transport().clientClose();
      } else {
        c.request(7, "shutdown");
        c.notify("exit");
      }
      auto msgs = c.take();
      REQUIRE(!msgs.empty());
      CHECK(msgs[0]["result"] == "started");
      CHECK(c.server().exited());
      CHECK(c.server().exitCode() == (std::string(how) == "shutdown + exit" ? 0 : 1));
      CHECK(source->isCancelled());
    }  // ~Server joins the pool
    auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(*cancelledAfter >= 0);  // the job saw the cancellation (-1: never ended, -2: ran out)
    CHECK(seconds < 15.0);
  }
}

TEST_CASE("server: malformed input is logged and serving continues") {
  LogCapture log;
  FrameLimits limits;
  limits.maxBodyBytes = 1000;
  TestClient c(registerTestMethods, 0, limits);
  c.initialize();
  c.transport().clientSend(std::string(2000, ' '));  // oversized
  c.transport().clientSend("{not json");
  c.transport().clientSend(std::string(500, '[') + std::string(500, ']'));  // too deep
  c.transport().clientWrite("Content-Length: x\r\n\r\n");
  c.transport().clientSend("[1,2]");
  // A body that is not JSON gets a parse error, one nested too deep an invalid-request error;
  // both with id null (no id can be read from them).
  auto replies = c.take();
  REQUIRE(replies.size() == 2);
  CHECK(replies[0]["error"]["code"] == -32700);
  CHECK(replies[0]["id"].is_null());
  CHECK(replies[1]["error"]["code"] == -32600);
  CHECK(replies[1]["id"].is_null());
  auto lines = log.take();
  auto has = [&](const std::string& s) {
    for (const auto& l : lines)
      if (l.find(s) != std::string::npos) return true;
    return false;
  };
  CHECK(has("exceeds the limit"));
  CHECK(has("not valid JSON"));
  CHECK(has("nested deeper"));
  CHECK(has("invalid Content-Length"));
  CHECK(has("not a JSON object"));
  CHECK(c.call("test/echo", 1)["result"] == 1);
}

TEST_CASE("server: document hooks see snapshots; didChange errors leave the document alone") {
  LogCapture log;
  std::vector<std::pair<std::string, int>> seen;
  std::vector<std::string> closed;
  TestClient c([&](Server& s) {
    s.onDocumentChanged([&](const DocumentPtr& d) { seen.emplace_back(d->text(), d->version()); });
    s.onDocumentClosed([&](const std::string& uri) { closed.push_back(uri); });
  });
  c.initialize();
  c.open("file:///a.py", "x = 1\n");
  c.notify("textDocument/didChange",
           {{"textDocument", {{"uri", "file:///a.py"}, {"version", 2}}},
            {"contentChanges",
             {{{"range", {{"start", {{"line", 0}, {"character", 4}}}, {"end", {{"line", 0}, {"character", 5}}}}},
               {"text", "42"}}}}});
  // start after end: rejected, document unchanged
  c.notify("textDocument/didChange",
           {{"textDocument", {{"uri", "file:///a.py"}, {"version", 3}}},
            {"contentChanges",
             {{{"range", {{"start", {{"line", 0}, {"character", 5}}}, {"end", {{"line", 0}, {"character", 1}}}}},
               {"text", "!"}}}}});
  c.notify("textDocument/didChange",
           {{"textDocument", {{"uri", "file:///nope.py"}, {"version", 1}}}, {"contentChanges", {{{"text", ""}}}}});
  c.notify("textDocument/didClose", {{"textDocument", {{"uri", "file:///a.py"}}}});
  c.take();
  CHECK(seen == std::vector<std::pair<std::string, int>>{{"x = 1\n", 1}, {"x = 42\n", 2}});
  CHECK(closed == std::vector<std::string>{"file:///a.py"});
  CHECK(log.contains("start after its end"));
  CHECK(c.server().documents().get("file:///a.py") == nullptr);
}

TEST_CASE("scheduler: a deadline fires once, after the last arm; cancel and destruction stop it") {
  using namespace std::chrono_literals;
  SUBCASE("deterministic: runUntilIdle skips time to armed deadlines, earliest first") {
    Scheduler s(0);
    std::vector<std::string> fired;
    auto a = s.deadline();
    auto b = s.deadline();
    auto c = s.deadline();
    a->arm(50ms, [&] { fired.push_back("a1"); });
    a->arm(300ms, [&] { fired.push_back("a2"); });  // re-armed: only the last one runs
    b->arm(100ms, [&] { fired.push_back("b"); });
    c->arm(10ms, [&] { fired.push_back("c"); });
    c->cancel();
    s.post([&] { fired.push_back("posted"); });  // ready work runs first
    s.runUntilIdle();
    CHECK(fired == std::vector<std::string>{"posted", "b", "a2"});
    CHECK_FALSE(a->armed());
    s.runUntilIdle();
    CHECK(fired.size() == 3);
    // A deadline armed by a deadline's handler fires in the same runUntilIdle.
    a->arm(10ms, [&] { b->arm(10ms, [&] { fired.push_back("chained"); }); });
    s.runUntilIdle();
    CHECK(fired.back() == "chained");
    {
      auto gone = s.deadline();
      gone->arm(1ms, [&] { fired.push_back("gone"); });
    }
    s.runUntilIdle();
    CHECK(fired.back() == "chained");
  }
  SUBCASE("with a pool: a real timer on the main loop") {
    Scheduler s(1);
    auto d = s.deadline();
    int runs = 0;
    auto start = std::chrono::steady_clock::now();
    s.post([&] {
      d->arm(5ms, [&] { ++runs; });
      d->arm(20ms, [&] {
        ++runs;
        s.stop();
      });
    });
    s.run();
    CHECK(runs == 1);
    CHECK(std::chrono::steady_clock::now() - start >= 20ms);
  }
  SUBCASE("a deadline outliving its scheduler is inert") {
    std::unique_ptr<Scheduler::Deadline> d;
    {
      Scheduler s(1);
      d = s.deadline();
      d->arm(1h, [] {});
    }
    CHECK_FALSE(d->armed());
    d->arm(1ms, [] {});
    CHECK_FALSE(d->armed());
  }
}
