#include "core/ncu/metrics.h"

#include <algorithm>

namespace kl::ncu {
namespace {

bool isMetricName(std::string_view n) { return n.find("__") != std::string_view::npos; }

// Strips the stall reason from one of the stall-metric families; empty if `n` is none.
// `family` receives the family's index (families are not comparable with each other).
std::string stallReason(std::string_view n, int& family) {
  static const std::pair<std::string_view, std::string_view> kForms[] = {
      {"smsp__warp_issue_stalled_", "_per_warp_active.pct"},
      {"smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"},
      {"smsp__average_warp_latency_issue_stalled_", ".ratio"},
      {"smsp__pcsamp_warps_issue_stalled_", ""},
  };
  family = -1;
  for (auto [pre, suf] : kForms) {
    ++family;
    if (n.rfind(pre, 0) != 0) continue;
    std::string_view rest = n.substr(pre.size());
    if (!suf.empty()) {
      if (rest.size() <= suf.size() || rest.substr(rest.size() - suf.size()) != suf) continue;
      rest.remove_suffix(suf.size());
    } else if (rest.find('.') != std::string_view::npos) {
      continue;
    }
    return std::string(rest);
  }
  return {};
}

}  // namespace

std::optional<double> metricValue(const NcuLaunch& l, std::initializer_list<const char*> names,
                                  std::string_view sectionPrefix) {
  for (const char* n : names) {
    const Metric* m = isMetricName(n) ? l.find(n) : l.find(n, sectionPrefix);
    if (m && m->value) return m->value;
  }
  return std::nullopt;
}

KernelMetrics extractMetrics(const NcuLaunch& l) {
  KernelMetrics k;
  const std::string_view sol = "GPU Speed Of Light";  // matches "... Throughput" and legacy
  k.durationNs = metricValue(l, {"gpu__time_duration.sum"});
  if (!k.durationNs) k.durationNs = metricValue(l, {"Duration"}, sol);
  if (!k.durationNs) k.durationNs = metricValue(l, {"Duration"});
  k.smPct =
      metricValue(l, {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "Compute (SM) Throughput", "SM [%]"}, sol);
  // "Memory Throughput" is a % in SOL and byte/s in Memory Workload Analysis: require the %.
  k.memPct = metricValue(l, {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "Memory [%]"}, sol);
  if (!k.memPct)
    for (const Metric& m : l.metrics)
      if (m.name == "Memory Throughput" && m.unit == "%" && m.value) {
        k.memPct = m.value;
        break;
      }
  k.dramPct = metricValue(l,
                          {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                           "dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM Throughput", "SOL FB"},
                          sol);
  k.l2Pct = metricValue(l, {"lts__throughput.avg.pct_of_peak_sustained_elapsed", "L2 Cache Throughput", "SOL L2"}, sol);
  k.l1Pct =
      metricValue(l, {"l1tex__throughput.avg.pct_of_peak_sustained_active", "L1/TEX Cache Throughput", "SOL TEX"}, sol);
  const std::string_view mwa = "Memory Workload Analysis";
  k.l1HitPct = metricValue(l, {"l1tex__t_sector_hit_rate.pct", "L1/TEX Hit Rate", "L1 Hit Rate"}, mwa);
  k.l2HitPct = metricValue(l, {"lts__t_sector_hit_rate.pct", "L2 Hit Rate"}, mwa);
  k.achievedOccPct =
      metricValue(l, {"sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved Occupancy"}, "Occupancy");
  k.theoreticalOccPct =
      metricValue(l, {"sm__maximum_warps_per_active_cycle_pct", "Theoretical Occupancy"}, "Occupancy");
  k.wavesPerSm = metricValue(l, {"launch__waves_per_multiprocessor", "Waves Per SM"}, "Launch Statistics");
  k.smFreqHz =
      metricValue(l, {"gpc__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg.per_second", "SM Frequency"}, sol);
  k.dramBytes = metricValue(l, {"dram__bytes.sum"});
  if (!k.dramBytes) {
    auto r = metricValue(l, {"dram__bytes_read.sum"});
    auto w = metricValue(l, {"dram__bytes_write.sum"});
    if (r && w) k.dramBytes = *r + *w;
  }
  if (!k.memPct && (k.dramPct || k.l2Pct || k.l1Pct))
    k.memPct = std::max({k.dramPct.value_or(0), k.l2Pct.value_or(0), k.l1Pct.value_or(0)});
  // The first family present (in kForms order) decides; values of different families differ in
  // scale and are never compared.
  int chosenFamily = -1;
  for (const Metric& m : l.metrics) {
    if (!m.value) continue;
    int family = -1;
    std::string reason = stallReason(m.name, family);
    if (reason.empty() || reason == "selected" || reason == "not_selected") continue;
    if (chosenFamily >= 0 && family > chosenFamily) continue;
    if (family < chosenFamily || chosenFamily < 0) {
      chosenFamily = family;
      k.dominantStallValue.reset();
    }
    if (!k.dominantStallValue || *m.value > *k.dominantStallValue) {
      k.dominantStall = reason;
      k.dominantStallValue = m.value;
    }
  }
  return k;
}

}  // namespace kl::ncu
