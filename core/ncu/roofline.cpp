#include "core/ncu/roofline.h"

#include "core/ncu/metrics.h"

namespace kl::ncu {
namespace {

constexpr const char* kChart = "GPU Speed Of Light Roofline Chart";

const Metric* chart(const NcuLaunch& l, const char* label, const char* body = nullptr) {
  for (const Metric& m : l.metrics)
    if (m.name == label && m.section == kChart && m.value && (!body || m.bodyLabel == body)) return &m;
  return nullptr;
}

std::optional<double> counter(const NcuLaunch& l, const char* op) {
  // smsp__ and sm__ spellings of the per-op SASS thread instruction counters.
  std::string a = std::string("smsp__sass_thread_inst_executed_op_") + op + "_pred_on.sum";
  std::string b = std::string("sm__sass_thread_inst_executed_op_") + op + "_pred_on.sum";
  if (const Metric* m = l.find(a); m && m->value) return m->value;
  if (const Metric* m = l.find(b); m && m->value) return m->value;
  return std::nullopt;
}

// Sum of the tensor op-path counters collected (sm__ops_path_tensor_*.sum), if any is numeric.
std::optional<double> tensorOps(const NcuLaunch& l) {
  std::optional<double> sum;
  for (const Metric& m : l.metrics) {
    const std::string& n = m.name;
    if (n.rfind("sm__ops_path_tensor_", 0) != 0 || n.size() < 4 || n.substr(n.size() - 4) != ".sum") continue;
    if (m.value) sum = sum.value_or(0) + *m.value;
  }
  return sum;
}

}  // namespace

std::string RooflinePoint::missingText() const {
  std::string s;
  for (const auto& m : missing) s += (s.empty() ? "" : ", ") + m;
  return s;
}

RooflinePoint rooflinePoint(const NcuLaunch& l) {
  RooflinePoint p;
  KernelMetrics km = extractMetrics(l);
  std::optional<double> tensor = tensorOps(l);
  const char* sp = "Single Precision Roofline";
  const char* spa = "Single Precision Achieved Value";

  const Metric* ffmaOps = chart(l, "Predicated-On FFMA Operations Per Cycle", spa);
  const Metric* ffmaInst = chart(l, "Predicated-On FFMA Thread Instructions Executed Per Cycle");
  const Metric* fadd = chart(l, "Predicated-On FADD Thread Instructions Executed Per Cycle", spa);
  const Metric* fmul = chart(l, "Predicated-On FMUL Thread Instructions Executed Per Cycle", spa);
  const Metric* smHz = chart(l, "SM Frequency", spa);
  if (!smHz) smHz = chart(l, "SM Frequency");
  const Metric* dramBw = chart(l, "DRAM Bandwidth", spa);
  if (!dramBw) dramBw = chart(l, "DRAM Bandwidth");

  if ((ffmaOps || ffmaInst) && fadd && fmul && smHz && dramBw) {
    p.source = "roofline chart";
    double ffma = ffmaOps ? *ffmaOps->value : 2 * *ffmaInst->value;  // "Operations" are 2 x FFMA
    p.flopsPerSec = (ffma + *fadd->value + *fmul->value) * *smHz->value;
    // fp64 work, when the chart shows it.
    const char* dpa = "Double Precision Achieved Value";
    if (const Metric* dfma = chart(l, "Predicated-On DFMA Operations Per Cycle", dpa)) {
      const Metric* dadd = chart(l, "Predicated-On DADD Thread Instructions Executed Per Cycle", dpa);
      const Metric* dmul = chart(l, "Predicated-On DMUL Thread Instructions Executed Per Cycle", dpa);
      p.flopsPerSec += (*dfma->value + (dadd ? *dadd->value : 0) + (dmul ? *dmul->value : 0)) * *smHz->value;
    }
    p.bytesPerSec = *dramBw->value;
    const Metric* peakOps = chart(l, "Theoretical Predicated-On FFMA Operations", sp);
    const Metric* peakSmHz = chart(l, "SM Frequency", sp);
    if (peakOps && peakSmHz)
      p.peakFlopsPerSec = *peakOps->value * *peakSmHz->value;
    else
      p.missing.push_back("Theoretical Predicated-On FFMA Operations (peak FLOP/s)");
    const Metric* peakB = chart(l, "Theoretical DRAM Bytes Accessible", sp);
    const Metric* dramHz = chart(l, "DRAM Frequency", sp);
    if (peakB && dramHz)
      p.peakBytesPerSec = *peakB->value * *dramHz->value;
    else
      p.missing.push_back("Theoretical DRAM Bytes Accessible x DRAM Frequency (peak bytes/s)");
  } else {
    auto ffma = counter(l, "ffma"), faddC = counter(l, "fadd"), fmulC = counter(l, "fmul");
    bool haveFp32 = ffma && faddC && fmulC;
    std::optional<double> bytes = km.dramBytes;
    if (!km.durationNs) p.missing.push_back("gpu__time_duration.sum");
    bool tensorWork = tensor && *tensor > 0;
    if (!haveFp32 && !tensorWork) {
      if (!ffma) p.missing.push_back("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
      if (!faddC) p.missing.push_back("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum");
      if (!fmulC) p.missing.push_back("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum");
      p.missing.push_back("(or the SpeedOfLight_RooflineChart section)");
    }
    if (!bytes) p.missing.push_back("dram__bytes.sum (or dram__bytes_read.sum + dram__bytes_write.sum)");
    if (!p.missing.empty()) return p;
    if (!haveFp32) p.missing.push_back("fp32 FADD/FMUL/FFMA counters (FLOPs count tensor-pipe ops only)");
    p.source = "counters";
    double seconds = *km.durationNs * 1e-9;
    double flops = haveFp32 ? *faddC + *fmulC + 2 * *ffma : 0;
    for (const char* op : {"dadd", "dmul"})
      if (auto v = counter(l, op)) flops += *v;
    if (auto v = counter(l, "dfma")) flops += 2 * *v;
    p.flopsPerSec = seconds > 0 ? flops / seconds : 0;
    p.bytesPerSec = seconds > 0 ? *bytes / seconds : 0;
    auto peakFfma = metricValue(l, {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"});
    auto smCps = metricValue(l, {"sm__cycles_elapsed.avg.per_second"});
    if (peakFfma && smCps)
      p.peakFlopsPerSec = *peakFfma * 2 * *smCps;
    else
      p.missing.push_back(
          "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained x sm__cycles_elapsed.avg.per_second (peak "
          "FLOP/s)");
    auto peakB = metricValue(l, {"dram__bytes.sum.peak_sustained"});
    auto dramCps = metricValue(l, {"dram__cycles_elapsed.avg.per_second"});
    if (peakB && dramCps)
      p.peakBytesPerSec = *peakB * *dramCps;
    else
      p.missing.push_back("dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second (peak bytes/s)");
  }
  if (tensor && km.durationNs && *km.durationNs > 0) {
    p.tensorFlopsPerSec = *tensor / (*km.durationNs * 1e-9);
    p.flopsPerSec += *p.tensorFlopsPerSec;
  }
  if (p.bytesPerSec <= 0) {
    p.missing.push_back("non-zero DRAM traffic (intensity undefined)");
    return p;
  }
  p.ok = true;
  p.intensity = p.flopsPerSec / p.bytesPerSec;
  if (p.peakFlopsPerSec && p.peakBytesPerSec && *p.peakBytesPerSec > 0)
    p.ridge = *p.peakFlopsPerSec / *p.peakBytesPerSec;
  return p;
}

}  // namespace kl::ncu
