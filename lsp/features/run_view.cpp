// The run view: what the current results are, for an editor panel (VS Code: "kernlens: Show
// run"; Neovim: the quickfix list).
//
// kernlens.runSummary [] -> null when there are no results, else
//   {runId, headline, backend, emulated, gpu, command, status, error, rounds, stopReason, why,
//    totalGpu, mappedShare, profile, runDir, logPath,
//    hottest: [{path, file, uri, line (1-based), time, ns, share, kind: "line"|"call", text,
//               kernels}],            // the 20 hottest lines of all files by own GPU time, then
//                                     // the call lines by their total
//    unmapped: [{name, time, ns, launches, reason}]}  // GPU ops no workspace line owns
// Numbers come from the ResultSet the editor shows; run state, rounds and the unmapped reasons
// from the store (.kernlens/kernlens.db) when the results are a stored run; the stop reason of a
// run made in this session from the loop itself (ResultStore::lastOutcome()).
//
// kernlens.exportRun [{"format": "html"|"perfetto"}] -> {path}: writes the HTML report
// (`kernlens report`) or a Perfetto trace (`kernlens export --format perfetto`) of the results'
// profile next to it (the run directory, else the profile's directory), with the core functions
// those commands use (never by running the CLI).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/analysis/perfetto.h"
#include "core/analysis/report.h"
#include "core/analysis/view.h"
#include "core/attribution/attribution.h"
#include "core/attribution/kernel_label.h"
#include "core/results/format.h"
#include "core/results/line_view.h"
#include "core/runner/profile_inputs.h"
#include "core/store/store.h"
#include "lsp/features/feature_context.h"
#include "lsp/protocol/commands.h"
#include "lsp/server/server.h"
#include "lsp/server/uri.h"

