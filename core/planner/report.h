// Rendering a LoopResult: the annotated focus source (text) and the loop's JSON document
// (docs/loop.md):
//   {"converged": bool, "stop_reason": str, "rounds": int, "backend": str, "emulated": bool,
//    "lines": [{"file", "line", "end_line", "function", "gpu_ns", "backward_gpu_ns", "step_kind", "launches",
//               "invocations", "atomic", "atomic_reason", "no_matching_kernel", "note",
//               "suggest_focus" (FILE::QUALNAME to profile instead, or null),
//               "kernels": [{"name", "backward", "pass", ["forward_owner"], "launches", "gpu_ns"}]}],
//    "unmapped": [{"name", "launches", "gpu_ns", "reason"}], "notes": [str],
//    "round_log": [{"round", "ranges", "pushes", "launches", "wall_ms", "profiler_version", "gpu",
//                   "profiles", "dir", "notes"}]}   (one entry per instrumented round)
// (paths workspace-relative, lines 1-based). JSON is written with core/support/json_writer.h.
#pragma once

#include <ostream>
#include <string>

#include "core/planner/loop.h"

namespace kl::planner {

/// The loop's JSON document (one line), exactly the schema above.
std::string renderJson(const LoopResult& r);

struct TextOptions {
  int maxKernelsPerLine = 4;
  bool allFiles = true;  // after the focus source, the other files' lines (callees, callers)
};

/// The focus source annotated with per-line GPU time and kernels, then the other mapped lines,
/// the unmapped kernels, the stop reason, overhead and notes. Labelled EMULATED when emulated.
std::string renderText(const LoopResult& r, WorkspaceIndex& index, const TextOptions& opts = {});

/// "1.92 ms", "85.0 µs", "730 ns".
std::string formatNs(int64_t ns);

}  // namespace kl::planner
