#include "core/analysis/diagnose.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/analysis/classify.h"
#include "core/analysis/gaps.h"
#include "core/analysis/intervals.h"
#include "core/analysis/iters.h"
#include "core/analysis/overlap.h"
#include "core/support/format.h"
#include "core/support/json_schema.h"
#include "core/support/saturating.h"

namespace kl::analysis {
namespace {

double frac(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

void ruleCpuBoundLaunch(const View& v, DiagnoseResult& r) {
  RuleCheck chk{"cpu_bound_launch", false, ""};
  if (!v.attr) {
    chk.measured = "skipped: needs launch calls (attribution)";
    r.checked.push_back(chk);
    return;
  }
  GapsOptions o;
  o.minGapNs = 10'000;
  o.top = SIZE_MAX;
  o.detail = 0;  // CPU activity only for the gaps shown as evidence (below)
  GapsResult g = computeGaps(v, o);
  int64_t active = 0;
  for (const auto& d : g.devices) addTo(active, d.spanNs);
  std::vector<const Gap*> starved;
  int64_t starvedNs = 0, allNs = 0;
  for (const auto& gap : g.top) {
    addTo(allNs, gap.length());
    if (gap.launchedDuringGap(v.m)) {
      starved.push_back(&gap);
      addTo(starvedNs, gap.length());
    }
  }
  double f = frac(starvedNs, active);
  chk.measured = "idle gaps >= 10 us waiting for a launch: " + formatDuration(static_cast<double>(starvedNs)) + " = " +
                 formatShare(f, ShareDigits::Table) + " of active GPU time span";
  chk.fired = f >= 0.05 && !starved.empty();
  r.checked.push_back(chk);
  if (!chk.fired) return;
  Finding fd;
  fd.id = chk.id;
  fd.severity = f >= 0.2 ? Severity::High : Severity::Medium;
  fd.title = "GPU idle while waiting for the CPU to launch work";
  fd.facts.push_back(std::to_string(g.top.size()) + " idle gaps of at least 10 µs total " +
                     formatDuration(static_cast<double>(allNs)) + " (" +
                     formatShare(frac(allNs, active), ShareDigits::Table) + " of the devices' active span of " +
                     formatDuration(static_cast<double>(active)) + ").");
  fd.facts.push_back("In " + std::to_string(starved.size()) + " of them (" +
                     formatDuration(static_cast<double>(starvedNs)) +
                     ") the launch call of the next GPU op returned only after the gap had begun: "
                     "no work was queued on the GPU during the gap.");
  fd.hypothesis =
      "The launching CPU thread is the bottleneck (framework/Python overhead between launches, or "
      "host work between steps); fewer, larger kernels, CUDA graphs or torch.compile usually help.";
  for (size_t i = 0; i < starved.size() && i < 5; ++i) {
    Gap gap = *starved[i];
    fillCpuActivity(v, gap);
    Evidence e;
    e.what = "gap";
    e.name = gap.after != kNone ? std::string(v.m.str(v.m.gpuOps[gap.after].name)) : "";
    e.start = gap.start;
    e.durationNs = gap.length();
    const auto& c = v.m.apiCalls[gap.afterLaunch];
    e.note = "rank " + std::to_string(gap.dev.rank) + " device " + std::to_string(gap.dev.device) +
             "; next op launched by " + std::string(v.m.str(c.name)) + " ending " +
             formatDuration(static_cast<double>(c.end - gap.start)) + " after the gap began";
    if (!gap.api.empty())
      e.note += "; CPU busiest in " + std::string(v.m.str(gap.api[0].name)) + " (" +
                formatDuration(static_cast<double>(gap.api[0].ns)) + ")";
    fd.evidence.push_back(e);
  }
  r.findings.push_back(fd);
}

void ruleNcclExposed(const View& v, DiagnoseResult& r) {
  RuleCheck chk{"nccl_exposed", false, ""};
  OverlapResult o = computeOverlap(v);
  int64_t nccl = 0, exposed = 0, active = 0;
  for (const auto& d : o.devices) {
    addTo(nccl, d.ncclNs);
    addTo(exposed, d.ncclExposedNs);
    addTo(active, d.activeSpanNs);
  }
  chk.measured = "NCCL time " + formatDuration(static_cast<double>(nccl)) + ", not overlapped with compute " +
                 formatDuration(static_cast<double>(exposed)) + " (" +
                 formatShare(frac(exposed, nccl), ShareDigits::Table) + ")";
  chk.fired = nccl > 0 && frac(exposed, nccl) > 0.5 && frac(exposed, active) >= 0.01;
  r.checked.push_back(chk);
  if (!chk.fired) return;
  Finding fd;
  fd.id = chk.id;
  fd.severity = frac(exposed, active) >= 0.1 ? Severity::High : Severity::Medium;
  fd.title = "NCCL communication not overlapped with compute";
  for (const auto& d : o.devices) {
    if (!d.ncclNs) continue;
    fd.facts.push_back("rank " + std::to_string(d.dev.rank) + " device " + std::to_string(d.dev.device) +
                       ": NCCL kernels busy " + formatDuration(static_cast<double>(d.ncclNs)) + ", of which " +
                       formatDuration(static_cast<double>(d.ncclExposedNs)) + " (" +
                       formatShare(frac(d.ncclExposedNs, d.ncclNs), ShareDigits::Table) +
                       ") ran with no compute kernel "
                       "running on the same GPU; that is " +
                       formatShare(frac(d.ncclExposedNs, d.activeSpanNs), ShareDigits::Table) + " of its active span.");
  }
  fd.hypothesis =
      "Communication sits on the critical path: collectives are issued after the compute they "
      "could overlap with (e.g. gradient buckets not overlapped with backward, or a blocking "
      "wait on the compute stream).";
  // Largest exposed NCCL ops as evidence.
  std::map<DeviceKey, std::vector<Interval>> comp;
  for (uint32_t i : v.ops)
    if (classify(v.m, v.m.gpuOps[i]) == OpClass::Compute)
      comp[deviceOf(v.m.gpuOps[i])].push_back({v.m.gpuOps[i].start, v.m.gpuOps[i].end});
  std::map<DeviceKey, IntervalSet> cu;
  for (auto& [d, iv] : comp) cu[d] = unionOf(std::move(iv));
  std::vector<std::pair<int64_t, uint32_t>> ex;
  for (uint32_t i : v.ops) {
    const auto& op = v.m.gpuOps[i];
    if (classify(v.m, op) != OpClass::Nccl) continue;
    auto it = cu.find(deviceOf(op));
    int64_t covered = it == cu.end() ? 0 : coveredLength(it->second, op.start, op.end);
    ex.push_back({op.duration() - covered, i});
  }
  std::sort(ex.begin(), ex.end(),
            [](auto& a, auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (size_t k = 0; k < ex.size() && k < 5; ++k) {
    const auto& op = v.m.gpuOps[ex[k].second];
    fd.evidence.push_back({"kernel", std::string(v.m.str(op.name)), op.start, op.duration(),
                           formatDuration(static_cast<double>(ex[k].first)) + " not overlapped; rank " +
                               std::to_string(op.rank) + " device " + std::to_string(op.deviceId) + " stream " +
                               std::to_string(op.streamId)});
  }
  r.findings.push_back(fd);
}

void ruleLaunchBoundTiny(const View& v, DiagnoseResult& r) {
  RuleCheck chk{"launch_bound_tiny", false, ""};
  if (!v.attr) {
    chk.measured = "skipped: needs launch calls (attribution)";
    r.checked.push_back(chk);
    return;
  }
  struct Acc {
    uint64_t n = 0;
    int64_t gpu = 0, api = 0;
    int64_t firstStart = 0;
  };
  std::unordered_map<StrId, Acc> tiny;
  uint64_t launched = 0, tinyCount = 0;
  int64_t tinyGpu = 0, tinyApi = 0;
  for (uint32_t i : v.ops) {
    const auto& op = v.m.gpuOps[i];
    uint32_t c = v.attr->op(i).launch;
    if (op.kind != GpuOpKind::Kernel || c == kNone) continue;
    ++launched;
    int64_t api = v.m.apiCalls[c].end - v.m.apiCalls[c].start;
    if (op.duration() >= api) continue;
    ++tinyCount;
    addTo(tinyGpu, op.duration());
    addTo(tinyApi, api);
    auto& a = tiny[op.name];
    if (a.n == 0) a.firstStart = op.start;
    ++a.n;
    addTo(a.gpu, op.duration());
    addTo(a.api, api);
  }
  chk.measured =
      std::to_string(tinyCount) + " of " + std::to_string(launched) +
      " launched kernels ran shorter than their launch call (" +
      formatShare(frac(static_cast<int64_t>(tinyCount), static_cast<int64_t>(launched)), ShareDigits::Table) + ")";
  chk.fired = tinyCount >= 20 && frac(static_cast<int64_t>(tinyCount), static_cast<int64_t>(launched)) >= 0.3;
  r.checked.push_back(chk);
  if (!chk.fired) return;
  Finding fd;
  fd.id = chk.id;
  fd.severity = Severity::Medium;
  fd.title = "Many kernels are shorter than their own launch call (launch-bound)";
  fd.facts.push_back(std::to_string(tinyCount) + " of " + std::to_string(launched) +
                     " kernels with a launch call ran for less time on the GPU than the CPU spent "
                     "in the call that launched them: " +
                     formatDuration(static_cast<double>(tinyGpu)) + " of GPU time for " +
                     formatDuration(static_cast<double>(tinyApi)) + " of launch calls.");
  fd.hypothesis =
      "Throughput is limited by launch rate rather than GPU work; fusing these small kernels "
      "(torch.compile, fused optimizers) or capturing them in a CUDA graph would cut the overhead.";
  std::vector<std::pair<StrId, Acc>> rows(tiny.begin(), tiny.end());
  std::sort(rows.begin(), rows.end(), [&](auto& a, auto& b) {
    return a.second.n != b.second.n ? a.second.n > b.second.n : v.m.str(a.first) < v.m.str(b.first);
  });
  for (size_t k = 0; k < rows.size() && k < 5; ++k) {
    const auto& [name, a] = rows[k];
    double n = static_cast<double>(a.n);
    fd.evidence.push_back({"kernel", std::string(v.m.str(name)), a.firstStart, a.gpu,
                           std::to_string(a.n) + " launches, mean " + formatDuration(static_cast<double>(a.gpu) / n) +
                               " on GPU vs mean launch call " + formatDuration(static_cast<double>(a.api) / n) +
                               " (start = first occurrence)"});
  }
  r.findings.push_back(fd);
}

void ruleHostCopies(const View& v, DiagnoseResult& r) {
  RuleCheck chk{"host_copies_in_step", false, ""};
  ItersResult it = computeIters(v);
  bool steps = it.method == IterMethod::Nvtx && !it.iterations.empty();
  IntervalSet stepIv;
  if (steps) {
    std::vector<Interval> x;
    for (const auto& i : it.iterations) x.push_back({i.start, i.end});
    stepIv = unionOf(std::move(x));
  }
  std::vector<uint32_t> copies;
  int64_t bytes = 0, ns = 0;
  uint64_t pageable = 0;
  for (uint32_t i : v.ops) {
    const auto& op = v.m.gpuOps[i];
    if (op.kind != GpuOpKind::Memcpy || op.detail >= v.m.memcpys.size()) continue;
    const auto& d = v.m.memcpys[op.detail];
    if (d.copyKind != 1 && d.copyKind != 2) continue;
    if (steps) {
      // Inside a step: the launch call (or, without one, the copy itself) lies in a step range.
      uint32_t c = v.attr ? v.attr->op(i).launch : kNone;
      int64_t t = c != kNone ? v.m.apiCalls[c].start : op.start;
      if (coveredLength(stepIv, t, t + 1) == 0) continue;
    }
    copies.push_back(i);
    addTo(bytes, d.bytes);
    addTo(ns, op.duration());
    uint8_t host = d.copyKind == 1 ? d.srcKind : d.dstKind;
    if (host == 0) ++pageable;
  }
  chk.measured = std::to_string(copies.size()) + " host<->device copies " +
                 (steps ? "inside detected steps" : "(no step ranges found; whole window)");
  chk.fired = !copies.empty();
  r.checked.push_back(chk);
  if (!chk.fired) return;
  Finding fd;
  fd.id = chk.id;
  fd.severity = pageable ? Severity::Medium : Severity::Low;
  fd.title = steps ? "Host-device copies inside the training/inference step"
                   : "Host-device copies (no step ranges found to place them)";
  fd.facts.push_back(
      std::to_string(copies.size()) + " HtoD/DtoH copies moved " + formatBytes(static_cast<double>(bytes)) + " in " +
      formatDuration(static_cast<double>(ns)) + " of GPU time" +
      (steps ? " inside " + std::to_string(it.iterations.size()) + " step ranges (" + it.detail + ")." : "."));
  if (pageable)
    fd.facts.push_back(std::to_string(pageable) + " of them use pageable host memory (staged by the driver).");
  fd.hypothesis =
      "Copies inside the step often mean .item()/.cpu()/print of a tensor or input data moved "
      "without pinned memory; they may force a synchronisation and stall the launch queue.";
  std::vector<uint32_t> top = copies;
  std::sort(top.begin(), top.end(), [&](uint32_t a, uint32_t b) {
    auto da = v.m.gpuOps[a].duration(), db = v.m.gpuOps[b].duration();
    return da != db ? da > db : a < b;
  });
  for (size_t k = 0; k < top.size() && k < 5; ++k) {
    const auto& op = v.m.gpuOps[top[k]];
    const auto& d = v.m.memcpys[op.detail];
    std::string note = formatBytes(static_cast<double>(d.bytes));
    if (v.attr) {
      uint32_t in = v.attr->innermost(top[k]);
      if (in != kNone) note += "; launched inside '" + std::string(v.m.str(v.m.ranges[in].text)) + "'";
    }
    fd.evidence.push_back({"memcpy", std::string(v.m.str(op.name)), op.start, op.duration(), note});
  }
  r.findings.push_back(fd);
}

void ruleExcessiveSync(const View& v, DiagnoseResult& r) {
  RuleCheck chk{"excessive_sync", false, ""};
  std::unordered_map<uint32_t, std::pair<uint64_t, int64_t>> perThread;
  std::vector<uint32_t> calls;
  for (uint32_t i = 0; i < v.m.apiCalls.size(); ++i) {
    const auto& c = v.m.apiCalls[i];
    if (c.role != profile::ApiRole::Sync || !v.inWindow(c.start)) continue;
    auto& p = perThread[c.thread];
    ++p.first;
    addTo(p.second, c.end - c.start);
    calls.push_back(i);
  }
  uint32_t worst = kNone;
  for (const auto& [t, p] : perThread)
    if (worst == kNone || p.second > perThread[worst].second || (p.second == perThread[worst].second && t < worst))
      worst = t;
  int64_t window = std::min(v.winEnd, v.m.meta.spanEnd) - v.winStart;
  auto wp = worst == kNone ? std::pair<uint64_t, int64_t>{0, 0} : perThread[worst];
  chk.measured = std::to_string(calls.size()) + " synchronising calls; busiest thread spent " +
                 formatDuration(static_cast<double>(wp.second)) + " (" +
                 formatShare(frac(wp.second, window), ShareDigits::Table) + " of the window) in " +
                 std::to_string(wp.first);
  chk.fired = wp.first >= 10 && frac(wp.second, window) >= 0.05;
  r.checked.push_back(chk);
  if (!chk.fired) return;
  const auto& th = v.m.threads[worst];
  Finding fd;
  fd.id = chk.id;
  fd.severity = frac(wp.second, window) >= 0.2 ? Severity::High : Severity::Medium;
  fd.title = "Frequent synchronisation between CPU and GPU";
  fd.facts.push_back("Thread " + std::to_string(th.tid) + " (pid " + std::to_string(v.m.processes[th.process].pid) +
                     ") made " + std::to_string(wp.first) + " synchronising CUDA calls taking " +
                     formatDuration(static_cast<double>(wp.second)) + ", " +
                     formatShare(frac(wp.second, window), ShareDigits::Table) + " of the analysed window.");
  std::map<std::string, std::pair<uint64_t, int64_t>> byName;
  for (uint32_t i : calls) {
    auto& b = byName[std::string(v.m.str(v.m.apiCalls[i].name))];
    ++b.first;
    addTo(b.second, v.m.apiCalls[i].end - v.m.apiCalls[i].start);
  }
  for (const auto& [n, b] : byName)
    fd.facts.push_back(n + ": " + std::to_string(b.first) + " calls, " + formatDuration(static_cast<double>(b.second)) +
                       ".");
  fd.hypothesis =
      "While the CPU blocks in these calls it cannot queue more work; explicit synchronize "
      "calls, .item()/.cpu() or blocking copies in the loop are the usual cause.";
  std::sort(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) {
    auto da = v.m.apiCalls[a].end - v.m.apiCalls[a].start, db = v.m.apiCalls[b].end - v.m.apiCalls[b].start;
    return da != db ? da > db : a < b;
  });
  for (size_t k = 0; k < calls.size() && k < 5; ++k) {
    const auto& c = v.m.apiCalls[calls[k]];
    fd.evidence.push_back({"api call", std::string(v.m.str(c.name)), c.start, c.end - c.start,
                           "thread " + std::to_string(v.m.threads[c.thread].tid)});
  }
  r.findings.push_back(fd);
}

}  // namespace

const char* severityName(Severity s) {
  switch (s) {
    case Severity::High: return "high";
    case Severity::Medium: return "medium";
    case Severity::Low: return "low";
  }
  return "medium";
}

DiagnoseResult computeDiagnose(const View& v) {
  DiagnoseResult r;
  r.emulated = v.m.meta.emulated;
  r.haveAttribution = v.attr != nullptr;
  ruleCpuBoundLaunch(v, r);
  ruleNcclExposed(v, r);
  ruleLaunchBoundTiny(v, r);
  ruleHostCopies(v, r);
  ruleExcessiveSync(v, r);
  std::stable_sort(r.findings.begin(), r.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity < b.severity; });
  return r;
}

void writeJson(json::Writer& w, const DiagnoseResult& r, const View& v) {
  w.beginObject().field("schema", json_schema::kDiagnose).field("emulated", r.emulated).key("findings").beginArray();
  for (const auto& f : r.findings) {
    w.beginObject().field("id", f.id).field("severity", severityName(f.severity)).field("title", f.title);
    w.key("facts").beginArray();
    for (const auto& s : f.facts) w.value(s);
    w.endArray();
    w.field("hypothesis", f.hypothesis);
    w.key("evidence").beginArray();
    for (const auto& e : f.evidence) {
      w.beginObject().field("what", e.what).field("name", e.name);
      if (e.start >= 0) w.field("start_ns", v.rel(e.start));
      w.field("duration_ns", e.durationNs).field("note", e.note).endObject();
    }
    w.endArray().endObject();
  }
  w.endArray().key("checked").beginArray();
  for (const auto& c : r.checked)
    w.beginObject().field("rule", c.id).field("fired", c.fired).field("measured", c.measured).endObject();
  w.endArray().endObject();
}

}  // namespace kl::analysis
