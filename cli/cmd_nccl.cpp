// `kernlens nccl FILE...`: NCCL collectives by type.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/format.h"
#include "core/analysis/nccl.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

using analysis::fmtDuration;

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {"text", "json", "csv"});
  auto lp = loadProfile(c.files);
  analysis::View v(lp->model, c.scope, &lp->attr);
  auto r = analysis::computeNccl(v);
  const auto& m = lp->model;
  if (c.format == "json") return printJson(ctx.out, r, m);
  bool csv = c.format == "csv";
  auto f = [&](int64_t ns) { return csv ? std::to_string(ns) : fmtDuration(static_cast<double>(ns)); };
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : r.types)
    rows.push_back({t.type, std::to_string(t.count), f(t.totalNs), f(t.count ? t.totalNs / static_cast<int64_t>(t.count) : 0),
                    f(t.minNs), f(t.maxNs), f(t.overlappedNs), f(t.totalNs - t.overlappedNs), std::to_string(t.devices)});
  if (csv) {
    printCsv(ctx.out, {"type", "count", "total_ns", "mean_ns", "min_ns", "max_ns", "overlapped_ns", "exposed_ns", "devices"}, rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, m);
  if (r.types.empty()) o << "No NCCL kernels (no kernel name contains 'nccl') in scope.\n";
  else {
    o << "NCCL kernels: " << fmtDuration(static_cast<double>(r.ncclNs)) << " = "
      << analysis::fmtPercent(r.kernelNs ? static_cast<double>(r.ncclNs) / static_cast<double>(r.kernelNs) : 0)
      << " of kernel time\n";
    printTable(o, {"collective", "count", "total", "mean", "min", "max", "overlapped", "exposed", "devices"}, rows,
               {false, true, true, true, true, true, true, true, true});
  }
  if (!r.ranges.empty()) {
    o << "\nNCCL ranges (NCCL domain, or text starting with nccl):\n";
    std::vector<std::vector<std::string>> rr;
    for (size_t i = 0; i < r.ranges.size() && i < 20; ++i)
      rr.push_back({std::to_string(r.ranges[i].count), fmtDuration(static_cast<double>(r.ranges[i].totalNs)),
                    std::string(m.str(r.ranges[i].text))});
    printTable(o, {"count", "cpu time", "range"}, rr, {true, true, false});
  }
  return 0;
}

Registrar reg{Command{"nccl", "NCCL collectives by type, time and overlap",
                      "usage: kernlens nccl FILE... [--format text|json|csv] [--gpu N] [--trim START END]\n\n"
                      "NCCL kernels (name contains 'nccl') grouped by collective type read from the name\n"
                      "(ncclDevKernel_AllReduce_... -> AllReduce): count, time, and the part overlapped\n"
                      "by compute kernels on the same GPU. Also NCCL ranges (NCCL NVTX domain,\n"
                      "or text starting with nccl) by name.\n\n" +
                          commonOptionsHelp(true),
                      profileOptions(), run}};

}  // namespace
}  // namespace kl::cli