namespace kl::lsp {

namespace fs = std::filesystem;

namespace {

struct StoreFacts {
  bool found = false;
  store::RunInfo run;
  int rounds = 0;
  std::vector<attribution::UnmappedEntry> unmapped;
};

/// The stored run `runKey` of the workspace: its row, round count and last round's unmapped ops.
StoreFacts storeFacts(const fs::path& root, const std::string& runKey) {
  StoreFacts out;
  std::error_code ec;
  auto db = store::Store::dbPathFor(root);
  if (runKey.empty() || !fs::exists(db, ec)) return out;
  auto st = store::Store::openFile(db);
  if (!st) return out;
  auto runs = st->runs(50);
  if (!runs) return out;
  for (const auto& r : *runs) {
    if (r.key != runKey) continue;
    out.found = true;
    out.run = r;
    if (auto rounds = st->rounds(r.id); rounds && !rounds->empty()) {
      out.rounds = static_cast<int>(rounds->size());
      if (auto un = st->unmapped(rounds->back().id)) out.unmapped = std::move(*un);
    }
    break;
  }
  return out;
}

std::string reasonText(attribution::UnmappedReason reason) {
  switch (reason) {
    case attribution::UnmappedReason::NoLaunchCall: return "no launch call recorded (e.g. a library-internal launch)";
    case attribution::UnmappedReason::OutsideRanges: return "launched outside every profiled range";
    case attribution::UnmappedReason::BadRangeName: return "its range name does not parse";
  }
  return std::string(attribution::unmappedReasonName(reason));
}

/// The first line of a result's statement in the profiled snapshot, trimmed and cut to 60
/// characters; the range label when there is no snapshot.
std::string lineText(const results::FileResult& f, const results::LineResult& l) {
  if (!f.hasSnapshot) return l.label.empty() ? l.function : l.label;
  size_t start = 0;
  for (uint32_t i = 0; i < l.line && start != std::string::npos; ++i) {
    start = f.snapshot.find('\n', start);
    if (start != std::string::npos) ++start;
  }
  if (start == std::string::npos) return l.label;
  size_t end = f.snapshot.find('\n', start);
  std::string t = f.snapshot.substr(start, end == std::string::npos ? std::string::npos : end - start);
  while (!t.empty() && (t.back() == '\r' || t.back() == ' ' || t.back() == '\t')) t.pop_back();
  size_t first = t.find_first_not_of(" \t");
  t = first == std::string::npos ? std::string() : t.substr(first);
  if (attribution::displayWidth(t) > 60) {
    size_t cut = 59;  // bytes >= code points: cut at a code point start
    while (cut > 0 && (static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) --cut;
    t = t.substr(0, cut) + "…";
  }
  return t;
}

json summary(const FeatureContext& ctx, const StoreFacts& facts) {
  const auto& rs = *ctx.results->results();
  const auto& root = ctx.server.workspace().root();
  const auto& p = rs.provenance;
  auto units = ctx.settings.units;
  auto share = [&](int64_t ns) {
    return rs.totalGpuNs > 0 ? formatShare(static_cast<double>(ns) / static_cast<double>(rs.totalGpuNs))
                             : std::string();
  };
  json s = {{"runId", p.runId},
            {"backend", p.backend},
            {"emulated", p.emulated},
            {"gpu", p.gpu},
            {"command", p.command},
            {"profile", p.profilePath},
            {"totalGpu", formatDuration(rs.totalGpuNs, units)},
            {"provisional", ctx.results->provisional()}};
  int64_t mapped = 0;
  struct Hot {
    const results::FileResult* file;
    const results::LineResult* line;
    bool call;
  };
  std::vector<Hot> own, calls;
  for (const auto& f : rs.files)
    for (const auto& l : f.lines) {
      mapped += l.gpuNs;
      if (l.gpuNs > 0) own.push_back({&f, &l, false});
      if (l.isCallLine()) calls.push_back({&f, &l, true});
    }
  std::sort(own.begin(), own.end(), [](const Hot& a, const Hot& b) { return a.line->gpuNs > b.line->gpuNs; });
  std::sort(calls.begin(), calls.end(),
            [](const Hot& a, const Hot& b) { return a.line->inclusiveNs > b.line->inclusiveNs; });
  if (own.size() > 20) own.resize(20);
  if (calls.size() > 10) calls.resize(10);
  own.insert(own.end(), calls.begin(), calls.end());
  json hottest = json::array();
  results::ViewOptions vo;
  vo.units = units;
  for (const auto& h : own) {
    // The figures of the line's description (results::LineView): the same words as its hover and hint.
    const results::LineView v = results::describeLine(rs, *h.file, *h.line, false, vo);
    int64_t ns = h.call ? v.inclusiveNs : v.gpuNs;
    fs::path abs = root.empty() ? fs::path(h.file->path) : root / h.file->path;
    hottest.push_back({{"path", h.file->path},
                       {"file", abs.string()},
                       {"uri", pathToUri(abs)},
                       {"line", v.line + 1},
                       {"ns", ns},
                       {"time", h.call ? v.text.inclusive : v.text.time},
                       {"share", share(ns)},
                       {"kind", h.call ? "call" : "line"},
                       {"text", lineText(*h.file, *h.line)},
                       {"kernels", v.distinctKernels}});
  }
  s["hottest"] = std::move(hottest);
  s["mappedShare"] = share(mapped);
  json unmapped = json::array();
  if (facts.found) {
    for (const auto& u : facts.unmapped)
      unmapped.push_back({{"name", u.name},
                          {"ns", u.gpuNs},
                          {"time", formatDuration(u.gpuNs, units)},
                          {"launches", u.launches},
                          {"reason", reasonText(u.reason)}});
  } else {
    for (const auto& name : rs.unmapped.topKernels)
      unmapped.push_back({{"name", name}, {"reason", "launched outside every profiled line"}});
  }
  s["unmapped"] = std::move(unmapped);
  s["unmappedTotal"] = formatDuration(rs.unmapped.gpuNs, units);
  std::string stop, why;
  int rounds = facts.rounds;
  if (const auto& o = ctx.results->lastOutcome(); o && o->runKey == p.runId) {
    stop = o->stopReason;
    why = o->why;
    rounds = o->rounds;
  }
  if (facts.found) {
    s["status"] = store::runStatusName(facts.run.status);
    s["error"] = facts.run.error;
    s["runDir"] = facts.run.runDir;
    s["logPath"] = facts.run.logPath;
    if (stop.empty())
      stop = facts.run.status == store::RunStatus::Ok ? "finished" : store::runStatusName(facts.run.status);
  }
  s["rounds"] = rounds;
  s["stopReason"] = stop;
  s["why"] = why;
  std::string headline = p.runId + " · " + p.backend + (p.emulated ? " (emulated)" : "");
  if (rounds > 0) headline += " · " + std::to_string(rounds) + (rounds == 1 ? " round" : " rounds");
  if (!stop.empty()) headline += " · " + stop;
  if (ctx.results->provisional()) headline += " · running";
  s["headline"] = headline;
  return s;
}

/// Writes the run's profile as the HTML report (`report.html`) or the Perfetto trace
/// (`trace.perfetto.json`) next to it, with the core loader, attribution and writers that
/// `kernlens report` / `kernlens export --format perfetto` use: front ends never run each other.
Result<fs::path> exportProfile(const fs::path& prof, bool html, runner::ProfileInputOptions inputs,
                               const CancellationToken& token) {
  inputs.cancel = token;
  auto model = runner::loadProfileModel({prof}, inputs);
  if (!model) return model.error();
  auto attr = attribution::attribute(*model, {});
  if (!attr) return attr.error();
  if (token.isCancelled()) return Error::cancelled();
  const analysis::View v(*model, analysis::Scope{}, &*attr);
  fs::path out = prof.parent_path() / (html ? "report.html" : "trace.perfetto.json");
  std::ofstream os(out, std::ios::binary | std::ios::trunc);
  if (!os) return Error::io("kernlens: cannot write " + out.string());
  if (html) {
    analysis::ReportOptions ro;
    ro.title = prof.filename().string();
    analysis::writeReport(os, v, ro);
  } else {
    analysis::writePerfetto(os, v);
  }
  os.flush();
  if (!os) return Error::io("kernlens: write to " + out.string() + " failed");
  return out;
}

}  // namespace

void registerRunView(Server& server, std::shared_ptr<FeatureContext> ctx) {
  server.command<NoArguments>("kernlens.runSummary", [&server, ctx](const NoArguments&, Reply<json> reply) {
    if (!ctx->results->results()) return reply(json(nullptr));
    std::string runKey = ctx->results->results()->provenance.runId;
    using Out = std::shared_ptr<StoreFacts>;
    server.background<Out>(
        "kernlens.runSummary", CancellationToken(),
        [root = server.workspace().root(), runKey](const CancellationToken&) {
          return std::make_shared<StoreFacts>(storeFacts(root, runKey));
        },
        [ctx, reply](Out facts) {
          if (!ctx->results->results()) return reply(json(nullptr));
          reply(summary(*ctx, *facts));
        });
  });

  server.command<ExportRunArgs>("kernlens.exportRun", [&server, ctx](const ExportRunArgs& args, Reply<json> reply) {
    const std::string& format = args.format;
    if (format != "html" && format != "perfetto")
      return reply.error(ErrorCode::InvalidParams, "kernlens.exportRun: format must be \"html\" or \"perfetto\"");
    if (!ctx->results->results()) return reply.error(ErrorCode::RequestFailed, "kernlens: no results to export");
    std::string profile = ctx->results->results()->provenance.profilePath;
    if (profile.empty())
      return reply.error(ErrorCode::RequestFailed, "kernlens: the current results name no profile file");
    fs::path prof(profile);
    if (prof.is_relative() && !server.workspace().root().empty()) prof = server.workspace().root() / prof;
    // The loader's options: the environment's (read here, at the edge), the setting's nsys first.
    auto inputs = runner::ProfileInputOptions::fromEnvironment([](const char* name) { return std::getenv(name); });
    inputs.base = server.workspace().root();
    if (std::string nsys = server.settings().get<std::string>("nsysPath", ""); !nsys.empty()) inputs.nsys = nsys;
    server.backgroundReply<json>(reply, [prof, format, inputs](const CancellationToken& token) -> Result<json> {
      std::error_code ec;
      if (!fs::exists(prof, ec)) return Error::notFound("kernlens: the run's profile is gone: " + prof.string());
      auto out = exportProfile(prof, format == "html", inputs, token);
      if (!out) return out.error();
      return json{{"path", out->string()}, {"uri", pathToUri(*out)}, {"format", format}};
    });
  });
}

}  // namespace kl::lsp
