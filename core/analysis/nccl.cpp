#include "core/analysis/nccl.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/analysis/classify.h"
#include "core/analysis/intervals.h"

namespace kl::analysis {

NcclResult computeNccl(const View& v) {
  const auto& m = v.m;
  NcclResult r;
  std::map<DeviceKey, std::vector<Interval>> compute;
  std::vector<uint32_t> nccl;
  for (uint32_t i : v.ops) {
    const auto& op = m.gpuOps[i];
    if (op.kind == GpuOpKind::Memcpy || op.kind == GpuOpKind::Memset) continue;
    r.kernelNs += op.duration();
    if (classify(m, op) == OpClass::Nccl) nccl.push_back(i);
    else compute[deviceOf(op)].push_back({op.start, op.end});
  }
  std::map<DeviceKey, IntervalSet> cu;
  for (auto& [d, iv] : compute) cu[d] = unionOf(std::move(iv));
  std::map<std::string, NcclRow> rows;
  std::map<std::string, std::set<DeviceKey>> devs;
  for (uint32_t i : nccl) {
    const auto& op = m.gpuOps[i];
    std::string type = ncclCollective(m.str(op.name));
    auto& row = rows[type];
    if (row.count == 0) {
      row.type = type;
      row.minNs = row.maxNs = op.duration();
    }
    ++row.count;
    row.totalNs += op.duration();
    row.minNs = std::min(row.minNs, op.duration());
    row.maxNs = std::max(row.maxNs, op.duration());
    if (auto it = cu.find(deviceOf(op)); it != cu.end())
      row.overlappedNs += coveredLength(it->second, op.start, op.end);
    devs[type].insert(deviceOf(op));
    r.ncclNs += op.duration();
  }
  for (auto& [t, row] : rows) {
    row.devices = devs[t].size();
    r.types.push_back(row);
  }
  std::sort(r.types.begin(), r.types.end(), [](const NcclRow& a, const NcclRow& b) {
    return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.type < b.type;
  });
  std::unordered_map<StrId, NcclRangeRow> rr;
  for (const auto& rg : m.ranges) {
    if (!v.inWindow(rg.start) || rg.kind == profile::RangeKind::CpuOp) continue;
    std::string_view text = m.str(rg.text);
    bool ncclText = text.size() >= 4 && isNcclName(text.substr(0, 4));
    bool ncclDomain = rg.domain != profile::kEmptyStr && isNcclName(m.str(rg.domain));
    if (!ncclText && !ncclDomain) continue;
    auto& row = rr[rg.text];
    row.text = rg.text;
    ++row.count;
    row.totalNs += rg.end - rg.start;
  }
  for (auto& [k, row] : rr) r.ranges.push_back(row);
  std::sort(r.ranges.begin(), r.ranges.end(), [&](const NcclRangeRow& a, const NcclRangeRow& b) {
    return a.count != b.count ? a.count > b.count : m.str(a.text) < m.str(b.text);
  });
  return r;
}

void writeJson(json::Writer& w, const NcclResult& r, const ProfileModel& m) {
  w.beginObject()
      .field("nccl_ns", r.ncclNs)
      .field("kernel_ns", r.kernelNs)
      .field("nccl_share", r.kernelNs ? static_cast<double>(r.ncclNs) / static_cast<double>(r.kernelNs) : 0.0);
  w.key("collectives").beginArray();
  for (const auto& t : r.types) {
    w.beginObject()
        .field("type", t.type)
        .field("count", t.count)
        .field("total_ns", t.totalNs)
        .field("mean_ns", t.count ? static_cast<double>(t.totalNs) / static_cast<double>(t.count) : 0.0)
        .field("min_ns", t.minNs)
        .field("max_ns", t.maxNs)
        .field("overlapped_with_compute_ns", t.overlappedNs)
        .field("exposed_ns", t.totalNs - t.overlappedNs)
        .field("devices", t.devices)
        .endObject();
  }
  w.endArray();
  w.key("nvtx_ranges").beginArray();
  for (const auto& rg : r.ranges)
    w.beginObject().field("name", m.str(rg.text)).field("count", rg.count).field("total_ns", rg.totalNs).endObject();
  w.endArray().endObject();
}

}  // namespace kl::analysis
