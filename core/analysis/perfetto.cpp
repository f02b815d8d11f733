#include "core/analysis/perfetto.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/support/json_writer.h"

namespace kl::analysis {

std::string nsToUsText(int64_t ns) {
  bool neg = ns < 0;
  uint64_t a = neg ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  std::string frac = std::to_string(a % 1000);
  return (neg ? "-" : "") + std::to_string(a / 1000) + "." + std::string(3 - frac.size(), '0') + frac;
}

namespace {

enum class Src : uint8_t { Gpu, Api, Range, PyFrame };

struct Slice {
  int64_t start, end;
  uint32_t index;
  Src src;
};

/// Assigns slices (any order) to sub-tracks where they nest strictly; returns the lane of
/// each slice in `slices` order after sorting it by (start, end desc).
std::vector<uint32_t> assignLanes(std::vector<Slice>& slices, uint32_t& laneCount) {
  std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<std::vector<int64_t>> stacks;  // open slice ends per lane
  std::vector<uint32_t> lanes(slices.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    const auto& s = slices[i];
    uint32_t lane = 0;
    for (;; ++lane) {
      if (lane == stacks.size()) stacks.emplace_back();
      auto& st = stacks[lane];
      while (!st.empty() && st.back() <= s.start) st.pop_back();
      if (st.empty() || st.back() >= s.end) {
        st.push_back(s.end);
        break;
      }
    }
    lanes[i] = lane;
  }
  laneCount = static_cast<uint32_t>(std::max<size_t>(stacks.size(), 1));
  return lanes;
}

class TraceWriter {
 public:
  TraceWriter(std::ostream& out, const View& v) : w_(out), v_(v) {}

  void begin() { w_.beginObject().key("traceEvents").beginArray(); }

  void meta(const char* what, int64_t pid, int64_t tid, const std::string& name, int64_t sortIndex) {
    w_.beginObject().field("ph", "M").field("name", what).field("pid", pid);
    if (tid >= 0) w_.field("tid", tid);
    w_.key("args").beginObject();
    if (!name.empty())
      w_.field("name", name);
    else
      w_.field("sort_index", sortIndex);
    w_.endObject().endObject();
    ++stats.events;
  }

  void slice(int64_t pid, int64_t tid, const Slice& s) {
    const auto& m = v_.m;
    w_.beginObject();
    std::string_view name, cat;
    switch (s.src) {
      case Src::Gpu: {
        const auto& op = m.gpuOps[s.index];
        name = m.str(op.name);
        cat = opKindName(op.kind);
        break;
      }
      case Src::Api:
        name = m.str(m.apiCalls[s.index].name);
        cat = "cuda_api";
        break;
      case Src::Range: {
        const auto& rg = m.ranges[s.index];
        name = m.str(rg.text);
        cat = profile::rangeKindName(rg.kind);
        break;
      }
      case Src::PyFrame:
        name = m.str(m.pyFrames[s.index].name);
        cat = "python_function";
        break;
    }
    bool instant = s.end <= s.start;
    w_.field("name", name).field("cat", cat).field("ph", instant ? "i" : "X");
    w_.key("ts").raw(nsToUsText(v_.rel(s.start)));
    if (instant)
      w_.field("s", "t");
    else
      w_.key("dur").raw(nsToUsText(s.end - s.start));
    w_.field("pid", pid).field("tid", tid);
    w_.key("args").beginObject();
    switch (s.src) {
      case Src::Gpu: {
        const auto& op = m.gpuOps[s.index];
        if (op.correlationId >= 0) w_.field("correlation_id", op.correlationId);
        if (const auto* k = m.kernel(op)) {
          w_.field("grid",
                   std::to_string(k->grid[0]) + "," + std::to_string(k->grid[1]) + "," + std::to_string(k->grid[2]));
          w_.field("block",
                   std::to_string(k->block[0]) + "," + std::to_string(k->block[1]) + "," + std::to_string(k->block[2]));
        }
        if (op.kind == GpuOpKind::Memcpy && op.detail < m.memcpys.size())
          w_.field("bytes", m.memcpys[op.detail].bytes)
              .field("copy_kind", profile::copyKindName(m.memcpys[op.detail].copyKind));
        if (op.kind == GpuOpKind::Memset && op.detail < m.memsets.size()) w_.field("bytes", m.memsets[op.detail].bytes);
        if (v_.attr) {
          if (v_.attr->op(s.index).stackSize)
            w_.field("nvtx_path", v_.attr->path(m, s.index, " > "));
          else
            w_.field("unattributed", attribution::unattributedName(v_.attr->op(s.index).reason));
        }
        break;
      }
      case Src::Api:
        if (m.apiCalls[s.index].correlationId >= 0) w_.field("correlation_id", m.apiCalls[s.index].correlationId);
        break;
      case Src::Range: {
        const auto& rg = m.ranges[s.index];
        if (rg.domain != profile::kEmptyStr) w_.field("domain", m.str(rg.domain));
        if (rg.open) w_.field("open", true);
        break;
      }
      case Src::PyFrame: {
        const auto& f = m.pyFrames[s.index];
        if (f.file != profile::kEmptyStr) w_.field("file", m.str(f.file)).field("line", f.line);
        break;
      }
    }
    w_.endObject().endObject();
    ++stats.events;
  }

  void end() {
    w_.endArray();
    w_.key("otherData")
        .beginObject()
        .field("producer", "kernlens")
        .field("time_origin_ns", v_.origin)
        .field("emulated", v_.m.meta.emulated)
        .endObject();
    w_.endObject();
  }

