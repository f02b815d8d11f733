// entryInterpreter: which Python runs the probe for an entry command (no process is started).
#include "core/runner/interpreter.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/support/test_support.h"

using namespace kl::runner;

namespace {
void writeExecutable(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
  ::chmod(p.c_str(), 0755);
}
}  // namespace

TEST_CASE("isPythonName: interpreter names, not tools that start with python") {
  for (const char* w : {"python", "python3", "python3.11", "/opt/venv/bin/python3.12", ".venv/bin/python"})
    CHECK_MESSAGE(isPythonName(w), w);
  for (const char* w : {"python3-config", "python3.", "pythonx", "torchrun", "ipython", "python.sh", ""})
    CHECK_MESSAGE(!isPythonName(w), w);
}

TEST_CASE("entryInterpreter: a path in the entry, a #! script, the override, and clear errors") {
  kl::test::TempDir tmp;
  auto venv = tmp / "venv/bin/python";
  writeExecutable(venv, "#!/bin/sh\nexit 0\n");

  SUBCASE("a relative interpreter path is taken against the entry's working directory") {
    auto r = entryInterpreter({"venv/bin/python", "train.py"}, tmp.path());
    REQUIRE(r);
    CHECK(*r == venv);
  }
  SUBCASE("a script whose #! names a python runs under that python") {
    writeExecutable(tmp / "train.py", "#!" + venv.string() + " -u\nprint(1)\n");
    auto r = entryInterpreter({"./train.py", "--steps", "2"}, tmp.path());
    REQUIRE(r);
    CHECK(*r == venv);
  }
  SUBCASE("a #! line through env resolves the name on PATH") {
    writeExecutable(tmp / "run.py", "#!/usr/bin/env -S python3 -u\n");
    auto viaEnv = entryInterpreter({"./run.py"}, tmp.path());
    auto plain = entryInterpreter({"python3", "x.py"}, tmp.path());
    REQUIRE(viaEnv);
    REQUIRE(plain);
    CHECK(*viaEnv == *plain);
  }
  SUBCASE("a non-Python entry (a shell wrapper) falls back to python3 on PATH") {
    writeExecutable(tmp / "run.sh", "#!/bin/sh\nexec python3 train.py\n");
    auto r = entryInterpreter({"./run.sh"}, tmp.path());
    auto plain = entryInterpreter({"python3"}, tmp.path());
    REQUIRE(r);
    REQUIRE(plain);
    CHECK(*r == *plain);
  }
  SUBCASE("the override wins over the entry") {
    auto r = entryInterpreter({"python3", "train.py"}, tmp.path(), venv.string());
    REQUIRE(r);
    CHECK(*r == venv);
  }
  SUBCASE("a missing interpreter is NotFound, naming it") {
    auto r = entryInterpreter({"nowhere/bin/python", "train.py"}, tmp.path());
    REQUIRE(!r);
    CHECK(r.error().message.find("nowhere/bin/python") != std::string::npos);
    auto o = entryInterpreter({"python3"}, tmp.path(), "/no/such/python");
    REQUIRE(!o);
    CHECK(o.error().message.find("--python") != std::string::npos);
  }
}
