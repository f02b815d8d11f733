// `kernlens cute summary|export|map`: intra-kernel regions of CUTE DSL kernels.
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/cute/buffer.h"
#include "core/cute/regions.h"
#include "core/cute/source_map.h"
#include "core/support/format.h"

namespace kl::cli {
namespace {

struct Loaded {
  cute::EventBuffer buf;
  cute::TagTable tags;
  std::optional<cute::CuteSourceMap> map;
};

Loaded load(const Args& args) {
  if (args.positional().size() != 2) throw UsageError("expected one BUFFER (.bin or .npy)");
  if (args.has("--tags") && args.has("--source")) throw UsageError("give --tags or --source, not both");
  std::optional<int64_t> cap;
  if (auto c = args.getInt("--capacity")) {
    if (*c < 0) throw UsageError("--capacity must not be negative");
    cap = *c;
  }
  Loaded l;
  l.buf = orFail(cute::readEventBuffer(args.positional()[1], cap));
  if (auto t = args.get("--tags")) l.tags = orFail(cute::readTagFile(*t));
  if (auto s = args.get("--source")) {
    l.map = orFail(cute::mapCuteSourceFile(*s));
    l.tags = l.map->tagTable();
  }
  return l;
}

int summary(const Args& args, Context& ctx) {
  Format format = args.format({Format::Text, Format::Json});
  Loaded l = load(args);
  auto stats = cute::summarize(l.buf, l.tags);
  auto lineOf = [&](int64_t tag) -> std::optional<uint32_t> {
    if (!l.map) return std::nullopt;
    for (const auto& s : l.map->sites)
      if (s.tag == tag) return s.anchorLine + 1;
    return std::nullopt;
  };
  if (format == Format::Json) {
    nlohmann::json tags = nlohmann::json::array();
    for (const auto& s : stats) {
      nlohmann::json o = {{"tag_id", s.tag},   {"name", s.name},    {"count", s.count},      {"mean_ns", s.meanNs},
                          {"min_ns", s.minNs}, {"max_ns", s.maxNs}, {"total_ns", s.totalNs}, {"share", s.share}};
      if (auto ln = lineOf(s.tag)) o["line"] = *ln;
      tags.push_back(o);
    }
    nlohmann::json out = {{"units", l.buf.units},          {"capacity_per_unit", l.buf.capacity},
                          {"events", l.buf.events.size()}, {"overflow_events", l.buf.totalOverflow()},
                          {"warnings", l.buf.warnings},    {"tags", tags}};
    if (l.map) out["source_warnings"] = l.map->warnings;
    ctx.out << out.dump(2) << "\n";
    return 0;
  }
  ctx.out << l.buf.events.size() << " event(s) in " << l.buf.units << " unit(s) of capacity " << l.buf.capacity << "\n";
  for (const auto& w : l.buf.warnings) ctx.out << "warning: " << w << "\n";
  if (l.map)
    for (const auto& w : l.map->warnings) ctx.out << "warning: " << w << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : stats) {
    auto ln = lineOf(s.tag);
    rows.push_back({std::to_string(s.tag), s.name, std::to_string(s.count), formatDuration(s.meanNs),
                    formatDuration(static_cast<double>(s.minNs)), formatDuration(static_cast<double>(s.maxNs)),
                    formatShare(s.share, ShareDigits::Table), ln ? std::to_string(*ln) : "-"});
  }
  printTable(ctx.out, {"tag", "name", "count", "mean", "min", "max", "share", "line"}, rows,
             {true, false, true, true, true, true, true, true});
  return 0;
}

int exportTrace(const Args& args, Context& ctx) {
  auto outPath = args.get("-o");
  if (!outPath) throw UsageError("cute export needs -o trace.json");
  Loaded l = load(args);
  std::ofstream f(*outPath, std::ios::binary);
  if (!f) throw InputError(*outPath + ": cannot write");
  cute::writePerfettoJson(f, l.buf, l.tags);
  f.close();
  if (!f) throw InputError(*outPath + ": write failed");
  for (const auto& w : l.buf.warnings) ctx.err << "warning: " << w << "\n";
  ctx.out << "wrote " << *outPath << ": " << l.buf.events.size() << " region(s); open it in https://ui.perfetto.dev\n";
  return 0;
}

int mapCmd(const Args& args, Context& ctx) {
  if (args.positional().size() != 2) throw UsageError("expected one KERNEL.py");
  auto m = orFail(cute::mapCuteSourceFile(args.positional()[1]));
  Format format = args.format({Format::Text, Format::Json});
  if (format == Format::Json) {
    nlohmann::json sites = nlohmann::json::array();
    for (const auto& s : m.sites)
      sites.push_back({{"constant", s.constant},
                       {"tag_id", s.tag},
                       {"api", s.api},
                       {"function", s.function},
                       {"line", s.anchorLine + 1},
                       {"region_first_line", s.region.first + 1},
                       {"region_last_line", s.region.last + 1}});
    nlohmann::json consts = nlohmann::json::array();
    for (const auto& c : m.constants) consts.push_back({{"name", c.name}, {"value", c.value}, {"line", c.line + 1}});
    ctx.out << nlohmann::json{{"constants", consts}, {"sites", sites}, {"warnings", m.warnings}}.dump(2) << "\n";
    return 0;
  }
  for (const auto& s : m.sites)
    ctx.out << s.constant << " (" << (s.tag >= 0 ? std::to_string(s.tag) : "?") << ") " << s.api << " at line "
            << s.anchorLine + 1 << ", times lines " << s.region.first + 1 << "-" << s.region.last + 1
            << (s.function.empty() ? "" : " in " + s.function) << "\n";
  for (const auto& w : m.warnings) ctx.out << "warning: " << w << "\n";
  return 0;
}

int run(const Args& args, Context& ctx) {
  if (args.positional().empty()) throw UsageError("missing subcommand (summary, export or map)");
  const std::string& sub = args.positional()[0];
  if (sub == "summary") return summary(args, ctx);
  if (sub == "export") return exportTrace(args, ctx);
  if (sub == "map") return mapCmd(args, ctx);
  throw UsageError("unknown subcommand '" + sub + "' (summary, export or map)");
}

Registrar reg{
    Command{"cute",
            "intra-kernel regions of CUTE DSL kernels: per-tag summary, Perfetto export, tag map",
            "usage: kernlens cute summary BUFFER [--tags FILE | --source KERNEL.py] [--capacity N]\n"
            "                             [--format text|json]\n"
            "       kernlens cute export BUFFER -o trace.json [--tags FILE | --source KERNEL.py] [--capacity N]\n"
            "       kernlens cute map KERNEL.py [--format text|json]\n"
            "\n"
            "BUFFER is the int64 event buffer the kernel wrote ([count, then per event: start_ns, dur_ns,\n"
            "tag_id, tid]), as raw little-endian .bin or .npy. A 2-D .npy (units, 1+4k) or --capacity k\n"
            "gives several units. Overflow (count > capacity) and malformed buffers are reported.\n"
            "Tag names: --tags (one per line, line N = id N-1) or --source (the TAG_X = n constants of the\n"
            "kernel file, found with tree-sitter with their profile_region / lane0_warp0_stop call sites).\n"
            "summary: per tag count, mean, min, max, share of region time. export: Chrome/Perfetto JSON,\n"
            "one track per tid. map: which lines each tag times.\n",
            {{"--tags"}, {"--source"}, {"--capacity"}, {"--format"}, {"-o"}},
            run}};

}  // namespace
}  // namespace kl::cli
