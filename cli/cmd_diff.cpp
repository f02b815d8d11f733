// `kernlens diff A B`: before/after comparison with a verdict a CI job can gate on.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/diff.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

constexpr int kRegressionExit = 3;

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  if (c.files.size() != 2) throw UsageError("diff needs exactly two profiles: A (before) and B (after)");
  analysis::DiffOptions o;
  if (auto t = args.getDouble("--threshold")) o.thresholdPct = *t;
  if (o.thresholdPct < 0) throw UsageError("--threshold needs a percentage >= 0");
  o.metric = analysis::diffMetricFromName(args.choice("--metric", {"total", "busy", "iter"}))
                 .value_or(analysis::DiffMetric::Total);
  auto top = args.getInt("--top").value_or(20);
  if (top < 0) throw UsageError("--top needs a value >= 0");
  bool noFail = args.has("--no-fail");
  auto a = loadProfile({c.files[0]}, ctx.err);
  auto b = loadProfile({c.files[1]}, ctx.err);
  const analysis::View va = a->view(c.scope), vb = b->view(c.scope);
  auto r = orFail(analysis::computeDiff(va, vb, o));
  int code = (r.verdict == analysis::DiffVerdict::Regression && !noFail) ? kRegressionExit : 0;
  if (c.format == Format::Json) {
    json::Writer w(ctx.out, 2);
    analysis::writeJson(w, r, static_cast<size_t>(top));
    ctx.out << "\n";
    return code;
  }
  auto rowsOf = [&](const std::vector<analysis::DiffRow>& rs, bool csv) {
    std::vector<std::vector<std::string>> rows;
    size_t n = top ? std::min<size_t>(static_cast<size_t>(top), rs.size()) : rs.size();
    for (size_t i = 0; i < n; ++i) {
      const auto& x = rs[i];
      char pct[32];
      std::snprintf(pct, sizeof pct, "%+.1f%%",
                    x.nsA ? 100.0 * static_cast<double>(x.delta()) / static_cast<double>(x.nsA) : 0.0);
      if (csv)
        rows.push_back({x.name, x.status(), std::to_string(x.countA), std::to_string(x.countB), std::to_string(x.nsA),
                        std::to_string(x.nsB), std::to_string(x.delta())});
      else
        rows.push_back({x.status(), std::to_string(x.countA), std::to_string(x.countB),
                        formatDuration(static_cast<double>(x.nsA)), formatDuration(static_cast<double>(x.nsB)),
                        (x.delta() > 0 ? "+" : "") + formatDuration(static_cast<double>(x.delta())),
                        x.countA ? pct : "", x.name});
    }
    return rows;
  };
  if (c.format == Format::Csv) {
    auto k = rowsOf(r.kernels, true);
    for (auto& row : k) row.insert(row.begin(), "kernel");
    auto g = rowsOf(r.ranges, true);
    for (auto& row : g) row.insert(row.begin(), "range");
    k.insert(k.end(), g.begin(), g.end());
    printCsv(ctx.out, {"what", "name", "status", "count_a", "count_b", "ns_a", "ns_b", "delta_ns"}, k);
    return code;
  }
  auto& o2 = ctx.out;
  noteEmulated(o2, a->model);
  noteEmulated(o2, b->model);
  char line[256];
  std::snprintf(line, sizeof line, "%s: A %s, B %s, delta %+.2f%% (threshold %.2f%%)", r.metricDetail.c_str(),
                formatDuration(r.valueA).c_str(), formatDuration(r.valueB).c_str(), r.deltaPct, o.thresholdPct);
  o2 << line << "\nverdict: " << analysis::diffVerdictName(r.verdict) << (code ? "  (exit status 3)" : "") << "\n";
  o2 << r.newKernels << " new kernel names (only in B), " << r.vanishedKernels << " vanished (only in A)\n\n";
  std::vector<std::string> head = {"status", "count A", "count B", "time A", "time B", "delta", "delta%", "name"};
  std::vector<bool> right = {false, true, true, true, true, true, true, false};
  o2 << "Kernels by |delta|:\n";
  printTable(o2, head, rowsOf(r.kernels, false), right, 90);
  if (!r.ranges.empty()) {
    o2 << "\nRanges by |delta| (GPU time of ops launched inside):\n";
    printTable(o2, head, rowsOf(r.ranges, false), right, 90);
  }
  return code;
}

Registrar reg{Command{"diff", "compare two profiles; exit 3 on a regression",
                      "usage: kernlens diff A B [--metric total|busy|iter] [--threshold PCT] [--top N] [--no-fail]\n"
                      "                     [--format text|json|csv] [--gpu N] [--trim START END]\n\n"
                      "Per-kernel and per-range GPU time in A (before) and B (after), the deltas, kernels\n"
                      "new in B and vanished from A, and a verdict on one metric:\n"
                      "  total  sum of GPU op durations (default)\n"
                      "  busy   GPU busy time (interval union per device, summed)\n"
                      "  iter   median iteration duration (see kernlens iters)\n"
                      "delta% = (B - A) / A * 100. Verdict: regression if delta% > PCT, improvement if\n"
                      "delta% < -PCT, else unchanged.\n\n"
                      "  --threshold PCT  tolerance in percent (default 5)\n"
                      "  --top N          rows per table (default 20, 0 = all)\n"
                      "  --no-fail        exit 0 even on a regression\n"
                      "Exit status: 0 unchanged or improvement, 3 regression (for CI gates), 1 bad input,\n"
                      "2 bad usage. A and B are single profiles (files or directories of ranks).\n" +
                          commonOptionsHelp(true),
                      profileOptions({{"--metric"}, {"--threshold"}, {"--top"}, {"--no-fail", false}}), run}};

}  // namespace
}  // namespace kl::cli
