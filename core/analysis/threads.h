// `threads`: per CPU thread, the GPU work it launched (ops in scope whose launch call is on
// the thread; needs attribution) and its CUDA API activity in the window (calls starting in
// the window, any device).
#pragma once

#include <cstdint>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct ThreadRow {
  uint32_t thread = kNone;  // index into model.threads
  uint64_t launches = 0;    // distinct launch calls of ops in scope
  uint64_t ops = 0;         // ops in scope launched from the thread
  uint64_t distinctKernels = 0;
  int64_t gpuNs = 0;  // sum of those ops' durations
  uint64_t apiCalls = 0, syncCalls = 0;
  int64_t apiNs = 0, syncNs = 0;
};

struct ThreadsResult {
  std::vector<ThreadRow> threads;  // by ops desc, then api calls desc
  uint64_t unlinkedOps = 0;        // ops in scope with no launch call
};

ThreadsResult computeThreads(const View& v);
void writeJson(json::Writer& w, const ThreadsResult& r, const ProfileModel& m);

}  // namespace kl::analysis
