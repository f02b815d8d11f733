// CUTE DSL intra-kernel regions in the editor (lsp/features/cute_regions.*): kernlens.loadRegions
// / clearRegions, region inlay hints through the real textDocument/inlayHint, and the "Time this
// region inside the kernel" code action. Buffers: tests/data/cute (built from known events by
// make_fixtures.py); kernel: samples/cute/tiled_add.py.
#include "lsp/features/cute_regions.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "lsp/features/all.h"
#include "tests/support/test_support.h"
#include "tests/unit/lsp/lsp_test_client.h"

using namespace kl::lsp;
using kl::lsp::test::LogCapture;
using kl::lsp::test::TestClient;

namespace {

const std::string kUri = "file:///ws/tiled_add.py";

std::string kernelText() { return kl::test::readFile(kl::test::sourcePath("samples/cute/tiled_add.py")); }
std::string fixture(const std::string& name) { return kl::test::dataPath("cute/" + name).string(); }

/// LSP range from (l1, c1) to (l2, c2).
json lspRange(uint32_t l1, uint32_t c1, uint32_t l2, uint32_t c2) {
  return {{"start", {{"line", l1}, {"character", c1}}}, {"end", {{"line", l2}, {"character", c2}}}};
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// 0-based line of the first line containing `needle`.
uint32_t lineOf(const std::string& text, const std::string& needle) {
  auto lines = splitLines(text);
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(needle) != std::string::npos) return static_cast<uint32_t>(i);
  FAIL("no line contains " << needle);
  return 0;
}

struct Client {
  LogCapture log;
  TestClient c{[](Server& s) { registerAllFeatures(s); }};
  int id = 1;
  explicit Client(bool refresh = true) {
    json caps = json::object();
    if (refresh) caps = {{"workspace", {{"inlayHint", {{"refreshSupport", true}}}}}};
    c.initialize(caps);
  }
  /// Sends a request and returns every message the server sent (in order).
  std::vector<json> send(const std::string& method, json params) {
    c.request(id++, method, std::move(params));
    return c.take();
  }
  json command(const std::string& name, json args) {
    auto msgs = send("workspace/executeCommand", {{"command", name}, {"arguments", std::move(args)}});
    for (auto& m : msgs)
      if (m.contains("id") && !m.contains("method")) return m;
    FAIL("no reply to " << name);
    return {};
  }
  /// kernlens.loadRegions with arguments [arg]: every message the server sent.
  std::vector<json> load(json arg) {
    return send("workspace/executeCommand",
                {{"command", "kernlens.loadRegions"}, {"arguments", json::array({std::move(arg)})}});
  }
  /// kernlens.loadRegions with arguments [arg]: the reply.
  json loadReply(json arg) { return command("kernlens.loadRegions", json::array({std::move(arg)})); }
  json hints(const std::string& uri = kUri) {
    auto msgs = send("textDocument/inlayHint", {{"textDocument", {{"uri", uri}}}, {"range", lspRange(0, 0, 999, 0)}});
    REQUIRE(msgs.size() == 1);
    REQUIRE(msgs[0].contains("result"));
    return msgs[0]["result"];
  }
};

/// The reply (a message with an id and no method) among `msgs`.
const json& replyIn(const std::vector<json>& msgs) {
  for (const auto& m : msgs)
    if (m.contains("id") && !m.contains("method")) return m;
  FAIL("no reply among " << json(msgs).dump());
  static const json none;
  return none;
}
/// The message with method `method` among `msgs`.
const json& requestIn(const std::vector<json>& msgs, const std::string& method) {
  for (const auto& m : msgs)
    if (m.value("method", "") == method) return m;
  FAIL("no " << method << " among " << json(msgs).dump());
  static const json none;
  return none;
}

/// Applies an LSP WorkspaceEdit's TextEdits (ASCII text, so UTF-16 == bytes) to `text`.
std::string applyEdits(std::string text, const json& edits) {
  auto offset = [&](const json& pos) {
    uint32_t line = pos["line"], ch = pos["character"];
    size_t off = 0;
    for (uint32_t l = 0; l < line; ++l) off = text.find('\n', off) + 1;
    return off + ch;
  };
  std::vector<std::tuple<size_t, size_t, std::string, size_t>> es;
  for (size_t i = 0; i < edits.size(); ++i)
    es.emplace_back(offset(edits[i]["range"]["start"]), offset(edits[i]["range"]["end"]),
                    edits[i]["newText"].get<std::string>(), i);
  // Apply from the end; equal starts keep their array order.
  std::sort(es.begin(), es.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b) : std::get<3>(a) > std::get<3>(b);
  });
  for (const auto& [a, b, t, i] : es) text.replace(a, b - a, t);
  return text;
}

}  // namespace

