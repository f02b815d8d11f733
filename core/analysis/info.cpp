#include "core/analysis/info.h"

#include <set>
#include <unordered_set>

namespace kl::analysis {

InfoResult computeInfo(const View& v) {
  const auto& m = v.m;
  InfoResult r;
  r.format = profile::sourceFormatName(m.meta.format);
  r.toolVersion = m.meta.toolVersion;
  r.schemaVersion = m.meta.schemaVersion;
  r.emulated = m.meta.emulated;
  r.files = m.meta.files;
  r.ranks = m.meta.numRanks;
  r.spanNs = m.meta.spanEnd - m.meta.spanStart;
  r.windowStartRel = v.rel(v.winStart);
  r.windowEndRel = std::min(v.rel(v.winEnd), r.spanNs);
  for (const auto& g : m.gpus)
    if (v.deviceOk(g.deviceId)) r.gpus.push_back(g);
  r.processes = m.processes.size();
  r.threads = m.threads.size();
  std::set<StreamKey> streams;
  std::set<DeviceKey> devices;
  std::unordered_set<StrId> names;
  for (uint32_t i : v.ops) {
    const auto& op = m.gpuOps[i];
    streams.insert(streamOf(op));
    devices.insert(deviceOf(op));
    switch (op.kind) {
      case GpuOpKind::Kernel:
        ++r.kernels;
        names.insert(op.name);
        break;
      case GpuOpKind::Memcpy: ++r.memcpys; break;
      case GpuOpKind::Memset: ++r.memsets; break;
      case GpuOpKind::Graph: ++r.graphs; break;
    }
    if (v.attr) {
      switch (v.attr->op(i).reason) {
        case attribution::Unattributed::None: ++r.attributed; break;
        case attribution::Unattributed::NoLaunchCall: ++r.noLaunchCall; break;
        case attribution::Unattributed::OutsideRanges: ++r.outsideRanges; break;
      }
    }
  }
  r.haveAttribution = v.attr != nullptr;
  r.streams = streams.size();
  r.devicesWithOps = devices.size();
  r.distinctKernelNames = names.size();
  for (const auto& c : m.apiCalls) {
    if (!v.inWindow(c.start)) continue;
    ++r.apiCalls;
    if (c.role == profile::ApiRole::Launch || c.role == profile::ApiRole::GraphLaunch) ++r.launchCalls;
    if (c.role == profile::ApiRole::Sync) ++r.syncCalls;
  }
  for (const auto& rg : m.ranges) {
    if (!v.inWindow(rg.start)) continue;
    switch (rg.kind) {
      case profile::RangeKind::NvtxPushPop:
      case profile::RangeKind::NvtxStartEnd: ++r.nvtxRanges; break;
      case profile::RangeKind::NvtxMark: ++r.nvtxMarks; break;
      case profile::RangeKind::UserAnnotation:
      case profile::RangeKind::GpuUserAnnotation: ++r.annotations; break;
      case profile::RangeKind::CpuOp: ++r.cpuOps; break;
    }
  }
  for (const auto& f : m.pyFrames)
    if (v.inWindow(f.start)) ++r.pyFrames;
  r.rankClockOffsetNs = m.meta.rankClockOffsetNs;
  r.rankClockMethod = m.meta.rankClockMethod;
  r.warnings = m.meta.warnings;
  if (m.meta.skippedRows.count) r.warnings.push_back(m.meta.skippedRows.warning());
  return r;
}

void writeJson(json::Writer& w, const InfoResult& r, const ProfileModel& m) {
  w.beginObject()
      .field("format", r.format)
      .field("tool_version", r.toolVersion)
      .field("schema_version", r.schemaVersion)
      .field("emulated", r.emulated);
  w.key("files").beginArray();
  for (const auto& f : r.files) w.value(f);
  w.endArray();
  w.field("ranks", r.ranks)
      .field("span_ns", r.spanNs)
      .field("window_start_ns", r.windowStartRel)
      .field("window_end_ns", r.windowEndRel);
  w.key("gpus").beginArray();
  for (const auto& g : r.gpus) {
    w.beginObject()
        .field("device", g.deviceId)
        .field("rank", g.rank)
        .field("name", m.str(g.name))
        .field("sm_count", g.smCount)
        .field("memory_bytes", g.memoryBytes)
        .field("compute_capability",
               g.computeMajor ? std::to_string(g.computeMajor) + "." + std::to_string(g.computeMinor) : std::string())
        .field("clock_hz", g.clockRateHz)
        .endObject();
  }
  w.endArray();
  w.key("counts")
      .beginObject()
      .field("processes", r.processes)
      .field("threads", r.threads)
      .field("devices_with_ops", r.devicesWithOps)
      .field("streams", r.streams)
      .field("kernels", r.kernels)
      .field("distinct_kernel_names", r.distinctKernelNames)
      .field("memcpys", r.memcpys)
      .field("memsets", r.memsets)
      .field("graph_launches", r.graphs)
      .field("api_calls", r.apiCalls)
      .field("launch_calls", r.launchCalls)
      .field("sync_calls", r.syncCalls)
      .field("nvtx_ranges", r.nvtxRanges)
      .field("nvtx_marks", r.nvtxMarks)
      .field("annotations", r.annotations)
      .field("cpu_ops", r.cpuOps)
      .field("python_frames", r.pyFrames)
      .endObject();
  if (r.haveAttribution) {
    w.key("attribution")
        .beginObject()
        .field("attributed", r.attributed)
        .field("no_launch_call", r.noLaunchCall)
        .field("outside_ranges", r.outsideRanges)
        .endObject();
  }
  w.key("rank_clocks").beginArray();
  for (size_t i = 0; i < r.rankClockOffsetNs.size(); ++i) {
    w.beginObject().field("rank", i).field("offset_ns", r.rankClockOffsetNs[i]);
    w.field("method", i < r.rankClockMethod.size() ? r.rankClockMethod[i] : std::string());
    w.endObject();
  }
  w.endArray();
  w.key("warnings").beginArray();
  for (const auto& s : r.warnings) w.value(s);
  w.endArray();
  w.endObject();
}

}  // namespace kl::analysis
