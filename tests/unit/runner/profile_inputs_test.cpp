// The one profile loader's path handling (core/runner/profile_inputs.h): plain files and folders
// pass through as spelled, relative paths are resolved against the base the front end gives (never
// the process's directory), reports go to nsys (here a missing one: the one-line error), and the
// environment is read only through the lookup the front end passes.
#include "core/runner/profile_inputs.h"

#include <doctest/doctest.h>

#include <map>

#include "tests/support/test_support.h"

using namespace kl;
namespace fs = std::filesystem;

TEST_CASE("profile inputs: plain files and folders without reports pass through as spelled") {
  test::TempDir t;
  test::writeFile(t / "a.json", "{}");
  fs::create_directories(t / "ranks");
  test::writeFile(t / "ranks" / "r0.json", "{}");
  runner::ProfileInputOptions o;
  o.base = t.path();
  auto in = runner::resolveProfileInputs({"a.json", "ranks", t / "missing.sqlite"}, o);
  REQUIRE(in);
  REQUIRE(in->files.size() == 3);
  CHECK(in->files[0] == fs::path("a.json"));
  CHECK(in->files[1] == fs::path("ranks"));
  CHECK(in->files[2] == t / "missing.sqlite");
  CHECK(in->exports.empty());
}

TEST_CASE("profile inputs: a report is exported with the nsys given; a folder's report beside its export is not") {
  test::TempDir t;
  test::writeFile(t / "run.nsys-rep", std::string("NVIDIA Tegra Profiler Report") + std::string(64, '\0'));
  runner::ProfileInputOptions o;
  o.base = t.path();
  o.nsys = (t / "no-such-nsys").string();
  std::vector<runner::ExportedReport> told;
  o.onExport = [&](const runner::ExportedReport& e) { told.push_back(e); };
  auto in = runner::resolveProfileInputs({"run.nsys-rep"}, o);
  REQUIRE_FALSE(in);
  CHECK(in.error().message.find('\n') == std::string::npos);  // one line
  CHECK(told.empty());
  // In a folder, the report whose same-stem export lies beside it is read through that export.
  fs::create_directories(t / "dir");
  fs::copy_file(t / "run.nsys-rep", t / "dir" / "run.nsys-rep");
  test::writeFile(t / "dir" / "run.sqlite", "");
  auto dir = runner::resolveProfileInputs({"dir"}, o);
  REQUIRE(dir);
  REQUIRE(dir->files.size() == 1);
  CHECK(dir->files[0] == fs::path("dir"));
  // Without it, the folder's report goes to nsys (missing here).
  fs::remove(t / "dir" / "run.sqlite");
  CHECK_FALSE(runner::resolveProfileInputs({"dir"}, o));
}

TEST_CASE("profile inputs: the environment through the front end's lookup") {
  std::map<std::string, std::string> env = {{"KERNLENS_NSYS", "/opt/nsys/bin/nsys"}, {"HOME", "/home/u"}};
  auto lookup = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto o = runner::ProfileInputOptions::fromEnvironment(lookup);
  CHECK(o.nsys == std::optional<std::string>("/opt/nsys/bin/nsys"));
  REQUIRE(o.sharedCacheDirs.size() == 1);
  CHECK(o.sharedCacheDirs[0] == fs::path("/home/u/.cache/kernlens/nsys-export"));
  env["XDG_CACHE_HOME"] = "/x";
  env.erase("KERNLENS_NSYS");
  o = runner::ProfileInputOptions::fromEnvironment(lookup);
  CHECK_FALSE(o.nsys);
  CHECK(o.sharedCacheDirs == std::vector<fs::path>{"/x/kernlens/nsys-export"});
}
