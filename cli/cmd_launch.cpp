// `kernlens launch FILE...`: launch overhead and queue delay.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/launch.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

std::string distText(const analysis::Dist& d) {
  if (!d.count) return "(none)";
  return "n=" + std::to_string(d.count) + "  mean " + formatDuration(d.mean) + "  p50 " +
         formatDuration(static_cast<double>(d.p50)) + "  p90 " + formatDuration(static_cast<double>(d.p90)) + "  p99 " +
         formatDuration(static_cast<double>(d.p99)) + "  max " + formatDuration(static_cast<double>(d.max));
}

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  auto top = args.getInt("--top").value_or(20);
  if (top < 0) throw UsageError("--top needs a value >= 0");
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeLaunch(v);
  const auto& m = lp->model;
  if (c.format == Format::Json) return printJson(ctx.out, r, m, static_cast<size_t>(top));
  bool csv = c.format == Format::Csv;
  auto f = [&](double ns) { return csv ? std::to_string(static_cast<int64_t>(ns)) : formatDuration(ns); };
  std::vector<std::vector<std::string>> rows;
  size_t n = top ? std::min<size_t>(static_cast<size_t>(top), r.kernels.size()) : r.kernels.size();
  for (size_t i = 0; i < n; ++i) {
    const auto& k = r.kernels[i];
    rows.push_back({std::string(m.str(k.name)), std::to_string(k.count), f(k.meanApiNs), f(k.meanQueueNs),
                    f(static_cast<double>(k.maxQueueNs)), f(k.meanGpuNs)});
  }
  if (csv) {
    printCsv(ctx.out,
             {"name", "count", "mean_launch_overhead_ns", "mean_queue_delay_ns", "max_queue_delay_ns", "mean_gpu_ns"},
             rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, m);
  o << r.withLaunch << " of " << r.ops << " GPU ops have their launch call in the capture";
  if (r.negativeQueue) o << " (" << r.negativeQueue << " started before the call returned; counted as 0 delay)";
  o << "\nlaunch overhead (call end - call start, per call): " << distText(r.overhead) << "\n";
  o << "queue delay (op start - call end, per op):          " << distText(r.queue) << "\n";
  o << r.launchBoundKernels << " kernels ran shorter than their launch call\n\nBy launch API:\n";
  std::vector<std::vector<std::string>> arows;
  for (const auto& a : r.apis)
    arows.push_back({std::string(m.str(a.name)), std::to_string(a.overhead.count), formatDuration(a.overhead.mean),
                     formatDuration(static_cast<double>(a.overhead.p50)),
                     formatDuration(static_cast<double>(a.overhead.max))});
  printTable(o, {"api", "calls", "mean", "p50", "max"}, arows, {false, true, true, true, true});
  o << "\nKernels with the longest mean queue delay:\n";
  printTable(o, {"kernel", "count", "launch call", "queue delay", "max queue", "gpu time"}, rows,
             {false, true, true, true, true, true}, 90);
  return 0;
}

Registrar reg{
    Command{"launch", "launch overhead and queue delay",
            "usage: kernlens launch FILE... [--top N] [--format text|json|csv] [--gpu N] [--trim START END]\n\n"
            "For every GPU op whose launch call is in the capture (same process and correlation\n"
            "id): launch overhead = call end - call start (each call once); queue delay = op\n"
            "start - call end (negative values are counted and taken as 0). Distributions, per\n"
            "launch API, and per kernel (longest mean queue delay first; --top N, default 20).\n\n" +
                commonOptionsHelp(true),
            profileOptions({{"--top"}}), run}};

}  // namespace
}  // namespace kl::cli
