// `kernlens overlap FILE...`: compute vs NCCL vs memory-op overlap per GPU.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/overlap.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeOverlap(v);
  if (c.format == Format::Json) return printJson(ctx.out, r);
  std::vector<std::vector<std::string>> rows;
  bool csv = c.format == Format::Csv;
  auto f = [csv](int64_t ns) { return durationCell(ns, csv); };
  for (const auto& d : r.devices)
    rows.push_back({std::to_string(d.dev.rank), std::to_string(d.dev.device), f(d.activeSpanNs), f(d.busyNs),
                    f(d.computeNs), f(d.ncclNs), f(d.memNs), f(d.computeNcclNs), f(d.computeMemNs), f(d.ncclExposedNs),
                    f(d.memExposedNs), f(d.computeOnlyNs), f(d.idleNs)});
  if (csv) {
    printCsv(
        ctx.out,
        {"rank", "device", "active_span_ns", "busy_ns", "compute_ns", "nccl_ns", "memory_ns", "compute_nccl_overlap_ns",
         "compute_memory_overlap_ns", "nccl_exposed_ns", "memory_exposed_ns", "compute_only_ns", "idle_ns"},
        rows);
    return 0;
  }
  noteEmulated(ctx.out, lp->model);
  ctx.out << "Per GPU, lengths of interval unions (memory = memcpy + memset; exposed = not covered by compute):\n";
  printTable(ctx.out,
             {"rank", "device", "span", "busy", "compute", "nccl", "memory", "comp∩nccl", "comp∩mem", "nccl exposed",
              "mem exposed", "compute only", "idle"},
             rows, std::vector<bool>(13, true));
  return 0;
}

Registrar reg{Command{"overlap", "compute vs NCCL vs memcpy overlap per GPU",
                      "usage: kernlens overlap FILE... [--format text|json|csv] [--gpu N] [--trim START END]\n\n"
                      "Per (rank, device): the union of compute-kernel intervals C, of NCCL-kernel\n"
                      "intervals N (name contains 'nccl') and of memcpy/memset intervals M, clipped to the\n"
                      "window; their intersections, N - C (communication not hidden by compute), and idle\n"
                      "time inside the device's active span. Concurrent kernels count once.\n\n" +
                          commonOptionsHelp(true),
                      profileOptions(), run}};

}  // namespace
}  // namespace kl::cli
