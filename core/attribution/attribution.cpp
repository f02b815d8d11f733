// Sort-and-sweep attribution (see attribution.h for the rules).
#include "core/attribution/attribution.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <unordered_map>

#include "core/support/saturating.h"

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
    case RangeKind::NvtxPushPop:
      if (!o.nvtxPushPop) return false;
      break;
    case RangeKind::NvtxStartEnd:
      if (!o.nvtxStartEnd) return false;
      if (!o.crossThreadStartEnd) {
        const uint32_t endThread = m.ranges.get<&Range::endThread>(i);
        if (endThread != kNone && endThread != thread) return false;  // Range::endsOnOtherThread
      }
      break;
    case RangeKind::UserAnnotation:
      if (!o.userAnnotation) return false;
      break;
    case RangeKind::CpuOp:
      if (!o.cpuOp) return false;
      break;
    case RangeKind::NvtxMark:
    case RangeKind::GpuUserAnnotation: return false;  // instants / GPU-side: never contain launches
  }
  if (thread == kNone || thread >= m.threads.size()) return false;
  if (!o.namePrefix.empty() && m.str(m.ranges.get<&Range::text>(i)).substr(0, o.namePrefix.size()) != o.namePrefix)
    return false;
  if (!o.domain.empty() && m.str(m.ranges.get<&Range::domain>(i)) != o.domain) return false;
  return true;
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

uint32_t* Attribution::StackPool::append(uint32_t k, uint32_t& handle) {
  const uint64_t need = uint64_t{k} + 1;
  if (blocks_.empty()) {  // block 0 starts with the empty stack, so handle 0 reads as empty
    blocks_.push_back(std::make_unique_for_overwrite<uint32_t[]>(kBlock));
    blocks_[0][0] = 0;
    used_ = 1;
  }
  if (used_ + need > kBlock) {
    if (blocks_.size() >= (size_t{1} << (32 - kPosBits))) return nullptr;
    blocks_.push_back(std::make_unique_for_overwrite<uint32_t[]>(std::max<uint64_t>(kBlock, need)));
    used_ = 0;
  }
  handle = static_cast<uint32_t>((blocks_.size() - 1) << kPosBits) | used_;
  uint32_t* p = blocks_.back().get() + used_;
  p[0] = k;
  used_ = need >= kBlock ? kBlock : used_ + static_cast<uint32_t>(need);
  return p + 1;
}

