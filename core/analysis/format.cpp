#include "core/analysis/format.h"

#include <cmath>
#include <cstdio>

namespace kl::analysis {
namespace {

std::string sig3(double v, const char* unit) {
  char buf[64];
  double a = std::fabs(v);
  int decimals = a >= 100 ? 0 : a >= 10 ? 1 : 2;
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, unit);
  return buf;
}

}  // namespace

std::string fmtDuration(double ns) {
  double a = std::fabs(ns);
  if (a < 1e3) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
    return buf;
  }
  if (a < 1e6) return sig3(ns / 1e3, "\xC2\xB5s");
  if (a < 1e9) return sig3(ns / 1e6, "ms");
  return sig3(ns / 1e9, "s");
}

std::string fmtBytes(double b) {
  double a = std::fabs(b);
  if (a < 1024) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f B", b);
    return buf;
  }
  if (a < 1024.0 * 1024) return sig3(b / 1024, "KiB");
  if (a < 1024.0 * 1024 * 1024) return sig3(b / (1024.0 * 1024), "MiB");
  return sig3(b / (1024.0 * 1024 * 1024), "GiB");
}

std::string fmtBandwidth(double bytesPerNs) { return sig3(bytesPerNs, "GB/s"); }

std::string fmtPercent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", f * 100.0);
  return buf;
}

}  // namespace kl::analysis
