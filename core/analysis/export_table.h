// `export --format csv|json`: one row per GPU op (model order = start order) with exactly
// these columns:
//   kind,name,short_name,start_ns,end_ns,duration_ns,device,stream,pid,tid,correlation_id,
//   rank,nvtx_path,innermost_range,unattributed_reason
// kind = kernel|memcpy|memset (|graph for nsys whole-graph trace rows); start/end = model
// timeline ns (for nsys files: the file's own timestamps, rank 0's clock for several ranks);
// pid = OS pid of the op's process (globalPid bits 24..47); tid = OS tid of the launching
// thread (globalTid bits 0..23 of the launch call), empty without a launch call;
// nvtx_path = range texts outermost -> innermost joined by " > "; unattributed_reason =
// "" | no_launch_call | outside_ranges. Empty where unknown.
// CSV: RFC 4180 (CRLF line ends; fields with , " CR or LF quoted, quotes doubled).
// JSON: an array of objects with the same keys in the same order; unknown numbers are null.
// Both stream row by row.
#pragma once

#include <array>
#include <ostream>
#include <string>
#include <string_view>

#include "core/analysis/view.h"

namespace kl::analysis {

extern const std::array<const char*, 15> kExportColumns;

/// Appends `s` as one RFC 4180 field.
void appendCsvField(std::string& out, std::string_view s);

/// Rows for the ops of `v` (needs v.attr for tid/path/reason; without it those are empty).
void writeOpsCsv(std::ostream& out, const View& v);
void writeOpsJson(std::ostream& out, const View& v);

}  // namespace kl::analysis
