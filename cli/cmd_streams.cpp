// `kernlens streams FILE...`: stream concurrency per device and serialised queued pairs.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/streams.h"
#include "core/support/format.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeStreams(v);
  const auto& m = lp->model;
  const size_t top = static_cast<size_t>(args.getInt("--top").value_or(20));
  if (c.format == Format::Json) return printJson(ctx.out, r, m, top);
  bool csv = c.format == Format::Csv;
  auto f = [csv](int64_t ns) { return durationCell(ns, csv); };
  auto pct = [&](int64_t a, int64_t b) {
    return formatShare(b ? static_cast<double>(a) / static_cast<double>(b) : 0, ShareDigits::Table);
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : r.devices)
    rows.push_back({std::to_string(d.dev.rank), std::to_string(d.dev.device), std::to_string(d.streams.size()),
                    f(d.activeSpanNs), f(d.idleNs), f(d.oneNs), f(d.multiNs), std::to_string(d.maxConcurrent),
                    std::to_string(d.queuedPairs), f(d.serialisedNs)});
  if (csv) {
    printCsv(ctx.out,
             {"rank", "device", "streams", "active_span_ns", "idle_ns", "one_stream_ns", "multi_stream_ns",
              "max_concurrent", "queued_pairs", "serialised_ns"},
             rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, m);
  if (r.devices.empty()) {
    o << "No GPU ops in scope.\n";
    return 0;
  }
  printTable(
      o,
      {"rank", "device", "streams", "active span", "0 busy", "1 busy", "2+ busy", "max", "queued pairs", "serialised"},
      rows, {true, true, true, true, true, true, true, true, true, true});
  o << "\nPer stream:\n";
  std::vector<std::vector<std::string>> sr;
  for (const auto& d : r.devices)
    for (const auto& s : d.streams)
      sr.push_back({std::to_string(d.dev.rank), std::to_string(d.dev.device), std::to_string(s.stream),
                    std::to_string(s.ops), f(s.busyNs), pct(s.busyNs, d.activeSpanNs), f(s.soloNs)});
  printTable(o, {"rank", "device", "stream", "ops", "busy", "of span", "alone"}, sr,
             {true, true, true, true, true, true, true});
  if (!r.launchLinks) return 0;
  o << "\nSerialised on one stream (B queued behind A while no other stream ran; candidates, not\n"
       "proven independent):\n";
  if (r.pairs.empty()) {
    o << "  none\n";
    return 0;
  }
  std::vector<std::vector<std::string>> pr;
  auto cut = [](std::string_view n) {
    return n.size() > 56 ? std::string(n.substr(0, 55)) + "\xE2\x80\xA6" : std::string(n);
  };
  for (size_t i = 0; i < r.pairs.size() && (top == 0 || i < top); ++i) {
    const auto& p = r.pairs[i];
    pr.push_back({std::to_string(p.dev.rank) + "/" + std::to_string(p.dev.device) + "/" + std::to_string(p.stream),
                  std::to_string(p.count), f(p.serialisedNs), cut(m.str(p.first)) + " -> " + cut(m.str(p.second))});
  }
  printTable(o, {"rank/dev/stream", "pairs", "serialised", "A -> B"}, pr, {false, true, true, false}, 120);
  return 0;
}

Registrar reg{
    Command{"streams", "Stream concurrency per GPU: time with 0, 1, 2+ streams busy; serialised pairs",
            "usage: kernlens streams FILE... [--format text|json|csv] [--top N] [--gpu N] [--trim START END]\n\n"
            "Per GPU: time with 0, 1 and 2+ streams busy over its active span, per-stream busy\n"
            "and alone time, and pairs of consecutive ops on one stream where the second was\n"
            "already queued while only that stream ran (could overlap on another stream if\n"
            "independent). Definitions: docs/analyses.md#streams.\n"
            "  --top N   serialised pairs listed (default 20, 0 = all)\n" +
                commonOptionsHelp(true),
            profileOptions({{"--top"}}), run}};

}  // namespace
}  // namespace kl::cli
