// Intra-kernel region buffers built from known events; tag mapping on samples/cute/tiled_add.py.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "core/cute/buffer.h"
#include "core/cute/regions.h"
#include "core/cute/source_map.h"
#include "core/python/text_edit.h"
#include "tests/support/test_support.h"

using namespace kl::cute;
using kl::test::readFile;
using kl::test::sourcePath;
using kl::test::TempDir;
using kl::test::writeFile;

namespace {

struct Ev {
  int64_t start, dur, tag, tid;
};

std::vector<int64_t> words(int64_t count, const std::vector<Ev>& evs, int64_t capacity) {
  std::vector<int64_t> w(static_cast<size_t>(1 + 4 * capacity), 0);
  w[0] = count;
  for (size_t i = 0; i < evs.size(); ++i) {
    w[1 + 4 * i] = evs[i].start;
    w[2 + 4 * i] = evs[i].dur;
    w[3 + 4 * i] = evs[i].tag;
    w[4 + 4 * i] = evs[i].tid;
  }
  return w;
}

std::string le(const std::vector<int64_t>& w) {
  std::string s;
  for (int64_t v : w)
    for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xFF));
  return s;
}

std::string npy(const std::vector<int64_t>& w, const std::string& shape, const std::string& descr = "<i8",
                const std::string& fortran = "False") {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64) h.push_back(' ');
  h.push_back('\n');
  std::string s("\x93NUMPY\x01\x00", 8);
  s.push_back(static_cast<char>(h.size() & 0xFF));
  s.push_back(static_cast<char>(h.size() >> 8));
  return s + h + le(w);
}

const std::vector<Ev> kEvents = {
    {1'000'000'000'000LL, 500, 0, 0},  // load, block 0
    {1'000'000'000'600LL, 300, 1, 0},  // add
    {1'000'000'001'000LL, 200, 2, 0},  // store
    {1'000'000'000'100LL, 700, 0, 1},  // load, block 1
    {1'000'000'000'900LL, 100, 1, 1},
};

CuteSourceMap mapSource(const std::string& text) {
  auto sf = kl::python::SourceFile::parse(text);
  REQUIRE(sf.ok());
  return mapCuteSource(**sf);
}

/// "NAME=value" of each constant, in order.
std::vector<std::string> constantValues(const CuteSourceMap& m) {
  std::vector<std::string> names;
  for (const auto& c : m.constants) names.push_back(c.name + "=" + std::to_string(c.value));
  return names;
}

/// Each site as "api CONSTANT=tag anchor:first-last" (0-based lines).
std::vector<std::string> regionsOf(const CuteSourceMap& m) {
  std::vector<std::string> out;
  for (const auto& s : m.sites)
    out.push_back(s.api + " " + s.constant + "=" + std::to_string(s.tag) + " " + std::to_string(s.anchorLine) + ":" +
                  std::to_string(s.region.first) + "-" + std::to_string(s.region.last));
  return out;
}

}  // namespace

TEST_CASE("decode a raw little-endian buffer and summarise per tag") {
  TempDir d;
  writeFile(d / "b.bin", le(words(5, kEvents, 8)));
  auto buf = readEventBuffer(d / "b.bin", std::nullopt);
  REQUIRE_MESSAGE(buf.ok(), (buf.ok() ? "" : buf.error().message));
  CHECK(buf->capacity == 8);
  CHECK(buf->events.size() == 5);
  CHECK(buf->totalOverflow() == 0);
  TagTable tags{{"load", "add", "store"}};
  auto s = summarize(*buf, tags);
  REQUIRE(s.size() == 3);
  CHECK(s[0].name == "load");
  CHECK(s[0].count == 2);
  CHECK(s[0].meanNs == doctest::Approx(600));
  CHECK(s[0].minNs == 500);
  CHECK(s[0].maxNs == 700);
  CHECK(s[0].share == doctest::Approx(1200.0 / 1800.0));
  CHECK(s[1].meanNs == doctest::Approx(200));
  CHECK(s[2].count == 1);
  CHECK(tags.name(7) == "tag_7");
}

