// RoundRunner: a round of a given plan, and the failure paths with the real probe and the venv's python3 (KL_PYTHON)
// (programs that do not import torch, so each run takes about a second): a crash, a hang, a
// missing profiler, no export; a run directory layout and the overlay manifest.
#include "core/runner/round_runner.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "tests/support/test_support.h"

using namespace kl;
using namespace kl::runner;

namespace {
RunConfig baseConfig(const test::TempDir& ws, const std::string& entry) {
  RunConfig c;
  c.workspace = ws.path();
  c.entry = entry;
  c.backend = BackendKind::Emulate;
  c.probeDir = test::sourcePath("core/runner/probe");
  c.timeout = std::chrono::seconds(60);
  return c;
}
const char* kProg =
    "import sys\n"
    "\n"
    "def work(n):\n"
    "    \"\"\"doc\"\"\"\n"
    "    a = n + 1\n"
    "    b = a * 2; c = b\n"
    "    if c > 100:\n"
    "        sys.stderr.write('too big\\n')\n"
    "        sys.exit(3)\n"
    "    return c\n"
    "\n"
    "print(work(int(sys.argv[1])))\n";

/// Round 0 as the planner makes it for a focus function: its body (`def` on 0-based `defLine`) and
/// the given statements (0-based inclusive lines).
RoundPlan bodyPlan(const std::string& rel, const std::string& qualName, uint32_t defLine,
                   std::vector<std::pair<uint32_t, uint32_t>> statements = {}) {
  nvtx::FilePlan fp;
  fp.relPath = rel;
  fp.ranges.push_back(nvtx::RangeRequest::functionBody(qualName, defLine));
  for (auto [first, last] : statements) fp.ranges.push_back(nvtx::RangeRequest::statements(first, last));
  RoundPlan plan;
  plan.files.push_back(std::move(fp));
  return plan;
}
}  // namespace

TEST_CASE("a round that succeeds without torch: layout, overlay manifest, ranges seen, no kernels") {
  test::TempDir ws;
  test::writeFile(ws / "p.py", kProg);
  auto rr = RoundRunner::create(baseConfig(ws, "python p.py 5"));
  REQUIRE_MESSAGE(rr.ok(), rr.error().message);
  auto plan = bodyPlan("p.py", "work", 2, {{4, 4}, {5, 5}, {6, 8}, {9, 9}});
  std::vector<std::string> stages;
  std::vector<std::string> out;
  auto res = rr->run(
      plan, {}, [&](const RoundProgress& p) { stages.push_back(stageName(p.stage)); },
      [&](std::string_view s, std::string_view l) { out.push_back(std::string(s) + ":" + std::string(l)); });
  REQUIRE_MESSAGE(res.ok(), res.error().message);
  CHECK(std::find(out.begin(), out.end(), "stdout:12") != out.end());
  CHECK(stages.front() == "instrumenting");
  CHECK(stages.back() == "done");
  auto round = rr->runDir() / "round0";
  CHECK(std::filesystem::exists(round / "overlay" / "overlay.json"));
  CHECK(test::readFile(round / "overlay" / "files" / "p.py").find("kl:p.py:5-5") != std::string::npos);
  CHECK(test::readFile(ws / "p.py") == kProg);  // the user's file is untouched
  CHECK(test::readFile(ws / ".kernlens" / ".gitignore") == "*\n");
  REQUIRE(res->profiles.size() == 1);
  CHECK(res->emulated);
  CHECK(res->lines.totalOps == 0);
  // The program never imported torch, so NVTX never reached the emulator: no ranges, a note.
  CHECK_FALSE(res->notes.empty());
  CHECK(res->files.size() == 1);
  CHECK(res->files[0].text == kProg);
}

TEST_CASE("a crashing program: exit code and the last lines of stderr, with the log path") {
  test::TempDir ws;
  test::writeFile(ws / "p.py", kProg);
  auto rr = RoundRunner::create(baseConfig(ws, "python p.py 99"));
  REQUIRE(rr.ok());
  auto res = rr->run(bodyPlan("p.py", "work", 2));
  REQUIRE_FALSE(res.ok());
  const auto& m = res.error().message;
  CHECK(m.find("the program failed (exit code 3)") == 0);
  CHECK(m.find("too big") != std::string::npos);
  CHECK(m.find("stderr.log") != std::string::npos);
}

TEST_CASE("a hanging program hits the timeout; cancellation stops a run") {
  test::TempDir ws;
  test::writeFile(ws / "hang.py", "import time\n\ndef f():\n    time.sleep(300)\n    return 1\n\nf()\n");
  auto cfg = baseConfig(ws, "python hang.py");
  cfg.timeout = std::chrono::seconds(3);
  auto rr = RoundRunner::create(cfg);
  REQUIRE(rr.ok());
  auto plan = bodyPlan("hang.py", "f", 2);
  auto t0 = std::chrono::steady_clock::now();
  auto res = rr->run(plan);
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().message.find("timed out after 3.00 s") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));

  CancellationSource src;
  cfg.timeout = std::chrono::seconds(120);
  auto rr2 = RoundRunner::create(cfg);
  REQUIRE(rr2.ok());
  auto res2 = rr2->run(plan, src.token(), [&](const RoundProgress& p) {
    if (p.stage == RoundProgress::Stage::Running && p.message == "running (2 s)") src.cancel();
  });
  REQUIRE_FALSE(res2.ok());
  CHECK(res2.error().code == Error::Code::Cancelled);
}

TEST_CASE("no export: a program that skips the probe's exit path") {
  test::TempDir ws;
  test::writeFile(ws / "q.py", "import os\n\ndef f():\n    x = 1\n    os._exit(0)\n\nf()\n");
  auto rr = RoundRunner::create(baseConfig(ws, "python q.py"));
  REQUIRE(rr.ok());
  auto res = rr->run(bodyPlan("q.py", "f", 2));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().message.find("no emulated export was written") == 0);
}

TEST_CASE("configuration errors are clear") {
  test::TempDir ws;
  auto c = baseConfig(ws, "python x.py");
  c.backend = BackendKind::Nsys;
  c.nsysPath = "/nonexistent/nsys";
  auto r = RoundRunner::create(c);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("nsys not found at '/nonexistent/nsys'") == 0);
  c = baseConfig(ws, "python 'x.py");
  CHECK(RoundRunner::create(c).error().message.find("entry command") == 0);
  c = baseConfig(ws, "python x.py");
  c.probeDir = ws / "nowhere";
  CHECK(RoundRunner::create(c).error().message.find("kernlens probe was not found") != std::string::npos);
  c = baseConfig(ws, "python x.py");
  c.python = "/nonexistent/python3";
  CHECK(RoundRunner::create(c).error().message.find("/nonexistent/python3") != std::string::npos);
}
