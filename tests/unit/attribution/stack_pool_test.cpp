// The attribution's stack pool is built in fixed blocks: stacks that fill several blocks, and a
// stack longer than a whole block, read back as the ranges that contain the launch call — the
// expected stacks are found by a brute-force containment scan of the model (rule 2 and 3 of
// attribution.h), not by the sweep.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "core/attribution/attribution.h"
#include "tests/support/profile_builder.h"

using namespace kl;
using namespace kl::profile;

namespace {

/// Every range on the call's thread containing it, ordered outermost -> innermost.
std::vector<uint32_t> bruteStack(const ProfileModel& m, uint32_t call) {
  const auto c = m.apiCalls[call];
  std::vector<uint32_t> s;
  for (uint32_t r = 0; r < m.ranges.size(); ++r) {
    const auto g = m.ranges[r];
    if (g.thread == c.thread && g.start <= c.start && c.end <= g.end) s.push_back(r);
  }
  std::sort(s.begin(), s.end(), [&](uint32_t a, uint32_t b) {
    const auto x = m.ranges[a], y = m.ranges[b];
    if (x.start != y.start) return x.start < y.start;
    if (x.end != y.end) return x.end > y.end;
    return a < b;
  });
  return s;
}

void checkStack(const ProfileModel& m, const attribution::Attribution& a, uint32_t op) {
  CAPTURE(op);
  const uint32_t c = a.launch(op);
  REQUIRE(c != kNone);
  const auto got = a.stack(op);
  const auto want = bruteStack(m, c);
  CHECK(std::vector<uint32_t>(got.begin(), got.end()) == want);
  CHECK(a.op(op).stackSize == want.size());
}

}  // namespace

TEST_CASE("attribution: stacks spread over many pool blocks read back exactly") {
  // 120,000 launches, each in its own inner range, ten to an outer range: 3 pool entries a
  // launch, 360,000 in all (more than one block of 2^18).
  test::ProfileBuilder b;
  const int n = 120000;
  for (int i = 0; i < n; ++i) {
    const int64_t t = 1000 + int64_t{i} * 100;
    if (i % 10 == 0) b.range("outer", t - 10, t + 10 * 100 - 20);
    b.range("inner " + std::to_string(i % 7), t - 5, t + 5);
    b.kernel("k", t);
  }
  b.finish();
  auto r = attribution::attribute(b.m, {.rangeStats = false});
  REQUIRE(r);
  const auto& a = *r;
  REQUIRE(a.opCount() == static_cast<size_t>(n));
  CHECK(a.attributedCount() == static_cast<uint32_t>(n));
  for (uint32_t op = 0; op < a.opCount(); op += 997) checkStack(b.m, a, op);
  checkStack(b.m, a, static_cast<uint32_t>(n - 1));
  CHECK(a.stack(0).size() == 2);
}

TEST_CASE("attribution: a stack deeper than a pool block, and the stacks after it") {
  // 300,000 nested ranges around one launch (deeper than a block of 2^18 entries), then a
  // launch under one range and a launch outside every range.
  test::ProfileBuilder b;
  const int depth = 300000;
  for (int i = 0; i < depth; ++i) b.range("level", i, 4 * int64_t{depth} - i);
  b.kernel("deep", 2 * int64_t{depth});
  b.range("after", 5 * int64_t{depth}, 5 * int64_t{depth} + 100);
  b.kernel("shallow", 5 * int64_t{depth} + 10);
  b.kernel("outside", 6 * int64_t{depth});
  b.finish();
  auto r = attribution::attribute(b.m, {.rangeStats = false});
  REQUIRE(r);
  const auto& a = *r;
  REQUIRE(a.opCount() == 3);
  CHECK(a.stack(0).size() == static_cast<size_t>(depth));
  checkStack(b.m, a, 0);
  checkStack(b.m, a, 1);
  CHECK(a.stack(1).size() == 1);
  CHECK(a.stack(2).empty());
  CHECK(a.op(2).reason == attribution::Unattributed::OutsideRanges);
  CHECK(a.outsideRangesCount() == 1);
}
