// Internal helper shared by the readers: creates processes and threads on first reference
// (so a system-wide PROCESSES/ThreadNames table does not bloat the model) and finalises.
#pragma once

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "core/profile/model.h"

namespace kl::profile::detail {

/// Sorts a row table by (start asc, end desc, original order) through a key permutation; the
/// columns are moved once each, and a table already in that order is left alone. Returns the
/// permutation applied (new row k = old row perm[k]); empty when nothing moved.
template <typename Table>
std::vector<uint32_t> sortByTime(Table& t) {
  using Row = typename Table::value_type;
  const auto& start = t.template col<&Row::start>();
  const auto& end = t.template col<&Row::end>();
  const size_t n = t.size();
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; ++i)
    sorted = start[i - 1] < start[i] || (start[i - 1] == start[i] && end[i - 1] >= end[i]);
  if (sorted) return {};
  struct Key {
    int64_t start, end;
    uint32_t idx;
  };
  std::vector<Key> keys(n);
  for (uint32_t i = 0; i < n; ++i) keys[i] = {start[i], end[i], i};
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.idx < b.idx;
  });
  std::vector<uint32_t> perm(n);
  for (size_t i = 0; i < n; ++i) perm[i] = keys[i].idx;
  keys = {};
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