TEST_CASE("npy: header parsed; 2-D shape gives units and capacity") {
  TempDir d;
  writeFile(d / "b.npy", npy(words(5, kEvents, 5), "(21,)"));
  auto buf = readEventBuffer(d / "b.npy", std::nullopt);
  REQUIRE(buf.ok());
  CHECK(buf->events.size() == 5);
  // Two units of capacity 2: unit 1 holds 1 event.
  std::vector<int64_t> two = words(2, {kEvents[0], kEvents[1]}, 2);
  std::vector<int64_t> u1 = words(1, {kEvents[3]}, 2);
  two.insert(two.end(), u1.begin(), u1.end());
  writeFile(d / "u.npy", npy(two, "(2, 9)"));
  auto ub = readEventBuffer(d / "u.npy", std::nullopt);
  REQUIRE(ub.ok());
  CHECK(ub->units == 2);
  CHECK(ub->capacity == 2);
  REQUIRE(ub->events.size() == 3);
  CHECK(ub->events[2].unit == 1);
  writeFile(d / "f.npy", npy(words(0, {}, 1), "(5,)", "<f8"));
  auto bad = readEventBuffer(d / "f.npy", std::nullopt);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("dtype <f8") != std::string::npos);
  writeFile(d / "fo.npy", npy(words(0, {}, 1), "(5,)", "<i8", "True"));
  CHECK(readEventBuffer(d / "fo.npy", std::nullopt).error().message.find("fortran_order") != std::string::npos);
  std::string trunc = npy(words(1, {kEvents[0]}, 1), "(9,)");
  writeFile(d / "t.npy", trunc);
  CHECK(readEventBuffer(d / "t.npy", std::nullopt).error().message.find("truncated") != std::string::npos);
}

TEST_CASE("overflow and malformed buffers are reported clearly") {
  auto of = decodeWords(words(7, {kEvents[0], kEvents[1]}, 2), std::nullopt);
  REQUIRE(of.ok());
  CHECK(of->events.size() == 2);
  CHECK(of->totalOverflow() == 5);
  bool warned = false;
  for (auto& w : of->warnings) warned |= w.find("overflow: the kernel recorded 5 event(s) beyond") != std::string::npos;
  CHECK(warned);
  CHECK_FALSE(decodeWords({}, std::nullopt).ok());
  CHECK(decodeWords({1, 2, 3}, std::nullopt).error().message.find("not 1 + 4k") != std::string::npos);
  CHECK(decodeWords({-1, 0, 0, 0, 0}, std::nullopt).error().message.find("negative count") != std::string::npos);
  CHECK(decodeWords(words(1, {kEvents[0]}, 1), int64_t{2}).error().message.find("multiple of") != std::string::npos);
  // Unwritten slot and a negative duration are skipped with a warning.
  auto odd = decodeWords(words(3, {kEvents[0], {0, 0, 0, 0}, {5, -3, 1, 0}}, 3), std::nullopt);
  REQUIRE(odd.ok());
  CHECK(odd->events.size() == 1);
  CHECK(odd->unwritten == 1);
  TempDir d;
  writeFile(d / "x.bin", std::string(12, '\0'));
  CHECK(readEventBuffer(d / "x.bin", std::nullopt).error().message.find("whole number of int64") != std::string::npos);
}

