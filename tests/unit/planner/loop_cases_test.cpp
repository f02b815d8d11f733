// The convergence loop's decisions, driven by scripted rounds (scripted_executor.h): every
// tests/data/loop/*.loop case runs the real loop over synthesised profiles and is checked against
// the lines, stop reason, rounds, unmapped ops and notes the case expects.
#include <algorithm>
#include <sstream>
#include <tuple>

#include "core/attribution/attribution.h"
#include "doctest/doctest.h"
#include "tests/support/test_support.h"
#include "tests/unit/planner/scripted_executor.h"

using namespace kl;
namespace fs = std::filesystem;

namespace {

std::string describe(const planner::LoopResult& r) {
  std::ostringstream os;
  os << "stop " << planner::stopReasonName(r.stopReason) << " after " << r.rounds << " round(s): " << r.why << "\n";
  for (const auto& l : r.lines) {
    os << "  line " << l.path << ":" << l.line + 1 << "-" << l.lastLine + 1 << (l.atomic ? " atomic" : "");
    for (const auto& k : l.kernels) os << " " << k.opName;
    os << "\n";
  }
  for (const auto& u : r.unmapped)
    os << "  unmapped " << u.name << " " << attribution::unmappedReasonName(u.reason) << "\n";
  for (const auto& n : r.notes) os << "  note " << renderNote(n) << "\n";
  for (const auto& n : r.refusals) os << "  refused " << n << "\n";
  return os.str();
}

void check(const test::LoopCase& c, const planner::LoopResult& r) {
  INFO(c.name << ": " << describe(r));
  if (c.stop) CHECK(planner::stopReasonName(r.stopReason) == *c.stop);
  if (c.expectRounds) CHECK(r.rounds == *c.expectRounds);
  if (c.lines) {
    std::vector<std::string> got, want;
    for (const auto& l : r.lines) {
      std::vector<std::string> ks;
      for (const auto& k : l.kernels) ks.push_back(k.opName);
      std::sort(ks.begin(), ks.end());
      std::string s = l.path + ":" + std::to_string(l.line + 1) + "-" + std::to_string(l.lastLine + 1) +
                      (l.atomic ? " atomic" : "");
      for (const auto& k : ks) s += " " + k;
      got.push_back(s);
    }
    for (const auto& e : *c.lines) {
      std::string s =
          e.file + ":" + std::to_string(e.line) + "-" + std::to_string(e.endLine) + (e.atomic ? " atomic" : "");
      for (const auto& k : e.kernels) s += " " + k;
      want.push_back(s);
    }
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    CHECK(got == want);
  }
  for (const auto& a : c.atomicReasons) {
    bool found = std::any_of(r.lines.begin(), r.lines.end(), [&](const auto& l) {
      return l.path + ":" + std::to_string(l.line + 1) == a.where && l.atomic && l.atomicReason == a.reason &&
             l.note.find(a.noteText) != std::string::npos;
    });
    CHECK_MESSAGE(found, a.where << " atomic (" << std::string(attribution::atomicReasonName(a.reason))
                                 << ") with a note containing '" << a.noteText << "'");
  }
  for (const auto& [name, reason] : c.unmapped) {
    bool found = std::any_of(r.unmapped.begin(), r.unmapped.end(), [&](const auto& u) {
      return u.name == name && attribution::unmappedReasonName(u.reason) == reason;
    });
    CHECK_MESSAGE(found, "unmapped " << name << " " << reason);
  }
  for (const auto& [where, n] : c.variants) {
    bool found = std::any_of(r.lines.begin(), r.lines.end(), [&](const auto& l) {
      return l.path + ":" + std::to_string(l.line + 1) == where && l.variants.size() == n;
    });
    CHECK_MESSAGE(found, where << " with " << n << " variants");
  }
  for (const auto& t : c.refusals) {
    bool found = std::any_of(r.refusals.begin(), r.refusals.end(),
                             [&](const auto& s) { return s.find(t) != std::string::npos; });
    CHECK_MESSAGE(found, "refusal containing '" << t << "'");
  }
  for (const auto& n : c.notes) {
    bool found = std::any_of(r.notes.begin(), r.notes.end(),
                             [&](const auto& s) { return renderNote(s).find(n) != std::string::npos; });
    CHECK_MESSAGE(found, "note containing '" << n << "'");
  }
}

test::LoopCase load(const std::string& name) {
  auto c = test::parseLoopCase(test::readFile(test::dataPath("loop/" + name + ".loop")), name);
  REQUIRE_MESSAGE(c.ok(), c.error().message);
  return *c;
}

/// What the loop hands the store (RoundExecutor::annotate, once, for the last recorded round)
/// is what it reports per line: every atomic line's reason, note and focus suggestion, each on a
/// range of that round.
void checkVerdicts(const planner::LoopResult& r, const test::ScriptLog& log) {
  bool anyReason = std::any_of(r.lines.begin(), r.lines.end(),
                               [](const auto& l) { return l.atomicReason != attribution::AtomicReason::None; });
  if (!anyReason) return;
  REQUIRE(log.annotatedRounds.size() == 1);
  REQUIRE(!log.recorded.empty());
  using V = std::tuple<std::string, attribution::AtomicReason, std::string, std::string>;
  std::vector<V> want, got;
  for (const auto& l : r.lines)
    if (l.atomic || !l.note.empty()) want.emplace_back(l.range.name, l.atomicReason, l.note, l.suggestFocus);
  for (const auto& l : log.annotated) {
    CHECK_MESSAGE(log.recorded.back().find(l.range.name) != nullptr, l.range.name << " is a range of the last round");
    if (l.atomic || !l.note.empty()) got.emplace_back(l.range.name, l.atomicReason, l.note, l.suggestFocus);
  }
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  CHECK(got == want);
}

}  // namespace

