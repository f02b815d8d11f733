// Call sites of CPU calls (API calls): what the thread was doing when it made the call, from
// the stacks and ranges the profile records on THAT thread at the call's start:
//   1. a kernlens `kl:` range (kl:<path>:<first>-<last>) -> that file and first line;
//   2. else the innermost Python frame (Kineto python_function) whose file is user code (not
//      site-packages / dist-packages / torch/ / a built-in) -> file:line, function;
//   3. else the innermost NVTX range / record_function annotation -> its text;
//   4. else none ("" site).
// Independently, `op` is the innermost ATen op (Kineto cpu_op) around the call ("aten::item").
// Containment: range.start <= call.start and call.end <= range.end, same thread (the range's
// start thread). Computed by one sort-and-sweep per thread, never ranges x calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/profile/model.h"

namespace kl::analysis {

struct CallSite {
  std::string site;                      // "model.py:42", "kl:model.py:40-44", "range: saxpy", "" = unknown
  std::string file;                      // source file when known (kl: path or Python frame file)
  int32_t line = 0;                      // 1-based, 0 = unknown
  std::string function;                  // Python function when known
  std::string op;                        // innermost cpu_op name, "" = none
  std::string via;                       // "kl", "python", "range" or "" (how the site was found)
  uint32_t opRange = profile::kNone;     // index of the innermost cpu_op range around the call
  uint32_t innerRange = profile::kNone;  // index of the innermost NVTX/annotation range (not kl:)
};

/// Call sites of apiCalls[calls[i]] (index-aligned with `calls`).
std::vector<CallSite> callSites(const profile::ProfileModel& m, const std::vector<uint32_t>& calls);

/// True for Python files that are library code (site-packages, dist-packages, torch/, <...>).
bool isLibraryFile(std::string_view file);

}  // namespace kl::analysis
