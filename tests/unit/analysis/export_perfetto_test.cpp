// ops export (CSV quoting, JSON shape) and the Perfetto writer (valid JSON, strict nesting).
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/analysis/export_table.h"
#include "core/analysis/perfetto.h"
#include "synth.h"

using namespace kl::analysis;

namespace {
/// Minimal RFC 4180 reader (CRLF rows) for checking our writer.
std::vector<std::vector<std::string>> parseCsv(const std::string& s) {
  std::vector<std::vector<std::string>> rows(1);
  std::string f;
  bool q = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (q) {
      if (c == '"' && i + 1 < s.size() && s[i + 1] == '"') {
        f += '"';
        ++i;
      } else if (c == '"')
        q = false;
      else
        f += c;
    } else if (c == '"')
      q = true;
    else if (c == ',') {
      rows.back().push_back(f);
      f.clear();
    } else if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') {
      rows.back().push_back(f);
      f.clear();
      rows.emplace_back();
      ++i;
    } else
      f += c;
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}
}  // namespace

TEST_CASE("export: CSV has exactly the columns, RFC 4180 quoting, attribution fields") {
  kl::test::Synth s;
  s.range("outer, \"quoted\"", 1000, 50'000);
  s.range("inner\nline", 2000, 40'000);
  s.kernel("void f<int, 2>(float*)", 100'000, 101'000, 0, 7, 3000, 500);
  s.kernel("orphan", 200'000, 201'000);
  auto& m = s.finish();
  auto attr = kl::attribution::attribute(m);
  REQUIRE(attr.ok());
  View v(m, {}, &*attr);
  std::ostringstream os;
  writeOpsCsv(os, v);
  auto rows = parseCsv(os.str());
  REQUIRE(rows.size() == 3);
  REQUIRE(rows[0].size() == 15);
  CHECK(rows[0][0] == "kind");
  CHECK(rows[0][14] == "unattributed_reason");
  for (auto& r : rows) CHECK(r.size() == 15);
  CHECK(rows[1][0] == "kernel");
  CHECK(rows[1][1] == "void f<int, 2>(float*)");
  CHECK(rows[1][3] == "100000");
  CHECK(rows[1][5] == "1000");
  CHECK(rows[1][8] == "100");
  CHECK(rows[1][9] == "101");
  CHECK(rows[1][12] == "outer, \"quoted\" > inner\nline");
  CHECK(rows[1][13] == "inner\nline");
  CHECK(rows[1][14] == "");
  CHECK(rows[2][9] == "");   // no launch call: tid unknown
  CHECK(rows[2][10] == "");  // no correlation id
  CHECK(rows[2][14] == "no_launch_call");

  std::ostringstream js;
  writeOpsJson(js, v);
  auto j = nlohmann::json::parse(js.str());
  REQUIRE(j.size() == 2);
  std::vector<std::string> keys;
  for (auto it = j[0].begin(); it != j[0].end(); ++it) keys.push_back(it.key());
  CHECK(keys.size() == 15);
  CHECK(j[0]["nvtx_path"] == "outer, \"quoted\" > inner\nline");
  CHECK(j[1]["tid"].is_null());
  CHECK(j[1]["unattributed_reason"] == "no_launch_call");
}

TEST_CASE("perfetto: valid JSON, exact µs, and strictly nested slices on every track") {
  kl::test::Synth s;
  const int64_t b = 1'700'000'000'123'456'789;  // globaltimer-sized absolute ns
  s.range("a", b + 0, b + 10'000);
  s.range("b", b + 5'000, b + 15'000);  // overlaps a partially: must go to another track
  s.range("c", b + 6'000, b + 7'000);
  s.range("mark-like", b + 8'000, b + 8'000);
  s.kernel("k1", b + 20'000, b + 30'001, 0, 7, b + 1'000, 1'234);
  s.kernel("k2", b + 25'000, b + 35'000, 0, 7);  // overlaps k1 on the same stream
  auto& m = s.finish();
  auto attr = kl::attribution::attribute(m);
  REQUIRE(attr.ok());
  View v(m, {}, &*attr);
  std::ostringstream os;
  auto st = writePerfetto(os, v);
  CHECK(st.overlapTracks >= 2);
  auto j = nlohmann::json::parse(os.str());
  REQUIRE(j.contains("traceEvents"));
  CHECK_FALSE(j.contains("displayTimeUnit"));
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> tracks;
  int meta = 0, x = 0;
  bool sawK1 = false;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M") {
      ++meta;
      continue;
    }
    if (e["ph"] != "X") continue;
    ++x;
    double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    tracks[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}].push_back({ts, ts + dur});
    if (e["name"] == "k1") {
      sawK1 = true;
      CHECK(ts == doctest::Approx(20.0).epsilon(1e-12));
      CHECK(dur == doctest::Approx(10.001).epsilon(1e-12));
    }
  }
  CHECK(sawK1);
  CHECK(meta > 0);
  CHECK(x == 6);  // 3 ranges + 2 kernels + 1 launch call (the mark is an instant event)
  for (auto& [k, sl] : tracks) {
    std::sort(sl.begin(), sl.end(),
              [](auto& p, auto& q) { return p.first != q.first ? p.first < q.first : p.second > q.second; });
    std::vector<double> stack;
    for (auto& [s0, e0] : sl) {
      while (!stack.empty() && stack.back() <= s0) stack.pop_back();
      if (!stack.empty()) CHECK(e0 <= stack.back());  // nested in the open slice
      stack.push_back(e0);
    }
  }
  CHECK(nsToUsText(1) == "0.001");
  CHECK(nsToUsText(123456789) == "123456.789");
  CHECK(nsToUsText(-1500) == "-1.500");
}
