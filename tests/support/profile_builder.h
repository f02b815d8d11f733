// Hand-built ProfileModels for unit tests: one process (pid 100) with one thread, NVTX push/pop
// ranges and kernels launched by a cudaLaunchKernel call on that thread. Header-only (users link
// kl_profile through their area's library).
#pragma once

#include <cstdint>
#include <string>

#include "core/profile/model.h"
#include "core/profile/reader.h"

namespace kl::test {

/// One process (pid 100) with one thread (`tid`), and NVTX push/pop ranges on that thread: the
/// part every hand-built test profile shares.
struct OneThreadProfile {
  profile::ProfileModel m;

  explicit OneThreadProfile(int32_t tid) {
    profile::Process p;
    p.globalPid = profile::GlobalId::make(0, 1, 100, 0);
    p.pid = 100;
    m.processes.push_back(p);
    profile::Thread t;
    t.globalTid = profile::GlobalId::make(0, 1, 100, tid);
    t.tid = tid;
    t.process = 0;
    m.threads.push_back(t);
  }
  /// A push/pop range [s, e] on the thread; returns its index.
  size_t range(const std::string& name, int64_t s, int64_t e) {
    profile::Range r;
    r.start = s;
    r.end = e;
    r.text = m.strings.intern(name);
    r.thread = 0;
    r.kind = profile::RangeKind::NvtxPushPop;
    m.ranges.push_back(r);
    return m.ranges.size() - 1;
  }
};

/// Kernels launched by a cudaLaunchKernel call on thread 100.
struct ProfileBuilder : OneThreadProfile {
  int64_t corr = 1;

  ProfileBuilder() : OneThreadProfile(100) { m.strings.intern(""); }
  /// A launch call at [t, t+1] and its kernel at t + gpuDelay for `dur` ns (short name: the
  /// text before '<'). launched = false: no API row (the op has no launch call).
  void kernel(const std::string& name, int64_t t, int64_t dur = 10, bool launched = true, int64_t gpuDelay = 1000) {
    int64_t c = corr++;
    if (launched) {
      profile::ApiCall a;
      a.start = t;
      a.end = t + 1;
      a.correlationId = c;
      a.name = m.strings.intern("cudaLaunchKernel_v7000");
      a.thread = 0;
      a.role = profile::ApiRole::Launch;
      m.apiCalls.push_back(a);
    }
    profile::GpuOp op;
    op.start = t + gpuDelay;
    op.end = t + gpuDelay + dur;
    op.correlationId = c;
    op.name = m.strings.intern(name);
    op.process = 0;
    op.kind = profile::GpuOpKind::Kernel;
    op.detail = static_cast<uint32_t>(m.kernels.size());
    profile::KernelDetail k;
    k.shortName = m.strings.intern(name.substr(0, name.find('<')));
    k.demangledName = op.name;
    m.kernels.push_back(k);
    m.gpuOps.push_back(op);
  }
  void finish() { profile::finalizeModel(m); }
};

}  // namespace kl::test