TEST_CASE("Perfetto JSON: a track per tid, X events in us rebased, overlaps split") {
  std::vector<Ev> evs = kEvents;
  evs.push_back({1'000'000'000'400LL, 400, 1, 0});  // overlaps load (0..500) partially on tid 0
  auto buf = decodeWords(words(static_cast<int64_t>(evs.size()), evs, 8), std::nullopt);
  REQUIRE(buf.ok());
  std::ostringstream out;
  writePerfettoJson(out, *buf, TagTable{{"load", "add", "store"}});
  std::string j = out.str();
  CHECK(j.find("\"traceEvents\"") != std::string::npos);
  CHECK(j.find("\"displayTimeUnit\"") == std::string::npos);
  CHECK(j.find("\"ph\":\"X\",\"name\":\"load\"") != std::string::npos);
  CHECK(j.find("\"ts\":0.000,\"dur\":0.500") != std::string::npos);  // first event at t0
  CHECK(j.find("\"ts\":0.600,\"dur\":0.300") != std::string::npos);
  CHECK(j.find("\"name\":\"tid 0\"") != std::string::npos);
  CHECK(j.find("\"name\":\"tid 1\"") != std::string::npos);
  CHECK(j.find("\"name\":\"tid 0 (2)\"") != std::string::npos);  // the partial overlap
  CHECK(j.find("\"start_ns\":1000000000000") != std::string::npos);
  CHECK(j.find("\"overflow_events\":0") != std::string::npos);
}

TEST_CASE("tag file: one name per line") {
  TempDir d;
  writeFile(d / "t.txt", "load\nadd\r\nstore\n\n");
  auto t = readTagFile(d / "t.txt");
  REQUIRE(t.ok());
  CHECK(t->names == std::vector<std::string>{"load", "add", "store"});
  writeFile(d / "b.txt", "load\n\nstore\n");
  CHECK(readTagFile(d / "b.txt").error().message.find("blank line") != std::string::npos);
  CHECK_FALSE(readTagFile(d / "none.txt").ok());
}

TEST_CASE("tags map to their source in the CUTE DSL sample") {
  auto map = mapCuteSourceFile(sourcePath("samples/cute/tiled_add.py"));
  REQUIRE_MESSAGE(map.ok(), (map.ok() ? "" : map.error().message));
  std::string text = readFile(sourcePath("samples/cute/tiled_add.py"));
  auto lineOf = [&](const std::string& needle) {
    size_t p = text.find(needle);
    REQUIRE(p != std::string::npos);
    return static_cast<uint32_t>(std::count(text.begin(), text.begin() + static_cast<long>(p), '\n'));
  };
  REQUIRE(map->constants.size() == 3);
  CHECK(map->constants[1].name == "TAG_ADD");
  CHECK(map->constants[1].value == 1);
  CHECK(map->constants[1].line == lineOf("TAG_ADD = 1"));
  CHECK(map->tagTable().names == std::vector<std::string>{"TAG_LOAD", "TAG_ADD", "TAG_STORE"});
  REQUIRE(map->sites.size() == 3);
  const TagSite& load = map->sites[0];
  CHECK(load.api == "profile_region");
  CHECK(load.tag == 0);
  CHECK(load.function == "tiled_add_kernel");
  CHECK(load.anchorLine == lineOf("with profile_region(prof_buf, max_events, Int32(TAG_LOAD)"));
  CHECK(load.region.first == load.anchorLine + 1);
  CHECK(load.region.last == lineOf("rb[i] = b[base"));
  const TagSite& add = map->sites[1];
  CHECK(add.api == "lane0_warp0_stop");
  CHECK(add.tag == 1);
  CHECK(add.anchorLine == lineOf("eid = lane0_warp0_start"));
  CHECK(add.region.first == add.anchorLine + 1);
  CHECK(add.region.last == lineOf("lane0_warp0_stop(prof_buf, eid") - 1);
  CHECK(map->warnings.empty());
}

