#include "core/analysis/streams.h"

#include <algorithm>
#include <map>

#include "core/analysis/intervals.h"
#include "core/support/saturating.h"

namespace kl::analysis {

StreamsResult computeStreams(const View& v) {
  const auto& m = v.m;
  StreamsResult r;
  r.launchLinks = v.attr != nullptr;
  std::map<DeviceKey, std::map<uint32_t, std::vector<uint32_t>>> byDev;
  for (uint32_t i : v.ops) byDev[deviceOf(m.gpuOps[i])][m.gpuOps[i].streamId].push_back(i);
  std::map<std::tuple<DeviceKey, uint32_t, StrId, StrId>, SerialisedPair> pairs;

  for (auto& [dev, streams] : byDev) {
    StreamsDevice d;
    d.dev = dev;
    struct Ev {
      int64_t t;
      int delta;
      uint32_t stream;
    };
    std::vector<Ev> evs;
    std::map<uint32_t, IntervalSet> unions;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (auto& [s, ops] : streams) {
      std::vector<Interval> iv;
      for (uint32_t i : ops) iv.push_back({m.gpuOps[i].start, m.gpuOps[i].end});
      auto u = clip(unionOf(std::move(iv)), v.winStart, v.winEnd);
      StreamUse su;
      su.stream = s;
      su.ops = ops.size();
      su.busyNs = totalLength(u);
      d.streams.push_back(su);
      for (const auto& x : u) {
        evs.push_back({x.start, +1, s});
        evs.push_back({x.end, -1, s});
        lo = std::min(lo, x.start);
        hi = std::max(hi, x.end);
      }
      unions[s] = std::move(u);
    }
    if (lo > hi) lo = hi = 0;
    d.activeSpanNs = hi - lo;
    std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) { return a.t < b.t; });
    std::map<uint32_t, IntervalSet> solo;
    int level = 0;
    uint64_t idSum = 0;  // sum of busy stream ids: the busy stream when level == 1
    for (size_t i = 0; i < evs.size();) {
      int64_t t = evs[i].t;
      for (; i < evs.size() && evs[i].t == t; ++i) {
        level += evs[i].delta;
        idSum = evs[i].delta > 0 ? idSum + evs[i].stream : idSum - evs[i].stream;
      }
      if (i == evs.size()) break;
      int64_t len = evs[i].t - t;
      if (len <= 0) continue;
      if (d.levelNs.size() <= static_cast<size_t>(level)) d.levelNs.resize(static_cast<size_t>(level) + 1, 0);
      addTo(d.levelNs[static_cast<size_t>(level)], len);
      d.maxConcurrent = std::max(d.maxConcurrent, static_cast<uint32_t>(level));
      if (level == 1) {
        auto& so = solo[static_cast<uint32_t>(idSum)];
        if (!so.empty() && so.back().end == t)
          so.back().end = evs[i].t;
        else
          so.push_back({t, evs[i].t});
      }
    }
    if (d.levelNs.empty()) d.levelNs.push_back(0);
    d.idleNs = d.levelNs[0];
    d.oneNs = d.levelNs.size() > 1 ? d.levelNs[1] : 0;
    for (size_t k = 2; k < d.levelNs.size(); ++k) addTo(d.multiNs, d.levelNs[k]);
    for (auto& su : d.streams) su.soloNs = totalLength(solo[su.stream]);

    if (v.attr) {
      for (auto& [s, ops] : streams) {
        const auto& so = solo[s];
        for (size_t k = 0; k + 1 < ops.size(); ++k) {
          const auto& a = m.gpuOps[ops[k]];
          const auto& b = m.gpuOps[ops[k + 1]];
          uint32_t call = v.attr->op(ops[k + 1]).launch;
          if (call == kNone || m.apiCalls[call].end > a.end) continue;
          int64_t ser = coveredLength(so, std::max(a.start, v.winStart), std::min(a.end, v.winEnd));
          ++d.queuedPairs;
          addTo(d.serialisedNs, ser);
          auto& p = pairs[{dev, s, a.name, b.name}];
          p.dev = dev;
          p.stream = s;
          p.first = a.name;
          p.second = b.name;
          ++p.count;
          addTo(p.serialisedNs, ser);
        }
      }
    }
    r.devices.push_back(std::move(d));
  }
  for (auto& [k, p] : pairs)
    if (p.serialisedNs > 0) r.pairs.push_back(p);
  std::sort(r.pairs.begin(), r.pairs.end(), [](const SerialisedPair& a, const SerialisedPair& b) {
    return a.serialisedNs != b.serialisedNs ? a.serialisedNs > b.serialisedNs : a.count > b.count;
  });
  return r;
}

void writeJson(json::Writer& w, const StreamsResult& r, const ProfileModel& m, size_t topPairs) {
  w.beginObject().field("emulated", m.meta.emulated).field("launch_links", r.launchLinks);
  w.key("devices").beginArray();
  for (const auto& d : r.devices) {
    w.beginObject()
        .field("rank", static_cast<int64_t>(d.dev.rank))
        .field("device", static_cast<int64_t>(d.dev.device))
        .field("active_span_ns", d.activeSpanNs)
        .field("idle_ns", d.idleNs)
        .field("one_stream_ns", d.oneNs)
        .field("multi_stream_ns", d.multiNs)
        .field("max_concurrent_streams", static_cast<uint64_t>(d.maxConcurrent));
    w.key("level_ns").beginArray();
    for (auto x : d.levelNs) w.value(x);
    w.endArray();
    w.key("streams").beginArray();
    for (const auto& s : d.streams)
      w.beginObject()
          .field("stream", static_cast<uint64_t>(s.stream))
          .field("ops", s.ops)
          .field("busy_ns", s.busyNs)
          .field("solo_ns", s.soloNs)
          .endObject();
    w.endArray();
    w.field("queued_pairs", d.queuedPairs).field("serialised_ns", d.serialisedNs).endObject();
  }
  w.endArray();
  w.key("serialised_pairs").beginArray();
  for (size_t i = 0; i < r.pairs.size() && (topPairs == 0 || i < topPairs); ++i) {
    const auto& p = r.pairs[i];
    w.beginObject()
        .field("rank", static_cast<int64_t>(p.dev.rank))
        .field("device", static_cast<int64_t>(p.dev.device))
        .field("stream", static_cast<uint64_t>(p.stream))
        .field("first", m.str(p.first))
        .field("second", m.str(p.second))
        .field("count", p.count)
        .field("serialised_ns", p.serialisedNs)
        .endObject();
  }
  w.endArray().endObject();
}

}  // namespace kl::analysis
