// `export --format perfetto`: Chrome trace-event JSON that the Perfetto UI (and
// chrome://tracing) opens.
//  - {"traceEvents":[...],"otherData":{...}}; no displayTimeUnit (Perfetto ignores it).
//  - Complete events ("ph":"X") for GPU ops, CUDA API calls, ranges, Python frames and CPU
//    ops; instant events ("ph":"i") for marks and zero-length slices; metadata events
//    ("ph":"M") name every process and thread and fix their order.
//  - ts/dur in µs, rebased to the profile's first event and printed with exactly 3 decimals
//    from integer ns, so every ns survives (no double rounding).
//  - Slices on one track (pid, tid) nest strictly: slices are assigned greedily to the first
//    sub-track where they nest inside the open slice; a slice overlapping partially goes to
//    the next sub-track ("tid 1234 (overlap 1)").
//  - pids/tids are small synthetic integers; the real OS pid/tid and rank are in the names.
//    CPU processes come first, then one process per (rank, GPU) with one track per stream.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "core/analysis/view.h"

namespace kl::analysis {

struct PerfettoStats {
  uint64_t events = 0, tracks = 0, overlapTracks = 0;
};

/// Writes the trace for everything in scope (ops of v.ops; CPU rows starting in the window).
PerfettoStats writePerfetto(std::ostream& out, const View& v);

/// "12.345" µs text for a relative ns value (exact).
std::string nsToUsText(int64_t ns);

}  // namespace kl::analysis
