// Order statistics of a sample of ns values (nearest-rank percentiles).
#pragma once

#include <cstdint>
#include <vector>

#include "core/support/json_writer.h"

namespace kl::analysis {

struct Dist {
  uint64_t count = 0;
  int64_t sum = 0, min = 0, max = 0, p50 = 0, p90 = 0, p99 = 0;
  double mean = 0;
};

/// Sorts `v` in place.
Dist distribution(std::vector<int64_t>& v);
/// {"count","sum_ns","mean_ns","min_ns","p50_ns","p90_ns","p99_ns","max_ns"}
void writeDist(json::Writer& w, const Dist& d);

}  // namespace kl::analysis
