// Kineto reader + attribution on real traces. The expected values come from an independent
// parse with nlohmann::json (tests only; core never uses it) and plain scans of the events.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/attribution/attribution.h"
#include "core/profile/reader.h"
#include "core/support/gzip.h"
#include "tests/support/test_support.h"

using namespace kl::profile;
using namespace kl::attribution;
using nlohmann::json;

namespace {

json parse(const std::string& rel) {
  auto text = kl::readMaybeGzipFile(kl::test::dataPath("real/" + rel));
  REQUIRE(text.ok());
  return json::parse(*text);
}

ProfileModel load(const std::string& rel) {
  auto m = readProfile(kl::test::dataPath("real/" + rel));
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().message));
  return std::move(*m);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string cat(const json& e) {
  return e.contains("cat") && e["cat"].is_string() ? lower(e["cat"].get<std::string>()) : "";
}
bool isX(const json& e) { return e.value("ph", "") == "X"; }
int64_t ns(const json& v) { return static_cast<int64_t>(std::llround(v.get<double>() * 1000.0)); }
std::string idText(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

size_t count(const json& t, std::initializer_list<const char*> cats) {
  size_t n = 0;
  for (const auto& e : t["traceEvents"])
    if (isX(e))
      for (auto c : cats)
        if (cat(e) == c) ++n;
  return n;
}

size_t countOps(const ProfileModel& m, GpuOpKind k) {
  return static_cast<size_t>(
      std::count_if(m.gpuOps.begin(), m.gpuOps.end(), [&](const GpuOp& o) { return o.kind == k; }));
}

}  // namespace

TEST_CASE("kineto real: event counts match an independent parse on every stored trace") {
  for (const char* rel :
       {"tracelens_h100_bert_small_infer.json.gz", "hta_a100_triton_tiny.json.gz", "hta_a100_alexnet_small.json.gz",
        "kineto_v100_resnet50_2021_callstack.json.gz", "tracelens_b200_vllm_tp8_rank0.json.gz"}) {
    CAPTURE(rel);
    auto t = parse(rel);
    auto m = load(rel);
    CHECK(m.meta.format == SourceFormat::Kineto);
    CHECK(countOps(m, GpuOpKind::Kernel) == count(t, {"kernel"}));
    CHECK(countOps(m, GpuOpKind::Memcpy) == count(t, {"gpu_memcpy", "memcpy"}));
    CHECK(countOps(m, GpuOpKind::Memset) == count(t, {"gpu_memset", "memset"}));
    CHECK(m.apiCalls.size() == count(t, {"cuda_runtime", "cuda_driver", "runtime"}));
    size_t pyfn = count(t, {"python_function"});
    if (pyfn) CHECK(m.pyFrames.size() == pyfn);
    size_t ranges = count(t, {"cpu_op", "operator", "user_annotation", "gpu_user_annotation"});
    CHECK(m.ranges.size() == ranges);
    // Kernel time, exact in ns (ts/dur parsed from their decimal text).
    int64_t want = 0, got = 0;
    for (const auto& e : t["traceEvents"])
      if (isX(e) && cat(e) == "kernel") want += ns(e["ts"]) + ns(e["dur"]) - ns(e["ts"]);
    for (const auto& o : m.gpuOps)
      if (o.kind == GpuOpKind::Kernel) got += o.duration();
    CHECK(std::llabs(got - want) <= static_cast<int64_t>(countOps(m, GpuOpKind::Kernel)));  // double rounding
    // Every kernel whose correlation matches a runtime/driver event is linked (never via External id).
    std::set<int64_t> corr;
    for (const auto& e : t["traceEvents"])
      if (isX(e) && (cat(e) == "cuda_runtime" || cat(e) == "cuda_driver" || cat(e) == "runtime") &&
          e.contains("args") && e["args"].contains("correlation"))
        corr.insert(e["args"]["correlation"].get<int64_t>());
    size_t linkable = 0;
    for (const auto& e : t["traceEvents"])
      if (isX(e) && cat(e) == "kernel" && e["args"].contains("correlation") &&
          corr.count(e["args"]["correlation"].get<int64_t>()))
        ++linkable;
    auto a = attribute(m);
    REQUIRE(a.ok());
    size_t linked = 0;
    for (uint32_t i = 0; i < m.gpuOps.size(); ++i)
      if (m.gpuOps[i].kind == GpuOpKind::Kernel && a->op(i).launch != kNone) ++linked;
    CHECK(linked == linkable);
  }
}

