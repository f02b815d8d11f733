// Process control: exit codes, signals, timeouts and cancellation that take down the whole
// process group (grandchildren included), leftovers after the leader exits, logs and streaming.
#include "core/runner/process.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <thread>

#include "tests/support/test_support.h"

using namespace kl::runner;
using namespace std::chrono_literals;

namespace {
std::vector<int> readPids(const std::filesystem::path& p) {
  std::vector<int> pids;
  std::ifstream in(p);
  for (int pid; in >> pid;) pids.push_back(pid);
  return pids;
}
bool alive(int pid) {
  // A zombie still answers kill(0); read its state.
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(f, s)) return false;
  auto close = s.rfind(')');
  return close != std::string::npos && close + 2 < s.size() && s[close + 2] != 'Z';
}
/// Starts two grandchildren (one detached with nohup-style double fork) that sleep, writes
/// their pids, then sleeps itself.
std::string spawner(const std::filesystem::path& pids) {
  return "sleep 300 & echo $! >> " + pids.string() + "; (sleep 300 & echo $! >> " + pids.string() +
         "; wait) & sleep 300";
}
void waitForPids(const std::filesystem::path& p, size_t n) {
  for (int i = 0; i < 200 && readPids(p).size() < n; ++i) std::this_thread::sleep_for(20ms);
}
}  // namespace

TEST_CASE("exit code, stdout/stderr logs, streamed lines") {
  kl::test::TempDir tmp;
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo out1; echo err1 >&2; echo out2; printf tail; exit 3"};
  spec.stdoutPath = tmp / "o.log";
  spec.stderrPath = tmp / "e.log";
  std::vector<std::string> lines;
  spec.onOutput = [&](std::string_view s, std::string_view l) {
    lines.push_back(std::string(s) + ":" + std::string(l));
  };
  auto r = runProcess(spec);
  REQUIRE(r.ok());
  CHECK(r->exitCode == 3);
  CHECK_FALSE(r->ok());
  CHECK(describe(*r) == "exit code 3");
  CHECK(kl::test::readFile(tmp / "o.log") == "out1\nout2\ntail");
  CHECK(kl::test::readFile(tmp / "e.log") == "err1\n");
  CHECK(std::find(lines.begin(), lines.end(), "stdout:out1") != lines.end());
  CHECK(std::find(lines.begin(), lines.end(), "stdout:tail") != lines.end());
  CHECK(std::find(lines.begin(), lines.end(), "stderr:err1") != lines.end());
  CHECK(tailLines(tmp / "o.log", 2) == "out2\ntail");
}

TEST_CASE("a crash is reported with its signal") {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
  auto r = runProcess(spec);
  REQUIRE(r.ok());
  CHECK(r->signal == SIGSEGV);
  CHECK(r->exitCode == -1);
  CHECK(describe(*r).find("SIGSEGV") != std::string::npos);
}

TEST_CASE("missing executable or working directory: a clear error, no child") {
  ProcessSpec spec;
  spec.argv = {"kernlens-no-such-tool-xyz"};
  auto r = runProcess(spec);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "kernlens-no-such-tool-xyz: command not found");
  spec.argv = {"/bin/true"};
  spec.cwd = "/nonexistent/dir";
  r = runProcess(spec);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("/nonexistent/dir") != std::string::npos);
  kl::test::TempDir tmp;
  kl::test::writeFile(tmp / "noexec.sh", "#!/bin/sh\n");
  spec.cwd.clear();
  spec.argv = {(tmp / "noexec.sh").string()};
  CHECK_FALSE(runProcess(spec).ok());
}

TEST_CASE("timeout kills the whole group, grandchildren included") {
  kl::test::TempDir tmp;
  ProcessSpec spec;
  spec.argv = {"/bin/bash", "-c", spawner(tmp / "pids")};
  spec.timeout = 1500ms;
  spec.killGrace = 1000ms;
  auto t0 = std::chrono::steady_clock::now();
  auto r = runProcess(spec);
  auto took = std::chrono::steady_clock::now() - t0;
  REQUIRE(r.ok());
  CHECK(r->timedOut);
  CHECK_FALSE(r->ok());
  CHECK(describe(*r) == "timed out after 1.50 s");
  CHECK(took < 10s);
  auto pids = readPids(tmp / "pids");
  REQUIRE(pids.size() == 2);
  for (int pid : pids) CHECK_MESSAGE(!alive(pid), "grandchild " << pid << " survived");
  CHECK_FALSE(alive(r->pid));
}

TEST_CASE("a process that ignores SIGTERM is SIGKILLed after the grace period") {
  ProcessSpec spec;
  spec.argv = {"/bin/bash", "-c", "trap '' TERM; sleep 300 & wait; sleep 300"};
  spec.timeout = 500ms;
  spec.killGrace = 500ms;
  auto r = runProcess(spec);
  REQUIRE(r.ok());
  CHECK(r->timedOut);
  CHECK_FALSE(alive(r->pid));
}

TEST_CASE("cancel from another thread kills the group") {
  kl::test::TempDir tmp;
  kl::CancellationSource src;
  ProcessSpec spec;
  spec.argv = {"/bin/bash", "-c", spawner(tmp / "pids")};
  std::thread t([&] {
    waitForPids(tmp / "pids", 2);
    src.cancel();
  });
  auto r = runProcess(spec, src.token());
  t.join();
  REQUIRE(r.ok());
  CHECK(r->cancelled);
  CHECK(describe(*r) == "cancelled");
  for (int pid : readPids(tmp / "pids")) CHECK(!alive(pid));
}

