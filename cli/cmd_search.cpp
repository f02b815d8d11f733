// `kernlens search FILE... PATTERN`: kernels and ranges by name (substring or regex).
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/search.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  analysis::SearchOptions so;
  if (auto p = args.get("--pattern")) {
    so.pattern = *p;
  } else {
    if (c.files.size() < 2) throw UsageError("missing FILE or PATTERN");
    so.pattern = c.files.back();
    c.files.pop_back();
  }
  so.regex = args.has("--regex");
  so.kernels = !args.has("--ranges-only");
  so.ranges = !args.has("--kernels-only");
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = orFail(analysis::computeSearch(v, so));
  const auto& m = lp->model;
  if (c.format == Format::Json) return printJson(ctx.out, r, v);
  if (c.format == Format::Csv) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& k : r.kernels)
      rows.push_back({"kernel", std::string(m.str(k.name)), std::to_string(k.count), std::to_string(k.totalNs), "",
                      std::to_string(v.rel(k.firstStart))});
    for (const auto& rg : r.ranges)
      rows.push_back({"range", std::string(m.str(rg.text)), std::to_string(rg.invocations), std::to_string(rg.gpuNs),
                      std::to_string(rg.cpuNs), std::to_string(v.rel(rg.firstStart))});
    printCsv(ctx.out, {"what", "name", "count", "gpu_ns", "cpu_ns", "first_start_ns"}, rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, m);
  if (so.kernels) {
    o << r.kernels.size() << " kernel name(s) match '" << so.pattern << "':\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& k : r.kernels) {
      std::string where;
      for (profile::StrId t : k.innermostRanges) where += (where.empty() ? "" : " | ") + std::string(m.str(t));
      rows.push_back({formatDuration(static_cast<double>(k.totalNs)), std::to_string(k.count),
                      formatDuration(static_cast<double>(v.rel(k.firstStart))), std::string(m.str(k.name)), where});
    }
    printTable(o, {"total", "count", "first at", "kernel", "innermost ranges"}, rows, {true, true, true, false, false},
               80);
  }
  if (so.ranges) {
    o << (so.kernels ? "\n" : "") << r.ranges.size() << " range name(s) match '" << so.pattern << "':\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& rg : r.ranges)
      rows.push_back({formatDuration(static_cast<double>(rg.gpuNs)), formatDuration(static_cast<double>(rg.cpuNs)),
                      std::to_string(rg.invocations), std::to_string(rg.ops),
                      formatDuration(static_cast<double>(v.rel(rg.firstStart))), std::string(m.str(rg.text))});
    printTable(o, {"gpu time", "cpu time", "calls", "ops", "first at", "range"}, rows,
               {true, true, true, true, true, false}, 100);
  }
  return 0;
}

Registrar reg{Command{
    "search", "find kernels and ranges by name or regex",
    "usage: kernlens search FILE... PATTERN [--regex] [--kernels-only|--ranges-only]\n"
    "                       [--format text|json|csv] [--gpu N] [--trim START END]\n"
    "       kernlens search FILE... --pattern PATTERN ...\n\n"
    "PATTERN is a case-insensitive substring; with --regex an ECMAScript regular\n"
    "expression (case-insensitive) that must match somewhere in the name. Kernels are\n"
    "listed with count, total time, first occurrence and the innermost ranges that\n"
    "launched them; ranges with invocations, CPU time and the GPU time of the ops\n"
    "launched inside them.\n\n" +
        commonOptionsHelp(true),
    profileOptions({{"--pattern"}, {"--regex", false}, {"--kernels-only", false}, {"--ranges-only", false}}), run}};

}  // namespace
}  // namespace kl::cli