TEST_CASE("code action edits: time a selected block") {
  const std::string src =
      "TAG_A = 0\n"
      "\n"
      "@cute.kernel\n"
      "def k(prof_buf, n, bidx):\n"
      "    with profile_region(prof_buf, n, Int32(TAG_A), bidx):\n"
      "        x = 1\n"
      "    y = 2\n"
      "    z = y + 1\n";
  auto sf = kl::python::SourceFile::parse(src);
  REQUIRE(sf.ok());
  auto plan = planTimeRegion(**sf, 6, 7, "tail");
  REQUIRE_MESSAGE(plan.ok(), (plan.ok() ? "" : plan.error().message));
  CHECK(plan->constant == "TAG_TAIL");
  CHECK(plan->value == 1);
  std::string out = src;
  REQUIRE(kl::python::applyEditsToOriginal(out, plan->edits));
  CHECK(out ==
        "TAG_A = 0\n"
        "TAG_TAIL = 1\n"
        "\n"
        "@cute.kernel\n"
        "def k(prof_buf, n, bidx):\n"
        "    with profile_region(prof_buf, n, Int32(TAG_A), bidx):\n"
        "        x = 1\n"
        "    eid_tail = lane0_warp0_start(prof_buf, n)\n"
        "    y = 2\n"
        "    z = y + 1\n"
        "    lane0_warp0_stop(prof_buf, eid_tail, Int32(TAG_TAIL), bidx, n)\n");
  // The result maps back: the new tag has a site.
  auto sf2 = kl::python::SourceFile::parse(out);
  REQUIRE(sf2.ok());
  CuteSourceMap m2 = mapCuteSource(**sf2);
  CHECK(m2.sites.size() == 2);
  CHECK(m2.warnings.empty());
  CHECK_FALSE(planTimeRegion(**sf, 0, 0).ok());  // module level: not inside a kernel
}

TEST_CASE("tag sites and constants come from the call's arguments, not its text") {
  const std::string src =
      "TAG_A = 0\n"
      "TAG_B: int = 0x1\n"
      "TAG_C = TAG_D = 2\n"
      "NOT_A_TAG = 7\n"
      "TAG_NEG = -1\n"
      "\n"
      "@cute.kernel\n"
      "def k(buf, n, bidx):\n"
      "    eid = lane0_warp0_start(buf, n)\n"
      "    x = 1\n"
      "    eid_b = lane0_warp0_start(buf, n)\n"
      "    y = 2\n"
      "    lane0_warp0_stop(buf, eid, Int32(TAG_A), bidx, n)\n"
      "    with profile_region(buf, n, Int32(TAG_B), Int32(bidx)):\n"
      "        z = 3\n"
      "    with ops.profile_region(\n"
      "        buf,  # the buffer, one per block\n"
      "        n,\n"
      "        tag=cutlass.Int32(TAG_C),\n"
      "        tid=bidx,\n"
      "    ):\n"
      "        w = 4\n"
      "    other(buf, n, Int32(TAG_A), bidx)\n";
  CuteSourceMap m = mapSource(src);
  // Annotated and chained assignments count; a negative literal is no integer constant.
  CHECK(constantValues(m) == std::vector<std::string>{"TAG_A=0", "TAG_B=1", "TAG_C=2", "TAG_D=2"});
  CHECK(m.constants[2].line == 2);
  // Sites: only the third positional (or tag=) Int32(NAME) argument of the two profiler calls; an
  // Int32(...) tid is not a second tag, `other(...)` is no site.
  REQUIRE(m.sites.size() == 3);
  // The stop pairs with `eid = ...`, not with the later `eid_b = ...` whose text starts with "eid".
  CHECK(m.sites[0].api == "lane0_warp0_stop");
  CHECK(m.sites[0].constant == "TAG_A");
  CHECK(m.sites[0].anchorLine == 8);
  CHECK(m.sites[0].region.first == 9);
  CHECK(m.sites[0].region.last == 11);
  CHECK(m.sites[1].constant == "TAG_B");
  CHECK(m.sites[1].tag == 1);
  CHECK(m.sites[1].region.first == 14);
  CHECK(m.sites[1].region.last == 14);
  // A multi-line call with a comment and keyword arguments.
  CHECK(m.sites[2].api == "profile_region");
  CHECK(m.sites[2].constant == "TAG_C");
  CHECK(m.sites[2].tag == 2);
  CHECK(m.sites[2].callLine == 15);
  CHECK(m.sites[2].anchorLine == 15);
  CHECK(m.sites[2].region.first == 21);
  CHECK(m.sites[2].function == "k");
  // Only the shared value is worth a warning.
  CHECK(m.warnings == std::vector<std::string>{"TAG_D and TAG_C share the value 2"});
}

