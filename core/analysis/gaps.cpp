#include "core/analysis/gaps.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/support/saturating.h"

namespace kl::analysis {
namespace {

struct LaneAcc {
  std::vector<uint32_t> ops;  // start order
};

/// Scans one lane; appends gaps >= minGap to `gaps`.
GapLane scanLane(const View& v, DeviceKey dev, std::optional<uint32_t> stream, const std::vector<uint32_t>& ops,
                 int64_t minGap, std::vector<Gap>& gaps) {
  GapLane lane;
  lane.dev = dev;
  lane.stream = stream;
  lane.ops = ops.size();
  if (ops.empty()) return lane;
  const auto& g = v.m.gpuOps;
  int64_t curStart = g[ops[0]].start, maxEnd = g[ops[0]].end;
  uint32_t maxEndOp = ops[0];
  int64_t first = curStart;
  for (size_t k = 1; k < ops.size(); ++k) {
    const auto& op = g[ops[k]];
    if (op.start > maxEnd) {
      lane.busyNs += std::min(maxEnd, v.winEnd) - curStart;
      int64_t len = op.start - maxEnd;
      if (len >= minGap) {
        ++lane.gapCount;
        addTo(lane.gapNs, len);
        Gap gap;
        gap.dev = dev;
        gap.stream = stream;
        gap.start = maxEnd;
        gap.end = op.start;
        gap.before = maxEndOp;
        gap.after = ops[k];
        gaps.push_back(gap);
      }
      curStart = op.start;
    }
    if (op.end > maxEnd) {
      maxEnd = op.end;
      maxEndOp = ops[k];
    }
  }
  lane.busyNs += std::min(maxEnd, v.winEnd) - curStart;
  lane.spanNs = std::min(maxEnd, v.winEnd) - first;
  lane.idleNs = lane.spanNs - lane.busyNs;
  return lane;
}

void sortNameTimes(std::vector<NameTime>& v, const ProfileModel& m, size_t keep) {
  std::sort(v.begin(), v.end(), [&](const NameTime& a, const NameTime& b) {
    return a.ns != b.ns ? a.ns > b.ns : m.str(a.name) < m.str(b.name);
  });
  if (v.size() > keep) v.resize(keep);
}

}  // namespace

bool Gap::launchedDuringGap(const ProfileModel& m) const {
  return afterLaunch != kNone && m.apiCalls[afterLaunch].end > start;
}

GapsResult computeGaps(const View& v, const GapsOptions& o) {
  const auto& m = v.m;
  GapsResult r;
  r.opts = o;
  std::map<DeviceKey, std::vector<uint32_t>> devOps;
  std::map<StreamKey, std::vector<uint32_t>> streamOps;
  for (uint32_t i : v.ops) {
    const auto& op = m.gpuOps[i];
    devOps[deviceOf(op)].push_back(i);
    streamOps[streamOf(op)].push_back(i);
  }
  std::vector<Gap> devGaps, streamGaps;
  for (const auto& [dev, ops] : devOps) r.devices.push_back(scanLane(v, dev, std::nullopt, ops, o.minGapNs, devGaps));
  for (const auto& [key, ops] : streamOps)
    r.streams.push_back(scanLane(v, key.dev(), key.stream, ops, o.minGapNs, streamGaps));

  std::vector<Gap>& gaps = o.perStream ? streamGaps : devGaps;
  std::stable_sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) {
    return a.length() != b.length() ? a.length() > b.length() : a.start < b.start;
  });
  if (gaps.size() > o.top) gaps.resize(o.top);

  for (size_t i = 0; i < gaps.size(); ++i) {
    auto& gap = gaps[i];
    if (v.attr && gap.after != kNone) gap.afterLaunch = v.attr->op(gap.after).launch;
    if (i < o.detail) fillCpuActivity(v, gap);
  }
  r.top = std::move(gaps);
  return r;
}