TEST_CASE("cute regions: hint label and name matching") {
  kl::cute::TagStats s;
  s.tag = 0;
  s.count = 4;
  s.meanNs = 1300;
  s.share = 5200.0 / 15000.0;
  CHECK(regionHintLabel("TAG_LOAD", s) == "◷ region TAG_LOAD: mean 1.30 µs · n=4 · 35 %");
  s.meanNs = 2.5e6;
  s.share = 0.004;
  CHECK(regionHintLabel("TAG_X", s) == "◷ region TAG_X: mean 2.50 ms · n=4 · 0.4 %");
  CHECK(sameTagName("TAG_LOAD", "TAG_LOAD"));
  CHECK(sameTagName("TAG_LOAD", "load"));
  CHECK_FALSE(sameTagName("TAG_LOAD", "TAG_STORE"));
  CHECK_FALSE(sameTagName("", "x"));
}

TEST_CASE("cute regions: loadRegions -> hints at the region lines, following edits") {
  Client cl;
  const std::string text = kernelText();
  cl.c.open(kUri, text);
  CHECK(cl.hints().empty());  // nothing loaded yet

  auto msgs = cl.load({{"path", fixture("tiled_add_regions.bin")}, {"uri", kUri}});
  // The reply, a log line, and workspace/inlayHint/refresh (the client supports it).
  REQUIRE(msgs.size() == 3);
  CHECK(requestIn(msgs, "window/logMessage")["params"]["message"].get<std::string>().find(
            "12 events, 3 tags, 1 open kernels match") != std::string::npos);
  const json& r = replyIn(msgs);
  const json& refresh = requestIn(msgs, "workspace/inlayHint/refresh");
  REQUIRE(r.contains("result"));
  CHECK(r["result"]["events"] == 12);
  CHECK(r["result"]["overflow"] == 0);
  CHECK(r["result"]["documents"] == json::array({kUri}));
  REQUIRE(r["result"]["tags"].size() == 3);
  CHECK(r["result"]["tags"][0]["name"] == "TAG_LOAD");
  CHECK(r["result"]["tags"][0]["meanNs"] == 1300.0);
  CHECK(r["result"]["tags"][2]["name"] == "TAG_STORE");
  CHECK(r["result"]["tags"][2]["totalNs"] == 8800);
  cl.c.send({{"id", refresh["id"]}, {"result", nullptr}});  // the client answers the refresh
  CHECK(cl.c.take().empty());

  const uint32_t load = lineOf(text, "Int32(TAG_LOAD)"), add = lineOf(text, "eid = lane0_warp0_start"),
                 store = lineOf(text, "Int32(TAG_STORE)");
  auto lines = splitLines(text);
  json h = cl.hints();
  REQUIRE(h.size() == 3);
  CHECK(h[0]["label"] == "◷ region TAG_LOAD: mean 1.30 µs · n=4 · 35 %");
  CHECK(h[0]["position"] == json({{"line", load}, {"character", lines[load].size()}}));
  CHECK(h[1]["label"] == "◷ region TAG_ADD: mean 250 ns · n=4 · 7 %");
  CHECK(h[1]["position"]["line"] == add);
  CHECK(h[2]["label"] == "◷ region TAG_STORE: mean 2.20 µs · n=4 · 59 %");
  CHECK(h[2]["position"]["line"] == store);
  CHECK(h[0]["tooltip"]["value"].get<std::string>().find("min 1.00 µs · max 1.60 µs") != std::string::npos);

  // Range filter: only the ADD anchor.
  auto ranged =
      cl.send("textDocument/inlayHint", {{"textDocument", {{"uri", kUri}}}, {"range", lspRange(add, 0, add + 1, 0)}});
  REQUIRE(ranged[0]["result"].size() == 1);
  CHECK(ranged[0]["result"][0]["label"].get<std::string>().find("TAG_ADD") != std::string::npos);

  // Two lines inserted above the kernel: every hint moves down by two.
  uint32_t def = lineOf(text, "@cute.kernel");
  cl.c.notify(
      "textDocument/didChange",
      {{"textDocument", {{"uri", kUri}, {"version", 2}}},
       {"contentChanges", json::array({{{"range", lspRange(def, 0, def, 0)}, {"text", "# moved\n# down\n"}}})}});
  h = cl.hints();
  REQUIRE(h.size() == 3);
  CHECK(h[0]["position"]["line"] == load + 2);
  CHECK(h[1]["position"]["line"] == add + 2);
  CHECK(h[2]["position"]["line"] == store + 2);

  // Deleting the ADD region's start line drops that hint only (its stop has no start any more,
  // so the site anchors on the stop line itself).
  cl.c.notify("textDocument/didChange",
              {{"textDocument", {{"uri", kUri}, {"version", 3}}},
               {"contentChanges", json::array({{{"range", lspRange(add + 2, 0, add + 3, 0)}, {"text", ""}}})}});
  h = cl.hints();
  REQUIRE(h.size() == 3);
  CHECK(h[1]["position"]["line"] == add + 2 + 2);  // the stop line (moved up by one)
  CHECK(h[2]["position"]["line"] == store + 1);

  // clearRegions: no hints, refresh asked again.
  auto cleared =
      cl.send("workspace/executeCommand", {{"command", "kernlens.clearRegions"}, {"arguments", json::array()}});
  REQUIRE(cleared.size() == 2);
  CHECK(replyIn(cleared)["result"].is_null());
  requestIn(cleared, "workspace/inlayHint/refresh");
  CHECK(cl.hints().empty());
}