TEST_CASE("loop cases (tests/data/loop/*.loop)") {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(test::dataPath("loop")))
    if (e.path().extension() == ".loop") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() >= 7);
  for (const auto& name : names) {
    SUBCASE(name.c_str()) {
      auto c = load(name);
      test::TempDir ws;
      test::ScriptLog log;
      auto r = test::runLoopCase(c, ws.path(), log);
      REQUIRE_MESSAGE(r.ok(), r.error().message);
      check(c, *r);
      checkVerdicts(*r, log);
      if (c.expectRuns) CHECK(log.runs == *c.expectRuns);
    }
  }
}

TEST_CASE("every round is announced as recorded, and the baseline runs after the first one is") {
  auto c = load("refine");
  test::TempDir ws;
  test::ScriptLog log;
  auto r = test::runLoopCase(c, ws.path(), log);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  REQUIRE(r->rounds >= 2);
  // A front end shows round 0 while the uninstrumented baseline runs; later rounds follow.
  std::vector<std::string> want = {"run 0", "recorded 0", "run -1"};
  for (int i = 1; i < r->rounds; ++i) {
    want.push_back("run " + std::to_string(i));
    want.push_back("recorded " + std::to_string(i));
  }
  CHECK(log.events == want);
}

TEST_CASE("each instrumented round is attributed once, and the recorded table is the one decided on") {
  auto c = load("refine");
  test::TempDir ws;
  test::ScriptLog log;
  uint64_t before = attribution::attributionRuns();
  auto r = test::runLoopCase(c, ws.path(), log);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  REQUIRE(r->rounds >= 2);
  CHECK(attribution::attributionRuns() - before == static_cast<uint64_t>(r->rounds));
  REQUIRE(log.recorded.size() == static_cast<size_t>(r->rounds));
  CHECK(log.runs == r->rounds + 1);  // + the uninstrumented baseline
  // The published lines carry the last recorded table's numbers.
  const auto& last = log.recorded.back();
  for (const auto& l : r->lines) {
    const attribution::RangeEntry* e = nullptr;
    for (const auto& x : last.ranges)
      if (x.path == l.path && x.firstLine == l.line + 1 && x.exclusiveLaunches == static_cast<int64_t>(l.ops)) e = &x;
    CHECK_MESSAGE(e, l.path << ":" << l.line + 1);
  }
}
