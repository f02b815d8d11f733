// `kernlens gaps FILE...`: GPU idle gaps per device/stream and the CPU activity during them.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/gaps.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  analysis::GapsOptions go;
  if (auto g = args.get("--min-gap")) go.minGapNs = parseDurationNs(*g, "--min-gap");
  if (go.minGapNs < 1) throw UsageError("--min-gap must be > 0");
  auto top = args.getInt("--top").value_or(20);
  if (top < 0) throw UsageError("--top needs a value >= 0");
  go.top = static_cast<size_t>(top);
  go.detail = std::min<size_t>(go.top, 200);
  go.perStream = args.has("--per-stream");
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeGaps(v, go);
  const auto& m = lp->model;
  if (c.format == Format::Json) return printJson(ctx.out, r, v);
  auto lane = [](const analysis::Gap& g) {
    return "r" + std::to_string(g.dev.rank) + " gpu" + std::to_string(g.dev.device) +
           (g.stream ? " s" + std::to_string(*g.stream) : std::string());
  };
  if (c.format == Format::Csv) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& g : r.top)
      rows.push_back({std::to_string(g.dev.rank), std::to_string(g.dev.device),
                      g.stream ? std::to_string(*g.stream) : "", std::to_string(v.rel(g.start)),
                      std::to_string(v.rel(g.end)), std::to_string(g.length()),
                      g.before != profile::kNone ? std::string(m.str(m.gpuOps[g.before].name)) : "",
                      g.after != profile::kNone ? std::string(m.str(m.gpuOps[g.after].name)) : "",
                      g.afterLaunch != profile::kNone ? (g.launchedDuringGap(m) ? "1" : "0") : "",
                      g.api.empty() ? "" : std::string(m.str(g.api[0].name))});
    printCsv(ctx.out,
             {"rank", "device", "stream", "start_ns", "end_ns", "duration_ns", "before", "after", "launched_during_gap",
              "cpu_top_api"},
             rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, m);
  o << "Idle time per lane (gaps >= " << formatDuration(static_cast<double>(go.minGapNs)) << " counted):\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto* ls : {&r.devices, &r.streams})
    for (const auto& l : *ls)
      rows.push_back({std::to_string(l.dev.rank), std::to_string(l.dev.device),
                      l.stream ? std::to_string(*l.stream) : "all", std::to_string(l.ops),
                      formatDuration(static_cast<double>(l.spanNs)), formatDuration(static_cast<double>(l.busyNs)),
                      formatDuration(static_cast<double>(l.idleNs)),
                      formatShare(l.spanNs ? static_cast<double>(l.idleNs) / static_cast<double>(l.spanNs) : 0,
                                  ShareDigits::Table),
                      std::to_string(l.gapCount), formatDuration(static_cast<double>(l.gapNs))});
  printTable(o, {"rank", "device", "stream", "ops", "span", "busy", "idle", "idle%", "gaps", "gap time"}, rows,
             std::vector<bool>(10, true));
  o << "\nLargest " << (go.perStream ? "stream" : "device") << " gaps:\n";
  for (const auto& g : r.top) {
    o << "  " << lane(g) << "  at " << formatDuration(static_cast<double>(v.rel(g.start))) << "  idle "
      << formatDuration(static_cast<double>(g.length())) << "\n";
    if (g.before != profile::kNone) o << "      previous op: " << m.str(m.gpuOps[g.before].name).substr(0, 100) << "\n";
    if (g.after != profile::kNone) o << "      next op:     " << m.str(m.gpuOps[g.after].name).substr(0, 100) << "\n";
    if (g.afterLaunch != profile::kNone) {
      const auto& call = m.apiCalls[g.afterLaunch];
      o << "      next op launched by " << m.str(call.name) << " ending "
        << formatDuration(static_cast<double>(call.end - g.start)) << " after the gap began"
        << (g.launchedDuringGap(m) ? "  (GPU was waiting for the launch)" : "") << "\n";
    }
    std::string cpu;
    for (const auto& a : g.api)
      cpu += (cpu.empty() ? "" : ", ") + std::string(m.str(a.name)) + " " + formatDuration(static_cast<double>(a.ns)) +
             " (" + std::to_string(a.count) + "x)";
    o << "      CPU API during gap: " << (cpu.empty() ? "none recorded" : cpu) << "\n";
    std::string rg;
    for (const auto& a : g.ranges)
      rg += (rg.empty() ? "" : " | ") + std::string(m.str(a.name)).substr(0, 60) + " " +
            formatDuration(static_cast<double>(a.ns));
    if (!rg.empty()) o << "      ranges open during gap: " << rg << "\n";
  }
  return 0;
}

Registrar reg{Command{"gaps", "GPU idle gaps and what the CPU did meanwhile",
                      "usage: kernlens gaps FILE... [--min-gap T] [--top N] [--per-stream]\n"
                      "                     [--format text|json|csv] [--gpu N] [--trim START END]\n\n"
                      "A gap is a stretch between two ops of a lane (a device = all its streams, or one\n"
                      "stream) when nothing of that lane runs; time before the first / after the last op\n"
                      "is not a gap. For the largest gaps: the ops around it, the launch call of the next\n"
                      "op (did the GPU wait for the CPU to launch?), the CUDA API calls and ranges of the\n"
                      "device's processes overlapping the gap.\n\n"
                      "  --min-gap T    smallest gap counted and listed (default 10us)\n"
                      "  --top N        gaps listed (default 20; CPU activity shown for the first 200)\n"
                      "  --per-stream   list stream gaps instead of device gaps\n" +
                          commonOptionsHelp(true),
                      profileOptions({{"--min-gap"}, {"--top"}, {"--per-stream", false}}), run}};

}  // namespace
}  // namespace kl::cli