void fillCpuActivity(const View& v, Gap& gap) {
  const auto& m = v.m;
  // The processes whose ops ran on this lane's device (any op in scope).
  std::set<uint32_t> procs;
  for (uint32_t i : v.ops) {
    const auto& op = m.gpuOps[i];
    if (deviceOf(op) == gap.dev && op.process != kNone) procs.insert(op.process);
  }
  auto procOk = [&](uint32_t thread) {
    return thread != kNone && thread < m.threads.size() && procs.count(m.threads[thread].process);
  };
  int64_t maxApiDur = 0;
  for (const auto& c : m.apiCalls) maxApiDur = std::max(maxApiDur, c.end - c.start);
  std::unordered_map<StrId, NameTime> api, ranges;
  auto lo = std::lower_bound(m.apiCalls.begin(), m.apiCalls.end(), gap.start - maxApiDur,
                             [](const profile::ApiCall& c, int64_t t) { return c.start < t; });
  for (auto it = lo; it != m.apiCalls.end() && it->start < gap.end; ++it) {
    if (it->end <= gap.start || !procOk(it->thread)) continue;
    auto& nt = api[it->name];
    nt.name = it->name;
    ++nt.count;
    nt.ns += std::min(it->end, gap.end) - std::max(it->start, gap.start);
  }
  for (const auto& rg : m.ranges) {
    if (rg.start >= gap.end) break;  // ranges are sorted by start
    if (rg.end <= gap.start || rg.kind == profile::RangeKind::NvtxMark || !procOk(rg.thread)) continue;
    auto& nt = ranges[rg.text];
    nt.name = rg.text;
    ++nt.count;
    nt.ns += std::min(rg.end, gap.end) - std::max(rg.start, gap.start);
  }
  gap.api.clear();
  gap.ranges.clear();
  for (auto& [k, nt] : api) gap.api.push_back(nt);
  for (auto& [k, nt] : ranges) gap.ranges.push_back(nt);
  sortNameTimes(gap.api, m, 5);
  sortNameTimes(gap.ranges, m, 5);
}

void writeJson(json::Writer& w, const GapsResult& r, const View& v) {
  const auto& m = v.m;
  auto lanes = [&](const char* key, const std::vector<GapLane>& ls) {
    w.key(key).beginArray();
    for (const auto& l : ls) {
      w.beginObject().field("rank", l.dev.rank).field("device", l.dev.device);
      if (l.stream) w.field("stream", *l.stream);
      w.field("ops", l.ops)
          .field("span_ns", l.spanNs)
          .field("busy_ns", l.busyNs)
          .field("idle_ns", l.idleNs)
          .field("gap_count", l.gapCount)
          .field("gap_ns", l.gapNs)
          .endObject();
    }
    w.endArray();
  };
  auto nameTimes = [&](const char* key, const std::vector<NameTime>& ns) {
    w.key(key).beginArray();
    for (const auto& nt : ns)
      w.beginObject().field("name", m.str(nt.name)).field("count", nt.count).field("ns", nt.ns).endObject();
    w.endArray();
  };
  w.beginObject().field("min_gap_ns", r.opts.minGapNs).field("per_stream", r.opts.perStream);
  lanes("devices", r.devices);
  lanes("streams", r.streams);
  w.key("gaps").beginArray();
  for (const auto& g : r.top) {
    w.beginObject().field("rank", g.dev.rank).field("device", g.dev.device);
    if (g.stream) w.field("stream", *g.stream);
    w.field("start_ns", v.rel(g.start)).field("end_ns", v.rel(g.end)).field("duration_ns", g.length());
    w.field("before", g.before != kNone ? m.str(m.gpuOps[g.before].name) : std::string_view());
    w.field("after", g.after != kNone ? m.str(m.gpuOps[g.after].name) : std::string_view());
    if (g.afterLaunch != kNone) {
      const auto& c = m.apiCalls[g.afterLaunch];
      w.key("after_launch")
          .beginObject()
          .field("name", m.str(c.name))
          .field("start_ns", v.rel(c.start))
          .field("end_ns", v.rel(c.end))
          .field("during_gap", g.launchedDuringGap(m))
          .endObject();
    }
    nameTimes("cpu_api", g.api);
    nameTimes("cpu_ranges", g.ranges);
    w.endObject();
  }
  w.endArray().endObject();
}

}  // namespace kl::analysis
