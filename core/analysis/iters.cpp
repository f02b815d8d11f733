#include "core/analysis/iters.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <unordered_map>

#include "core/support/saturating.h"

namespace kl::analysis {
namespace {

/// `s` with every maximal run of digits replaced by one '#'.
std::string digitFree(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool digit = std::isdigit(static_cast<unsigned char>(c));
    if (!digit)
      out.push_back(c);
    else if (out.empty() || out.back() != '#')
      out.push_back('#');
  }
  return out;
}

bool byNvtx(const View& v, ItersResult& r) {
  const auto& m = v.m;
  static const std::regex profilerStep("^ProfilerStep#\\d+$");
  static const std::regex generic("(^|[^a-z])(iter|iteration|step|batch|epoch)[ _#:=-]*\\d+",
                                  std::regex::ECMAScript | std::regex::icase);
  std::unordered_map<StrId, int> cls;  // 0 = no, 1 = generic, 2 = ProfilerStep
  std::map<std::pair<int, std::string>, std::vector<uint32_t>> groups[2];
  int32_t minRank = INT32_MAX;
  for (uint32_t i = 0; i < m.ranges.size(); ++i) {
    const auto& rg = m.ranges[i];
    if (!v.inWindow(rg.start) || rg.kind == profile::RangeKind::NvtxMark ||
        rg.kind == profile::RangeKind::GpuUserAnnotation)
      continue;
    auto [it, added] = cls.emplace(rg.text, 0);
    if (added) {
      std::string s(m.str(rg.text));
      it->second = std::regex_match(s, profilerStep) ? 2 : std::regex_search(s, generic) ? 1 : 0;
    }
    if (it->second == 0) continue;
    groups[it->second - 1][{rg.rank, digitFree(m.str(rg.text))}].push_back(i);
    minRank = std::min(minRank, rg.rank);
  }
  const std::vector<uint32_t>* best = nullptr;
  std::string bestKey;
  for (int level = 1; level >= 0 && !best; --level) {
    for (const auto& [key, members] : groups[level]) {
      if (key.first != minRank || members.size() < 2) continue;
      if (!best || members.size() > best->size()) {
        best = &members;
        bestKey = key.second;
      }
    }
  }
  if (!best) return false;
  r.method = IterMethod::Nvtx;
  r.detail = "ranges named like '" + bestKey + "' (# = a number), rank " + std::to_string(minRank);
  std::unordered_map<uint32_t, size_t> iterOf;
  for (uint32_t ri : *best) {
    const auto& rg = m.ranges[ri];
    iterOf[ri] = r.iterations.size();
    Iteration it;
    it.label = std::string(m.str(rg.text));
    it.start = rg.start;
    it.end = rg.end;
    it.rank = rg.rank;
    r.iterations.push_back(it);
  }
  if (v.attr) {
    for (uint32_t i : v.ops) {
      for (uint32_t ri : v.attr->stack(i)) {
        auto f = iterOf.find(ri);
        if (f == iterOf.end()) continue;
        auto& it = r.iterations[f->second];
        const auto& op = m.gpuOps[i];
        if (it.ops == 0) {
          it.gpuStart = op.start;
          it.gpuEnd = op.end;
        }
        ++it.ops;
        addTo(it.gpuNs, op.duration());
        it.gpuStart = std::min(it.gpuStart, op.start);
        it.gpuEnd = std::max(it.gpuEnd, op.end);
        break;
      }
    }
  }
  return true;
}

bool bySequence(const View& v, ItersResult& r) {
  const auto& m = v.m;
  std::map<DeviceKey, std::vector<uint32_t>> lanes;
  for (uint32_t i : v.ops)
    if (m.gpuOps[i].kind == GpuOpKind::Kernel) lanes[deviceOf(m.gpuOps[i])].push_back(i);
  const std::vector<uint32_t>* lane = nullptr;
  DeviceKey laneKey;
  for (const auto& [k, ops] : lanes)
    if (!lane || ops.size() > lane->size()) {
      lane = &ops;
      laneKey = k;
    }
  if (!lane || lane->size() < 4) return false;
  const auto& seq = *lane;
  size_t n = seq.size();
  // Prefix hashes over name ids (mod 2^64, odd base): H[i] = hash of seq[0..i).
  const uint64_t B = 0x9E3779B97F4A7C15ull | 1;
  std::vector<uint64_t> H(n + 1, 0), P(n + 1, 1);
  for (size_t i = 0; i < n; ++i) {
    H[i + 1] = H[i] * B + (static_cast<uint64_t>(m.gpuOps[seq[i]].name) + 1) * 0xBF58476D1CE4E5B9ull;
    P[i + 1] = P[i] * B;
  }
  auto segHash = [&](size_t a, size_t b) { return H[b] - H[a] * P[b - a]; };
  std::unordered_map<StrId, std::vector<uint32_t>> pos;
  for (size_t i = 0; i < n; ++i) pos[m.gpuOps[seq[i]].name].push_back(static_cast<uint32_t>(i));
  uint64_t bestScore = 0;
  StrId bestAnchor = 0;
  std::pair<uint64_t, size_t> bestKey{0, 0};
  size_t bestFirst = 0;
  // Ties (equal score and period) go to the anchor name first in text order, then to the
  // earliest segment: never to the hash order of name ids, which follows the file's row order.
  auto better = [&](uint64_t score, size_t len, StrId name, size_t first) {
    if (score != bestScore) return score > bestScore;
    if (len != bestKey.second) return len > bestKey.second;
    if (name != bestAnchor) return m.str(name) < m.str(bestAnchor);
    return first < bestFirst;
  };
  for (const auto& [name, ps] : pos) {
    if (ps.size() < 2) continue;
    struct Seg {
      size_t count = 0, len = 0, first = 0;
    };
    std::unordered_map<uint64_t, Seg> cnt;  // (hash ^ len) -> (count, len, first position)
    for (size_t j = 0; j + 1 < ps.size(); ++j) {
      size_t len = ps[j + 1] - ps[j];
      auto& c = cnt[segHash(ps[j], ps[j + 1]) ^ (len * 0x94D049BB133111EBull)];
      if (c.count++ == 0) c.first = ps[j];
      c.len = len;
    }
    for (const auto& [h, c] : cnt) {
      if (c.count < 2 || c.len < 2) continue;
      uint64_t score = static_cast<uint64_t>(c.count) * c.len;
      if (bestScore == 0 || better(score, c.len, name, c.first)) {
        bestScore = score;
        bestAnchor = name;
        bestKey = {h, c.len};
        bestFirst = c.first;
      }
    }
  }
  if (bestScore == 0) return false;
  const auto& ps = pos[bestAnchor];
  for (size_t j = 0; j + 1 < ps.size(); ++j) {
    size_t len = ps[j + 1] - ps[j];
    if (len != bestKey.second || (segHash(ps[j], ps[j + 1]) ^ (len * 0x94D049BB133111EBull)) != bestKey.first) continue;
    Iteration it;
    it.label = "#" + std::to_string(r.iterations.size() + 1);
    it.start = m.gpuOps[seq[ps[j]]].start;
    it.end = it.start;
    for (size_t k = ps[j]; k < ps[j + 1]; ++k) {
      const auto& op = m.gpuOps[seq[k]];
      it.end = std::max(it.end, op.end);
      addTo(it.gpuNs, op.duration());
      ++it.ops;
    }
    it.gpuStart = it.start;
    it.gpuEnd = it.end;
    it.rank = laneKey.rank;
    it.device = laneKey.device;
    r.iterations.push_back(it);
  }
  r.method = IterMethod::KernelSequence;
  r.coverage = static_cast<double>(bestScore) / static_cast<double>(n);
  r.detail = "anchor kernel '" + std::string(m.str(bestAnchor)) + "', period " + std::to_string(bestKey.second) +
             " kernels, " + std::to_string(r.iterations.size()) + " repeats on rank " + std::to_string(laneKey.rank) +
             " device " + std::to_string(laneKey.device) + " (heuristic)";
  return true;
}

}  // namespace

