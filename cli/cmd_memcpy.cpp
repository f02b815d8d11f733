// `kernlens memcpy FILE...`: transfers by kind, bytes, bandwidth.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/memcpy.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeMemcpy(v);
  if (c.format == Format::Json) return printJson(ctx.out, r);
  bool csv = c.format == Format::Csv;
  std::vector<std::vector<std::string>> rows;
  char buf[64];
  auto gb = [&](double x) {
    std::snprintf(buf, sizeof buf, csv ? "%.6f" : "%.2f", x);
    return std::string(buf);
  };
  for (const auto& row : r.rows)
    rows.push_back({row.kind, row.memory, std::to_string(row.count),
                    csv ? std::to_string(row.bytes) : formatBytes(static_cast<double>(row.bytes)),
                    csv ? std::to_string(row.totalNs) : formatDuration(static_cast<double>(row.totalNs)),
                    gb(row.avgGBps()), gb(row.minGBps), gb(row.maxGBps)});
  if (csv) {
    printCsv(ctx.out, {"kind", "memory", "count", "bytes", "total_ns", "avg_gbps", "min_gbps", "max_gbps"}, rows);
    return 0;
  }
  noteEmulated(ctx.out, lp->model);
  ctx.out << r.count << " transfers/memsets, " << formatBytes(static_cast<double>(r.bytes)) << " in "
          << formatDuration(static_cast<double>(r.totalNs)) << " (bandwidth = bytes / duration, GB/s = 1e9 B/s)\n";
  printTable(ctx.out, {"kind", "host memory", "count", "bytes", "time", "avg GB/s", "min GB/s", "max GB/s"}, rows,
             {false, false, true, true, true, true, true, true});
  return 0;
}

Registrar reg{Command{"memcpy", "memory transfers by kind, bytes and bandwidth",
                      "usage: kernlens memcpy FILE... [--format text|json|csv] [--gpu N] [--trim START END]\n\n"
                      "Copies grouped by direction (HtoD, DtoH, DtoD, PtoP, ...) and host memory kind\n"
                      "(pageable / pinned; pageable copies are staged by the driver), and memsets: count,\n"
                      "bytes, GPU time and bandwidth (bytes / duration; per-op min and max).\n\n" +
                          commonOptionsHelp(true),
                      profileOptions(), run}};

}  // namespace
}  // namespace kl::cli
