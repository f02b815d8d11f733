// Rendering a LoopResult as the loop's JSON document (docs/loop.md); its text rendering, the
// annotated focus source, is a front end's (cli/profile_text.h):
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

}  // namespace kl::planner