const char* iterMethodName(IterMethod m) {
  switch (m) {
    case IterMethod::None: return "none";
    case IterMethod::Nvtx: return "nvtx";
    case IterMethod::KernelSequence: return "kernel-sequence";
  }
  return "none";
}

ItersResult computeIters(const View& v) {
  ItersResult r;
  if (!byNvtx(v, r) && !bySequence(v, r)) {
    r.method = IterMethod::None;
    r.detail = "no step-like ranges and no repeating kernel sequence";
  }
  std::vector<int64_t> d;
  for (const auto& it : r.iterations) d.push_back(it.end - it.start);
  r.durations = distribution(d);
  return r;
}

void writeJson(json::Writer& w, const ItersResult& r, const View& v) {
  w.beginObject().field("method", iterMethodName(r.method)).field("detail", r.detail);
  if (r.method == IterMethod::KernelSequence) w.field("coverage", r.coverage);
  w.key("durations");
  writeDist(w, r.durations);
  w.key("iterations").beginArray();
  for (const auto& it : r.iterations) {
    w.beginObject()
        .field("label", it.label)
        .field("start_ns", v.rel(it.start))
        .field("end_ns", v.rel(it.end))
        .field("duration_ns", it.end - it.start)
        .field("ops", it.ops)
        .field("gpu_ns", it.gpuNs);
    if (it.ops) w.field("gpu_start_ns", v.rel(it.gpuStart)).field("gpu_end_ns", v.rel(it.gpuEnd));
    w.endObject();
  }
  w.endArray().endObject();
}

}  // namespace kl::analysis