TEST_CASE("region tags: bare names, literals, Int32 wrappers and attributes") {
  // The forms transformer_nuggets' README and examples use: the tag constant passed bare
  // (`profile_region(buf, max_events, TAG_X, tid)`), by keyword, as a literal, in Int32(...).
  const std::string src =
      "TAG_PRODUCER = 0\n"
      "TAG_CONSUMER = 1\n"
      "LOAD = 5\n"
      "NUM_BLOCKS = 4\n"
      "\n"
      "@cute.kernel\n"
      "def k(buf, n, bidx, tag):\n"
      "    with profile_region(buf, n, TAG_PRODUCER, bidx, target_warp=Int32(0), event_idx=Int32(0)):\n"
      "        a = 1\n"
      "    with profile_region(buf, n, tag=TAG_CONSUMER, unit_id=bidx):\n"
      "        b = 2\n"
      "    with profile_region(buf, n, 3, bidx):\n"
      "        c = 3\n"
      "    with profile_region(buf, n, Int32(1), bidx):\n"
      "        d = 4\n"
      "    with profile_region(buf, n, tags.TAG_PRODUCER, bidx):\n"
      "        e = 5\n"
      "    with profile_region(buf, n, cutlass.Int32(LOAD), bidx):\n"
      "        f = 6\n"
      "    with profile_region(buf, n, tag, bidx):\n"
      "        g = 7\n"
      "    local = 9\n"
      "    with profile_region(buf, n, local, bidx):\n"
      "        h = 8\n"
      "    with profile_region(buf, n, NUM_BLOCKS - 1, bidx):\n"
      "        i = 9\n"
      "    with profile_region(buf, NUM_BLOCKS, tag=0x2, unit_id=NUM_BLOCKS):\n"
      "        j = 10\n"
      "    eid = lane0_warp0_start(buf, n)\n"
      "    y = eid\n"
      "    lane0_warp0_stop(buf, eid, TAG_CONSUMER, bidx, n)\n"
      "    with profile_region(buf, n, consts.TAG_MISSING, bidx):\n"
      "        l = 11\n";
  CuteSourceMap m = mapSource(src);
  // A module-level integer is a tag constant when a call passes it as the tag (LOAD); one passed
  // only as max_events or unit_id (NUM_BLOCKS) is not.
  CHECK(constantValues(m) == std::vector<std::string>{"TAG_PRODUCER=0", "TAG_CONSUMER=1", "LOAD=5"});
  std::vector<std::string> sites;
  for (const auto& site : m.sites)
    sites.push_back(site.constant + "=" + std::to_string(site.tag) + "@" + std::to_string(site.anchorLine + 1));
  // A parameter (`tag`), a local variable (`local`) and an expression are runtime values: no
  // sites. A literal shows under the constant holding its value, else as `tag_<id>`.
  CHECK(sites == std::vector<std::string>{"TAG_PRODUCER=0@8", "TAG_CONSUMER=1@10", "tag_3=3@12", "TAG_CONSUMER=1@14",
                                          "TAG_PRODUCER=0@16", "LOAD=5@18", "tag_2=2@27", "TAG_CONSUMER=1@29",
                                          "TAG_MISSING=-1@32"});
  CHECK(m.sites[0].region.first == 8);
  CHECK(m.sites[0].region.last == 8);
  CHECK(m.sites[7].api == "lane0_warp0_stop");
  CHECK(m.sites[7].region.first == 29);
  CHECK(m.sites[7].region.last == 29);
  CHECK(m.warnings == std::vector<std::string>{"line 32: TAG_MISSING has no `TAG_MISSING = <int>` constant"});
  TagTable t = m.tagTable();
  CHECK(t.names == std::vector<std::string>{"TAG_PRODUCER", "TAG_CONSUMER", "tag_2", "tag_3", "tag_4", "LOAD"});
}