TEST_CASE("cute regions: tag sources, npy, and documents that do not match") {
  Client cl(/*refresh=*/false);  // no refresh support: no server->client request
  const std::string text = kernelText();
  cl.c.open(kUri, text);

  SUBCASE("tag file + npy") {
    json r = cl.loadReply({{"path", fixture("tiled_add_regions.npy")}, {"tags", fixture("tiled_add_tags.txt")}});
    REQUIRE(r.contains("result"));
    CHECK(r["result"]["tags"][1]["name"] == "TAG_ADD");
    CHECK(cl.hints().size() == 3);
  }
  SUBCASE("kernel file on disk (document not open)") {
    std::string uri = "file://" + kl::test::sourcePath("samples/cute/tiled_add.py").string();
    json r = cl.loadReply({{"path", fixture("tiled_add_regions.bin")}, {"uri", uri}});
    REQUIRE(r.contains("result"));
    CHECK(r["result"]["tags"][2]["name"] == "TAG_STORE");
    CHECK(cl.hints().size() == 3);
  }
  SUBCASE("no names: ids only") {
    json r = cl.loadReply({{"path", fixture("tiled_add_regions.bin")}});
    REQUIRE(r.contains("result"));
    CHECK(r["result"]["tags"][0]["name"] == "tag_0");
    json h = cl.hints();
    REQUIRE(h.size() == 3);
    CHECK(h[0]["label"].get<std::string>().rfind("◷ region TAG_LOAD: mean 1.30 µs", 0) == 0);
  }
  SUBCASE("a kernel whose constants disagree gets no hints") {
    REQUIRE(cl.loadReply({{"path", fixture("tiled_add_regions.bin")}, {"uri", kUri}}).contains("result"));
    std::string other = text;
    other.replace(other.find("TAG_LOAD = 0"), 12, "TAG_LOAD = 7");
    cl.c.open("file:///ws/other.py", other);
    CHECK(cl.hints("file:///ws/other.py").empty());
    // Renamed constants: the sites' names are not the buffer's.
    std::string renamed = text;
    const std::pair<std::string, std::string> renames[] = {
        {"TAG_LOAD", "TAG_A"}, {"TAG_ADD", "TAG_B"}, {"TAG_STORE", "TAG_C"}};
    for (const auto& [from, to] : renames)
      for (size_t p; (p = renamed.find(from)) != std::string::npos;) renamed.replace(p, from.size(), to);
    cl.c.open("file:///ws/renamed.py", renamed);
    CHECK(cl.hints("file:///ws/renamed.py").empty());
    cl.c.open("file:///ws/plain.py", "def f():\n    return 1\n");
    CHECK(cl.hints("file:///ws/plain.py").empty());
    CHECK(cl.hints().size() == 3);
  }
}

