// `kernlens iters FILE...`: iteration detection (step ranges, else a repeating kernel sequence).
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/iters.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeIters(v);
  if (c.format == Format::Json) return printJson(ctx.out, r, v);
  bool csv = c.format == Format::Csv;
  auto f = [csv](int64_t ns) { return durationCell(ns, csv); };
  std::vector<std::vector<std::string>> rows;
  for (const auto& it : r.iterations)
    rows.push_back(
        {it.label, f(v.rel(it.start)), f(v.rel(it.end)), f(it.end - it.start), std::to_string(it.ops), f(it.gpuNs)});
  if (csv) {
    printCsv(ctx.out, {"label", "start_ns", "end_ns", "duration_ns", "ops", "gpu_ns"}, rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, lp->model);
  o << "method: " << analysis::iterMethodName(r.method) << " — " << r.detail << "\n";
  if (r.iterations.empty()) return 0;
  o << r.iterations.size() << " iterations: median " << formatDuration(static_cast<double>(r.durations.p50))
    << ", mean " << formatDuration(r.durations.mean) << ", min " << formatDuration(static_cast<double>(r.durations.min))
    << ", max " << formatDuration(static_cast<double>(r.durations.max)) << "\n";
  printTable(o, {"iteration", "start", "end", "duration", "ops", "gpu time"}, rows,
             {false, true, true, true, true, true});
  return 0;
}

Registrar reg{Command{"iters", "detect iterations (steps) and their durations",
                      "usage: kernlens iters FILE... [--format text|json|csv] [--gpu N] [--trim START END]\n\n"
                      "Method 1 (\"nvtx\"): ranges named like steps - ProfilerStep#N first, else names with\n"
                      "iter/iteration/step/batch/epoch followed by a number; the largest group of same-shaped\n"
                      "names wins. Method 2 (\"kernel-sequence\", a heuristic, used when method 1 finds\n"
                      "nothing): the kernel-name sequence of the busiest GPU is cut at each occurrence of an\n"
                      "anchor kernel; the anchor whose segments repeat identically over the most kernels\n"
                      "wins. The output always names the method used.\n\n" +
                          commonOptionsHelp(true),
                      profileOptions(), run}};

}  // namespace
}  // namespace kl::cli
