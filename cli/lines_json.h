// The `kernlens/lines@1` document: what a ResultSet (a stored run or a loaded profile) says about
// workspace lines, as JSON. One producer for `kernlens map --format json` and the MCP tools
// `where_from`, `line_costs` and `explain_line` (cli/mcp_tools.cpp), which are `map` with a filter.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/results/result_set.h"

namespace kl::cli {

struct LinesFilter {
  std::string kernelPattern;     // ECMAScript regex searched in a kernel's full and short names; "" = all
  std::string file;              // workspace-relative path (or a suffix of one at a '/'); "" = all files
  std::optional<uint32_t> line;  // 1-based: only the line whose span holds it (with `file`)
};

/// The lines of `rs` that pass `filter` (with a pattern, each line keeps only its matching
/// kernels; a line with none is dropped). UsageError ("--kernel: ...") when the pattern is not a
/// valid regex.
results::ResultSet filterLines(const results::ResultSet& rs, const LinesFilter& filter);

/// {schema, source, run: {id, backend, command, profile, gpu, git_commit}, emulated, total_gpu_ns,
///  lines: [{file, line, end_line, function, text, gpu_ns, backward_gpu_ns, inclusive_gpu_ns, launches,
///           invocations, sync_ns, sync_calls, atomic, atomic_reason, note, suggest_focus,
///           kernels: [{name, short_name, launches, gpu_ns, backward, pass, forward_owner}],
///           variants: [{kernels, invocations}], callees: [{file, line, function, gpu_ns}],
///           share (results::shareOfFunction, 0..1),
///           shown: {time, total, kernels, launches, share, share_of, hint}}],   (results::LineView's
///           words: what the editor's hover and hint say of the line)
///  kernels_shown: {launches, gpu_ns} (over the kernels listed), unmapped: {ops, gpu_ns, top_kernels}}.
/// Lines and end_line are 1-based.
nlohmann::json linesJson(const results::ResultSet& rs);

}  // namespace kl::cli
