// `kernlens threads FILE...`: launches and API activity per CPU thread.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/threads.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeThreads(v);
  const auto& m = lp->model;
  if (c.format == Format::Json) return printJson(ctx.out, r, m);
  bool csv = c.format == Format::Csv;
  auto f = [csv](int64_t ns) { return durationCell(ns, csv); };
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : r.threads) {
    const auto& th = m.threads[t.thread];
    const auto& pr = m.processes[th.process];
    rows.push_back({std::to_string(pr.pid), std::to_string(th.tid), std::to_string(pr.rank),
                    std::string(m.str(th.name)), std::to_string(t.launches), std::to_string(t.ops),
                    std::to_string(t.distinctKernels), f(t.gpuNs), std::to_string(t.apiCalls), f(t.apiNs),
                    std::to_string(t.syncCalls), f(t.syncNs)});
  }
  if (csv) {
    printCsv(ctx.out,
             {"pid", "tid", "rank", "name", "launches", "ops", "distinct_kernels", "gpu_ns", "api_calls", "api_ns",
              "sync_calls", "sync_ns"},
             rows);
    return 0;
  }
  noteEmulated(ctx.out, m);
  ctx.out << "GPU work launched per CPU thread (" << r.unlinkedOps
          << " ops in scope have no launch call in the capture):\n";
  printTable(ctx.out,
             {"pid", "tid", "rank", "name", "launches", "ops", "kernels", "gpu time", "api calls", "api time", "syncs",
              "sync time"},
             rows, {true, true, true, false, true, true, true, true, true, true, true, true});
  return 0;
}

Registrar reg{Command{"threads", "GPU launches and CUDA API time per CPU thread",
                      "usage: kernlens threads FILE... [--format text|json|csv] [--gpu N] [--trim START END]\n\n"
                      "Per CPU thread: launch calls and GPU ops they launched (ops in scope), distinct\n"
                      "kernels, their GPU time; CUDA API calls starting in the window, their time, and\n"
                      "synchronising calls (cuda*Synchronize, StreamWaitEvent).\n\n" +
                          commonOptionsHelp(true),
                      profileOptions(), run}};

}  // namespace
}  // namespace kl::cli
