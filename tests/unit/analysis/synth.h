// A tiny synthetic ProfileModel builder for analysis unit tests: one process (pid 100) with
// one launching thread (tid 101, OneThreadProfile); kernels/copies with launch calls and NVTX ranges.
#pragma once

#include <string>

#include "core/attribution/attribution.h"
#include "core/profile/model.h"
#include "core/profile/reader.h"
#include "tests/support/profile_builder.h"

namespace kl::test {

struct Synth : OneThreadProfile {
  int64_t nextCorr = 1;

  Synth() : OneThreadProfile(101) {}

  /// A kernel on (device, stream); with launchAt >= 0 also a cudaLaunchKernel call
  /// [launchAt, launchAt + launchDur] on thread 0 with the same correlation id.
  void kernel(const std::string& name, int64_t start, int64_t end, int32_t device = 0, uint32_t stream = 7,
              int64_t launchAt = -1, int64_t launchDur = 1000) {
    profile::GpuOp op;
    op.start = start;
    op.end = end;
    op.name = m.strings.intern(name);
    op.process = 0;
    op.deviceId = device;
    op.streamId = stream;
    op.kind = profile::GpuOpKind::Kernel;
    op.detail = static_cast<uint32_t>(m.kernels.size());
    profile::KernelDetail k;
    k.demangledName = op.name;
    k.shortName = op.name;
    m.kernels.push_back(k);
    if (launchAt >= 0) {
      op.correlationId = nextCorr++;
      api("cudaLaunchKernel", launchAt, launchAt + launchDur, op.correlationId);
    }
    m.gpuOps.push_back(op);
  }

  void memcpy(uint8_t copyKind, int64_t bytes, int64_t start, int64_t end, uint8_t hostKind = 0, int32_t device = 0) {
    profile::GpuOp op;
    op.start = start;
    op.end = end;
    op.name = m.strings.intern(copyKind == 1 ? "[CUDA memcpy HtoD]" : "[CUDA memcpy DtoH]");
    op.process = 0;
    op.deviceId = device;
    op.streamId = 7;
    op.kind = profile::GpuOpKind::Memcpy;
    op.detail = static_cast<uint32_t>(m.memcpys.size());
    profile::MemcpyDetail d;
    d.bytes = bytes;
    d.copyKind = copyKind;
    d.srcKind = copyKind == 1 ? hostKind : 2;
    d.dstKind = copyKind == 2 ? hostKind : 2;
    m.memcpys.push_back(d);
    m.gpuOps.push_back(op);
  }

  void api(const std::string& name, int64_t start, int64_t end, int64_t corr = -1) {
    profile::ApiCall c;
    c.start = start;
    c.end = end;
    c.correlationId = corr;
    c.name = m.strings.intern(name);
    c.thread = 0;
    c.role = profile::classifyApi(name);
    m.apiCalls.push_back(c);
  }

  profile::ProfileModel& finish() {
    m.meta.files = {"synthetic"};
    profile::finalizeModel(m);
    return m;
  }
};

}  // namespace kl::test