TEST_CASE("kineto real: bert — every launch lies inside a python_function frame; innermost frame matches a scan") {
  auto t = parse("tracelens_h100_bert_small_infer.json.gz");
  auto m = load("tracelens_h100_bert_small_infer.json.gz");
  auto a = attribute(m);
  REQUIRE(a.ok());
  // Independent: runtime call per correlation, python_function frames per (pid, tid).
  std::map<int64_t, json> calls;
  std::map<std::pair<std::string, std::string>, std::vector<json>> frames;
  for (const auto& e : t["traceEvents"]) {
    if (!isX(e)) continue;
    if ((cat(e) == "cuda_runtime" || cat(e) == "cuda_driver") && e["args"].contains("correlation"))
      calls[e["args"]["correlation"].get<int64_t>()] = e;
    if (cat(e) == "python_function") frames[{idText(e["pid"]), idText(e["tid"])}].push_back(e);
  }
  size_t kernels = 0;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    if (m.gpuOps[i].kind != GpuOpKind::Kernel) continue;
    ++kernels;
    const auto& call = calls.at(m.gpuOps[i].correlationId);
    int64_t cs = ns(call["ts"]), ce = cs + ns(call["dur"]);
    const json* best = nullptr;
    for (const auto& f : frames[{idText(call["pid"]), idText(call["tid"])}]) {
      int64_t fs = ns(f["ts"]), fe = fs + ns(f["dur"]);
      if (fs <= cs && ce <= fe && (!best || fs >= ns((*best)["ts"]))) best = &f;
    }
    REQUIRE(best != nullptr);  // every launch is inside a frame (the README's claim)
    uint32_t fr = a->op(i).pyFrame;
    REQUIRE(fr != kNone);
    CHECK(m.str(m.pyFrames[fr].name) == (*best)["name"].get<std::string>());
    CHECK(m.pyFrames[fr].pythonId == (*best)["args"]["Python id"].get<int64_t>());
    // Parent link follows "Python parent id".
    if (!(*best)["args"]["Python parent id"].is_null()) {
      REQUIRE(m.pyFrames[fr].parent != kNone);
      CHECK(m.pyFrames[m.pyFrames[fr].parent].pythonId == (*best)["args"]["Python parent id"].get<int64_t>());
    }
    auto loc = sourceOf(m, *a, i);
    CHECK(loc.known());
  }
  CHECK(kernels == 60);
  // user_annotation ProfilerStep#6 encloses every launch; gpu_user_annotation is GPU-side.
  CHECK(a->attributedCount() == m.gpuOps.size());
  bool gpuAnn = std::any_of(m.ranges.begin(), m.ranges.end(), [](const Range& r) {
    return r.kind == RangeKind::GpuUserAnnotation && r.thread == kNone && r.streamId == 7;
  });
  CHECK(gpuAnn);
}

TEST_CASE("kineto real: 2021 format — capitalised categories, 'Call stack' strings give file:line") {
  auto t = parse("kineto_v100_resnet50_2021_callstack.json.gz");
  auto m = load("kineto_v100_resnet50_2021_callstack.json.gz");
  auto a = attribute(m);
  REQUIRE(a.ok());
  // Operator events whose name has '#' are record_function annotations.
  size_t want = 0;
  for (const auto& e : t["traceEvents"])
    if (isX(e) && e.value("cat", "") == "Operator" && e["name"].get<std::string>().find('#') != std::string::npos)
      ++want;
  CHECK(want > 0);
  CHECK(static_cast<size_t>(std::count_if(m.ranges.begin(), m.ranges.end(),
                                          [](const Range& r) { return r.kind == RangeKind::UserAnnotation; })) == want);
  // Independent: for each kernel, runtime call by correlation -> innermost Operator on the same
  // tid containing it that carries a non-empty Call stack -> its first (innermost) entry.
  std::map<int64_t, json> calls;
  std::vector<json> opsWithStack;
  for (const auto& e : t["traceEvents"]) {
    if (!isX(e)) continue;
    if (e.value("cat", "") == "Runtime") calls[e["args"]["correlation"].get<int64_t>()] = e;
    if (e.value("cat", "") == "Operator" && e["args"].contains("Call stack") &&
        !e["args"]["Call stack"].get<std::string>().empty())
      opsWithStack.push_back(e);
  }
  size_t checked = 0;
  for (uint32_t i = 0; i < m.gpuOps.size() && checked < 400; ++i) {
    if (m.gpuOps[i].kind != GpuOpKind::Kernel) continue;
    auto it = calls.find(m.gpuOps[i].correlationId);
    if (it == calls.end()) continue;
    const auto& call = it->second;
    int64_t cs = ns(call["ts"]), ce = cs + ns(call["dur"]);
    const json* best = nullptr;
    for (const auto& o : opsWithStack) {
      if (idText(o["tid"]) != idText(call["tid"])) continue;
      int64_t os = ns(o["ts"]), oe = os + ns(o["dur"]);
      if (os > cs || ce > oe) continue;
      // Innermost: the latest start; among equal starts the earliest end (nested ops that begin
      // in the same microsecond), never the order of the file's rows.
      if (!best) {
        best = &o;
        continue;
      }
      int64_t bs = ns((*best)["ts"]), be = bs + ns((*best)["dur"]);
      if (os > bs || (os == bs && oe < be)) best = &o;
    }
    auto loc = sourceOf(m, *a, i);
    if (!best) {
      CHECK_FALSE(loc.known());
      continue;
    }
    std::string stack = (*best)["args"]["Call stack"].get<std::string>();
    std::string first = stack.substr(0, stack.find(';'));  // "path.py(440): _conv_forward"
    auto open = first.rfind('(', first.find("): "));
    CHECK(std::string(loc.file) == first.substr(0, open));
    CHECK(loc.line == std::stoi(first.substr(open + 1)));
    ++checked;
  }
  CHECK(checked > 100);
}

