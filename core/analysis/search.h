// `search`: kernels (GPU ops by name) and ranges (by text) matching a pattern: a
// case-insensitive substring, or an ECMAScript regular expression (std::regex, icase) that
// must match somewhere in the name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"
#include "core/support/result.h"

namespace kl::analysis {

struct SearchOptions {
  std::string pattern;
  bool regex = false;
  bool kernels = true, ranges = true;
};

struct SearchKernelRow {
  StrId name = 0;
  uint64_t count = 0;
  int64_t totalNs = 0;
  int64_t firstStart = 0;              // absolute
  std::vector<StrId> innermostRanges;  // distinct innermost range texts (up to 5; attribution)
};

struct SearchRangeRow {
  StrId text = 0;
  uint64_t invocations = 0;
  int64_t cpuNs = 0;  // sum of range durations
  int64_t gpuNs = 0;  // inclusive GPU time of ops launched inside (attribution)
  uint64_t ops = 0;
  int64_t firstStart = 0;
};

struct SearchResult {
  std::vector<SearchKernelRow> kernels;  // by total desc
  std::vector<SearchRangeRow> ranges;    // by gpu desc, then cpu desc
};

/// Fails on an invalid regular expression.
Result<SearchResult> computeSearch(const View& v, const SearchOptions& o);
void writeJson(json::Writer& w, const SearchResult& r, const View& v);

}  // namespace kl::analysis
