// `kernlens nccl FILE...`: NCCL collectives by type.
#include <cstdio>

#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/nccl.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeNccl(v);
  const auto& m = lp->model;
  const size_t top = static_cast<size_t>(args.getInt("--top").value_or(20));
  if (c.format == Format::Json) return printJson(ctx.out, r, m, top);
  bool csv = c.format == Format::Csv;
  auto f = [csv](int64_t ns) { return durationCell(ns, csv); };
  auto g = [&](double x) {
    if (x <= 0) return std::string(csv ? "" : "-");
    char b[32];
    std::snprintf(b, sizeof b, csv ? "%.6g" : "%.1f", x);
    return std::string(b);
  };
  std::vector<std::vector<std::string>> pay;
  for (const auto& p : r.payloads)
    pay.push_back(
        {p.type, p.algo.empty() ? (csv ? "" : "-") : p.algo, p.proto.empty() ? (csv ? "" : "-") : p.proto, p.dtype,
         p.bytes < 0 ? (csv ? "" : "?") : (csv ? std::to_string(p.bytes) : formatBytes(static_cast<double>(p.bytes))),
         p.ranks ? std::to_string(p.ranks) : (csv ? "" : "?"), std::to_string(p.count), f(p.totalNs), g(p.algbwGBps()),
         g(p.busbwGBps()), g(p.peakGBps),
         p.peakGBps > 0 && p.busbwGBps() > 0
             ? (csv ? g(p.busbwGBps() / p.peakGBps) : formatShare(p.busbwGBps() / p.peakGBps, ShareDigits::Table))
             : (csv ? "" : "-")});
  std::vector<std::vector<std::string>> strag;
  for (const auto& s : r.stragglerRanks)
    strag.push_back(
        {std::to_string(s.rank), std::to_string(s.calls), std::to_string(s.last), f(s.waitedNs), f(s.causedNs)});
  const std::string table = args.getOr("--table", "collectives");
  if (csv && table == "payloads") {
    printCsv(ctx.out,
             {"type", "algorithm", "protocol", "dtype", "bytes", "ranks", "count", "total_ns", "algbw_gb_per_s",
              "busbw_gb_per_s", "link_peak_gb_per_s", "busbw_of_peak"},
             pay);
    return 0;
  }
  if (csv && table == "stragglers") {
    printCsv(ctx.out, {"rank", "calls", "last_arrivals", "waited_ns", "caused_ns"}, strag);
    return 0;
  }
  if (table != "collectives" && table != "payloads" && table != "stragglers")
    throw UsageError("option '--table' must be collectives, payloads or stragglers");
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : r.types)
    rows.push_back({t.type, std::to_string(t.count), f(t.totalNs),
                    f(t.count ? t.totalNs / static_cast<int64_t>(t.count) : 0), f(t.minNs), f(t.maxNs),
                    f(t.overlappedNs), f(t.totalNs - t.overlappedNs), std::to_string(t.devices)});
  if (csv) {
    printCsv(ctx.out,
             {"type", "count", "total_ns", "mean_ns", "min_ns", "max_ns", "overlapped_ns", "exposed_ns", "devices"},
             rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, m);
  if (r.types.empty())
    o << "No NCCL kernels (no kernel name contains 'nccl') in scope.\n";
  else {
    o << "NCCL kernels: " << formatDuration(static_cast<double>(r.ncclNs)) << " = "
      << formatShare(r.kernelNs ? static_cast<double>(r.ncclNs) / static_cast<double>(r.kernelNs) : 0,
                     ShareDigits::Table)
      << " of kernel time\n";
    printTable(o, {"collective", "count", "total", "mean", "min", "max", "overlapped", "exposed", "devices"}, rows,
               {false, true, true, true, true, true, true, true, true});
  }
  if (!r.payloads.empty()) {
    o << "\nPayloads (size S as in nccl-tests; bandwidth over kernel time; link = NVLink per direction):\n";
    printTable(o,
               {"collective", "algo", "proto", "dtype", "size", "ranks", "count", "total", "algbw GB/s", "busbw GB/s",
                "link GB/s", "of link"},
               pay, {false, false, false, false, true, true, true, true, true, true, true, true});
    if (r.knownSizeCalls == 0)
      o << "(sizes not recorded: Kineto traces carry them from PyTorch 2.1 on; nsys exports do not export NCCL's NVTX "
           "payloads)\n";
  }
  if (!r.stragglerRanks.empty()) {
    o << "\nStragglers (" << r.stragglerCalls.size()
      << " collective calls matched across ranks; arrival = kernel start):\n";
    printTable(o, {"rank", "calls", "last to arrive", "waited for others", "made others wait"}, strag,
               {true, true, true, true, true});
    std::vector<std::vector<std::string>> top5;
    for (size_t i = 0; i < r.stragglerCalls.size() && i < 5; ++i) {
      const auto& sc = r.stragglerCalls[i];
      top5.push_back({sc.type + " #" + std::to_string(sc.index), std::to_string(sc.ranks), std::to_string(sc.lastRank),
                      f(sc.skewNs)});
    }
    o << "\nLargest arrival skews:\n";
    printTable(o, {"call", "ranks", "last rank", "skew"}, top5, {false, true, true, true});
  }
  if (!r.ranges.empty()) {
    o << "\nNCCL ranges (NCCL domain, or text starting with nccl):\n";
    std::vector<std::vector<std::string>> rr;
    for (size_t i = 0; i < r.ranges.size() && i < 20; ++i)
      rr.push_back({std::to_string(r.ranges[i].count), formatDuration(static_cast<double>(r.ranges[i].totalNs)),
                    std::string(m.str(r.ranges[i].text))});
    printTable(o, {"count", "cpu time", "range"}, rr, {true, true, false});
  }
  return 0;
}

Registrar reg{
    Command{"nccl", "NCCL collectives by type, time and overlap",
            "usage: kernlens nccl FILE... [--format text|json|csv] [--table collectives|payloads|stragglers]\n"
            "                      [--top N] [--gpu N] [--trim START END]\n\n"
            "NCCL kernels (name contains 'nccl') grouped by collective type read from the name\n"
            "(ncclDevKernel_AllReduce_... -> AllReduce): count, time, and the part overlapped\n"
            "by compute kernels on the same GPU. Also NCCL ranges (NCCL NVTX domain,\n"
            "or text starting with nccl) by name. Payloads: message size, algorithm/protocol,\n"
            "algbw/busbw (nccl-tests formulas) against the NVLink peak; stragglers: which\n"
            "rank arrives last at each collective (several ranks). docs/analyses.md#nccl.\n"
            "  --table T   the CSV table: collectives (default), payloads, stragglers\n"
            "  --top N     straggler calls in JSON (default 20, 0 = all)\n\n" +
                commonOptionsHelp(true),
            profileOptions({{"--table"}, {"--top"}}), run}};

}  // namespace
}  // namespace kl::cli