std::vector<uint32_t> linkLaunches(const ProfileModel& m) {
  // Per process, a dense table correlation id -> call over the process' id range (ids are
  // small consecutive integers in practice); a hash map for a process whose ids are sparse.
  auto callCorr = [&m](uint32_t c) { return m.apiCalls.get<&ApiCall::correlationId>(c); };
  auto callThread = [&m](size_t i) { return m.apiCalls.get<&ApiCall::thread>(i); };
  const size_t nCalls = m.apiCalls.size(), nProc = m.processes.size(), nThreads = m.threads.size();
  auto processOf = [&](uint32_t c) -> uint32_t {
    uint32_t t = callThread(c);
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
    const int64_t corr = callCorr(c);
    if (corr < 0 || p >= nProc) continue;
    auto& x = index[p];
    x.lo = std::min(x.lo, corr);
    x.hi = std::max(x.hi, corr);
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
    const int64_t corr = callCorr(c);
    if (corr < 0 || p >= nProc) continue;
    auto& x = index[p];
    uint32_t* slot = x.dense ? &table[x.offset + static_cast<size_t>(corr - x.lo)]
                             : &x.sparse.try_emplace(corr, kNone).first->second;
    if (*slot == kNone || roleRank(m.apiCalls.get<&ApiCall::role>(c)) < roleRank(m.apiCalls.get<&ApiCall::role>(*slot)))
      *slot = c;
  }
  auto opProc = [&m](size_t i) { return m.gpuOps.get<&GpuOp::process>(i); };
  std::vector<uint32_t> out(m.gpuOps.size(), kNone);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t corr = m.gpuOps.get<&GpuOp::correlationId>(i);
    uint32_t p = opProc(i);
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

namespace {
Error poolFull() {
  return Error::unsupported("attribution: more than 2^32 stack entries (distinct range stacks); not supported");
}

/// Whether op i is a kernel (`allKernels`: the model stores no op kind, every op is one).
bool isKernelOp(const ProfileModel& m, bool allKernels, uint32_t i) {
  return allKernels || m.gpuOps.get<&GpuOp::kind>(i) == GpuOpKind::Kernel;
}
}  // namespace

/// The steps of attribute(), in its order; each reads the model and what the steps before it left
/// in the Attribution, and fills in its own tables (a friend of Attribution).
struct AttributeSteps {
  /// Step 1: op -> launch call by (process, correlation id), into a.launch_. Returns, per API
  /// call, whether some op names it as its launch (1) or none does (0).
  static std::vector<uint8_t> linkOps(const ProfileModel& m, Attribution& a) {
    a.launch_ = linkLaunches(m);
    std::vector<uint8_t> callUsed(m.apiCalls.size(), 0);
    for (uint32_t c : a.launch_)
      if (c != kNone) callUsed[c] = 1;
    return callUsed;
  }

  class StackSweep;

  /// After step 3: each call's autograd link and pass (a.links_), from the autograd links and the
  /// step scopes of step 2 (a step scope labels forward-pass work only); nothing when both are empty.
  static void storeLinks(size_t nCalls, const std::vector<LinkedCall>& links, const std::vector<Pass>& steps,
                         Attribution& a) {
    if (links.empty() && steps.empty()) return;
    a.links_.assign(nCalls, {kNone, kNone, Pass::Forward});
    for (uint32_t c = 0; c < nCalls; ++c) {
      if (!links.empty()) a.links_[c] = {links[c].node, links[c].forwardOp, links[c].pass};
      if (!steps.empty() && a.links_[c].pass == Pass::Forward) a.links_[c].pass = steps[c];
    }
  }

  /// Step 4: the ops attributed, without a launch call, and outside every counted range (a.counts_).
  static void countOps(Attribution& a) {
    for (uint32_t i = 0; i < a.launch_.size(); ++i) {
      const uint32_t c = a.launch_[i];
      ++a.counts_[c == kNone ? 1 : a.callStack_[c] == 0 ? 2 : 0];
    }
  }

  static std::vector<uint32_t> rangeTotals(const ProfileModel& m, const std::vector<uint8_t>& callUsed, Attribution& a);
  static void rangeKernelSets(const ProfileModel& m, std::vector<uint32_t> kOff, Attribution& a);
  static std::vector<uint32_t> nameIndex(const ProfileModel& m, const std::vector<uint32_t>& rangeItems,
                                         Attribution& a);
  static void nameTotals(const ProfileModel& m, const std::vector<uint8_t>& callUsed,
                         const std::vector<uint32_t>& nameIdx, Attribution& a);
  static void nameKernelSets(const ProfileModel& m, const std::vector<uint32_t>& rangeItems,
                             const std::vector<uint32_t>& nameIdx, Attribution& a);
};

/// Step 3: one sweep over ranges, frames and used calls by start time (the model keeps each table
/// in start order; linked calls are put in lookup-start order), with the open ranges and frames
/// of each thread in an active set kept in end-desc order. For properly nested ranges that is
/// also the stack order, so a call's stack is a prefix of its thread's set, copied as is
/// (sorted only when ranges overlap without nesting) and shared with the thread's previous
/// call when the set has not changed since. Where a call's ranges are looked up: its own thread
/// and interval, or (backward work, `links` from step 2) the forward op that created its node.
class AttributeSteps::StackSweep {
 public:
  StackSweep(const ProfileModel& m, const Options& opts, const std::vector<LinkedCall>& links, Attribution& a)
      : m_(m),
        opts_(opts),
        links_(links),
        a_(a),
        nThreads_(m.threads.size()),
        nRanges_(m.ranges.size()),
        stats_(opts.rangeStats),
        withFrames_(opts.pythonFrames && !m.pyFrames.empty()),
        nFrames_(withFrames_ ? static_cast<uint32_t>(m.pyFrames.size()) : 0),
        cStart_(m.apiCalls.col<&ApiCall::start>()),
        rStart_(m.ranges.col<&Range::start>()),
        threads_(nThreads_) {}

  /// Gives every used call its stack (a.callStack_) and, with Python frames, its innermost frame
  /// (a.callFrame_); with statistics, every counted range its parent and depth, and `rangeItems`
  /// the counted ranges in start order. Fails when cancelled or when the stack pool is full.
  Result<void> run(const std::vector<uint8_t>& callUsed, std::vector<uint32_t>& rangeItems) {
    rangeItems_ = &rangeItems;
    const size_t nCalls = m_.apiCalls.size();
    std::vector<uint32_t> linkedOrder;  // used calls in lookup-start order (linked profiles only)
    if (!links_.empty()) {
      for (uint32_t c = 0; c < nCalls; ++c)
        if (callUsed[c] && queryThread(c) < nThreads_) linkedOrder.push_back(c);
      std::stable_sort(linkedOrder.begin(), linkedOrder.end(),
                       [&](uint32_t x, uint32_t y) { return queryStart(x) < queryStart(y); });
    }
    a_.callStack_.assign(nCalls, 0);
    if (withFrames_) a_.callFrame_.assign(nCalls, kNone);
    if (links_.empty()) {
      for (uint32_t c = 0; c < nCalls; ++c) {
        if ((c & 0xFFFF) == 0 && opts_.cancel.isCancelled()) return Error::cancelled();
        if (callUsed[c]) visit(c);
      }
    } else {
      for (size_t j = 0; j < linkedOrder.size(); ++j) {
        if ((j & 0xFFFF) == 0 && opts_.cancel.isCancelled()) return Error::cancelled();
        visit(linkedOrder[j]);
      }
    }
    if (full_) return poolFull();
    if (stats_)
      while (ri_ < nRanges_) pushRange(ri_++);  // parents of ranges after the last launch
    return {};
  }

 private:
  struct PerThread {
    ActiveSet active, frames;
    uint64_t version = 0, lastVersion = UINT64_MAX;  // active-set changes; the last stack's
    size_t lastK = 0;
    uint32_t lastAt = 0;
  };

  /// Stack order: outermost first (start asc, end desc, index).
  static bool stackOrder(const ActiveSet::E& x, const ActiveSet::E& y) {
    if (x.start != y.start) return x.start < y.start;
    if (x.end != y.end) return x.end > y.end;
    return x.idx < y.idx;
  }
  /// Drops the thread's ranges that ended before `at`, counting a change of its set.
  static void expire(PerThread& th, int64_t at) {
    size_t before = th.active.v.size();
    th.active.expire(at);
    if (th.active.v.size() != before) ++th.version;
  }
  bool linked(uint32_t c) const { return !links_.empty() && links_[c].thread < nThreads_; }
  uint32_t queryThread(uint32_t c) const { return linked(c) ? links_[c].thread : m_.apiCalls.get<&ApiCall::thread>(c); }
  int64_t queryStart(uint32_t c) const { return linked(c) ? links_[c].start : cStart_[c]; }
  int64_t queryEnd(uint32_t c) const { return linked(c) ? links_[c].end : m_.apiCalls.get<&ApiCall::end>(c); }

  /// Opens range r on its thread when it counts; with statistics, records it and its parent
  /// (the enclosing active range with the latest start: the tightest) and depth.
  void pushRange(uint32_t r) {
    if (!rangeCounted(m_, r, opts_)) return;
    PerThread& th = threads_[m_.ranges.get<&Range::thread>(r)];
    const int64_t gStart = rStart_[r], gEnd = m_.ranges.get<&Range::end>(r);
    expire(th, gStart);
    if (stats_) {
      a_.ranges_[r].counted = true;
      rangeItems_->push_back(r);
      size_t k = th.active.containing(gEnd);
      uint32_t parent = kNone;
      int64_t bestStart = INT64_MIN;
      for (size_t j = 0; j < k; ++j)
        if (th.active.v[j].start >= bestStart) {
          bestStart = th.active.v[j].start;
          parent = th.active.v[j].idx;
        }
      a_.ranges_[r].parent = parent;
      a_.ranges_[r].depth = parent == kNone ? 0 : a_.ranges_[parent].depth + 1;
    }
    th.active.insert({gStart, gEnd, r});
    ++th.version;
  }

  /// Call c's stack (after opening every range that starts by its lookup start) and innermost frame.
  void visit(uint32_t c) {
    const uint32_t t = queryThread(c);
    if (t >= nThreads_) return;
    const int64_t callStart = queryStart(c), callEnd = queryEnd(c);
    while (ri_ < nRanges_ && rStart_[ri_] <= callStart) pushRange(ri_++);
    PerThread& th = threads_[t];
    expire(th, callStart);
    size_t k = th.active.containing(callEnd);
    if (k == 0) {
      a_.callStack_[c] = 0;
    } else if (th.version == th.lastVersion && k == th.lastK) {
      a_.callStack_[c] = th.lastAt;
    } else if (!storeStack(th, k, c)) {
      full_ = true;
      return;
    }
    if (withFrames_) visitFrames(c, t, callStart, callEnd);
  }

  /// Stores the first k entries of the thread's active set, in stack order, as call c's stack and
  /// the thread's last stack. False when the stack pool is full.
  bool storeStack(PerThread& th, size_t k, uint32_t c) {
    auto first = th.active.v.begin(), last = th.active.v.begin() + static_cast<long>(k);
    uint32_t at = 0;
    uint32_t* out = a_.stacks_.append(static_cast<uint32_t>(k), at);
    if (!out) return false;
    a_.callStack_[c] = at;
    if (std::is_sorted(first, last, stackOrder)) {
      for (auto it = first; it != last; ++it) *out++ = it->idx;
    } else {
      tmp_.assign(first, last);
      std::sort(tmp_.begin(), tmp_.end(), stackOrder);
      for (const auto& e : tmp_) *out++ = e.idx;
    }
    th.lastVersion = th.version;
    th.lastK = k;
    th.lastAt = at;
    return true;
  }

  /// Opens the Python frames that start by callStart; call c's frame is the one on thread t
  /// around [callStart, callEnd] with the latest start.
  void visitFrames(uint32_t c, uint32_t t, int64_t callStart, int64_t callEnd) {
    while (fi_ < nFrames_ && m_.pyFrames.get<&PyFrame::start>(fi_) <= callStart) {
      const auto& f = m_.pyFrames[fi_];
      if (f.thread < nThreads_) {
        ActiveSet& fs = threads_[f.thread].frames;
        fs.expire(f.start);
        fs.insert({f.start, f.end, fi_});
      }
      ++fi_;
    }
    ActiveSet& fs = threads_[t].frames;
    fs.expire(callStart);
    size_t kf = fs.containing(callEnd);
    int64_t best = INT64_MIN;
    for (size_t j = 0; j < kf; ++j)
      if (fs.v[j].start >= best) {
        best = fs.v[j].start;
        a_.callFrame_[c] = fs.v[j].idx;
      }
  }

  const ProfileModel& m_;
  const Options& opts_;
  const std::vector<LinkedCall>& links_;  // empty when the model has no sequence-tagged range
  Attribution& a_;
  const size_t nThreads_, nRanges_;
  const bool stats_, withFrames_;
  const uint32_t nFrames_;
  const std::vector<int64_t>& cStart_;
  const std::vector<int64_t>& rStart_;
  std::vector<PerThread> threads_;
  std::vector<ActiveSet::E> tmp_;
  std::vector<uint32_t>* rangeItems_ = nullptr;
  uint32_t ri_ = 0, fi_ = 0;  // the next range and frame to open
  bool full_ = false;         // the stack pool's handles are used up
};

/// Step 5a: per range, its ops and launches, its inclusive and exclusive GPU time and its GPU
/// span (a.ranges_). Returns the bucket counts of step 5b: [r + 1] = the kernel names of range r's
/// ops, a name repeated by consecutive kernels of r counted once.
std::vector<uint32_t> AttributeSteps::rangeTotals(const ProfileModel& m, const std::vector<uint8_t>& callUsed,
                                                  Attribution& a) {
  const size_t nOps = m.gpuOps.size(), nRanges = m.ranges.size(), nCalls = m.apiCalls.size();
  const auto& opStart = m.gpuOps.col<&GpuOp::start>();
  const auto& opName = m.gpuOps.col<&GpuOp::name>();
  const bool allKernels = !m.gpuOps.stored<&GpuOp::kind>();
  std::vector<uint32_t> kOff(nRanges + 1, 0);
  std::vector<StrId> lastName(nRanges, kNone);
  for (uint32_t i = 0; i < nOps; ++i) {
    auto st = a.stack(i);
    if (st.empty()) continue;
    const int64_t start = opStart[i], end = m.gpuOps.get<&GpuOp::end>(i), dur = end - start;
    const bool kernel = isKernelOp(m, allKernels, i);
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
  for (uint32_t c = 0; c < nCalls; ++c)
    if (callUsed[c])
      for (uint32_t r : a.callStack(c)) ++a.ranges_[r].launches;
  return kOff;
}

/// Step 5b: each range's distinct kernel names, sorted, in a.kernelSetPool_ (its kernel set). The
/// names are bucketed by range (a counting sort over `kOff` from step 5a; a name repeated by
/// consecutive ops of a range is kept once), then each bucket is sorted and deduplicated.
void AttributeSteps::rangeKernelSets(const ProfileModel& m, std::vector<uint32_t> kOff, Attribution& a) {
  const size_t nOps = m.gpuOps.size(), nRanges = m.ranges.size();
  const auto& opName = m.gpuOps.col<&GpuOp::name>();
  const bool allKernels = !m.gpuOps.stored<&GpuOp::kind>();
  std::partial_sum(kOff.begin(), kOff.end(), kOff.begin());
  std::vector<StrId> bucket(kOff[nRanges]);
  std::vector<uint32_t> pos(kOff.begin(), kOff.end() - 1);
  std::vector<StrId> lastName(nRanges, kNone);
  for (uint32_t i = 0; i < nOps; ++i) {
    if (!isKernelOp(m, allKernels, i)) continue;
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

/// Step 6a: one a.names_ entry per distinct text of the counted ranges (`rangeItems`, in first-seen
/// order) with its invocations and kernels per invocation. Returns string id -> its index in names_.
std::vector<uint32_t> AttributeSteps::nameIndex(const ProfileModel& m, const std::vector<uint32_t>& rangeItems,
                                                Attribution& a) {
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
  return nameIdx;
}

/// Step 6b: per name, its ops, launches, inclusive and exclusive GPU time and distinct kernel
/// names. Each op / call counts once per distinct name in its stack.
void AttributeSteps::nameTotals(const ProfileModel& m, const std::vector<uint8_t>& callUsed,
                                const std::vector<uint32_t>& nameIdx, Attribution& a) {
  const size_t nOps = m.gpuOps.size(), nCalls = m.apiCalls.size();
  const auto& opStart = m.gpuOps.col<&GpuOp::start>();
  const auto& opName = m.gpuOps.col<&GpuOp::name>();
  const bool allKernels = !m.gpuOps.stored<&GpuOp::kind>();
  std::vector<uint32_t> seen;         // name indices already counted for the current op / call
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
    const int64_t dur = m.gpuOps.get<&GpuOp::end>(i) - opStart[i];
    const bool kernel = isKernelOp(m, allKernels, i);
    distinctNames(st);
    for (uint32_t n : seen) {
      ++a.names_[n].ops;
      a.names_[n].inclusiveGpuNs = addSat(a.names_[n].inclusiveGpuNs, dur);
      if (kernel) addPair(n, opName[i]);
    }
    auto& ex = a.names_[nameIdx[m.ranges.get<&Range::text>(st.back())]].exclusiveGpuNs;
    ex = addSat(ex, dur);
  }
  for (uint32_t c = 0; c < nCalls; ++c) {
    if (!callUsed[c] || a.callStack_[c] == 0) continue;
    distinctNames(a.callStack(c));
    for (uint32_t n : seen) ++a.names_[n].launches;
  }
  pairBits = {};
  std::sort(namePairs.begin(), namePairs.end());
  namePairs.erase(std::unique(namePairs.begin(), namePairs.end()), namePairs.end());
  for (uint64_t p : namePairs) ++a.names_[p >> 32].distinctKernels;
}

/// Step 6c: per name, its distinct kernel sets (the invocations of each name bucketed by name,
/// their set hashes sorted and deduplicated); then the names in the order of NameStats (inclusive
/// GPU time descending, then name).
void AttributeSteps::nameKernelSets(const ProfileModel& m, const std::vector<uint32_t>& rangeItems,
                                    const std::vector<uint32_t>& nameIdx, Attribution& a) {
  const size_t nNames = a.names_.size();
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
      a.names_[n].distinctKernelSets =
          static_cast<uint32_t>(std::unique(hashes.begin(), hashes.end()) - hashes.begin());
    }
  }
  for (auto& ns : a.names_)
    if (ns.minKernelsPerInvocation == UINT32_MAX) ns.minKernelsPerInvocation = 0;
  std::sort(a.names_.begin(), a.names_.end(), [&](const NameStats& x, const NameStats& y) {
    if (x.inclusiveGpuNs != y.inclusiveGpuNs) return x.inclusiveGpuNs > y.inclusiveGpuNs;
    return m.str(x.name) < m.str(y.name);
  });
}

Result<Attribution> attribute(const ProfileModel& m, const Options& opts) {
  gAttributionRuns.fetch_add(1, std::memory_order_relaxed);
  Attribution a;
  const bool stats = opts.rangeStats;
  if (stats) a.ranges_.assign(m.ranges.size(), RangeStats{});

  // 1. op -> launch call by (process, correlation id).
  std::vector<uint8_t> callUsed = AttributeSteps::linkOps(m, a);
  if (opts.cancel.isCancelled()) return Error::cancelled();

  // 2. Where each used call's ranges are looked up: its own thread and interval, or (backward
  //    work) the forward op that created its autograd node.
  std::vector<LinkedCall> links;  // empty when the model has no sequence-tagged range
  if (opts.linkBackward) links = linkAutograd(m, callUsed);
  // The training-step scopes (optimizer, zero_grad, clipping, AMP scaler) label forward-pass work.
  const std::vector<Pass> steps = opts.linkBackward ? stepScopes(m, callUsed) : std::vector<Pass>{};

  // 3. Each used call's stack and frame, each counted range's parent (one sweep by start time).
  std::vector<uint32_t> rangeItems;  // counted ranges (statistics only)
  KL_TRY(AttributeSteps::StackSweep(m, opts, links, a).run(callUsed, rangeItems));
  if (!stats) callUsed = {};
  AttributeSteps::storeLinks(m.apiCalls.size(), links, steps, a);
  links = {};

  // 4. Counts.
  AttributeSteps::countOps(a);
  if (opts.cancel.isCancelled()) return Error::cancelled();
  if (!stats) return a;

  // 5. Per-range statistics.
  AttributeSteps::rangeKernelSets(m, AttributeSteps::rangeTotals(m, callUsed, a), a);
  if (opts.cancel.isCancelled()) return Error::cancelled();

  // 6. Per-name statistics.
  const std::vector<uint32_t> nameIdx = AttributeSteps::nameIndex(m, rangeItems, a);
  AttributeSteps::nameTotals(m, callUsed, nameIdx, a);
  AttributeSteps::nameKernelSets(m, rangeItems, nameIdx, a);
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