TEST_CASE("cute regions: bad buffers are clear errors and the server keeps serving") {
  Client cl(/*refresh=*/false);
  cl.c.open(kUri, kernelText());
  REQUIRE(cl.loadReply({{"path", fixture("tiled_add_regions.bin")}, {"uri", kUri}}).contains("result"));

  struct Case {
    std::string path, needle;
  };
  for (const Case& k : {Case{fixture("malformed.bin"), "malformed.bin"},
                        Case{fixture("tiled_add_overflow.bin"), "buffer overflow: 10 events lost"},
                        Case{fixture("does_not_exist.bin"), "does_not_exist.bin"}}) {
    CAPTURE(k.path);
    auto msgs = cl.load({{"path", k.path}, {"uri", kUri}});
    REQUIRE(msgs.size() == 2);
    const json& shown = requestIn(msgs, "window/showMessage");
    CHECK(shown["params"]["type"] == 1);
    CHECK(shown["params"]["message"].get<std::string>().find(k.needle) != std::string::npos);
    const json& reply = replyIn(msgs);
    REQUIRE(reply.contains("error"));
    CHECK(reply["error"]["code"] == -32803);
    CHECK(reply["error"]["message"].get<std::string>().find(k.needle) != std::string::npos);
    // The previous load is kept and the server still answers.
    CHECK(cl.hints().size() == 3);
  }
  // Bad arguments name the JSON path.
  json bad = cl.loadReply({{"tags", "x"}});
  CHECK(bad["error"]["code"] == -32602);
  CHECK(bad["error"]["message"].get<std::string>().find("arguments[0].path") != std::string::npos);

  // allowOverflow: loaded with a warning; statistics of the two recorded events.
  auto msgs = cl.load({{"path", fixture("tiled_add_overflow.bin")}, {"uri", kUri}, {"allowOverflow", true}});
  REQUIRE(msgs.size() == 3);
  CHECK(requestIn(msgs, "window/showMessage")["params"]["type"] == 2);
  requestIn(msgs, "window/logMessage");
  CHECK(replyIn(msgs)["result"]["overflow"] == 10);
  CHECK(replyIn(msgs)["result"]["events"] == 2);
  json h = cl.hints();
  REQUIRE(h.size() == 2);  // LOAD and ADD of block 0 were recorded
  CHECK(h[0]["label"] == "◷ region TAG_LOAD: mean 1.00 µs · n=1 · 83 %");
}