TEST_CASE("token regions: region_end pairs with the region_start that made its token") {
  const std::string src =
      "TAG_ITERATION = 0\n"
      "TAG_COMPUTE = 1\n"
      "@cute.kernel\n"
      "def k(buf, n, bidx):\n"
      "    outer_tok = region_start(buf, bidx, n)\n"
      "    for i in cutlass.range(4):\n"
      "        compute_tok = region_start(buf, bidx, n)\n"
      "        x = 1\n"
      "        region_end(buf, TAG_COMPUTE, compute_tok, n)\n"
      "    region_end(buf, Int32(TAG_ITERATION), token=outer_tok, max_events_per_unit=n)\n"
      "    region_end(buf, 1, compute_tok, n)\n"
      "    region_end(buf, n, bidx, TAG_COMPUTE)\n";
  CuteSourceMap m = mapSource(src);
  // The tag is region_end's second argument; `n` there is no tag, and TAG_COMPUTE passed fourth
  // (as max_events_per_unit) is not taken as one.
  // Each site as "api CONSTANT=tag anchor:first-last" (0-based lines). The inner token was made in
  // the loop body, not in the block of the third stop: that stop anchors on itself. Its literal
  // tag 1 shows under TAG_COMPUTE.
  CHECK(regionsOf(m) == std::vector<std::string>{"region_end TAG_COMPUTE=1 6:7-7", "region_end TAG_ITERATION=0 4:5-8",
                                                 "region_end TAG_COMPUTE=1 10:10-10"});
  CHECK(m.warnings ==
        std::vector<std::string>{"line 11: no `compute_tok = region_start(...)` before this stop in the same block"});
}

TEST_CASE("a stop with no matching start in its block is reported") {
  const std::string src =
      "TAG_A = 0\n"
      "def k(buf, n, bidx):\n"
      "    eid_x = lane0_warp0_start(buf, n)\n"
      "    if n:\n"
      "        eid = lane0_warp0_start(buf, n)\n"
      "    lane0_warp0_stop(buf, eid, Int32(TAG_A), bidx, n)\n"
      "    lane0_warp0_stop(buf, eid, Int32(TAG_X), bidx, n)\n";
  auto sf = kl::python::SourceFile::parse(src);
  REQUIRE(sf.ok());
  CuteSourceMap m = mapCuteSource(**sf);
  REQUIRE(m.sites.size() == 2);
  CHECK(m.sites[0].anchorLine == 5);  // the stop itself: no start of `eid` in its block
  CHECK(m.sites[1].tag == -1);
  CHECK(m.warnings ==
        std::vector<std::string>{"line 6: no `eid = lane0_warp0_start(...)` before this stop in the same block",
                                 "line 7: TAG_X has no `TAG_X = <int>` constant",
                                 "line 7: no `eid = lane0_warp0_start(...)` before this stop in the same block"});
}

