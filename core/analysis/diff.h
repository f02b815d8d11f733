// `diff A B`: before/after comparison of two profiles.
//  - per kernel name: count and total GPU time in A and B, delta, new (only in B) and
//    vanished (only in A) kernels;
//  - per range text: GPU time of the ops launched inside ranges with that text (each op
//    counted once per text), in A and B;
//  - a verdict on one metric: "total" = sum of GPU op durations, "busy" = GPU busy time
//    (interval union per device, summed), "iter" = median iteration duration (iters analysis).
//    delta% = (B - A) / A * 100; verdict "regression" when delta% > threshold, "improvement"
//    when delta% < -threshold, else "unchanged". The CLI exits 3 on "regression".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"
#include "core/support/result.h"

namespace kl::analysis {

/// The metric the verdict is on (see above).
enum class DiffMetric : uint8_t { Total, Busy, Iter };
/// "total", "busy", "iter" (the command line's and the JSON's spelling).
const char* diffMetricName(DiffMetric m);
/// The metric diffMetricName spells `name`; nullopt for any other text.
std::optional<DiffMetric> diffMetricFromName(std::string_view name);

enum class DiffVerdict : uint8_t { Unchanged, Regression, Improvement };
/// "unchanged", "regression", "improvement".
const char* diffVerdictName(DiffVerdict v);

struct DiffOptions {
  double thresholdPct = 5.0;
  DiffMetric metric = DiffMetric::Total;
};

struct DiffRow {
  std::string name;
  uint64_t countA = 0, countB = 0;
  int64_t nsA = 0, nsB = 0;
  int64_t delta() const { return nsB - nsA; }
  std::string status() const { return countA == 0 ? "new" : countB == 0 ? "vanished" : "both"; }
};

struct DiffResult {
  DiffOptions opts;
  double valueA = 0, valueB = 0, deltaPct = 0;
  DiffVerdict verdict = DiffVerdict::Unchanged;
  std::string metricDetail;      // e.g. iteration method used
  std::vector<DiffRow> kernels;  // by |delta| desc
  std::vector<DiffRow> ranges;   // by |delta| desc
  uint64_t newKernels = 0, vanishedKernels = 0;
};

/// Fails when the metric cannot be computed ("iter" without iterations).
Result<DiffResult> computeDiff(const View& a, const View& b, const DiffOptions& o);
/// Writes at most `top` rows per table (0 = all).
void writeJson(json::Writer& w, const DiffResult& r, size_t top);

}  // namespace kl::analysis