TEST_CASE("cute regions: 'Time this region inside the kernel' edits") {
  Client cl(false);
  const std::string text = kernelText();
  cl.c.open(kUri, text);
  CHECK(cl.c.take().empty());
  auto doc = cl.c.server().documents().get(kUri);
  REQUIRE(doc);
  const uint32_t base = lineOf(text, "base = bidx * TILE");
  auto params = [&](uint32_t a, uint32_t b, json only = nullptr) {
    json p = {{"textDocument", {{"uri", kUri}}},
              {"range", lspRange(a, 4, b, 10)},
              {"context", {{"diagnostics", json::array()}}}};
    if (!only.is_null()) p["context"]["only"] = only;
    CodeActionParams typed;
    std::string error;
    REQUIRE_MESSAGE(parseJson(p, typed, error), error);
    return typed;
  };
  auto actions = [&](const CodeActionParams& p) { return toJson(cuteRegionCodeActions(*doc, p)); };

  json offers = actions(params(base, base));
  REQUIRE(offers.size() == 1);
  CHECK(offers[0]["title"] == "Time this region inside the kernel");
  CHECK(offers[0]["kind"] == "refactor.rewrite.cute.region");
  CHECK_FALSE(offers[0].contains("edit"));
  CHECK(isCuteRegionAction(offers[0]["data"]));
  CHECK(offers[0]["data"]["version"] == 1);

  CHECK(actions(params(base, base, {"refactor.rewrite.cute"})).size() == 1);
  CHECK(actions(params(base, base, {"refactor.rewrite.nvtx"})).empty());
  // Outside a @cute.kernel (the @cute.jit launcher, main, module level): nothing.
  CHECK(actions(params(lineOf(text, "blocks = cute.size"), lineOf(text, "blocks = cute.size"))).empty());
  CHECK(actions(params(lineOf(text, "a = torch.randn"), lineOf(text, "a = torch.randn"))).empty());
  CHECK(actions(params(lineOf(text, "THREADS = 128"), lineOf(text, "THREADS = 128"))).empty());

  auto typedEdit = cuteRegionEdit(*doc, offers[0]["data"]);
  REQUIRE_MESSAGE(typedEdit.ok(), (typedEdit.ok() ? "" : typedEdit.error().message));
  const json edit = toJson(*typedEdit);
  REQUIRE(edit["documentChanges"].size() == 1);
  const json& tde = edit["documentChanges"][0];
  CHECK(tde["textDocument"] == json({{"uri", kUri}, {"version", 1}}));
  std::string after = applyEdits(text, tde["edits"]);
  std::string expected = text;
  expected.replace(expected.find("TAG_STORE = 2\n"), 14, "TAG_STORE = 2\nTAG_REGION_3 = 3\n");
  expected.replace(expected.find("    base = bidx * TILE\n"), 23,
                   "    eid_region_3 = lane0_warp0_start(prof_buf, max_events)\n"
                   "    base = bidx * TILE\n"
                   "    lane0_warp0_stop(prof_buf, eid_region_3, Int32(TAG_REGION_3), bidx, max_events)\n");
  CHECK(after == expected);

  // A selection that widens to a whole statement: the `with` block and the line before it.
  json widened = offers[0]["data"];
  widened["lastLine"] = lineOf(text, "ra[i] = a[base");
  auto w = cuteRegionEdit(*doc, widened);
  REQUIRE(w.ok());
  std::string wAfter = applyEdits(text, toJson(*w)["documentChanges"][0]["edits"]);
  CHECK(wAfter.find("            rb[i] = b[base + i * THREADS + tidx]\n"
                    "    lane0_warp0_stop(prof_buf, eid_region_3, Int32(TAG_REGION_3), bidx, max_events)\n") !=
        std::string::npos);
  // Bad data and a selection outside any def are one-line errors.
  auto bad = cuteRegionEdit(*doc, json{{"action", "cute.timeRegion"}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "params.data.firstLine: required field is missing");
  json outside = offers[0]["data"];
  outside["firstLine"] = outside["lastLine"] = lineOf(text, "THREADS = 128");
  auto refused = cuteRegionEdit(*doc, outside);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("inside the kernel function") != std::string::npos);
}

