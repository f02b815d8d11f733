// The convergence loop's verdict on a line in the editor hover (lsp/features/hover.cpp): a
// workspace whose kernlens.db holds one round whose ranges carry the loop's verdicts
// (Store::annotateRanges), loaded by the server at `initialized`, hovered as Markdown and as plain
// text. The real loop writing these verdicts is checked end to end by tests/e2e/lsp_atomic_hover.sh.
#include <doctest/doctest.h>

#include "core/attribution/kernel_label.h"
#include "core/store/store.h"
#include "lsp/features/all.h"
#include "lsp/server/uri.h"
#include "tests/support/range_verdict.h"
#include "tests/support/test_support.h"
#include "tests/unit/lsp/lsp_test_client.h"

using namespace kl;
using kl::lsp::json;
using kl::lsp::test::TestClient;

namespace {

// Line 6 calls a lambda (cannot be wrapped), line 9 a function the loop did not wrap, line 10 a
// library function: all three launch several kernels per call.
const char* kSource =
    "import torch.nn.functional as F\n"
    "class Block:\n"
    "    def __init__(self, m):\n"
    "        self.mlpf = lambda x: m.c_proj(m.act(m.c_fc(x)))\n"
    "    def forward(self, x):\n"
    "        x = x + self.mlpf(x)\n"
    "        return x\n"
    "def step(model, x, y):\n"
    "    h = model(x)\n"
    "    return F.cross_entropy(h, y)\n";

attribution::LineResult span(uint32_t line) {
  attribution::LineResult s;
  s.range.name = "kl:net.py:" + std::to_string(line) + "-" + std::to_string(line);
  s.path = "net.py";
  s.range.firstLine = s.range.lastLine = line;
  s.line = s.lastLine = line - 1;  // 0-based disk lines
  s.function = line < 8 ? "Block.forward" : "step";
  s.invocations = 1;
  s.range.launches = 2;
  s.ops = 2;
  s.range.gpuNs = s.gpuNs = 3000;
  s.range.distinctKernels = 2;
  for (auto [name, ns] :
       {std::pair<const char*, int64_t>{"ampere_sgemm_64x64_tn", 2000}, {"vectorized_elementwise_kernel", 1000}}) {
    attribution::KernelStat k;
    k.name = k.fullName = k.opName = name;
    k.launches = 1;
    k.totalNs = ns;
    s.kernels.push_back(k);
  }
  return s;
}

void writeStore(const std::filesystem::path& ws) {
  auto st = store::Store::open(ws);
  REQUIRE(st.ok());
  store::RunInfo run;
  run.key = "run-verdicts";
  run.command = "python3 net.py";
  run.workspace = ws.string();
  run.backend = "emulate";
  run.launch = "local";
  run.focusPath = "net.py";
  run.focusFunction = "step";
  REQUIRE(st->beginRun(run).ok());
  store::RoundRecord round;
  round.results.spans = {span(6), span(9), span(10)};
  round.results.totalOps = 6;
  round.results.mappedOps = 6;
  round.files.push_back({"net.py", kSource});
  auto rid = st->writeRound(run.id, round);
  REQUIRE(rid.ok());
  // What the loop concludes for this code (its wording: core/planner/loop.cpp atomicReason).
  using attribution::AtomicReason;
  REQUIRE(st->annotateRanges(
                *rid, {test::rangeVerdict(
                           "kl:net.py:6-6", AtomicReason::Unfollowed,
                           "net.py:4 Block.__init__.<locals>.<lambda> ran beneath it: a lambda: source edits "
                           "cannot wrap it; its launches stay on this line (make it a def to see them per line)"),
                       test::rangeVerdict("kl:net.py:9-9", AtomicReason::Unfollowed,
                                          "net.py::Block.forward ran beneath it but could not be wrapped (the "
                                          "annotation engine did not place it)",
                                          "net.py::Block.forward"),
                       test::rangeVerdict("kl:net.py:10-10", AtomicReason::Library,
                                          "its launches come from code outside the workspace")})
              .ok());
  run.status = store::RunStatus::Ok;
  REQUIRE(st->finishRun(run).ok());
}

std::string hover(TestClient& c, const std::string& uri, uint32_t line) {
  json r = c.call("textDocument/hover",
                  {{"textDocument", {{"uri", uri}}}, {"position", {{"line", line}, {"character", 6}}}});
  REQUIRE(r.contains("result"));
  REQUIRE(r["result"].is_object());
  return r["result"]["contents"]["value"].get<std::string>();
}

/// Plain-text hovers wrap at 80 columns: the text with its line breaks as spaces.
std::string flat(std::string s) {
  for (char& ch : s)
    if (ch == '\n') ch = ' ';
  return s;
}

}  // namespace

TEST_CASE("hover: why the loop left a line atomic, and which function to focus on instead") {
  test::TempDir ws;
  test::writeFile(ws / "net.py", kSource);
  writeStore(ws.path());
  for (std::string format : {"markdown", "plaintext"}) {
    CAPTURE(format);
    TestClient c{[](lsp::Server& s) { lsp::registerAllFeatures(s); }};
    json caps = {{"textDocument", {{"hover", {{"contentFormat", json::array({format})}}}}}};
    json r =
        c.call("initialize", {{"processId", nullptr}, {"rootUri", lsp::pathToUri(ws.path())}, {"capabilities", caps}});
    REQUIRE(r.contains("result"));
    c.notify("initialized", json::object());
    c.take();
    std::string uri = lsp::pathToUri(ws / "net.py");
    c.open(uri, kSource);
    c.take();
    bool md = format == "markdown";
    std::string lambdaLine = hover(c, uri, 5), callLine = hover(c, uri, 8), libLine = hover(c, uri, 9);
    // The lambda: not followed, its launches stay on the line; no function to focus on.
    CHECK(lambdaLine.find(md ? "**ATOMIC** — a workspace function beneath it was not followed:"
                             : "ATOMIC — a workspace") != std::string::npos);
    CHECK(lambdaLine.find("lambda") != std::string::npos);
    CHECK(lambdaLine.find("Focus on") == std::string::npos);
    // The call whose callee was not wrapped: the hover names the function to profile instead.
    CHECK(flat(callLine).find("Block.forward ran beneath it but could not be wrapped") != std::string::npos);
    CHECK(flat(callLine).find(md ? "Focus on `Block.forward` (`net.py`) to see its lines"
                                 : "Focus on Block.forward (net.py) to see its lines") != std::string::npos);
    // Library code: a final answer.
    CHECK(flat(libLine).find(
              md ? "**ATOMIC** — library code: a final answer: its launches come from code outside the workspace"
                 : "ATOMIC — library code: a final answer: its launches come from code outside the workspace") !=
          std::string::npos);
    CHECK(libLine.find("Focus on") == std::string::npos);
    if (!md) {
      CHECK(callLine.find("**") == std::string::npos);
      for (const auto& text : {lambdaLine, callLine, libLine}) {
        size_t start = 0;
        while (start < text.size()) {
          size_t end = text.find('\n', start);
          if (end == std::string::npos) end = text.size();
          CHECK_MESSAGE(attribution::displayWidth(text.substr(start, end - start)) <= 80,
                        text.substr(start, end - start));
          start = end + 1;
        }
      }
    }
  }
}
