// `info`: what a profile holds: format and tool version, hardware, span, row counts, and
// whether it was produced by the emulate backend (then every consumer says "emulated").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct InfoResult {
  std::string format, toolVersion, schemaVersion;
  bool emulated = false;
  std::vector<std::string> files;
  int32_t ranks = 1;
  int64_t spanNs = 0;                            // whole profile
  int64_t windowStartRel = 0, windowEndRel = 0;  // analysed window (relative ns)
  std::vector<profile::Gpu> gpus;
  uint64_t processes = 0, threads = 0, streams = 0, devicesWithOps = 0;
  uint64_t kernels = 0, memcpys = 0, memsets = 0, graphs = 0, distinctKernelNames = 0;
  uint64_t apiCalls = 0, launchCalls = 0, syncCalls = 0;
  uint64_t nvtxRanges = 0, nvtxMarks = 0, annotations = 0, cpuOps = 0, pyFrames = 0;
  bool haveAttribution = false;
  uint64_t attributed = 0, noLaunchCall = 0, outsideRanges = 0;  // over ops in scope
  std::vector<int64_t> rankClockOffsetNs;
  std::vector<std::string> rankClockMethod;
  std::vector<std::string> warnings;
};

InfoResult computeInfo(const View& v);
void writeJson(json::Writer& w, const InfoResult& r, const ProfileModel& m);

}  // namespace kl::analysis
