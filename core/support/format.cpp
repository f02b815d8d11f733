#include "core/support/format.h"

#include <cmath>
#include <cstdio>

namespace kl {

Units parseUnits(std::string_view s) {
  if (s == "ns") return Units::Ns;
  if (s == "us" || s == "µs") return Units::Us;
  if (s == "ms") return Units::Ms;
  if (s == "s") return Units::S;
  return Units::Auto;
}

namespace {

/// 3 significant digits (0, 1 or 2 decimals) followed by " unit".
std::string sig3(double v, std::string_view unit) {
  char buf[48];
  double a = std::fabs(v);
  int decimals = a >= 100 || a == 0 ? 0 : a >= 10 ? 1 : 2;
  std::snprintf(buf, sizeof buf, "%.*f ", decimals, v);
  return buf + std::string(unit);
}

}  // namespace

std::string formatDuration(double ns, Units units) {
  if (units == Units::Auto) {
    double a = std::fabs(ns);
    units = a >= 1e9 ? Units::S : a >= 1e6 ? Units::Ms : a >= 1e3 ? Units::Us : Units::Ns;
  }
  switch (units) {
    case Units::S: return sig3(ns / 1e9, "s");
    case Units::Ms: return sig3(ns / 1e6, "ms");
    case Units::Us: return sig3(ns / 1e3, "µs");
    default: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.0f ns", ns);
      return buf;
    }
  }
}

std::string formatPassTime(int64_t ns, int64_t backwardNs, Units units) {
  if (backwardNs <= 0) return formatDuration(static_cast<double>(ns), units);
  return formatDuration(static_cast<double>(ns - backwardNs), units) + " + bwd " +
         formatDuration(static_cast<double>(backwardNs), units);
}

std::string formatShare(double fraction, ShareDigits digits) {
  double pct = fraction * 100.0;
  char buf[32];
  if (digits == ShareDigits::Table)
    std::snprintf(buf, sizeof buf, "%.1f %%", pct);
  else if (pct >= 1 || pct == 0)
    std::snprintf(buf, sizeof buf, "%.0f %%", pct);
  else if (pct >= 0.1)
    std::snprintf(buf, sizeof buf, "%.1f %%", pct);
  else
    return "<0.1 %";
  return buf;
}

std::string formatChange(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.0f %%", fraction * 100.0);
  return buf;
}

std::string formatCount(uint64_t n, std::string_view singular, std::string_view plural) {
  std::string out = std::to_string(n) + " ";
  if (n == 1) return out + std::string(singular);
  return plural.empty() ? out + std::string(singular) + "s" : out + std::string(plural);
}

std::string formatBytes(double b) {
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

std::string formatBandwidth(double bytesPerNs) { return sig3(bytesPerNs, "GB/s"); }

}  // namespace kl
