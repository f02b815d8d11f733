#include "core/results/format.h"

#include <cmath>
#include <cstdio>

namespace kl::results {

Units parseUnits(std::string_view s) {
  if (s == "ns") return Units::Ns;
  if (s == "us" || s == "µs") return Units::Us;
  if (s == "ms") return Units::Ms;
  if (s == "s") return Units::S;
  return Units::Auto;
}

namespace {
std::string sig3(double v) {
  char buf[32];
  double a = std::fabs(v);
  if (a >= 100 || a == 0)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a >= 10)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else
    std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}
}  // namespace

std::string formatDuration(int64_t ns, Units units) {
  double v = static_cast<double>(ns);
  if (units == Units::Auto) {
    double a = std::fabs(v);
    units = a >= 1e9 ? Units::S : a >= 1e6 ? Units::Ms : a >= 1e3 ? Units::Us : Units::Ns;
  }
  switch (units) {
    case Units::S: return sig3(v / 1e9) + " s";
    case Units::Ms: return sig3(v / 1e6) + " ms";
    case Units::Us: return sig3(v / 1e3) + " µs";
    default: return std::to_string(ns) + " ns";
  }
}

std::string formatShare(double share) {
  double pct = share * 100.0;
  char buf[32];
  if (pct >= 1 || pct == 0)
    std::snprintf(buf, sizeof buf, "%.0f %%", pct);
  else if (pct >= 0.1)
    std::snprintf(buf, sizeof buf, "%.1f %%", pct);
  else
    return "<0.1 %";
  return buf;
}

std::string kernelCount(uint64_t n) { return std::to_string(n) + (n == 1 ? " kernel" : " kernels"); }

std::string formatPassTime(int64_t ns, int64_t backwardNs, Units units) {
  if (backwardNs <= 0) return formatDuration(ns, units);
  return formatDuration(ns - backwardNs, units) + " + bwd " + formatDuration(backwardNs, units);
}

std::string formatDims(const std::array<int32_t, 3>& d) {
  std::string out;
  for (int i = 0; i < 3; ++i) {
    if (i) out += "×";
    out += d[i] > 0 ? std::to_string(d[i]) : "?";
  }
  return out;
}

std::string hintLabel(const LineResult& line, Units units, std::string_view prefix) {
  std::string sync =
      line.syncCalls ? std::string(kSyncGlyph) + " sync " + formatDuration(line.syncNs, units) : std::string();
  if (line.ops == 0 && line.syncCalls && !line.isCallLine()) return sync;
  std::string t = prefix.empty() ? std::string() : std::string(prefix) + " ";
  if (!line.isCallLine()) {
    t += formatPassTime(line.gpuNs, line.backwardNs, units) + " · " + kernelCount(line.distinctKernels());
  } else {
    if (line.ops > 0)
      t += formatPassTime(line.gpuNs, line.backwardNs, units) + " · " + kernelCount(line.distinctKernels()) + " · ";
    t += formatDuration(line.inclusiveNs, units) + " total";
  }
  return sync.empty() ? t : t + " · " + sync;
}

std::string lensTitle(const FunctionResult& f, int64_t totalGpuNs, Units units) {
  std::string t = "GPU " + formatPassTime(f.gpuNs, f.backwardNs, units) + " · " + kernelCount(f.distinctKernels);
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
