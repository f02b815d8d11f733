// Internal helper shared by the readers: creates processes and threads on first reference
// (so a system-wide PROCESSES/ThreadNames table does not bloat the model) and finalises.
#pragma once

#include <unordered_map>

#include "core/profile/model.h"

namespace kl::profile::detail {

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
