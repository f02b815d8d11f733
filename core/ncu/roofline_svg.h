// An SVG roofline chart (log-log: FLOP per DRAM byte vs FLOP/s) for HTML reports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ncu/classify.h"

namespace kl::ncu {

struct RooflineSvgPoint {
  std::string label;             // shown in the point's <title> tooltip
  double intensity = 0;          // FLOP per DRAM byte (> 0)
  double flopsPerSec = 0;        // achieved (> 0)
  Bound bound = Bound::Unknown;  // colours the point
};

struct RooflineSvgOptions {
  std::optional<double> peakFlopsPerSec;  // compute roof; omitted when unknown
  std::optional<double> peakBytesPerSec;  // memory slope; omitted when unknown
  int width = 640, height = 420;
  std::string title = "Roofline (DRAM)";
};

/// A self-contained <svg> element (no scripts, no external references). Points with
/// non-positive coordinates are skipped; with no drawable point the chart says so.
std::string rooflineSvg(const std::vector<RooflineSvgPoint>& points, const RooflineSvgOptions& opt);

}  // namespace kl::ncu
