// Sort-and-sweep attribution (see attribution.h for the rules).
#include "core/attribution/attribution.h"
#include "core/support/saturating.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <unordered_map>

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

/// Whether range `i` counts for containment; reads only the columns the options need.
bool rangeCounted(const ProfileModel& m, uint32_t i, const Options& o) {
  const uint32_t thread = m.ranges.get<&Range::thread>(i);
  switch (m.ranges.get<&Range::kind>(i)) {
    case RangeKind::NvtxPushPop: if (!o.nvtxPushPop) return false; break;
    case RangeKind::NvtxStartEnd:
      if (!o.nvtxStartEnd) return false;
      if (!o.crossThreadStartEnd) {
        const uint32_t endThread = m.ranges.get<&Range::endThread>(i);
        if (endThread != kNone && endThread != thread) return false;  // Range::endsOnOtherThread
      }
      break;
    case RangeKind::UserAnnotation: if (!o.userAnnotation) return false; break;
    case RangeKind::CpuOp: if (!o.cpuOp) return false; break;
    case RangeKind::NvtxMark:
    case RangeKind::GpuUserAnnotation: return false;  // instants / GPU-side: never contain launches
  }
  if (thread == kNone || thread >= m.threads.size()) return false;
  if (!o.namePrefix.empty() && m.str(m.ranges.get<&Range::text>(i)).substr(0, o.namePrefix.size()) != o.namePrefix)
    return false;
  if (!o.domain.empty() && m.str(m.ranges.get<&Range::domain>(i)) != o.domain) return false;
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
  // Per process, a dense table correlation id -> call over the process' id range (ids are
  // small consecutive integers in practice); a hash map for a process whose ids are sparse.
  const auto& callCorr = m.apiCalls.col<&ApiCall::correlationId>();
  const auto& callThread = m.apiCalls.col<&ApiCall::thread>();
  const size_t nCalls = m.apiCalls.size(), nProc = m.processes.size(), nThreads = m.threads.size();
  auto processOf = [&](uint32_t c) -> uint32_t {
    uint32_t t = callThread[c];
    return t < nThreads ? m.threads[t].process : kNone;
  };
  struct Index {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    uint64_t count = 0;
    size_t offset = 0;
    bool dense = false;
    std::unordered_map<int64_t, uint32_t> sparse;
  };
  std::vector<Index> index(nProc);
  for (uint32_t c = 0; c < nCalls; ++c) {
    uint32_t p = processOf(c);
    if (callCorr[c] < 0 || p >= nProc) continue;
    auto& x = index[p];
    x.lo = std::min(x.lo, callCorr[c]);
    x.hi = std::max(x.hi, callCorr[c]);
    ++x.count;
  }
  size_t denseSize = 0;
  for (auto& x : index) {
    if (x.count == 0) continue;
    uint64_t span = static_cast<uint64_t>(x.hi) - static_cast<uint64_t>(x.lo) + 1;
    x.dense = span <= 4 * x.count + 4096;
    if (x.dense) {
      x.offset = denseSize;
      denseSize += static_cast<size_t>(span);
    }
  }
  std::vector<uint32_t> table(denseSize, kNone);
  // Among several calls with one (process, id): the launching API (cudaLaunchKernel, memcpy,
  // ...) beats bookkeeping calls; then the earliest (calls are in start order).
  for (uint32_t c = 0; c < nCalls; ++c) {
    uint32_t p = processOf(c);
    if (callCorr[c] < 0 || p >= nProc) continue;
    auto& x = index[p];
    uint32_t* slot = x.dense ? &table[x.offset + static_cast<size_t>(callCorr[c] - x.lo)]
                             : &x.sparse.try_emplace(callCorr[c], kNone).first->second;
    if (*slot == kNone || roleRank(m.apiCalls.get<&ApiCall::role>(c)) < roleRank(m.apiCalls.get<&ApiCall::role>(*slot)))
      *slot = c;
  }
  const auto& opCorr = m.gpuOps.col<&GpuOp::correlationId>();
  const auto& opProc = m.gpuOps.col<&GpuOp::process>();
  std::vector<uint32_t> out(m.gpuOps.size(), kNone);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t corr = opCorr[i];
    uint32_t p = opProc[i];
    if (corr < 0 || p >= nProc) continue;
    const auto& x = index[p];
    if (x.count == 0 || corr < x.lo || corr > x.hi) continue;
    if (x.dense) {
      out[i] = table[x.offset + static_cast<size_t>(corr - x.lo)];
    } else if (auto it = x.sparse.find(corr); it != x.sparse.end()) {
      out[i] = it->second;
    }
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
  const bool stats = opts.rangeStats;
  a.ops_.assign(nOps, OpAttribution{});
  if (stats) a.ranges_.assign(nRanges, RangeStats{});

  // 1. op -> launch call by (process, correlation id).
  std::vector<uint8_t> callUsed(m.apiCalls.size(), 0);
  {
    auto launch = linkLaunches(m);
    for (uint32_t i = 0; i < nOps; ++i) {
      a.ops_[i].launch = launch[i];
      if (launch[i] != kNone) callUsed[launch[i]] = 1;
    }
  }
  if (opts.cancel.isCancelled()) return Error::cancelled();

  // 2. Where each used call's ranges are looked up: its own thread and interval, or (backward
  //    work) the forward op that created its autograd node.
  std::vector<LinkedCall> links;  // empty when the model has no sequence-tagged range
  if (opts.linkBackward) links = linkAutograd(m, callUsed);
  // The training-step scopes (optimizer, zero_grad, clipping, AMP scaler) label forward-pass work.
  const std::vector<Pass> steps = opts.linkBackward ? stepScopes(m, callUsed) : std::vector<Pass>{};
  const auto& callThread = m.apiCalls.col<&ApiCall::thread>();
  const auto& cStart = m.apiCalls.col<&ApiCall::start>();
  const auto& cEnd = m.apiCalls.col<&ApiCall::end>();
  auto linked = [&](uint32_t c) { return !links.empty() && links[c].thread < nThreads; };
  auto queryThread = [&](uint32_t c) { return linked(c) ? links[c].thread : callThread[c]; };
  auto queryStart = [&](uint32_t c) { return linked(c) ? links[c].start : cStart[c]; };
  auto queryEnd = [&](uint32_t c) { return linked(c) ? links[c].end : cEnd[c]; };

  // Bucket counted ranges, used calls (by lookup thread) and frames per thread (time order
  // preserved: the model keeps calls in start order; linked calls are re-sorted by lookup start).
  std::vector<uint32_t> rangeItems, callItems, frameItems;
  rangeItems.reserve(nRanges);  // upper bounds: no regrowth (and no transient copy) on large inputs
  callItems.reserve(m.apiCalls.size());
  for (uint32_t r = 0; r < nRanges; ++r)
    if (rangeCounted(m, r, opts)) {
      if (stats) a.ranges_[r].counted = true;
      rangeItems.push_back(r);
    }
  for (uint32_t c = 0; c < m.apiCalls.size(); ++c)
    if (callUsed[c] && callThread[c] < nThreads) callItems.push_back(c);
  if (opts.pythonFrames)
    for (uint32_t f = 0; f < m.pyFrames.size(); ++f)
      if (m.pyFrames.get<&PyFrame::thread>(f) < nThreads) frameItems.push_back(f);
  std::vector<uint32_t> rOff, rBy, cOff, cBy, fOff, fBy;
  const auto& rangeThread = m.ranges.col<&Range::thread>();
  bucketByThread(nThreads, rangeItems, [&](uint32_t r) { return rangeThread[r]; }, rOff, rBy);
  bucketByThread(nThreads, callItems, queryThread, cOff, cBy);
  bucketByThread(nThreads, frameItems, [&](uint32_t f) { return m.pyFrames.get<&PyFrame::thread>(f); }, fOff, fBy);
  if (!links.empty())
    for (size_t t = 0; t < nThreads; ++t)
      std::stable_sort(cBy.begin() + cOff[t], cBy.begin() + cOff[t + 1],
                       [&](uint32_t x, uint32_t y) { return queryStart(x) < queryStart(y); });
  callItems = {};
  frameItems = {};
  if (!stats) rangeItems = {};

  // 3. Per thread: sweep ranges and lookup points by start time. The active set is kept in
  // end-desc order; for properly nested ranges that is also the stack order, so a call's stack
  // is a prefix of it, copied as is (sorted only when ranges overlap without nesting) and shared
  // with the previous call when the active set has not changed since.
  const auto& rStart = m.ranges.col<&Range::start>();
  std::vector<uint32_t> callStackBegin(m.apiCalls.size(), 0), callStackSize(m.apiCalls.size(), 0);
  std::vector<uint32_t> callFrame(opts.pythonFrames && !m.pyFrames.empty() ? m.apiCalls.size() : 0, kNone);
  ActiveSet active, frames;
  std::vector<ActiveSet::E> tmp;
  auto stackOrder = [](const ActiveSet::E& x, const ActiveSet::E& y) {
    if (x.start != y.start) return x.start < y.start;
    if (x.end != y.end) return x.end > y.end;
    return x.idx < y.idx;
  };
  for (size_t t = 0; t < nThreads; ++t) {
    if (opts.cancel.isCancelled()) return Error::cancelled();
    active.v.clear();
    frames.v.clear();
    uint64_t version = 0, lastVersion = UINT64_MAX;  // active-set changes; the last stack's
    size_t lastK = 0;
    uint32_t lastBegin = 0;
    uint32_t ri = rOff[t], re = rOff[t + 1], fi = fOff[t], fe = fOff[t + 1];
    auto expire = [&](int64_t at) {
      size_t before = active.v.size();
      active.expire(at);
      if (active.v.size() != before) ++version;
    };
    auto pushRange = [&](uint32_t r) {
      const int64_t gStart = rStart[r], gEnd = m.ranges.get<&Range::end>(r);
      expire(gStart);
      if (stats) {
        // Parent = the enclosing active range with the latest start (tightest).
        size_t k = active.containing(gEnd);
        uint32_t parent = kNone;
        int64_t bestStart = INT64_MIN;
        for (size_t j = 0; j < k; ++j)
          if (active.v[j].start >= bestStart) {
            bestStart = active.v[j].start;
            parent = active.v[j].idx;
          }
        a.ranges_[r].parent = parent;
        a.ranges_[r].depth = parent == kNone ? 0 : a.ranges_[parent].depth + 1;
      }
      active.insert({gStart, gEnd, r});
      ++version;
    };
    for (uint32_t ci = cOff[t]; ci < cOff[t + 1]; ++ci) {
      uint32_t c = cBy[ci];
      const int64_t callStart = queryStart(c), callEnd = queryEnd(c);
      while (ri < re && rStart[rBy[ri]] <= callStart) pushRange(rBy[ri++]);
      expire(callStart);
      size_t k = active.containing(callEnd);
      if (version == lastVersion && k == lastK) {
        callStackBegin[c] = lastBegin;
        callStackSize[c] = static_cast<uint32_t>(k);
      } else {
        auto first = active.v.begin(), last = active.v.begin() + static_cast<long>(k);
        callStackBegin[c] = static_cast<uint32_t>(a.stackPool_.size());
        callStackSize[c] = static_cast<uint32_t>(k);
        if (std::is_sorted(first, last, stackOrder)) {
          for (auto it = first; it != last; ++it) a.stackPool_.push_back(it->idx);
        } else {
          tmp.assign(first, last);
          std::sort(tmp.begin(), tmp.end(), stackOrder);
          for (const auto& e : tmp) a.stackPool_.push_back(e.idx);
        }
        lastVersion = version;
        lastK = k;
        lastBegin = callStackBegin[c];
      }
      if (!callFrame.empty()) {
        while (fi < fe && m.pyFrames.get<&PyFrame::start>(fBy[fi]) <= callStart) {
          const auto& f = m.pyFrames[fBy[fi]];
          frames.expire(f.start);
          frames.insert({f.start, f.end, fBy[fi]});
          ++fi;
        }
        frames.expire(callStart);
        size_t kf = frames.containing(callEnd);
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
    o.pyFrame = callFrame.empty() ? kNone : callFrame[o.launch];
    if (!links.empty()) {
      const auto& l = links[o.launch];
      o.pass = l.pass;
      o.backwardNode = l.node;
      o.forwardOp = l.forwardOp;
    }
    if (!steps.empty() && o.pass == Pass::Forward) o.pass = steps[o.launch];
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
  a.stackPool_.shrink_to_fit();
  if (!stats) return a;

  // 5. Per-range statistics. Kernel names per range are bucketed by range (a counting sort;
  // a name repeated by consecutive ops of a range is kept once), then each bucket is sorted
  // and deduplicated.
  const auto& opStart = m.gpuOps.col<&GpuOp::start>();
  const auto& opEnd = m.gpuOps.col<&GpuOp::end>();
  const auto& opName = m.gpuOps.col<&GpuOp::name>();
  const bool allKernels = !m.gpuOps.stored<&GpuOp::kind>();
  auto isKernel = [&](uint32_t i) { return allKernels || m.gpuOps.get<&GpuOp::kind>(i) == GpuOpKind::Kernel; };
  std::vector<uint32_t> kOff(nRanges + 1, 0);
  std::vector<StrId> lastName(nRanges, kNone);
  for (uint32_t i = 0; i < nOps; ++i) {
    auto st = a.stack(i);
    if (st.empty()) continue;
    const int64_t start = opStart[i], end = opEnd[i], dur = end - start;
    const bool kernel = isKernel(i);
    for (uint32_t r : st) {
      auto& s = a.ranges_[r];
      ++s.ops;
      s.inclusiveGpuNs = addSat(s.inclusiveGpuNs, dur);
      if (s.ops == 1) {
        s.gpuStart = start;
        s.gpuEnd = end;
      } else {
        s.gpuStart = std::min(s.gpuStart, start);
        s.gpuEnd = std::max(s.gpuEnd, end);
      }
      if (kernel && lastName[r] != opName[i]) {
        lastName[r] = opName[i];
        ++kOff[r + 1];
      }
    }
    auto& in = a.ranges_[st.back()];
    ++in.exclusiveOps;
    in.exclusiveGpuNs = addSat(in.exclusiveGpuNs, dur);
  }
  for (uint32_t c = 0; c < m.apiCalls.size(); ++c)
    if (callUsed[c])
      for (uint32_t j = 0; j < callStackSize[c]; ++j) ++a.ranges_[a.stackPool_[callStackBegin[c] + j]].launches;
  std::partial_sum(kOff.begin(), kOff.end(), kOff.begin());
  {
    std::vector<StrId> bucket(kOff[nRanges]);
    std::vector<uint32_t> pos(kOff.begin(), kOff.end() - 1);
    std::fill(lastName.begin(), lastName.end(), kNone);
    for (uint32_t i = 0; i < nOps; ++i) {
      if (!isKernel(i)) continue;
      for (uint32_t r : a.stack(i))
        if (lastName[r] != opName[i]) {
          lastName[r] = opName[i];
          bucket[pos[r]++] = opName[i];
        }
    }
    lastName = {};
    pos = {};
    a.kernelSetPool_.reserve(bucket.size());
    for (uint32_t r = 0; r < nRanges; ++r) {
      if (kOff[r] == kOff[r + 1]) continue;
      auto first = bucket.begin() + kOff[r], last = bucket.begin() + kOff[r + 1];
      std::sort(first, last);
      auto& s = a.ranges_[r];
      s.kernelSetBegin = static_cast<uint32_t>(a.kernelSetPool_.size());
      a.kernelSetPool_.insert(a.kernelSetPool_.end(), first, std::unique(first, last));
      s.kernelSetSize = static_cast<uint32_t>(a.kernelSetPool_.size()) - s.kernelSetBegin;
      s.distinctKernels = s.kernelSetSize;
    }
    a.kernelSetPool_.shrink_to_fit();
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
  const uint32_t* seenFor = nullptr;  // the stack `seen` was computed for (ops share stacks)
  size_t seenForSize = 0;
  auto distinctNames = [&](std::span<const uint32_t> st) {
    if (st.data() == seenFor && st.size() == seenForSize) return;
    seenFor = st.data();
    seenForSize = st.size();
    seen.clear();
    for (uint32_t r : st) seen.push_back(nameIdx[m.ranges.get<&Range::text>(r)]);
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  };
  // Distinct (name, kernel name) pairs: a bit matrix when small, else sorted pairs.
  const size_t nNames = a.names_.size(), nStrings = m.strings.size();
  const bool bitMatrix = nNames * nStrings <= (size_t{1} << 27);
  std::vector<uint64_t> pairBits(bitMatrix ? (nNames * nStrings + 63) / 64 : 0);
  std::vector<uint64_t> namePairs;  // (name index << 32 | kernel name)
  auto addPair = [&](uint32_t n, StrId k) {
    if (bitMatrix) {
      size_t bit = n * nStrings + k;
      uint64_t mask = uint64_t{1} << (bit & 63);
      if (!(pairBits[bit >> 6] & mask)) {
        pairBits[bit >> 6] |= mask;
        ++a.names_[n].distinctKernels;
      }
    } else {
      namePairs.push_back((uint64_t{n} << 32) | k);
    }
  };
  for (uint32_t i = 0; i < nOps; ++i) {
    auto st = a.stack(i);
    if (st.empty()) continue;
    const int64_t dur = opEnd[i] - opStart[i];
    const bool kernel = isKernel(i);
    distinctNames(st);
    for (uint32_t n : seen) {
      ++a.names_[n].ops;
      a.names_[n].inclusiveGpuNs = addSat(a.names_[n].inclusiveGpuNs, dur);
      if (kernel) addPair(n, opName[i]);
    }
    auto& ex = a.names_[nameIdx[m.ranges.get<&Range::text>(st.back())]].exclusiveGpuNs;
    ex = addSat(ex, dur);
  }
  for (uint32_t c = 0; c < m.apiCalls.size(); ++c) {
    if (!callUsed[c] || callStackSize[c] == 0) continue;
    distinctNames({a.stackPool_.data() + callStackBegin[c], callStackSize[c]});
    for (uint32_t n : seen) ++a.names_[n].launches;
  }
  pairBits = {};
  std::sort(namePairs.begin(), namePairs.end());
  namePairs.erase(std::unique(namePairs.begin(), namePairs.end()), namePairs.end());
  for (uint64_t p : namePairs) ++a.names_[p >> 32].distinctKernels;
  namePairs = {};
  // Distinct kernel sets per name: the invocations of each name (bucketed by name), their
  // set hashes sorted and deduplicated.
  {
    std::vector<uint32_t> nOff(nNames + 1, 0), byName(rangeItems.size());
    for (uint32_t r : rangeItems) ++nOff[nameIdx[m.ranges.get<&Range::text>(r)] + 1];
    std::partial_sum(nOff.begin(), nOff.end(), nOff.begin());
    std::vector<uint32_t> pos(nOff.begin(), nOff.end() - 1);
    for (uint32_t r : rangeItems) byName[pos[nameIdx[m.ranges.get<&Range::text>(r)]]++] = r;
    std::vector<uint64_t> hashes;
    for (size_t n = 0; n < nNames; ++n) {
      hashes.clear();
      for (uint32_t j = nOff[n]; j < nOff[n + 1]; ++j) hashes.push_back(fnv(a.kernelSet(byName[j])));
      std::sort(hashes.begin(), hashes.end());
      a.names_[n].distinctKernelSets = static_cast<uint32_t>(std::unique(hashes.begin(), hashes.end()) - hashes.begin());
    }
  }
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