TEST_CASE("code action edits take buffer, max_events and tid from the call's arguments") {
  auto planFor = [](const std::string& call) {
    const std::string src =
        "TAG_A = 0\n"
        "\n"
        "@cute.kernel\n"
        "def k(bufs, n, bidx):\n" +
        call +
        "        x = 1\n"
        "    y = 2\n";
    auto sf = kl::python::SourceFile::parse(src);
    REQUIRE(sf.ok());
    auto lines = static_cast<uint32_t>(std::count(src.begin(), src.end(), '\n'));
    auto plan = planTimeRegion(**sf, lines - 1, lines - 1, "tail");
    REQUIRE_MESSAGE(plan.ok(), (plan.ok() ? "" : plan.error().message));
    REQUIRE(plan->edits.size() == 3);
    return plan->edits[1].newText + plan->edits[2].newText;
  };
  // Nested brackets and a string with a comma in an argument.
  CHECK(planFor("    with profile_region(bufs[\"a, b\"], min(n, (4, 5)[0]), Int32(TAG_A), bidx):\n") ==
        "    eid_tail = lane0_warp0_start(bufs[\"a, b\"], min(n, (4, 5)[0]))\n"
        "    lane0_warp0_stop(bufs[\"a, b\"], eid_tail, Int32(TAG_TAIL), bidx, min(n, (4, 5)[0]))\n");
  // Keyword arguments: their values, not `name=value`.
  CHECK(planFor("    with profile_region(buf=bufs[0], max_events=n, tag=Int32(TAG_A), tid=bidx + 1):\n") ==
        "    eid_tail = lane0_warp0_start(bufs[0], n)\n"
        "    lane0_warp0_stop(bufs[0], eid_tail, Int32(TAG_TAIL), bidx + 1, n)\n");
  // A multi-line call with comments between the arguments.
  CHECK(planFor("    with profile_region(\n"
                "        bufs[1],  # one buffer, per block\n"
                "        n * 2,\n"
                "        Int32(TAG_A),  # the tag\n"
                "        bidx,\n"
                "    ):\n") ==
        "    eid_tail = lane0_warp0_start(bufs[1], n * 2)\n"
        "    lane0_warp0_stop(bufs[1], eid_tail, Int32(TAG_TAIL), bidx, n * 2)\n");
  // lane0_warp0_stop's own order: buf, eid, tag, tid, max_events.
  CHECK(planFor("    e = lane0_warp0_start(bufs, n)\n"
                "    lane0_warp0_stop(bufs, e, Int32(TAG_A), bidx * 3, n - 1)\n"
                "    if n:\n") ==
        "    eid_tail = lane0_warp0_start(bufs, n - 1)\n"
        "    lane0_warp0_stop(bufs, eid_tail, Int32(TAG_TAIL), bidx * 3, n - 1)\n");
  // A call whose arguments cannot be read (a splat before them) gives the defaults.
  CHECK(planFor("    with profile_region(*args):\n") ==
        "    eid_tail = lane0_warp0_start(prof_buf, max_events)\n"
        "    lane0_warp0_stop(prof_buf, eid_tail, Int32(TAG_TAIL), bidx, max_events)\n");
}

TEST_CASE("CUTE DSL kernels are told by their decorator expression") {
  const std::string src =
      "import cutlass.cute as ct\n"
      "@cute.kernel\n"
      "def a(): pass\n"
      "@cutlass.cute.kernel(preprocess = True)\n"
      "def b():\n"
      "    def inner(): pass\n"
      "@ct.kernel\n"
      "def c(): pass\n"
      "@cute.jit\n"
      "def d(): pass\n"
      "@other.kernel\n"
      "def e(): pass\n"
      "def f(): pass\n";
  auto sf = kl::python::SourceFile::parse(src);
  REQUIRE(sf.ok());
  const auto& m = (*sf)->model();
  auto kernel = [&](const char* q) { return inCuteKernel(m, m.findFunction(q)); };
  CHECK(kernel("a"));
  CHECK(kernel("b"));
  CHECK(kernel("b.<locals>.inner"));  // inside a kernel
  CHECK(kernel("c"));                 // through the import alias
  CHECK_FALSE(kernel("d"));
  CHECK_FALSE(kernel("e"));
  CHECK_FALSE(kernel("f"));
  CHECK_FALSE(inCuteKernel(m, kl::python::kNone));
}