TEST_CASE("children left in the group after the leader exits are stopped") {
  kl::test::TempDir tmp;
  ProcessSpec spec;
  spec.argv = {"/bin/bash", "-c", "sleep 300 & echo $! > " + (tmp / "pids").string() + "; exit 0"};
  spec.killGrace = 1000ms;
  auto r = runProcess(spec);
  REQUIRE(r.ok());
  CHECK(r->exitCode == 0);
  CHECK(r->killedLeftovers);
  for (int pid : readPids(tmp / "pids")) CHECK(!alive(pid));
}

TEST_CASE("environment: set and unset") {
  kl::test::TempDir tmp;
  ::setenv("KL_TEST_UNSET_ME", "x", 1);
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo \"$KL_A|${KL_TEST_UNSET_ME-unset}\""};
  spec.env = {{"KL_A", "a b"}};
  spec.unsetEnv = {"KL_TEST_UNSET_ME"};
  spec.stdoutPath = tmp / "o";
  auto r = runProcess(spec);
  REQUIRE(r.ok());
  CHECK(kl::test::readFile(tmp / "o") == "a b|unset\n");
}

TEST_CASE("signalProcessesMatching finds a process by its command line only") {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "exec sleep 301.5"};
  spec.timeout = 20s;
  std::thread killer([] {
    for (int i = 0; i < 200; ++i) {
      if (signalProcessesMatching([](std::string_view c) { return c.find("sleep 301.5") != std::string_view::npos; },
                                  SIGTERM) > 0)
        return;
      std::this_thread::sleep_for(20ms);
    }
  });
  auto r = runProcess(spec);
  killer.join();
  REQUIRE(r.ok());
  CHECK(r->signal == SIGTERM);
  CHECK_FALSE(r->timedOut);
}

namespace {
/// Starts a grandchild that leaves the group and the session (setsid) and one that
/// double-forks, writes their pids, then sleeps.
std::string escaper(const std::filesystem::path& pids) {
  return "setsid sleep 300 & echo $! >> " + pids.string() + "; (setsid sh -c 'sleep 300 & echo $! >> " + pids.string() +
         "' &) ; sleep 300";
}
bool allGone(const std::vector<int>& pids, std::chrono::milliseconds within) {
  auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    if (std::none_of(pids.begin(), pids.end(), alive)) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}
}  // namespace

TEST_CASE("grandchildren that start their own session are stopped too (cancel and leftovers)") {
  kl::test::TempDir tmp;
  kl::CancellationSource src;
  ProcessSpec spec;
  spec.argv = {"/bin/bash", "-c", escaper(tmp / "pids")};
  spec.killGrace = 500ms;
  std::thread t([&] {
    waitForPids(tmp / "pids", 2);
    src.cancel();
  });
  auto r = runProcess(spec, src.token());
  t.join();
  REQUIRE(r.ok());
  CHECK(r->cancelled);
  auto pids = readPids(tmp / "pids");
  REQUIRE(pids.size() == 2);
  for (int pid : pids) CHECK_MESSAGE(!alive(pid), "setsid grandchild " << pid << " survived");

  std::filesystem::remove(tmp / "pids");
  spec.argv = {"/bin/bash", "-c", "setsid sleep 300 & echo $! >> " + (tmp / "pids").string() + "; sleep 0.3; exit 4"};
  r = runProcess(spec);
  REQUIRE(r.ok());
  CHECK(r->exitCode == 4);
  CHECK(r->killedLeftovers);
  for (int pid : readPids(tmp / "pids")) CHECK(!alive(pid));
}

TEST_CASE("a cancel carrying a signal forwards it to the program first") {
  kl::test::TempDir tmp;
  kl::CancellationSource src;
  ProcessSpec spec;
  auto mark = tmp / "got";
  spec.argv = {"/bin/bash", "-c",
               "trap 'echo INT > " + mark.string() + "; exit 130' INT; echo $$ > " + (tmp / "pids").string() +
                   "; while :; do sleep 0.05; done"};
  std::thread t([&] {
    waitForPids(tmp / "pids", 1);
    src.cancel(SIGINT);
  });
  auto r = runProcess(spec, src.token());
  t.join();
  REQUIRE(r.ok());
  CHECK(r->cancelled);
  CHECK(kl::test::readFile(mark) == "INT\n");
  CHECK(r->exitCode == 130);
}

TEST_CASE("the program and its escaped grandchildren die when the process running them is killed -9") {
  kl::test::TempDir tmp;
  auto pidsFile = tmp / "pids";
  pid_t runner = ::fork();
  REQUIRE(runner >= 0);
  if (runner == 0) {
    ProcessSpec spec;
    spec.argv = {"/bin/bash", "-c", "echo $$ >> " + pidsFile.string() + "; " + escaper(pidsFile)};
    spec.killGrace = 500ms;
    (void)runProcess(spec);
    ::_exit(0);
  }
  waitForPids(pidsFile, 3);
  auto pids = readPids(pidsFile);
  REQUIRE(pids.size() == 3);
  ::kill(runner, SIGKILL);
  int st = 0;
  ::waitpid(runner, &st, 0);
  CHECK(allGone(pids, 5s));
  for (int pid : pids) CHECK_MESSAGE(!alive(pid), "process " << pid << " outlived its kernlens");
}
