// `kernlens critical-path FILE...`: per iteration, CPU launch vs GPU execution on the step's
// critical path (launch-bound vs GPU-bound, time the GPU waited for the CPU).
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/critical_path.h"
#include "core/support/format.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeCriticalPath(v);
  if (c.format == Format::Json) return printJson(ctx.out, r, v);
  bool csv = c.format == Format::Csv;
  auto f = [csv](int64_t ns) { return durationCell(ns, csv); };
  std::vector<std::vector<std::string>> rows;
  for (const auto& i : r.iterations)
    rows.push_back({i.label, std::to_string(i.rank), std::to_string(i.ops), f(i.wallNs), f(i.gpuBusyNs), f(i.cpuLeadNs),
                    f(i.gpuWaitCpuNs), f(i.otherIdleNs), f(i.cpuTailNs), i.launchBound ? "launch" : "gpu"});
  if (csv) {
    printCsv(ctx.out,
             {"iteration", "rank", "ops", "wall_ns", "gpu_busy_ns", "cpu_lead_ns", "gpu_wait_cpu_ns", "other_idle_ns",
              "cpu_tail_ns", "bound"},
             rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, lp->model);
  if (r.iterations.empty()) {
    o << "No iterations found (no step-like NVTX/annotation ranges and no repeating kernel sequence).\n";
    return 0;
  }
  o << "Iterations: " << r.iterations.size() << " (" << analysis::iterMethodName(r.method) << ": " << r.detail << ")\n"
    << "Launch-bound: " << r.launchBound << " of " << r.iterations.size() << "; GPU waited for the CPU "
    << formatDuration(static_cast<double>(r.gpuWaitCpuNs)) << " = "
    << formatShare(r.wallNs ? static_cast<double>(r.gpuWaitCpuNs) / static_cast<double>(r.wallNs) : 0,
                   ShareDigits::Table)
    << " of iteration time\n\n";
  printTable(
      o,
      {"iteration", "rank", "ops", "wall", "GPU busy", "CPU lead", "GPU waits CPU", "other idle", "CPU tail", "bound"},
      rows, {false, true, true, true, true, true, true, true, true, false});
  return 0;
}

Registrar reg{Command{"critical-path", "Per iteration: launch-bound vs GPU-bound, time the GPU waited for the CPU",
                      "usage: kernlens critical-path FILE... [--format text|json|csv] [--gpu N] [--trim START END]\n\n"
                      "For every iteration (see `kernlens iters`), the step's time split into GPU busy,\n"
                      "CPU lead (before the first GPU op), GPU waiting for the CPU (idle holes whose next\n"
                      "op was launched only after the GPU went idle), other idle holes and CPU tail; an\n"
                      "iteration is launch-bound when the CPU parts exceed GPU busy time.\n"
                      "Definitions: docs/analyses.md#critical-path.\n" +
                          commonOptionsHelp(true),
                      profileOptions(), run}};

}  // namespace
}  // namespace kl::cli
