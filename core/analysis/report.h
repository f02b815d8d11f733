// `report`: ONE self-contained HTML page (inline CSS/JS/SVG, no network access) with
//  - a timeline: one lane per (rank, device, stream) and per (CPU thread, range depth) for
//    NVTX/annotation ranges; downsampled: in each lane, neighbouring items closer than
//    span/4000 are merged into one rectangle labelled with its longest member and a count;
//    at most 96 lanes of each kind (the busiest), 6 range depths per thread;
//  - tables: top kernels, streams, overlap, gaps, NCCL, memcpy, launch, threads, iterations,
//    range tree (3 levels) and diagnose findings.
// The data is embedded as JSON (html-safe) and rendered by the page's own script.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/view.h"

namespace kl::analysis {

struct ReportOptions {
  std::string title;  // shown at the top (e.g. the file name)
  size_t topKernels = 50;
  size_t maxRectsPerLane = 4000;
  /// Extra sections appended after the analyses: (heading, trusted self-contained HTML such as
  /// an inline <svg>). Used for the Nsight Compute roofline.
  std::vector<std::pair<std::string, std::string>> extraSections;
};

void writeReport(std::ostream& out, const View& v, const ReportOptions& o);

}  // namespace kl::analysis