TEST_CASE("kineto real: b200 trace without M events — threads unnamed, driver cuLaunchKernelEx launches linked") {
  auto m = load("tracelens_b200_vllm_tp8_rank0.json.gz");
  for (const auto& th : m.threads) CHECK(m.str(th.name).empty());
  CHECK(m.meta.fileRanks.size() == 1);
  CHECK(m.meta.fileRanks[0] == 0);  // distributedInfo.rank
  auto a = attribute(m);
  REQUIRE(a.ok());
  size_t viaDriver = 0;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    auto l = a->op(i).launch;
    if (l != kNone && m.str(m.apiCalls[l].name) == "cuLaunchKernelEx") {
      ++viaDriver;
      CHECK(m.apiCalls[l].level == ApiLevel::Driver);
      CHECK(m.apiCalls[l].role == ApiRole::Launch);
    }
  }
  CHECK(viaDriver == 220);  // README: the 220 cuLaunchKernelEx launches
}

TEST_CASE("kineto real: dlrm 8 ranks ingested together, rank on every row, clocks aligned") {
  auto dir = kl::test::dataPath("real/param_dlrm_v100_8ranks");
  auto m = readProfiles({dir});
  REQUIRE(m.ok());
  CHECK(m->meta.numRanks == 8);
  std::set<int32_t> ranks(m->meta.fileRanks.begin(), m->meta.fileRanks.end());
  CHECK(ranks.size() == 8);
  // Per-rank kernel counts and each file's distributedInfo.rank, from an independent parse.
  std::map<int32_t, size_t> want, got;
  for (size_t f = 0; f < m->meta.files.size(); ++f) {
    auto text = kl::readMaybeGzipFile(m->meta.files[f]);
    REQUIRE(text.ok());
    auto t = json::parse(*text);
    int32_t r = t["distributedInfo"]["rank"].get<int32_t>();
    CHECK(m->meta.fileRanks[f] == r);
    want[r] = count(t, {"kernel"});
  }
  for (const auto& o : m->gpuOps)
    if (o.kind == GpuOpKind::Kernel) ++got[o.rank];
  CHECK(got == want);
  for (const auto& c : m->apiCalls) CHECK(m->processes[m->threads[c.thread].process].rank == c.rank);
  // After alignment, matching NCCL kernels (same name, same occurrence) end within a few µs.
  std::map<int32_t, std::map<std::string, std::vector<int64_t>>> ends;
  for (const auto& o : m->gpuOps)
    if (o.kind == GpuOpKind::Kernel && m->str(o.name).find("nccl") != std::string_view::npos)
      ends[o.rank][std::string(m->str(o.name))].push_back(o.end);
  size_t pairs = 0;
  for (int32_t r = 1; r < 8; ++r)
    for (auto& [name, v] : ends[r]) {
      const auto& ref = ends[0][name];
      for (size_t i = 0; i < std::min(v.size(), ref.size()); ++i, ++pairs) CHECK(std::llabs(v[i] - ref[i]) < 200'000);
    }
  CHECK(pairs > 0);
  for (const auto& meth : m->meta.rankClockMethod) CHECK_FALSE(meth.empty());
}

TEST_CASE("rank clock alignment recovers injected offsets (synthetic Kineto ranks)") {
  kl::test::TempDir dir;
  // Four ranks run the same 6 collectives (2 names) that end together on a common clock;
  // each rank's clock is off by a known amount, plus a small per-event jitter.
  const int64_t offsetsUs[4] = {0, 5000, -3000, 123456};
  for (int r = 0; r < 4; ++r) {
    std::string ev;
    for (int i = 0; i < 6; ++i) {
      std::string name = i % 2 ? "ncclDevKernel_AllReduce_Sum_f32" : "ncclDevKernel_SendRecv";
      int64_t endUs = 1'000'000 + i * 1000 + ((r * 7 + i * 3) % 5) - 2;  // jitter in [-2, 2] µs
      int64_t startUs = endUs - 100 - r * 10 - i;                        // starts differ per rank
      startUs += offsetsUs[r];
      endUs += offsetsUs[r];
      ev += R"({"ph":"X","cat":"kernel","name":")" + name + R"(","pid":0,"tid":7,"ts":)" + std::to_string(startUs) +
            R"(,"dur":)" + std::to_string(endUs - startUs) + R"(,"args":{"device":0,"stream":7,"correlation":)" +
            std::to_string(10 + i) + "}},";
      ev += R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":)" +
            std::to_string(startUs - 50) + R"(,"dur":5,"args":{"correlation":)" + std::to_string(10 + i) + "}},";
    }
    ev.pop_back();
    kl::test::writeFile(dir / ("r" + std::to_string(r) + ".json"),
                        R"({"distributedInfo":{"rank":)" + std::to_string(r) + R"(},"traceEvents":[)" + ev + "]}");
  }
  auto m = readProfiles({dir.path()});
  REQUIRE(m.ok());
  for (size_t f = 0; f < m->meta.files.size(); ++f) {
    int32_t r = m->meta.fileRanks[f];
    CAPTURE(r);
    CHECK(std::llabs(m->meta.rankClockOffsetNs[f] + offsetsUs[r] * 1000) <= 2000);  // within the jitter
  }
  // The launch calls moved with their rank: the same launch now starts within ~50 µs on all ranks
  // (it was up to 126 ms apart before).
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& c : m->apiCalls)
    if (c.correlationId == 10) lo = std::min(lo, c.start), hi = std::max(hi, c.start);
  CHECK(hi - lo < 50'000);
  ReadOptions noAlign;
  noAlign.alignRanks = false;
  auto raw = readProfiles({dir.path()}, noAlign);
  REQUIRE(raw.ok());
  for (auto off : raw->meta.rankClockOffsetNs) CHECK(off == 0);
}

TEST_CASE("kineto real: autograd sequence numbers, Fwd thread id and fwdbwd flows on a DDP training step") {
  const char* rel = "hta_a100_nccl_2ranks_rank0.json.gz";
  auto t = parse(rel);
  auto m = load(rel);
  // Independent: cpu_ops carrying "Sequence number", those with "Fwd thread id" > 0 (backward
  // nodes), and the fwdbwd flow ends ("s" at the forward op, "f" at the node).
  size_t withSeq = 0, nodes = 0, flowS = 0, flowF = 0;
  std::set<int64_t> flowIds;
  for (const auto& e : t["traceEvents"]) {
    if (isX(e) && cat(e) == "cpu_op" && e.contains("args")) {
      const auto& a = e["args"];
      if (a.contains("Sequence number")) ++withSeq;
      if (a.value("Fwd thread id", 0) > 0) ++nodes;
    }
    if (cat(e) == "fwdbwd") {
      (e.value("ph", "") == "s" ? flowS : flowF) += 1;
      flowIds.insert(e["id"].get<int64_t>());
    }
  }
  REQUIRE(withSeq > 0);
  REQUIRE(flowS == flowF);
  size_t gotSeq = 0, gotNodes = 0, gotFlow = 0, flowAtNode = 0;
  std::set<int64_t> gotIds;
  for (const auto& r : m.ranges) {
    if (r.seq >= 0) ++gotSeq;
    if (r.backwardNode) ++gotNodes;
    if (r.fwdbwdFlow >= 0) {
      ++gotFlow;
      gotIds.insert(r.fwdbwdFlow);
      if (r.backwardNode) ++flowAtNode;
    }
  }
  CHECK(gotSeq == withSeq);
  CHECK(gotNodes == nodes);         // every flow end "f" sits on a node that has Fwd thread id > 0
  CHECK(gotFlow == flowS + flowF);  // each flow end bound to exactly one cpu_op
  CHECK(flowAtNode == flowF);
  CHECK(gotIds == flowIds);

  // Every backward launch (inside a node on the autograd thread) is linked to a forward op on
  // another thread; the forward op of a flow-carrying node is the flow's start.
  auto a = attribute(m);
  REQUIRE(a.ok());
  size_t backward = 0, linked = 0, otherThread = 0;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    const auto& o = a->op(i);
    if (o.pass == Pass::Forward) continue;
    ++backward;
    if (o.forwardOp == kNone) continue;
    ++linked;
    if (m.ranges[o.forwardOp].thread != m.apiCalls[o.launch].thread) ++otherThread;
    CHECK_FALSE(m.ranges[o.forwardOp].backwardNode);
  }
  CHECK(backward > 1000);
  CHECK(linked > backward / 2);
  CHECK(otherThread == linked);
}
