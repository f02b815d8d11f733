// `diagnose`: rule-based findings. Each finding separates FACTS (measured in this profile,
// with the numbers) from a HYPOTHESIS (a likely cause; not proven by the profile) and lists
// its EVIDENCE (kernel/API names, durations, timestamps in relative ns). Rules:
//   cpu_bound_launch   GPU idle gaps >= 10 µs after which the next op's launch call returned
//                      only after the gap had begun (the GPU had nothing queued), totalling
//                      >= 5% of the devices' active span.
//   nccl_exposed       NCCL kernel time not covered by compute on the same GPU > 50% of the
//                      NCCL time and >= 1% of the active span.
//   launch_bound_tiny  >= 20 kernels and >= 30% of launched kernels run shorter than their
//                      own launch call took on the CPU.
//   host_copies_in_step HtoD/DtoH copies inside detected iterations (or anywhere, if no
//                      iterations were found: said so).
//   excessive_sync     >= 10 synchronising API calls (cuda*Synchronize, StreamWaitEvent) that
//                      together take >= 5% of the window on one thread.
// Rules that did not fire are listed in `checked` with the measured value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct Evidence {
  std::string what;  // "gap", "kernel", "memcpy", "api call", ...
  std::string name;
  int64_t start = -1;  // absolute ns; -1 = not a point in time (an aggregate)
  int64_t durationNs = 0;
  std::string note;
};

/// How much a finding matters; findings are listed most severe first.
enum class Severity : uint8_t { High, Medium, Low };
/// "high", "medium", "low" (the JSON and text spelling).
const char* severityName(Severity s);

struct Finding {
  std::string id;
  Severity severity = Severity::Medium;
  std::string title;
  std::vector<std::string> facts;
  std::string hypothesis;
  std::vector<Evidence> evidence;
};

struct RuleCheck {
  std::string id;
  bool fired = false;
  std::string measured;  // the value the rule looked at, in words
};

struct DiagnoseResult {
  bool emulated = false;
  bool haveAttribution = false;
  std::vector<Finding> findings;
  std::vector<RuleCheck> checked;
};

DiagnoseResult computeDiagnose(const View& v);
void writeJson(json::Writer& w, const DiagnoseResult& r, const View& v);

}  // namespace kl::analysis
