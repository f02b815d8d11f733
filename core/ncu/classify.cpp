#include "core/ncu/classify.h"

#include <cmath>
#include <cstdio>

#include "core/profile/kernel_name.h"

namespace kl::ncu {

using profile::normalizedKey;
namespace {

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v);
  return buf;
}

std::string stallMeaning(const std::string& r) {
  if (r == "long_scoreboard") return "global-memory latency";
  if (r == "short_scoreboard") return "shared-memory/MIO latency";
  if (r == "barrier") return "synchronization";
  if (r == "membar") return "memory barrier";
  if (r == "mio_throttle") return "MIO queue full";
  if (r == "lg_throttle") return "local/global queue full";
  if (r == "math_pipe_throttle") return "math pipe busy";
  if (r == "wait") return "fixed-latency dependency";
  if (r == "tex_throttle") return "texture queue full";
  if (r == "drain") return "draining memory writes";
  if (r == "imc_miss") return "constant cache miss";
  if (r == "branch_resolving") return "branch resolution";
  if (r == "dispatch_stall") return "dispatch stall";
  if (r == "no_instruction") return "instruction fetch";
  return "";
}

void append(std::string& s, const std::string& part) {
  if (part.empty()) return;
  if (!s.empty()) s += "; ";
  s += part;
}

}  // namespace

std::string_view boundName(Bound b) {
  switch (b) {
    case Bound::Compute: return "compute";
    case Bound::Memory: return "memory";
    case Bound::Latency: return "latency";
    case Bound::Balanced: return "balanced";
    case Bound::Unknown: return "unknown";
  }
  return "unknown";
}

std::optional<Bound> parseBound(std::string_view s) {
  for (Bound b : {Bound::Compute, Bound::Memory, Bound::Latency, Bound::Balanced, Bound::Unknown})
    if (boundName(b) == s) return b;
  return std::nullopt;
}

std::string_view memoryLevelName(MemoryLevel l) {
  switch (l) {
    case MemoryLevel::Unknown: return "";
    case MemoryLevel::Dram: return "dram";
    case MemoryLevel::L2: return "l2";
    case MemoryLevel::L1: return "l1";
  }
  return "";
}

std::optional<MemoryLevel> parseMemoryLevel(std::string_view s) {
  for (MemoryLevel l : {MemoryLevel::Unknown, MemoryLevel::Dram, MemoryLevel::L2, MemoryLevel::L1})
    if (memoryLevelName(l) == s) return l;
  return std::nullopt;
}

Classification classify(const KernelMetrics& m, const Thresholds& t) {
  Classification c;
  c.smPct = m.smPct;
  c.memPct = m.memPct;
  if (!m.smPct || !m.memPct) {
    std::string miss;
    if (!m.smPct) append(miss, "Compute (SM) Throughput (sm__throughput.avg.pct_of_peak_sustained_elapsed)");
    if (!m.memPct) append(miss, "Memory Throughput (gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed)");
    c.missing = miss;
    return c;
  }
  double sm = *m.smPct, mem = *m.memPct;
  c.nearPeak = std::max(sm, mem) >= t.nearPeak;
  if (sm < t.latency && mem < t.latency) {
    c.bound = Bound::Latency;
    if (m.wavesPerSm && *m.wavesPerSm < 1) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "small grid (%.2f waves per SM)", *m.wavesPerSm);
      append(c.detail, buf);
    }
    if (m.achievedOccPct && *m.achievedOccPct < t.lowOccupancy)
      append(c.detail, "low occupancy (" + pct(*m.achievedOccPct) + " achieved)");
  } else if (sm - mem >= t.balanced) {
    c.bound = Bound::Compute;
  } else if (mem - sm >= t.balanced) {
    c.bound = Bound::Memory;
    // The busiest memory level.
    double best = -1;
    auto consider = [&](const std::optional<double>& v, MemoryLevel level) {
      if (v && *v > best) {
        best = *v;
        c.limiter = level;
      }
    };
    consider(m.dramPct, MemoryLevel::Dram);
    consider(m.l2Pct, MemoryLevel::L2);
    consider(m.l1Pct, MemoryLevel::L1);
    if (c.limiter == MemoryLevel::Dram && m.l2HitPct && *m.l2HitPct < 50)
      append(c.detail, "DRAM-bound with a low L2 hit rate (" + pct(*m.l2HitPct) + "): check reuse/tiling");
    else if (c.limiter == MemoryLevel::L2 && m.l1HitPct && *m.l1HitPct < 50)
      append(c.detail, "L2-bound with a low L1 hit rate (" + pct(*m.l1HitPct) + ")");
  } else {
    c.bound = Bound::Balanced;
  }
  if (!m.dominantStall.empty()) {
    std::string meaning = stallMeaning(m.dominantStall);
    append(c.detail, "dominant stall: " + m.dominantStall + (meaning.empty() ? "" : " (" + meaning + ")"));
  }
  return c;
}

std::string Classification::summary() const {
  if (bound == Bound::Unknown) return "unknown (missing " + (missing.empty() ? std::string("metrics") : missing) + ")";
  std::string s(boundName(bound));
  s += "-bound";
  if (bound == Bound::Balanced) s = "balanced";
  if (bound == Bound::Memory && limiter != MemoryLevel::Unknown)
    s += " (" + std::string(memoryLevelName(limiter)) + ")";
  s += ": SM " + pct(*smPct) + ", memory " + pct(*memPct);
  if (nearPeak) s += ", near peak";
  if (!detail.empty()) s += "; " + detail;
  return s;
}

Classification boundForKernel(std::string_view kernelName, const NcuReport& report, const Thresholds& t) {
  std::string key = normalizedKey(kernelName);
  for (const NcuLaunch& l : report.launches)
    if (l.kernelName == kernelName || normalizedKey(l.kernelName) == key) return classify(extractMetrics(l), t);
  Classification c;
  c.missing = "Nsight Compute data for this kernel";
  return c;
}

}  // namespace kl::ncu
