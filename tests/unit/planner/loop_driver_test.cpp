// A driver for the end-to-end scripts (tests/e2e/planner_*.sh, tests/bench/loop_bench.sh) while
// `kernlens profile` does not route to the planner yet: runs profileCommand from KL_LOOP_* variables.
// Without KL_LOOP_ENTRY it does nothing (so plain `ctest` stays fast).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/planner/cli_entry.h"
#include "core/runner/backend.h"
#include "doctest/doctest.h"
#include "tests/support/test_support.h"

namespace {
std::string env(const char* k, std::string d = "") {
  const char* v = std::getenv(k);
  return v ? std::string(v) : d;
}
}  // namespace

TEST_CASE("loop driver (KL_LOOP_* environment; no-op without KL_LOOP_ENTRY)") {
  if (env("KL_LOOP_ENTRY").empty()) return;
  kl::planner::ProfileArgs a;
  a.run.workspace = env("KL_LOOP_ROOT", ".");
  a.run.cwd = env("KL_LOOP_CWD", a.run.workspace.string());
  a.run.entry = env("KL_LOOP_ENTRY");
  a.run.backend = kl::runner::parseBackend(env("KL_LOOP_BACKEND", "emulate")).value();
  a.run.probeDir = kl::test::sourcePath("core/runner/probe");
  a.focus = env("KL_LOOP_FOCUS");
  a.lines = env("KL_LOOP_LINES");
  a.kernel = env("KL_LOOP_KERNEL");
  a.strategy = env("KL_LOOP_STRATEGY", "edits");
  a.harness = env("KL_LOOP_HARNESS", "off");
  a.rounds = std::atoi(env("KL_LOOP_ROUNDS", "8").c_str());
  a.format = env("KL_LOOP_FORMAT", "json");
  a.baseline = env("KL_LOOP_BASELINE", "1") == "1";
  a.store = env("KL_LOOP_STORE", "0") == "1";
  std::ostringstream out, err;
  int rc = kl::planner::profileCommand(a, out, err);
  std::ofstream(env("KL_LOOP_OUT", "/dev/stdout")) << out.str();
  std::cerr << err.str();
  std::ofstream(env("KL_LOOP_OUT", "/dev/stdout") + ".rc") << rc << "\n";
}
