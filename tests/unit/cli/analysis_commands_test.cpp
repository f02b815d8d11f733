// The profile-analysis subcommands run in-process through kl::cli::runMain: help, exit codes,
// option plumbing (--format/--gpu/--trim), JSON validity, diff's CI exit code, export/report.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.h"
#include "core/support/gzip.h"
#include "core/support/sqlite.h"
#include "tests/support/test_support.h"

namespace {

struct Run {
  int code;
  std::string out, err;
};

Run run(std::vector<std::string> args) {
  args.insert(args.begin(), "kernlens");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  int code = kl::cli::runMain(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

std::string real(const std::string& f) { return kl::test::dataPath("real/nsys/" + f).string(); }

const std::vector<std::string> kCommands = {"info",    "summary", "tree",     "search", "gaps",
                                            "overlap", "nccl",    "iters",    "memcpy", "launch",
                                            "threads", "diff",    "diagnose", "export", "report"};

}  // namespace

TEST_CASE("analysis commands: --help exits 0 and documents the common options") {
  for (const auto& c : kCommands) {
    auto r = run({c, "--help"});
    CHECK_MESSAGE(r.code == 0, c);
    CHECK_MESSAGE(r.out.find("usage: kernlens " + c) != std::string::npos, c);
    CHECK_MESSAGE(r.out.find("--trim") != std::string::npos, c);
    CHECK_MESSAGE(r.out.find("--gpu") != std::string::npos, c);
  }
}

TEST_CASE("analysis commands: bad usage exits 2, bad input exits 1 with one line") {
  auto f = real("mock.sqlite.gz");
  CHECK(run({"summary"}).code == 2);
  CHECK(run({"summary", f, "--format", "xml"}).code == 2);
  CHECK(run({"summary", f, "--trim", "5", "1"}).code == 2);
  CHECK(run({"summary", f, "--trim", "5"}).code == 2);
  CHECK(run({"summary", f, "--trim=1x:5"}).code == 2);
  CHECK(run({"summary", f, "--gpu", "zero"}).code == 2);
  CHECK(run({"gaps", f, "--min-gap", "abc"}).code == 2);
  CHECK(run({"diff", f}).code == 2);
  CHECK(run({"export", f, "--format", "perfetto"}).code == 2);  // needs -o
  CHECK(run({"report", f}).code == 2);                          // needs -o
  CHECK(run({"search", f, "--regex", "("}).code == 1);          // invalid regex is bad input
  kl::test::TempDir tmp;
  auto missing = run({"info", (tmp / "nope.sqlite").string()});
  CHECK(missing.code == 1);
  kl::test::writeFile(tmp / "text.sqlite", "this is not a profile\n");
  auto bad = run({"summary", (tmp / "text.sqlite").string()});
  CHECK(bad.code == 1);
  CHECK(!bad.err.empty());
  CHECK(bad.err.find('\n') == bad.err.size() - 1);  // one line
}

TEST_CASE("analysis commands: every JSON output parses (real file)") {
  auto f = real("mfu_2gpu_before.sqlite.gz");
  for (const auto& c :
       {"info", "summary", "tree", "gaps", "overlap", "nccl", "iters", "memcpy", "launch", "threads", "diagnose"}) {
    auto r = run({c, f, "--format", "json"});
    REQUIRE_MESSAGE(r.code == 0, c, r.err);
    CHECK_NOTHROW_MESSAGE(nlohmann::json::parse(r.out), c);
  }
  auto s = run({"search", f, "nccl", "--format", "json"});
  REQUIRE(s.code == 0);
  auto j = nlohmann::json::parse(s.out);
  CHECK(j["kernels"].size() >= 1);
  CHECK(j["kernels"][0]["name"].get<std::string>().find("nccl") != std::string::npos);
  auto rx = run({"search", f, "^ncclDev.*SendRecv", "--regex", "--kernels-only", "--format", "json"});
  REQUIRE(rx.code == 0);
  CHECK(nlohmann::json::parse(rx.out)["kernels"].size() == 1);
}

TEST_CASE("analysis commands: --gpu and --trim select what SQL selects") {
  auto f = real("h100_2gpu_1s.sqlite.gz");
  auto image = kl::readMaybeGzipFile(f);
  REQUIRE(image.ok());
  auto db = kl::sql::Database::openImage(*image);
  REQUIRE(db.ok());
  auto st = db->prepare("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 1");
  REQUIRE(st.ok());
  REQUIRE(*st->step());
  int64_t dev1 = st->int64(0);
  auto r = run({"info", f, "--gpu", "1", "--format", "json"});
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["counts"]["kernels"].get<int64_t>() == dev1);

  auto all = nlohmann::json::parse(run({"info", f, "--format", "json"}).out);
  auto a = nlohmann::json::parse(run({"info", f, "--trim", "0", "100ms", "--format", "json"}).out);
  auto b = nlohmann::json::parse(run({"info", f, "--trim=0:100000000", "--format", "json"}).out);
  CHECK(a["counts"]["kernels"] == b["counts"]["kernels"]);
  CHECK(a["counts"]["kernels"].get<int64_t>() > 0);
  CHECK(a["counts"]["kernels"].get<int64_t>() < all["counts"]["kernels"].get<int64_t>());
  CHECK(a["window_end_ns"] == 100000000);
}

TEST_CASE("diff: exit code gates a CI job") {
  auto a = real("mfu_2gpu_before.sqlite.gz");
  auto b = real("h100_2gpu_1s.sqlite.gz");
  auto same = run({"diff", a, a});
  CHECK(same.code == 0);
  CHECK(same.out.find("verdict: unchanged") != std::string::npos);
  auto worse = run({"diff", a, b, "--format", "json"});
  CHECK(worse.code == 3);
  CHECK(nlohmann::json::parse(worse.out)["verdict"] == "regression");
  CHECK(run({"diff", a, b, "--no-fail"}).code == 0);
  CHECK(run({"diff", b, a}).code == 0);  // improvement
  CHECK(run({"diff", a, b, "--threshold", "100000"}).code == 0);
}

TEST_CASE("export and report write files; the report is self-contained") {
  auto f = real("mfu_2gpu_before.sqlite.gz");
  kl::test::TempDir tmp;
  auto csv = tmp / "ops.csv";
  REQUIRE(run({"export", f, "--format", "csv", "-o", csv.string()}).code == 0);
  auto text = kl::test::readFile(csv);
  CHECK(text.rfind("kind,name,short_name,start_ns,end_ns,duration_ns,device,stream,pid,tid,correlation_id,rank,"
                   "nvtx_path,innermost_range,unattributed_reason\r\n",
                   0) == 0);
  auto js = run({"export", f, "--format", "json", "--gpu", "0"});
  REQUIRE(js.code == 0);
  auto rows = nlohmann::json::parse(js.out);
  CHECK(rows.size() > 0);
  for (const auto& r : rows) CHECK(r["device"] == 0);
  auto trace = tmp / "trace.json";
  REQUIRE(run({"export", f, "--format", "perfetto", "-o", trace.string()}).code == 0);
  auto tj = nlohmann::json::parse(kl::test::readFile(trace));
  CHECK(tj["traceEvents"].size() > 1000);
  auto html = tmp / "r.html";
  REQUIRE(run({"report", f, "-o", html.string()}).code == 0);
  auto page = kl::test::readFile(html);
  CHECK(page.find("<!DOCTYPE html>") == 0);
  CHECK(page.find("id=\"kl-data\"") != std::string::npos);
  CHECK(page.find("src=\"http") == std::string::npos);
  CHECK(page.find("href=\"http") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
  // The embedded data is valid JSON.
  const std::string marker = "id=\"kl-data\">";
  auto a = page.find(marker) + marker.size();
  auto b = page.find("</script>", a);
  auto data = nlohmann::json::parse(page.substr(a, b - a));
  CHECK(data["timeline"]["lanes"].size() >= 2);
  CHECK(data["summary"]["top_kernels"].size() > 0);
  CHECK(run({"export", f, "--format", "csv", "-o", (tmp / "no/such/dir/x.csv").string()}).code == 1);
}
