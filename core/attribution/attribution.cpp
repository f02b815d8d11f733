// Sort-and-sweep attribution (see attribution.h for the rules).
#include "core/attribution/attribution.h"

#include <algorithm>
#include <atomic>
#include <numeric>

namespace kl::attribution {

using namespace kl::profile;

const char* unattributedName(Unattributed u) {
  switch (u) {
    case Unattributed::None: return "";
    case Unattributed::NoLaunchCall: return "no_launch_call";
    case Unattributed::OutsideRanges: return "outside_ranges";
  }
  return "";
}

namespace {

/// Rank of a call for choosing among several calls with one (process, correlation id): the
/// launching API (cudaLaunchKernel, memcpy, ...) beats bookkeeping calls; then the earliest.
int roleRank(ApiRole r) { return r == ApiRole::Other ? 1 : 0; }

bool rangeCounted(const ProfileModel& m, const Range& r, const Options& o) {
  switch (r.kind) {
    case RangeKind::NvtxPushPop: if (!o.nvtxPushPop) return false; break;
    case RangeKind::NvtxStartEnd:
      if (!o.nvtxStartEnd) return false;
      if (!o.crossThreadStartEnd && r.endsOnOtherThread()) return false;
      break;
    case RangeKind::UserAnnotation: if (!o.userAnnotation) return false; break;
    case RangeKind::CpuOp: if (!o.cpuOp) return false; break;
    case RangeKind::NvtxMark:
    case RangeKind::GpuUserAnnotation: return false;  // instants / GPU-side: never contain launches
  }
  if (r.thread == kNone || r.thread >= m.threads.size()) return false;
  if (!o.namePrefix.empty() && m.str(r.text).substr(0, o.namePrefix.size()) != o.namePrefix) return false;
  if (!o.domain.empty() && m.str(r.domain) != o.domain) return false;
  return true;
}

/// Groups item indices by thread with a stable counting sort (keeps time order).
template <typename GetThread>
void bucketByThread(size_t nThreads, const std::vector<uint32_t>& items, GetThread thr,
                    std::vector<uint32_t>& offsets, std::vector<uint32_t>& out) {
  offsets.assign(nThreads + 1, 0);
  for (uint32_t i : items) ++offsets[thr(i) + 1];
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  out.resize(items.size());
  std::vector<uint32_t> pos(offsets.begin(), offsets.end() - 1);
  for (uint32_t i : items) out[pos[thr(i)]++] = i;
}

/// Intervals open at a sweep position, kept sorted by end descending (properly nested data
/// only ever appends/pops at the back). Expired entries (end < t) are dropped from the back.
struct ActiveSet {
  struct E {
    int64_t start, end;
    uint32_t idx;
  };
  std::vector<E> v;
  void expire(int64_t t) {
    while (!v.empty() && v.back().end < t) v.pop_back();
  }
  void insert(E e) {
    if (v.empty() || v.back().end >= e.end) {
      v.push_back(e);
      return;
    }
    auto it = std::upper_bound(v.begin(), v.end(), e.end, [](int64_t x, const E& y) { return x > y.end; });
    v.insert(it, e);
  }
  /// Number of leading entries with end >= t (they all contain [.. , t] given start <= now).
  size_t containing(int64_t t) const {
    if (v.empty() || v.back().end >= t) return v.size();
    auto it = std::lower_bound(v.begin(), v.end(), t, [](const E& y, int64_t x) { return y.end >= x; });
    return static_cast<size_t>(it - v.begin());
  }
};

uint64_t fnv(std::span<const StrId> s) {
  uint64_t h = 1469598103934665603ull;
  for (StrId x : s) {
    h ^= x;
    h *= 1099511628211ull;
  }
  return h ^ s.size();
}

}  // namespace

std::vector<uint32_t> linkLaunches(const ProfileModel& m) {
  struct Key {
    uint32_t process;
    int64_t corr;
    uint32_t call;
  };
  std::vector<Key> keys;
  keys.reserve(m.apiCalls.size());
  for (uint32_t i = 0; i < m.apiCalls.size(); ++i) {
    const auto& c = m.apiCalls[i];
    if (c.correlationId < 0 || c.thread >= m.threads.size()) continue;
    keys.push_back({m.threads[c.thread].process, c.correlationId, i});
  }
  auto better = [&](uint32_t a, uint32_t b) {  // is call a preferred over call b?
    int ra = roleRank(m.apiCalls[a].role), rb = roleRank(m.apiCalls[b].role);
    if (ra != rb) return ra < rb;
    return a < b;  // apiCalls are sorted by start: earliest (outermost) wins
  };
  std::sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) {
    if (a.process != b.process) return a.process < b.process;
    if (a.corr != b.corr) return a.corr < b.corr;
    return better(a.call, b.call);
  });
  std::vector<uint32_t> out(m.gpuOps.size(), kNone);
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    const auto& op = m.gpuOps[i];
    if (op.correlationId < 0) continue;
    auto it = std::lower_bound(keys.begin(), keys.end(), op, [](const Key& k, const GpuOp& o) {
      return k.process != o.process ? k.process < o.process : k.corr < o.correlationId;
    });
    if (it != keys.end() && it->process == op.process && it->corr == op.correlationId) out[i] = it->call;
  }
  return out;
}

