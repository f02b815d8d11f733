#include "core/results/format.h"

#include <cmath>
#include <cstdio>

namespace kl::results {

std::string formatDims(const std::array<int32_t, 3>& d) {
  std::string out;
  for (int i = 0; i < 3; ++i) {
    if (i) out += "×";
    out += d[i] > 0 ? std::to_string(d[i]) : "?";
  }
  return out;
}

std::string lensTitle(const FunctionResult& f, int64_t totalGpuNs, Units units) {
  std::string t =
      "GPU " + formatPassTime(f.gpuNs, f.backwardNs, units) + " · " + formatCount(f.distinctKernels, "kernel");
  if (totalGpuNs > 0) t += " · " + formatShare(static_cast<double>(f.gpuNs) / static_cast<double>(totalGpuNs));
  return t;
}

std::string formatAge(int64_t createdUnix, int64_t nowUnix) {
  if (createdUnix <= 0) return "";
  int64_t s = nowUnix - createdUnix;
  if (s < 60) return "just now";
  if (s < 3600) return std::to_string(s / 60) + " min ago";
  if (s < 86400) return std::to_string(s / 3600) + " h ago";
  int64_t d = s / 86400;
  return std::to_string(d) + (d == 1 ? " day ago" : " days ago");
}

}  // namespace kl::results
