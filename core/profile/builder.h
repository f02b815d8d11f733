// Internal helper shared by the readers: creates processes and threads on first reference
// (so a system-wide PROCESSES/ThreadNames table does not bloat the model) and finalises.
#pragma once

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "core/profile/model.h"

namespace kl::profile::detail {

/// No content order: rows of equal start and end keep their original order.
struct NoTie {
  bool operator()(uint32_t, uint32_t) const { return false; }
};

/// Sorts a row table by (start asc, end desc, `tie`, original order) through a key permutation;
/// `tie(a, b)` orders rows of equal start and end by their content (finalizeModel's keys, so
/// that the order of rows in the file decides nothing). The columns are moved once each, and a
/// table already in that order is left alone. Returns the
/// permutation applied (new row k = old row perm[k]); empty when nothing moved. Memory: 8-byte
/// keys (start relative to the table's first start, shifted over the row index) when the times
/// fit beside the index, else an index permutation sorted through the columns; the transient
/// is at most 8 bytes a row plus one column while the columns are moved.
template <typename Table, typename Tie = NoTie>
std::vector<uint32_t> sortByTime(Table& t, Tie tie = {}) {
  using Row = typename Table::value_type;
  const auto& start = t.template col<&Row::start>();
  auto end = [&t](size_t i) { return t.template get<&Row::end>(i); };
  const size_t n = t.size();
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; ++i)
    sorted = start[i - 1] < start[i] ||
             (start[i - 1] == start[i] &&
              (end(i - 1) > end(i) ||
               (end(i - 1) == end(i) && !tie(static_cast<uint32_t>(i), static_cast<uint32_t>(i - 1)))));
  if (sorted) return {};
  auto before = [&](uint32_t a, uint32_t b) {
    if (start[a] != start[b]) return start[a] < start[b];
    if (const int64_t ea = end(a), eb = end(b); ea != eb) return ea > eb;
    if (tie(a, b)) return true;
    if (tie(b, a)) return false;
    return a < b;
  };
  std::vector<uint32_t> perm;
  const auto [lo, hi] = std::minmax_element(start.begin(), start.end());
  int idxBits = 1;
  while (idxBits < 32 && (uint64_t{1} << idxBits) < n) ++idxBits;
  const uint64_t span = static_cast<uint64_t>(*hi) - static_cast<uint64_t>(*lo);
  if (idxBits < 64 && span < (uint64_t{1} << (64 - idxBits))) {
    // (start, index) in one integer; runs of equal starts are then ordered by (end desc, tie, index).
    std::vector<uint64_t> keys(n);
    for (uint32_t i = 0; i < n; ++i)
      keys[i] = ((static_cast<uint64_t>(start[i]) - static_cast<uint64_t>(*lo)) << idxBits) | i;
    std::sort(keys.begin(), keys.end());
    perm.resize(n);
    const uint64_t mask = (uint64_t{1} << idxBits) - 1;
    for (size_t i = 0; i < n; ++i) perm[i] = static_cast<uint32_t>(keys[i] & mask);
    keys = {};
    for (size_t i = 0; i < n;) {
      size_t j = i + 1;
      while (j < n && start[perm[j]] == start[perm[i]]) ++j;
      if (j - i > 1) std::sort(perm.begin() + static_cast<long>(i), perm.begin() + static_cast<long>(j), before);
      i = j;
    }
  } else {
    perm.resize(n);
    for (uint32_t i = 0; i < n; ++i) perm[i] = i;
    std::sort(perm.begin(), perm.end(), before);
  }
  t.permute(perm);
  return perm;
}

class ModelBuilder {
 public:
  explicit ModelBuilder(ProfileModel& m) : m_(m) {}

  /// Known names, applied when the process/thread is created (or later via setName).
  std::unordered_map<int64_t, StrId> processNames;  // globalPid -> name
  std::unordered_map<int64_t, StrId> threadNames;   // globalTid -> name

  uint32_t process(int64_t globalPid) {
    if (globalPid == lastPid_ && lastProc_ != kNone) return lastProc_;  // rows come in runs of one id
    auto [it, fresh] = procIndex_.try_emplace(globalPid, static_cast<uint32_t>(m_.processes.size()));
    if (fresh) {
      Process p;
      p.globalPid = globalPid;
      p.pid = GlobalId::pid(globalPid);
      if (auto n = processNames.find(globalPid); n != processNames.end()) p.name = n->second;
      m_.processes.push_back(p);
    }
    lastPid_ = globalPid;
    return lastProc_ = it->second;
  }

  uint32_t thread(int64_t globalTid) {
    if (globalTid == lastTid_ && lastThread_ != kNone) return lastThread_;
    auto [it, fresh] = threadIndex_.try_emplace(globalTid, static_cast<uint32_t>(m_.threads.size()));
    if (fresh) {
      Thread t;
      t.globalTid = globalTid;
      t.tid = GlobalId::tid(globalTid);
      t.process = process(GlobalId::processOf(globalTid));
      if (auto n = threadNames.find(globalTid); n != threadNames.end()) t.name = n->second;
      m_.threads.push_back(t);
    }
    lastTid_ = globalTid;
    return lastThread_ = it->second;
  }

  bool hasThread(int64_t globalTid) const { return threadIndex_.count(globalTid) != 0; }

 private:
  ProfileModel& m_;
  std::unordered_map<int64_t, uint32_t> procIndex_;
  std::unordered_map<int64_t, uint32_t> threadIndex_;
  int64_t lastPid_ = 0, lastTid_ = 0;  // the last id looked up and its index (kNone: none yet)
  uint32_t lastProc_ = kNone, lastThread_ = kNone;
};

}  // namespace kl::profile::detail