TEST_CASE("cute regions: loadRegions with a background pool") {
  LogCapture log;
  TestClient c([](Server& s) { registerAllFeatures(s); }, /*threads=*/2);
  c.initialize();
  const std::string text = kernelText();
  c.open(kUri, text);
  c.request(1, "workspace/executeCommand",
            {{"command", "kernlens.loadRegions"},
             {"arguments", json::array({json{{"path", fixture("tiled_add_regions.bin")}, {"uri", kUri}}})}});
  auto msgs = c.take();
  REQUIRE(msgs.size() == 2);  // log line + reply (no refresh support)
  CHECK(replyIn(msgs)["result"]["events"] == 12);
  c.request(2, "textDocument/inlayHint", {{"textDocument", {{"uri", kUri}}}, {"range", lspRange(0, 0, 999, 0)}});
  auto h = c.take();
  REQUIRE(h.size() == 1);
  REQUIRE(h[0]["result"].size() == 3);
  CHECK(h[0]["result"][2]["label"] == "◷ region TAG_STORE: mean 2.20 µs · n=4 · 59 %");
}

TEST_CASE("cute regions: the code action through textDocument/codeAction and codeAction/resolve") {
  Client cl(false);
  const std::string text = kernelText();
  cl.c.open(kUri, text);
  const uint32_t base = lineOf(text, "base = bidx * TILE");
  auto caps = cl.c.server().serverCapabilities();
  auto kinds = caps["codeActionProvider"]["codeActionKinds"];
  CHECK(std::find(kinds.begin(), kinds.end(), json("refactor.rewrite.cute.region")) != kinds.end());

  auto offered = cl.send("textDocument/codeAction",
                         {{"textDocument", {{"uri", kUri}}},
                          {"range", lspRange(base, 4, base, 10)},
                          {"context", {{"diagnostics", json::array()}, {"only", {"refactor.rewrite.cute"}}}}});
  REQUIRE(offered.size() == 1);
  REQUIRE(offered[0]["result"].size() == 1);
  json action = offered[0]["result"][0];
  CHECK(action["title"] == "Time this region inside the kernel");
  CHECK_FALSE(action.contains("edit"));

  auto resolved = cl.send("codeAction/resolve", action);
  REQUIRE(resolved.size() == 1);
  REQUIRE(resolved[0].contains("result"));
  const json& tde = resolved[0]["result"]["edit"]["documentChanges"][0];
  CHECK(tde["textDocument"]["version"] == 1);
  std::string expected = text;
  expected.replace(expected.find("TAG_STORE = 2\n"), 14, "TAG_STORE = 2\nTAG_REGION_3 = 3\n");
  expected.replace(expected.find("    base = bidx * TILE\n"), 23,
                   "    eid_region_3 = lane0_warp0_start(prof_buf, max_events)\n"
                   "    base = bidx * TILE\n"
                   "    lane0_warp0_stop(prof_buf, eid_region_3, Int32(TAG_REGION_3), bidx, max_events)\n");
  CHECK(applyEdits(text, tde["edits"]) == expected);

  // Outside the kernel: no cute action among the offers.
  auto outside =
      cl.send("textDocument/codeAction",
              {{"textDocument", {{"uri", kUri}}},
               {"range", lspRange(lineOf(text, "blocks = cute.size"), 4, lineOf(text, "blocks = cute.size"), 6)},
               {"context", {{"diagnostics", json::array()}, {"only", {"refactor.rewrite.cute"}}}}});
  CHECK(outside[0]["result"].empty());

  // The document changed: resolving the old offer is refused.
  cl.c.notify("textDocument/didChange", {{"textDocument", {{"uri", kUri}, {"version", 2}}},
                                         {"contentChanges", json::array({{{"text", text + "\n"}}})}});
  auto stale = cl.send("codeAction/resolve", action);
  REQUIRE(stale.size() == 1);
  CHECK(stale[0]["error"]["code"] == -32801);
}
