// `kernlens sync FILE...`: CPU time blocked in synchronising CUDA calls, by kind, API, call site
// and thread.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/sync.h"
#include "core/support/format.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeSync(v);
  const auto& m = lp->model;
  if (c.format == Format::Json) return printJson(ctx.out, r, v);
  const size_t top = static_cast<size_t>(args.getInt("--top").value_or(20));
  bool csv = c.format == Format::Csv;
  auto f = [csv](int64_t ns) { return durationCell(ns, csv); };
  if (csv) {
    // One table: every grouping, tagged.
    std::vector<std::vector<std::string>> rows;
    auto add = [&](const char* group, const std::vector<analysis::SyncRow>& rs) {
      for (const auto& x : rs)
        rows.push_back({group, x.key, std::to_string(x.calls), f(x.totalNs), f(x.maxNs), x.file,
                        x.line ? std::to_string(x.line) : "", x.op, x.kinds});
    };
    add("kind", r.byKind);
    add("api", r.byApi);
    add("site", r.bySite);
    printCsv(ctx.out, {"group", "key", "calls", "total_ns", "max_ns", "file", "line", "op", "kinds"}, rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, m);
  if (r.calls == 0) {
    o << "No synchronising CUDA calls in scope (cudaDeviceSynchronize/StreamSynchronize/"
         "EventSynchronize, blocking memcpy).\n";
    return 0;
  }
  o << "CPU blocked in " << r.calls << " sync calls: " << formatDuration(static_cast<double>(r.blockedNs))
    << " (explicit " << formatDuration(static_cast<double>(r.explicitNs)) << ", implicit "
    << formatDuration(static_cast<double>(r.implicitNs)) << ")\n\n";
  auto table = [&](const std::vector<analysis::SyncRow>& rs, const char* what) {
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < rs.size() && (top == 0 || i < top); ++i)
      rows.push_back({std::to_string(rs[i].calls), f(rs[i].totalNs), f(rs[i].maxNs),
                      rs[i].key.empty() ? "(unknown call site)" : rs[i].key});
    printTable(o, {"calls", "blocked", "max", what}, rows, {true, true, true, false}, 100);
    o << "\n";
  };
  table(r.byKind, "kind");
  table(r.byApi, "API");
  if (r.withSite == 0)
    o << "Call sites: none known (the profile has no Python stacks, kl: ranges or NVTX ranges around\n"
         "the sync calls).\n\n";
  else
    table(r.bySite, "call site [ATen op]");
  std::vector<std::vector<std::string>> tr;
  for (size_t i = 0; i < r.threads.size() && (top == 0 || i < top); ++i) {
    const auto& t = r.threads[i];
    const auto& th = m.threads[t.thread];
    std::string name = std::string(m.str(th.name));
    tr.push_back({std::to_string(t.rank), std::to_string(m.processes[th.process].pid) + "/" + std::to_string(th.tid),
                  std::to_string(t.calls), f(t.blockedNs),
                  formatShare(t.apiSpanNs ? static_cast<double>(t.blockedNs) / static_cast<double>(t.apiSpanNs) : 0,
                              ShareDigits::Table),
                  name});
  }
  printTable(o, {"rank", "pid/tid", "calls", "blocked", "of API span", "thread"}, tr,
             {true, true, true, true, true, false});
  return 0;
}

Registrar reg{Command{"sync", "CPU time blocked in CUDA synchronisation, by kind, API and call site",
                      "usage: kernlens sync FILE... [--format text|json|csv] [--top N] [--trim START END]\n\n"
                      "CPU time blocked in calls that wait for the GPU: explicit (cudaDeviceSynchronize,\n"
                      "cudaStreamSynchronize, cudaEventSynchronize, cuCtxSynchronize, ...) and implicit\n"
                      "(blocking cudaMemcpy*, and cudaMemcpyAsync device -> pageable host memory). Each\n"
                      "call's CPU duration counts once. Grouped by kind, API, call site (kl: range, user\n"
                      "Python frame or NVTX range around the call, with the ATen op such as aten::item)\n"
                      "and thread. Definitions: docs/analyses.md#sync.\n"
                      "  --top N   rows per table (default 20, 0 = all)\n" +
                          commonOptionsHelp(true),
                      profileOptions({{"--top"}}), run}};

}  // namespace
}  // namespace kl::cli
