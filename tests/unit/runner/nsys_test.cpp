// nsys version parsing, capability detection from the REAL 2022.4 help texts, flags per version,
// and detection of the nsys installed here (when it is).
#include "core/runner/nsys.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "tests/support/test_support.h"

using namespace kl::runner;

namespace {
bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

TEST_CASE("parseNsysVersion") {
  auto v = parseNsysVersion("NVIDIA Nsight Systems version 2022.4.2.1-df9881f\n");
  REQUIRE(v.ok());
  CHECK(v->year == 2022);
  CHECK(v->minor == 4);
  CHECK(v->patch == 2);
  CHECK(v->build == 1);
  CHECK(v->text == "2022.4.2.1-df9881f");
  auto n = parseNsysVersion("NVIDIA Nsight Systems version 2025.6.1.190-256137014278v0");
  REQUIRE(n.ok());
  CHECK(*n > *v);
  CHECK(parseNsysVersion("2021.3.1.54").ok());
  CHECK_FALSE(parseNsysVersion("nsys: command not found").ok());
  CHECK_FALSE(parseNsysVersion("version 11.8").ok());
}

TEST_CASE("capabilities and flags of the real 2022.4 help") {
  auto ph = kl::test::readFile(kl::test::dataPath("runner/nsys-2022.4-profile-help.txt"));
  auto eh = kl::test::readFile(kl::test::dataPath("runner/nsys-2022.4-export-help.txt"));
  auto caps = nsysCapsFrom(*parseNsysVersion("2022.4.2.1-df9881f"), ph, eh);
  caps.exe = "/usr/bin/nsys";
  CHECK(caps.reportExtension == ".nsys-rep");
  CHECK(caps.cudaGraphTrace);
  CHECK(caps.exportSqlite);
  auto a = nsysProfileArgs(caps, "/r/out/round0{rank}");
  CHECK(a == std::vector<std::string>{"/usr/bin/nsys", "profile", "--trace=cuda,nvtx,osrt", "--sample=none",
                                      "--cpuctxsw=none", "--cuda-graph-trace=node", "--force-overwrite=true", "-o",
                                      "/r/out/round0{rank}"});
  auto e = nsysExportArgs(caps, "/r/round0.nsys-rep", "/r/round0.sqlite");
  CHECK(e == std::vector<std::string>{"/usr/bin/nsys", "export", "--type", "sqlite", "--force-overwrite=true",
                                      "--output", "/r/round0.sqlite", "/r/round0.nsys-rep"});
}

TEST_CASE("flags differ by version: old .qdrep reports, options only when the help lists them") {
  auto old = nsysCapsFrom(*parseNsysVersion("2021.3.1.54"), "--trace= --sample=", "-t, --type= sqlite");
  CHECK(old.reportExtension == ".qdrep");
  CHECK_FALSE(old.cudaGraphTrace);
  CHECK_FALSE(has(nsysProfileArgs(old, "x"), "--cuda-graph-trace=node"));
  auto y21 = nsysCapsFrom(*parseNsysVersion("2021.4.1.73"), "", "");
  CHECK(y21.reportExtension == ".nsys-rep");
  auto newer = nsysCapsFrom(*parseNsysVersion("2025.6.1.190"), "--cuda-graph-trace=<graph|node>", "sqlite");
  CHECK(newer.reportExtension == ".nsys-rep");
  CHECK(has(nsysProfileArgs(newer, "x"), "--cuda-graph-trace=node"));
  auto noSqlite = nsysCapsFrom(*parseNsysVersion("2030.1"), "", "Possible values are: text, json.");
  CHECK_FALSE(noSqlite.exportSqlite);
}

TEST_CASE("detectNsys: the installed nsys, or a clear error") {
  auto bad = detectNsys(std::string("/nonexistent/nsys"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == kl::Error::Code::NotFound);
  CHECK(bad.error().message.find("/nonexistent/nsys") != std::string::npos);
  if (auto exe = findNsys()) {
    auto caps = detectNsys();
    REQUIRE_MESSAGE(caps.ok(), caps.error().message);
    CHECK(caps->version.year >= 2020);
    CHECK(!caps->version.text.empty());
  } else {
    auto r = detectNsys();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("--backend emulate") != std::string::npos);
  }
}
