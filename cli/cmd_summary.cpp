// `kernlens summary FILE...`: GPU time by kind, top kernels, per-stream totals.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/summary.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  size_t top = static_cast<size_t>(args.getInt("--top").value_or(20));
  bool shortNames = args.has("--short");
  // Names and times of ops (kernel details only for --short); no range statistics.
  auto lp = loadProfile(c.files, ctx.err, {.kernelDetails = shortNames, .rangeStats = false});
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeSummary(v, shortNames);
  const auto& m = lp->model;
  if (c.format == Format::Json) return printJson(ctx.out, r, m, top);
  size_t n = top ? std::min(top, r.kernelsByTime.size()) : r.kernelsByTime.size();
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < n; ++i) {
    const auto& k = r.kernelsByTime[i];
    if (c.format == Format::Csv)
      rows.push_back({std::string(m.str(k.name)), std::to_string(k.count), std::to_string(k.totalNs),
                      std::to_string(static_cast<int64_t>(k.meanNs)), std::to_string(k.minNs), std::to_string(k.maxNs),
                      std::to_string(k.share)});
    else
      rows.push_back({formatShare(k.share, ShareDigits::Table), formatDuration(static_cast<double>(k.totalNs)),
                      std::to_string(k.count), formatDuration(k.meanNs), formatDuration(static_cast<double>(k.minNs)),
                      formatDuration(static_cast<double>(k.maxNs)), std::string(m.str(k.name))});
  }
  if (c.format == Format::Csv) {
    printCsv(ctx.out, {"name", "count", "total_ns", "mean_ns", "min_ns", "max_ns", "share"}, rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, m);
  o << "GPU time: kernels " << formatDuration(static_cast<double>(r.kernelNs)) << " (" << r.kernels << "), memcpy "
    << formatDuration(static_cast<double>(r.memcpyNs)) << " (" << r.memcpys << "), memset "
    << formatDuration(static_cast<double>(r.memsetNs)) << " (" << r.memsets << "); " << r.kernelsByTime.size()
    << " kernel names; window " << formatDuration(static_cast<double>(r.windowNs)) << "\n\n";
  o << "Top kernels by total time:\n";
  printTable(o, {"share", "total", "count", "mean", "min", "max", "kernel"}, rows,
             {true, true, true, true, true, true, false}, 100);
  o << "\nStreams:\n";
  std::vector<std::vector<std::string>> srows;
  for (const auto& s : r.streams)
    srows.push_back({std::to_string(s.key.rank), std::to_string(s.key.device), std::to_string(s.key.stream),
                     std::to_string(s.kernels), formatDuration(static_cast<double>(s.kernelNs)),
                     std::to_string(s.memcpys), formatDuration(static_cast<double>(s.memcpyNs)),
                     formatDuration(static_cast<double>(s.busyNs)), std::string(m.str(s.topKernel))});
  printTable(o, {"rank", "device", "stream", "kernels", "kernel time", "memcpy", "memcpy time", "busy", "top kernel"},
             srows, {true, true, true, true, true, true, true, true, false}, 70);
  return 0;
}

Registrar reg{Command{"summary", "top kernels by GPU time, per-stream totals",
                      "usage: kernlens summary FILE... [--top N] [--short] [--format text|json|csv] [--gpu N]\n"
                      "                        [--trim START END]\n\n"
                      "Kernels grouped by name with count, total (sum of end - start), mean, min, max and\n"
                      "share of all kernel time; then per (rank, device, stream) totals and busy time\n"
                      "(interval union). CSV lists the kernel table.\n\n"
                      "  --top N     kernel rows to show (default 20, 0 = all)\n"
                      "  --short     group by the kernel's short name instead of the full demangled name\n" +
                          commonOptionsHelp(true),
                      profileOptions({{"--top"}, {"--short", false}}), run}};

}  // namespace
}  // namespace kl::cli
