// The line strategy (`--strategy lines`): instead of editing source, the probe opens one NVTX range
// per executed source line of chosen functions (kernlens_probe/line_ranges.py, sys.settrace
// restricted to those code objects), named like edit ranges, `kl:<path>:<L>-<L>:line`, so one
// round gives a line-level map and the same attribution applies.
//
// Spec file (JSON) handed to the probe through KERNLENS_PROBE_LINE_RANGES / --line-ranges:
//   {"version": 1, "workspace": "<abs root>",
//    "functions": [{"path": "<rel>", "file": "<abs>", "qualname": "C.f",
//                   "first_line": <1-based first line incl. decorators>, "def_line": <1-based>}]}
// The probe matches code objects by realpath(co_filename) and co_firstlineno (first_line or
// def_line), and co_qualname when the interpreter has it.
#pragma once

#include <filesystem>
#include <vector>

#include "core/planner/call_resolution.h"
#include "core/planner/loop.h"

namespace kl::planner {

/// `roots` and the workspace functions statically reachable from them (calls resolved as
/// CallResolver does), breadth-first up to `depth` calls away; roots first, no duplicates.
std::vector<FunctionRef> reachableFunctions(CallResolver& resolver, const std::vector<FunctionRef>& roots, int depth);

/// Writes the spec for `fns` (see above).
Result<void> writeLineSpec(WorkspaceIndex& index, const std::vector<FunctionRef>& fns,
                           const std::filesystem::path& spec);

/// Line results from a round whose kl: ranges are per-line ranges: one LineResult per line that
/// launched something (exclusive), spanning the statement that starts on that line; atomic when an
/// execution of the line launched more than one op.
std::vector<LineResult> lineResultsFromLineRanges(WorkspaceIndex& index, const attribution::RangeTable& table);

}  // namespace kl::planner
