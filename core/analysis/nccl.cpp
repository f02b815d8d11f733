#include "core/analysis/nccl.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/analysis/callsite.h"
#include "core/analysis/classify.h"
#include "core/analysis/flops.h"
#include "core/analysis/gpu_peaks.h"
#include "core/analysis/intervals.h"
#include "core/support/json_schema.h"
#include "core/support/saturating.h"

namespace kl::analysis {

namespace {

std::string lowerOf(std::string_view s) {
  std::string o(s);
  for (auto& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

/// What one NCCL kernel launch moved: its collective type, algorithm, protocol, element type,
/// payload bytes (-1: unknown) and where they came from, its ranks and process group.
struct Collective {
  std::string type, algo, proto, dtype, source, group;
  int64_t bytes = -1;
  int32_t n = 0;
};

/// The launch's payload from its "nccl:..." annotation (the innermost range around its launch, with
/// Input Dims), when the kernel carries no collective arguments of its own. Returns the
/// annotation's collective name, lower-case ("" when the range is not one).
std::string fromAnnotation(const ProfileModel& m, const CallSite& s, const profile::KernelDetail* k, Collective& c) {
  if (s.innerRange == kNone) return "";
  const auto& rg = m.ranges[s.innerRange];
  std::string_view t = m.str(rg.text);
  if (!t.starts_with("nccl:")) return "";
  std::string annotated = lowerOf(t.substr(5));
  if (rg.shapes != profile::kEmptyStr && (!k || k->collective == kNone)) {
    auto sh = parseShapes(m.str(rg.shapes));
    if (!sh.dims.empty() && !sh.dims[0].empty()) {
      int64_t ne = 1;
      for (auto d : sh.dims[0]) ne = d < 0 ? -1 : ne < 0 ? ne : mulSat(ne, d);
      c.dtype = sh.types.empty() ? "" : sh.types[0];
      if (int b = dtypeBytes(c.dtype); b > 0 && ne >= 0) {
        c.bytes = mulSat(ne, b);
        c.source = "annotation";
      }
    }
  }
  return annotated;
}

/// NCCL kernel i: its type and algorithm from its name, its payload from its collective arguments
/// (Kineto) or else from the annotation around its launch (`site`, null without a launch); an
/// annotation or collective name saying all-to-all makes it AllToAll; ranks default to the
/// profile's rank count.
Collective describeCollective(const ProfileModel& m, uint32_t i, const CallSite* site) {
  const auto& op = m.gpuOps[i];
  std::string_view kname = m.str(op.name);
  Collective c;
  c.type = ncclCollective(kname);
  ncclAlgoProto(kname, c.algo, c.proto);
  const auto* k = m.kernel(op);
  std::string annotated = site ? fromAnnotation(m, *site, k, c) : "";
  if (k && k->collective != kNone && k->collective < m.collectives.size()) {
    const auto& cd = m.collectives[k->collective];
    c.dtype = std::string(m.str(cd.dtype));
    c.n = cd.groupSize;
    c.group = std::string(m.str(cd.processGroup));
    if (annotated.empty()) annotated = lowerOf(m.str(cd.name));
    int b = dtypeBytes(c.dtype);
    int64_t ne = c.type == "AllGather" ? cd.outNelems : cd.inNelems;
    if (b > 0 && ne >= 0) {
      c.bytes = mulSat(ne, b);
      c.source = "kernel-args";
    }
  }
  if (annotated.find("all_to_all") != std::string::npos || annotated.find("alltoall") != std::string::npos)
    c.type = "AllToAll";
  if (c.n == 0 && m.meta.numRanks > 1) c.n = m.meta.numRanks;
  return c;
}

/// Straggler calls and ranks: per (process group, type) seen on two or more ranks, the idx-th call
/// of each rank is one call; its skew is the spread of their starts, the last rank caused it and
/// every rank waited for it.
void stragglers(std::map<std::pair<std::string, std::string>, std::map<int32_t, std::vector<int64_t>>>& arrivals,
                NcclResult& r) {
  std::map<int32_t, NcclStragglerRank> ranks;
  for (auto& [key, byRank] : arrivals) {
    if (byRank.size() < 2) continue;
    size_t most = 0;
    for (auto& [rk, starts] : byRank) {
      std::sort(starts.begin(), starts.end());
      most = std::max(most, starts.size());
    }
    for (size_t idx = 0; idx < most; ++idx) {
      NcclStragglerCall c;
      c.type = key.second;
      c.processGroup = key.first;
      c.index = idx;
      int64_t first = INT64_MAX, last = INT64_MIN;
      for (auto& [rk, starts] : byRank) {
        if (idx >= starts.size()) continue;
        ++c.ranks;
        if (starts[idx] < first) {
          first = starts[idx];
          c.firstRank = rk;
        }
        if (starts[idx] > last) {
          last = starts[idx];
          c.lastRank = rk;
        }
      }
      if (c.ranks < 2) continue;
      c.skewNs = last - first;
      c.start = first;
      for (auto& [rk, starts] : byRank) {
        if (idx >= starts.size()) continue;
        auto& sr = ranks[rk];
        sr.rank = rk;
        ++sr.calls;
        addTo(sr.waitedNs, last - starts[idx]);
      }
      auto& lr = ranks[c.lastRank];
      ++lr.last;
      addTo(lr.causedNs, c.skewNs);
      r.stragglerCalls.push_back(c);
    }
  }
  std::sort(r.stragglerCalls.begin(), r.stragglerCalls.end(),
            [](const NcclStragglerCall& a, const NcclStragglerCall& b) {
              return a.skewNs != b.skewNs ? a.skewNs > b.skewNs : a.start < b.start;
            });
  for (auto& [rk, sr] : ranks) r.stragglerRanks.push_back(sr);
}

/// Payload rows (by type, algorithm, protocol, element type, bytes and ranks; most time first) and
/// stragglers of the NCCL kernels `nccl`.
void payloadsAndStragglers(const View& v, const std::vector<uint32_t>& nccl, NcclResult& r) {
  const auto& m = v.m;
  // Launch calls -> innermost annotation ("nccl:all_reduce" with Input Dims).
  std::vector<uint32_t> calls;
  std::unordered_map<uint32_t, size_t> callPos;
  for (uint32_t i : nccl) {
    uint32_t c = v.attr ? v.attr->op(i).launch : kNone;
    if (c != kNone && !callPos.count(c)) {
      callPos[c] = calls.size();
      calls.push_back(c);
    }
  }
  auto sites = callSites(m, calls);
  std::map<DeviceKey, std::optional<GpuPeak>> peaks;
  std::map<int32_t, std::string> rankGpu;
  for (const auto& g : m.gpus) {
    peaks[{g.rank, g.deviceId}] = peakForGpu(m.str(g.name));
    rankGpu[g.rank] = std::string(m.str(g.name));
  }
  auto peakOf = [&](DeviceKey d) -> std::optional<GpuPeak> {
    if (auto it = peaks.find(d); it != peaks.end()) return it->second;
    if (auto it = rankGpu.find(d.rank); it != rankGpu.end()) return peakForGpu(it->second);
    return std::nullopt;
  };
  std::map<std::tuple<std::string, std::string, std::string, std::string, int64_t, int32_t>, NcclPayloadRow> rows;
  // Straggler keys: (group, type) -> rank -> starts in order.
  std::map<std::pair<std::string, std::string>, std::map<int32_t, std::vector<int64_t>>> arrivals;
  for (uint32_t i : nccl) {
    const auto& op = m.gpuOps[i];
    uint32_t call = v.attr ? v.attr->op(i).launch : kNone;
    const Collective c = describeCollective(m, i, call != kNone ? &sites[callPos[call]] : nullptr);
    auto& row = rows[{c.type, c.algo, c.proto, c.dtype, c.bytes, c.n}];
    row.type = c.type;
    row.algo = c.algo;
    row.proto = c.proto;
    row.dtype = c.dtype;
    row.bytes = c.bytes;
    row.ranks = c.n;
    row.sizeSource = c.source;
    ++row.count;
    addTo(row.totalNs, op.duration());
    if (c.bytes >= 0) {
      row.busBytes += static_cast<double>(c.bytes) * busBwFactor(c.type, c.n);
      ++r.knownSizeCalls;
    }
    if (auto pk = peakOf(deviceOf(op)); pk && pk->linkGBps > 0) row.peakGBps = pk->linkGBps;
    arrivals[{c.group, c.type}][op.rank].push_back(op.start);
  }
  for (auto& [k, row] : rows) r.payloads.push_back(row);
  std::sort(r.payloads.begin(), r.payloads.end(), [](const NcclPayloadRow& a, const NcclPayloadRow& b) {
    return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.type < b.type;
  });
  stragglers(arrivals, r);
}

}  // namespace

double NcclPayloadRow::algbwGBps() const {
  return bytes >= 0 && totalNs > 0
             ? static_cast<double>(bytes) * static_cast<double>(count) / static_cast<double>(totalNs)
             : 0;
}
double NcclPayloadRow::busbwGBps() const {
  return bytes >= 0 && totalNs > 0 ? busBytes / static_cast<double>(totalNs) : 0;
}

double busBwFactor(std::string_view type, int32_t n) {
  if (n <= 0) return 0;
  const double nn = n;
  if (type == "AllReduce") return 2.0 * (nn - 1) / nn;
  if (type == "AllGather" || type == "ReduceScatter" || type == "AllToAll") return (nn - 1) / nn;
  if (type == "Broadcast" || type == "Reduce" || type == "SendRecv" || type == "Send" || type == "Recv") return 1.0;
  return 0;
}

void ncclAlgoProto(std::string_view name, std::string& algo, std::string& proto) {
  algo.clear();
  proto.clear();
  name = name.substr(0, name.find('('));
  size_t b = 0;
  std::vector<std::string_view> toks;
  for (size_t i = 0; i <= name.size(); ++i)
    if (i == name.size() || name[i] == '_') {
      toks.push_back(name.substr(b, i - b));
      b = i + 1;
    }
  for (size_t i = 0; i < toks.size(); ++i) {
    auto t = toks[i];
    if (t == "RING" || t == "TREE" || t == "NVLS" || t == "PAT" || t == "COLLNET") {
      algo = std::string(t);
      // Compound names: COLLNET_DIRECT, COLLNET_CHAIN, NVLS_TREE.
      if (i + 1 < toks.size() &&
          (toks[i + 1] == "DIRECT" || toks[i + 1] == "CHAIN" || (t == "NVLS" && toks[i + 1] == "TREE")))
        algo += "_" + std::string(toks[++i]);
    } else if (t == "LL" || t == "LL128" || t == "SIMPLE") {
      proto = std::string(t);
    }
  }
}

int dtypeBytes(std::string_view d) {
  std::string s = lowerOf(d);
  if (s.starts_with("c10::")) s = s.substr(5);
  if (s == "float" || s == "float32" || s == "int" || s == "int32" || s == "uint32") return 4;
  if (s == "bfloat16" || s == "half" || s == "float16" || s == "short" || s == "short int" || s == "int16") return 2;
  if (s == "double" || s == "float64" || s == "long" || s == "long int" || s == "int64") return 8;
  if (s == "byte" || s == "char" || s == "bool" || s == "int8" || s == "uint8" || s == "unsigned char" ||
      s == "signed char" || s.starts_with("float8"))
    return 1;
  return 0;
}

NcclResult computeNccl(const View& v) {
  const auto& m = v.m;
  NcclResult r;
  std::map<DeviceKey, std::vector<Interval>> compute;
  std::vector<uint32_t> nccl;
  for (uint32_t i : v.ops) {
    const auto& op = m.gpuOps[i];
    if (op.kind == GpuOpKind::Memcpy || op.kind == GpuOpKind::Memset) continue;
    addTo(r.kernelNs, op.duration());
    if (classify(m, op) == OpClass::Nccl)
      nccl.push_back(i);
    else
      compute[deviceOf(op)].push_back({op.start, op.end});
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
    addTo(row.totalNs, op.duration());
    row.minNs = std::min(row.minNs, op.duration());
    row.maxNs = std::max(row.maxNs, op.duration());
    if (auto it = cu.find(deviceOf(op)); it != cu.end())
      addTo(row.overlappedNs, coveredLength(it->second, op.start, op.end));
    devs[type].insert(deviceOf(op));
    addTo(r.ncclNs, op.duration());
  }
  for (auto& [t, row] : rows) {
    row.devices = devs[t].size();
    r.types.push_back(row);
  }
  payloadsAndStragglers(v, nccl, r);
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
    addTo(row.totalNs, rg.end - rg.start);
  }
  for (auto& [k, row] : rr) r.ranges.push_back(row);
  std::sort(r.ranges.begin(), r.ranges.end(), [&](const NcclRangeRow& a, const NcclRangeRow& b) {
    return a.count != b.count ? a.count > b.count : m.str(a.text) < m.str(b.text);
  });
  return r;
}

void writeJson(json::Writer& w, const NcclResult& r, const ProfileModel& m, size_t top) {
  w.beginObject()
      .field("schema", json_schema::kNccl)
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
  auto gbps = [&](double x) -> json::Writer& { return x > 0 ? w.value(x) : w.null(); };
  w.field("calls_with_size", r.knownSizeCalls);
  w.key("payloads").beginArray();
  for (const auto& p : r.payloads) {
    w.beginObject()
        .field("type", p.type)
        .field("algorithm", p.algo)
        .field("protocol", p.proto)
        .field("dtype", p.dtype)
        .field("bytes", p.bytes)
        .field("ranks", static_cast<int64_t>(p.ranks))
        .field("size_source", p.sizeSource)
        .field("count", p.count)
        .field("total_ns", p.totalNs);
    w.key("algbw_gb_per_s");
    gbps(p.algbwGBps());
    w.key("busbw_gb_per_s");
    gbps(p.busbwGBps());
    w.key("link_peak_gb_per_s");
    gbps(p.peakGBps);
    w.key("busbw_of_peak");
    if (p.peakGBps > 0 && p.busbwGBps() > 0)
      w.value(p.busbwGBps() / p.peakGBps);
    else
      w.null();
    w.endObject();
  }
  w.endArray();
  w.key("straggler_ranks").beginArray();
  for (const auto& s : r.stragglerRanks)
    w.beginObject()
        .field("rank", static_cast<int64_t>(s.rank))
        .field("calls", s.calls)
        .field("last_arrivals", s.last)
        .field("waited_ns", s.waitedNs)
        .field("caused_ns", s.causedNs)
        .endObject();
  w.endArray();
  w.field("straggler_calls_count", static_cast<uint64_t>(r.stragglerCalls.size()));
  w.key("straggler_calls").beginArray();
  for (size_t i = 0; i < r.stragglerCalls.size() && (top == 0 || i < top); ++i) {
    const auto& c = r.stragglerCalls[i];
    w.beginObject()
        .field("type", c.type)
        .field("process_group", c.processGroup)
        .field("index", c.index)
        .field("ranks", static_cast<uint64_t>(c.ranks))
        .field("first_rank", static_cast<int64_t>(c.firstRank))
        .field("last_rank", static_cast<int64_t>(c.lastRank))
        .field("skew_ns", c.skewNs)
        .endObject();
  }
  w.endArray();
  w.key("nvtx_ranges").beginArray();
  for (const auto& rg : r.ranges)
    w.beginObject().field("name", m.str(rg.text)).field("count", rg.count).field("total_ns", rg.totalNs).endObject();
  w.endArray().endObject();
}

}  // namespace kl::analysis