namespace {
std::atomic<uint64_t> gAttributionRuns{0};
}  // namespace

uint64_t attributionRuns() { return gAttributionRuns.load(std::memory_order_relaxed); }

Result<Attribution> attribute(const ProfileModel& m, const Options& opts) {
  gAttributionRuns.fetch_add(1, std::memory_order_relaxed);
  Attribution a;
  const size_t nOps = m.gpuOps.size(), nRanges = m.ranges.size(), nThreads = m.threads.size();
  a.ops_.assign(nOps, OpAttribution{});
  a.ranges_.assign(nRanges, RangeStats{});

  // 1. op -> launch call by (process, correlation id).
  auto launch = linkLaunches(m);
  std::vector<uint8_t> callUsed(m.apiCalls.size(), 0);
  for (uint32_t i = 0; i < nOps; ++i) {
    a.ops_[i].launch = launch[i];
    if (launch[i] != kNone) callUsed[launch[i]] = 1;
  }
  if (opts.cancel.isCancelled()) return Error::cancelled();

  // 2. Where each used call's ranges are looked up: its own thread and interval, or (backward
  //    work) the forward op that created its autograd node.
  std::vector<LinkedCall> links;
  if (opts.linkBackward) links = linkAutograd(m, callUsed);
  struct Query {
    int64_t start, end;
    uint32_t thread, call;
  };
  std::vector<Query> queries;
  for (uint32_t c = 0; c < m.apiCalls.size(); ++c) {
    if (!callUsed[c] || m.apiCalls[c].thread >= nThreads) continue;
    const auto& call = m.apiCalls[c];
    if (!links.empty() && links[c].thread < nThreads)
      queries.push_back({links[c].start, links[c].end, links[c].thread, c});
    else
      queries.push_back({call.start, call.end, call.thread, c});
  }
  if (!links.empty())
    std::stable_sort(queries.begin(), queries.end(), [](const Query& x, const Query& y) { return x.start < y.start; });

  // Bucket counted ranges, queries and frames per thread (time order preserved).
  std::vector<uint32_t> rangeItems, queryItems, frameItems;
  for (uint32_t r = 0; r < nRanges; ++r)
    if (rangeCounted(m, m.ranges[r], opts)) {
      a.ranges_[r].counted = true;
      rangeItems.push_back(r);
    }
  for (uint32_t q = 0; q < queries.size(); ++q) queryItems.push_back(q);
  if (opts.pythonFrames)
    for (uint32_t f = 0; f < m.pyFrames.size(); ++f)
      if (m.pyFrames[f].thread < nThreads) frameItems.push_back(f);
  std::vector<uint32_t> rOff, rBy, cOff, cBy, fOff, fBy;
  bucketByThread(nThreads, rangeItems, [&](uint32_t r) { return m.ranges[r].thread; }, rOff, rBy);
  bucketByThread(nThreads, queryItems, [&](uint32_t q) { return queries[q].thread; }, cOff, cBy);
  bucketByThread(nThreads, frameItems, [&](uint32_t f) { return m.pyFrames[f].thread; }, fOff, fBy);

  // 3. Per thread: sweep ranges and queries by start time.
  std::vector<uint32_t> callStackBegin(m.apiCalls.size(), 0), callStackSize(m.apiCalls.size(), 0);
  std::vector<uint32_t> callFrame(m.apiCalls.size(), kNone);
  ActiveSet active, frames;
  std::vector<ActiveSet::E> tmp;
  for (size_t t = 0; t < nThreads; ++t) {
    if (opts.cancel.isCancelled()) return Error::cancelled();
    active.v.clear();
    frames.v.clear();
    uint32_t ri = rOff[t], re = rOff[t + 1], fi = fOff[t], fe = fOff[t + 1];
    auto pushRange = [&](uint32_t r) {
      const auto& g = m.ranges[r];
      active.expire(g.start);
      // Parent = the enclosing active range with the latest start (tightest).
      size_t k = active.containing(g.end);
      uint32_t parent = kNone;
      int64_t bestStart = INT64_MIN;
      for (size_t j = 0; j < k; ++j)
        if (active.v[j].start >= bestStart) {
          bestStart = active.v[j].start;
          parent = active.v[j].idx;
        }
      a.ranges_[r].parent = parent;
      a.ranges_[r].depth = parent == kNone ? 0 : a.ranges_[parent].depth + 1;
      active.insert({g.start, g.end, r});
    };
    for (uint32_t ci = cOff[t]; ci < cOff[t + 1]; ++ci) {
      const Query& call = queries[cBy[ci]];
      uint32_t c = call.call;
      while (ri < re && m.ranges[rBy[ri]].start <= call.start) pushRange(rBy[ri++]);
      active.expire(call.start);
      size_t k = active.containing(call.end);
      tmp.assign(active.v.begin(), active.v.begin() + static_cast<long>(k));
      std::sort(tmp.begin(), tmp.end(), [](const ActiveSet::E& x, const ActiveSet::E& y) {
        if (x.start != y.start) return x.start < y.start;
        if (x.end != y.end) return x.end > y.end;
        return x.idx < y.idx;
      });
      callStackBegin[c] = static_cast<uint32_t>(a.stackPool_.size());
      callStackSize[c] = static_cast<uint32_t>(tmp.size());
      for (const auto& e : tmp) a.stackPool_.push_back(e.idx);
      if (opts.pythonFrames) {
        while (fi < fe && m.pyFrames[fBy[fi]].start <= call.start) {
          const auto& f = m.pyFrames[fBy[fi]];
          frames.expire(f.start);
          frames.insert({f.start, f.end, fBy[fi]});
          ++fi;
        }
        frames.expire(call.start);
        size_t kf = frames.containing(call.end);
        int64_t best = INT64_MIN;
        for (size_t j = 0; j < kf; ++j)
          if (frames.v[j].start >= best) {
            best = frames.v[j].start;
            callFrame[c] = frames.v[j].idx;
          }
      }
    }
    while (ri < re) pushRange(rBy[ri++]);  // parents of ranges after the last launch
  }

  // 4. Per-op results.
  for (uint32_t i = 0; i < nOps; ++i) {
    auto& o = a.ops_[i];
    if (o.launch == kNone) {
      o.reason = Unattributed::NoLaunchCall;
      ++a.counts_[1];
      continue;
    }
    o.pyFrame = callFrame[o.launch];
    if (!links.empty()) {
      const auto& l = links[o.launch];
      o.pass = l.pass;
      o.backwardNode = l.node;
      o.forwardOp = l.forwardOp;
    }
    o.stackBegin = callStackBegin[o.launch];
    o.stackSize = callStackSize[o.launch];
    if (o.stackSize == 0) {
      o.reason = Unattributed::OutsideRanges;
      ++a.counts_[2];
    } else {
      o.reason = Unattributed::None;
      ++a.counts_[0];
    }
  }
  if (opts.cancel.isCancelled()) return Error::cancelled();

  // 5. Per-range statistics.
  std::vector<uint64_t> pairs;  // (range << 32 | kernel name), deduplicated below
  for (uint32_t i = 0; i < nOps; ++i) {
    const auto& op = m.gpuOps[i];
    auto st = a.stack(i);
    if (st.empty()) continue;
    int64_t dur = op.duration();
    for (uint32_t r : st) {
      auto& s = a.ranges_[r];
      ++s.ops;
      s.inclusiveGpuNs = profile::addSat(s.inclusiveGpuNs, dur);
      if (s.ops == 1) {
        s.gpuStart = op.start;
        s.gpuEnd = op.end;
      } else {
        s.gpuStart = std::min(s.gpuStart, op.start);
        s.gpuEnd = std::max(s.gpuEnd, op.end);
      }
      if (op.kind == GpuOpKind::Kernel) pairs.push_back((uint64_t{r} << 32) | op.name);
    }
    auto& in = a.ranges_[st.back()];
    ++in.exclusiveOps;
    in.exclusiveGpuNs = profile::addSat(in.exclusiveGpuNs, dur);
  }
  for (uint32_t c = 0; c < m.apiCalls.size(); ++c)
    if (callUsed[c])
      for (uint32_t j = 0; j < callStackSize[c]; ++j) ++a.ranges_[a.stackPool_[callStackBegin[c] + j]].launches;
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  a.kernelSetPool_.reserve(pairs.size());
  for (size_t j = 0; j < pairs.size();) {
    uint32_t r = static_cast<uint32_t>(pairs[j] >> 32);
    auto& s = a.ranges_[r];
    s.kernelSetBegin = static_cast<uint32_t>(a.kernelSetPool_.size());
    while (j < pairs.size() && (pairs[j] >> 32) == r) a.kernelSetPool_.push_back(static_cast<StrId>(pairs[j++] & 0xFFFFFFFFu));
    s.kernelSetSize = static_cast<uint32_t>(a.kernelSetPool_.size()) - s.kernelSetBegin;
    s.distinctKernels = s.kernelSetSize;
  }
  if (opts.cancel.isCancelled()) return Error::cancelled();

  // 6. Per-name statistics. Each op / call counts once per distinct name in its stack.
  std::vector<uint32_t> nameIdx(m.strings.size(), kNone);
  for (uint32_t r : rangeItems) {
    StrId n = m.ranges[r].text;
    if (nameIdx[n] == kNone) {
      nameIdx[n] = static_cast<uint32_t>(a.names_.size());
      NameStats ns;
      ns.name = n;
      ns.minKernelsPerInvocation = UINT32_MAX;
      a.names_.push_back(ns);
    }
    auto& ns = a.names_[nameIdx[n]];
    ++ns.invocations;
    ns.minKernelsPerInvocation = std::min(ns.minKernelsPerInvocation, a.ranges_[r].kernelSetSize);
    ns.maxKernelsPerInvocation = std::max(ns.maxKernelsPerInvocation, a.ranges_[r].kernelSetSize);
  }
  std::vector<uint32_t> seen;  // name indices already counted for the current op / call
  auto distinctNames = [&](std::span<const uint32_t> st) {
    seen.clear();
    for (uint32_t r : st) seen.push_back(nameIdx[m.ranges[r].text]);
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  };
  std::vector<uint64_t> namePairs;  // (name index << 32 | kernel name)
  for (uint32_t i = 0; i < nOps; ++i) {
    auto st = a.stack(i);
    if (st.empty()) continue;
    const auto& op = m.gpuOps[i];
    distinctNames(st);
    for (uint32_t n : seen) {
      ++a.names_[n].ops;
      a.names_[n].inclusiveGpuNs = profile::addSat(a.names_[n].inclusiveGpuNs, op.duration());
      if (op.kind == GpuOpKind::Kernel) namePairs.push_back((uint64_t{n} << 32) | op.name);
    }
    auto& ex = a.names_[nameIdx[m.ranges[st.back()].text]].exclusiveGpuNs;
    ex = profile::addSat(ex, op.duration());
  }
  for (uint32_t c = 0; c < m.apiCalls.size(); ++c) {
    if (!callUsed[c] || callStackSize[c] == 0) continue;
    distinctNames({a.stackPool_.data() + callStackBegin[c], callStackSize[c]});
    for (uint32_t n : seen) ++a.names_[n].launches;
  }
  std::sort(namePairs.begin(), namePairs.end());
  namePairs.erase(std::unique(namePairs.begin(), namePairs.end()), namePairs.end());
  for (uint64_t p : namePairs) ++a.names_[p >> 32].distinctKernels;
  std::vector<uint64_t> setKeys;  // (name index, hash of the invocation's kernel set)
  std::vector<std::pair<uint32_t, uint64_t>> sets;
  for (uint32_t r : rangeItems) sets.emplace_back(nameIdx[m.ranges[r].text], fnv(a.kernelSet(r)));
  std::sort(sets.begin(), sets.end());
  sets.erase(std::unique(sets.begin(), sets.end()), sets.end());
  for (const auto& s : sets) ++a.names_[s.first].distinctKernelSets;
  for (auto& ns : a.names_)
    if (ns.minKernelsPerInvocation == UINT32_MAX) ns.minKernelsPerInvocation = 0;
  std::sort(a.names_.begin(), a.names_.end(), [&](const NameStats& x, const NameStats& y) {
    if (x.inclusiveGpuNs != y.inclusiveGpuNs) return x.inclusiveGpuNs > y.inclusiveGpuNs;
    return m.str(x.name) < m.str(y.name);
  });
  return a;
}

std::string Attribution::path(const ProfileModel& m, uint32_t op, std::string_view sep) const {
  std::string out;
  for (uint32_t r : stack(op)) {
    if (!out.empty()) out += sep;
    out += m.str(m.ranges[r].text);
  }
  return out;
}

SourceLocation sourceOf(const ProfileModel& m, const Attribution& a, uint32_t op) {
  uint32_t f = a.op(op).pyFrame;
  // Walk out of frames without a file:line (built-ins, C functions) to the nearest Python one.
  for (int guard = 0; f != kNone && f < m.pyFrames.size() && guard < 4096; ++guard) {
    const auto& fr = m.pyFrames[f];
    if (fr.file != kEmptyStr && fr.line > 0) return {m.str(fr.file), fr.line, m.str(fr.function)};
    f = fr.parent;
  }
  return {};
}

}  // namespace kl::attribution