  PerfettoStats stats;

 private:
  json::Writer w_;
  const View& v_;
};

}  // namespace

PerfettoStats writePerfetto(std::ostream& out, const View& v) {
  const auto& m = v.m;
  TraceWriter tw(out, v);
  tw.begin();
  // CPU side: slices per model thread.
  std::vector<std::vector<Slice>> perThread(m.threads.size());
  for (uint32_t i = 0; i < m.apiCalls.size(); ++i) {
    const auto& c = m.apiCalls[i];
    if (v.inWindow(c.start) && c.thread < m.threads.size())
      perThread[c.thread].push_back({c.start, c.end, i, Src::Api});
  }
  for (uint32_t i = 0; i < m.ranges.size(); ++i) {
    const auto& r = m.ranges[i];
    if (!v.inWindow(r.start)) continue;
    if (r.thread < m.threads.size()) perThread[r.thread].push_back({r.start, r.end, i, Src::Range});
  }
  for (uint32_t i = 0; i < m.pyFrames.size(); ++i) {
    const auto& f = m.pyFrames[i];
    if (v.inWindow(f.start) && f.thread < m.threads.size())
      perThread[f.thread].push_back({f.start, f.end, i, Src::PyFrame});
  }
  int64_t nextTid = 1;
  std::vector<int64_t> procPid(m.processes.size(), -1);
  for (size_t p = 0; p < m.processes.size(); ++p) {
    procPid[p] = static_cast<int64_t>(p) + 1;
    const auto& pr = m.processes[p];
    std::string name = (pr.name != profile::kEmptyStr ? std::string(m.str(pr.name)) : std::string("process")) +
                       " (pid " + std::to_string(pr.pid) +
                       (m.meta.numRanks > 1 ? ", rank " + std::to_string(pr.rank) : "") + ")";
    tw.meta("process_name", procPid[p], -1, name, 0);
    tw.meta("process_sort_index", procPid[p], -1, "", static_cast<int64_t>(p));
  }
  for (size_t t = 0; t < m.threads.size(); ++t) {
    auto& slices = perThread[t];
    if (slices.empty()) continue;
    const auto& th = m.threads[t];
    uint32_t laneCount = 0;
    auto lanes = assignLanes(slices, laneCount);
    std::vector<int64_t> tids(laneCount);
    std::string base = (th.name != profile::kEmptyStr ? std::string(m.str(th.name)) + " " : std::string()) + "tid " +
                       std::to_string(th.tid);
    for (uint32_t l = 0; l < laneCount; ++l) {
      tids[l] = nextTid++;
      tw.meta("thread_name", procPid[th.process], tids[l], l ? base + " (overlap " + std::to_string(l) + ")" : base, 0);
      tw.meta("thread_sort_index", procPid[th.process], tids[l], "", tids[l]);
      ++tw.stats.tracks;
      if (l) ++tw.stats.overlapTracks;
    }
    for (size_t i = 0; i < slices.size(); ++i) tw.slice(procPid[th.process], tids[lanes[i]], slices[i]);
  }
  // GPU side: one process per (rank, device), one track per stream (+ overlap tracks).
  std::map<DeviceKey, std::map<uint32_t, std::vector<Slice>>> gpu;
  for (uint32_t i : v.ops) {
    const auto& op = m.gpuOps[i];
    gpu[deviceOf(op)][op.streamId].push_back({op.start, op.end, i, Src::Gpu});
  }
  for (uint32_t i = 0; i < m.ranges.size(); ++i) {
    const auto& r = m.ranges[i];
    if (r.kind != profile::RangeKind::GpuUserAnnotation || !v.inWindow(r.start) || !v.deviceOk(r.deviceId)) continue;
    gpu[{r.rank, r.deviceId}][r.streamId].push_back({r.start, r.end, i, Src::Range});
  }
  int64_t nextPid = static_cast<int64_t>(m.processes.size()) + 1;
  for (auto& [dev, streams] : gpu) {
    int64_t pid = nextPid++;
    std::string gname;
    for (const auto& g : m.gpus)
      if (g.deviceId == dev.device && g.rank == dev.rank && g.name != profile::kEmptyStr)
        gname = std::string(m.str(g.name));
    tw.meta("process_name", pid, -1,
            "GPU " + std::to_string(dev.device) + (m.meta.numRanks > 1 ? " rank " + std::to_string(dev.rank) : "") +
                (gname.empty() ? "" : " (" + gname + ")"),
            0);
    tw.meta("process_sort_index", pid, -1, "", 1000 + pid);
    for (auto& [stream, slices] : streams) {
      uint32_t laneCount = 0;
      auto lanes = assignLanes(slices, laneCount);
      std::vector<int64_t> tids(laneCount);
      for (uint32_t l = 0; l < laneCount; ++l) {
        tids[l] = nextTid++;
        std::string n = "stream " + std::to_string(stream) + (l ? " (overlap " + std::to_string(l) + ")" : "");
        tw.meta("thread_name", pid, tids[l], n, 0);
        tw.meta("thread_sort_index", pid, tids[l], "", tids[l]);
        ++tw.stats.tracks;
        if (l) ++tw.stats.overlapTracks;
      }
      for (size_t i = 0; i < slices.size(); ++i) tw.slice(pid, tids[lanes[i]], slices[i]);
    }
  }
  tw.end();
  out << "\n";
  return tw.stats;
}

}  // namespace kl::analysis
