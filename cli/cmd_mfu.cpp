// `kernlens mfu FILE...`: achieved FLOP/s and MFU of GEMM / attention operators, per device,
// operator and source line.
#include <cstdio>

#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/mfu.h"
#include "core/support/format.h"

namespace kl::cli {
namespace {

std::string tflops(double flops, double ns) {
  if (flops <= 0 || ns <= 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f TFLOP/s", flops / ns / 1e3);
  return b;
}
std::string pct(double a, double b) { return a > 0 && b > 0 ? formatShare(a / b, ShareDigits::Table) : "-"; }
std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", x);
  return b;
}

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeMfu(v);
  const auto& m = lp->model;
  const size_t top = static_cast<size_t>(args.getInt("--top").value_or(20));
  if (c.format == Format::Json) return printJson(ctx.out, r, m, top);
  if (c.format == Format::Csv) {
    std::vector<std::vector<std::string>> rows;
    auto add = [&](const char* g, const std::vector<analysis::MfuGroup>& gs) {
      for (const auto& x : gs)
        rows.push_back(
            {g, x.key, x.file, x.line ? std::to_string(x.line) : "", std::to_string(x.invocations),
             std::to_string(x.kernels), num(x.flops), std::to_string(x.kernelNs),
             x.kernelNs ? num(x.flops * 1e9 / static_cast<double>(x.kernelNs)) : "",
             x.peakKnown && x.peakNs > 0 && x.kernelNs ? num(x.peakNs / static_cast<double>(x.kernelNs)) : ""});
    };
    add("operator", r.ops);
    add("line", r.lines);
    printCsv(
        ctx.out,
        {"group", "key", "file", "line", "invocations", "kernels", "flops", "kernel_ns", "achieved_flops_per_s", "mfu"},
        rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, m);
  if (r.source == analysis::FlopSource::None) {
    o << "No FLOPs: no GEMM/attention operator with recorded shapes (Kineto record_shapes=True,\n"
         "or emit_nvtx(record_shapes=True) ranges) launched a kernel in scope.\n";
  } else {
    o << "FLOPs from " << analysis::flopSourceName(r.source)
      << " (model FLOPs of GEMM/attention operators, docs/analyses.md#mfu)\n\n";
  }
  std::vector<std::vector<std::string>> dr;
  for (const auto& d : r.devices)
    dr.push_back({std::to_string(d.dev.rank), std::to_string(d.dev.device), d.gpuName.empty() ? "?" : d.gpuName,
                  d.peak ? d.peak->model : "unknown", num(d.flops), formatDuration(static_cast<double>(d.flopKernelNs)),
                  tflops(d.flops, static_cast<double>(d.flopKernelNs)),
                  d.peak ? pct(d.peakNs, static_cast<double>(d.flopKernelNs)) : "-",
                  tflops(d.flops, static_cast<double>(d.activeSpanNs)),
                  d.peak ? pct(d.peakNs, static_cast<double>(d.activeSpanNs)) : "-",
                  formatDuration(static_cast<double>(d.uncountedGemmNs))});
  printTable(o,
             {"rank", "dev", "gpu", "peak table", "FLOPs", "FLOP kernels", "in kernels", "kernel MFU", "over span",
              "run MFU", "uncounted GEMM"},
             dr, {true, true, false, false, true, true, true, true, true, true, true});
  auto groups = [&](const std::vector<analysis::MfuGroup>& gs, const char* what) {
    if (gs.empty()) return;
    o << "\n";
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < gs.size() && (top == 0 || i < top); ++i) {
      const auto& g = gs[i];
      rows.push_back({std::to_string(g.invocations), num(g.flops), formatDuration(static_cast<double>(g.kernelNs)),
                      tflops(g.flops, static_cast<double>(g.kernelNs)),
                      g.peakKnown ? pct(g.peakNs, static_cast<double>(g.kernelNs)) : "-",
                      g.key.empty() ? "(unknown call site)" : g.key});
    }
    printTable(o, {"calls", "FLOPs", "kernel time", "achieved", "MFU", what}, rows,
               {true, true, true, true, true, false}, 100);
  };
  groups(r.ops, "operator [dtype, formula]");
  groups(r.lines, "call site");
  if (!r.uncounted.empty()) {
    o << "\nGEMM-like kernels without FLOPs (no shapes recorded around their launch):\n";
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < r.uncounted.size() && (top == 0 || i < top); ++i)
      rows.push_back({std::to_string(r.uncounted[i].kernels),
                      formatDuration(static_cast<double>(r.uncounted[i].kernelNs)), r.uncounted[i].key});
    printTable(o, {"kernels", "time", "kernel"}, rows, {true, true, false}, 100);
  }
  return 0;
}

Registrar reg{Command{"mfu", "Achieved FLOP/s and MFU of GEMM/attention work, per GPU, operator and line",
                      "usage: kernlens mfu FILE... [--format text|json|csv] [--top N] [--gpu N] [--trim START END]\n\n"
                      "Model FLOPs of GEMM and attention operators from the shapes the trace records\n"
                      "(Kineto record_shapes=True Input Dims, emit_nvtx(record_shapes=True) sizes),\n"
                      "achieved FLOP/s in their kernels and over the GPU's active span, and MFU against\n"
                      "the GPU's dense datasheet peak for the operator's dtype (H100/H200/B200/A100/V100/\n"
                      "MI300X). Definitions and sources: docs/analyses.md#mfu.\n"
                      "  --top N   rows per table (default 20, 0 = all)\n" +
                          commonOptionsHelp(true),
                      profileOptions({{"--top"}}), run}};

}  // namespace
}  // namespace kl::cli
