// textDocument/hover on a mapped line (any line of a result's statement span): a Markdown
// table of the kernels the line launched (name, launches, total, avg, min–max, grid × block,
// stream, share of the function), the bound class when Nsight Compute data is loaded, the
// change against the previous run of the same function, and the provenance (run, backend,
// GPU, git commit, age; "emulated" when it is). null elsewhere.
#include <chrono>
#include <cstdio>

#include "core/results/format.h"
#include "core/support/escape.h"
#include "lsp/features/feature_context.h"
#include "lsp/server/server.h"

namespace kl::lsp {

namespace {

using results::formatDuration;

/// Markdown-safe inline code for a kernel name (table cells: '|' escaped, control characters
/// shown as escapes), cut to `max` bytes.
std::string code(std::string s, size_t max = 72) {
  if (s.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "…";
  }
  std::string out = "`";
  for (char c : terminalSafe(s)) {  // control characters as \x1b; a line break cannot end the row
    if (c == '|') out += "\\|";
    else if (c == '`') out += "'";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += ' ';
    else out += c;
  }
  return out + "`";
}

std::string streams(const std::vector<uint32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < 3; ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  if (ids.size() > 3) out += ", …";
  return out.empty() ? "?" : out;
}

std::string hoverText(const results::LineResult& line, const DocumentResults& dr,
                      const results::ResultSet& rs, const ResultStore& store,
                      results::Units units) {
  const auto& file = dr.file.file;
  const results::FunctionResult* fn = line.function.empty() ? nullptr : file.function(line.function);
  int64_t denom = fn && fn->gpuNs > 0 ? fn->gpuNs : rs.totalGpuNs;
  std::string md = "**GPU " + formatDuration(line.gpuNs, units) + "** · " +
                   results::kernelCount(line.distinctKernels()) + " · " +
                   std::to_string(line.ops) + (line.ops == 1 ? " launch" : " launches");
  if (denom > 0)
    md += " · " + results::formatShare(static_cast<double>(line.gpuNs) / static_cast<double>(denom)) +
          " of " + (fn ? "`" + fn->qualName + "`" : std::string("the run"));
  if (line.invocations > 1) md += " · " + std::to_string(line.invocations) + " invocations";
  if (rs.provenance.emulated) md += " · *emulated*";
  if (line.syncCalls)
    md += "\n\n**CPU blocked " + formatDuration(line.syncNs, units) + "** in " + std::to_string(line.syncCalls) +
          (line.syncCalls == 1 ? " sync call" : " sync calls") +
          " (cudaDeviceSynchronize / StreamSynchronize / EventSynchronize, blocking copies such as `.item()`)";
  md += "\n\n| kernel | launches | total | avg | min–max | grid × block | stream | share |\n"
        "|---|---:|---:|---:|---|---|---|---:|\n";
  for (const auto& k : line.kernels) {
    bool shapeKnown = k.grid[0] > 0 || k.block[0] > 0;
    std::string shape = k.kind != "kernel" ? k.kind
                        : !shapeKnown     ? std::string("—")
                                          : results::formatDims(k.grid) + " × " +
                                                results::formatDims(k.block) +
                                                (k.shapeVaries ? " (varies)" : "");
    std::string range = k.maxNs > 0 ? formatDuration(k.minNs, units) + "–" + formatDuration(k.maxNs, units)
                                    : std::string("—");
    md += "| " + code(k.name) + " | " + std::to_string(k.launches) + " | " +
          formatDuration(k.totalNs, units) + " | " + formatDuration(k.avgNs(), units) + " | " + range + " | " + shape +
          " | " + (k.streams.empty() ? std::string("—") : streams(k.streams)) + " | " +
          (denom > 0 ? results::formatShare(static_cast<double>(k.totalNs) / static_cast<double>(denom))
                     : std::string("?")) +
          " |\n";
  }
  std::string bounds;
  for (const auto& k : line.kernels)
    if (auto b = store.boundFor(k.fullName, k.name))
      bounds += "- " + code(k.name, 48) + ": **" + std::string(ncu::boundName(b->bound)) +
                "-bound** — " + b->summary + " *(" + BoundInfo::sourceName(b->source) + ")*\n";
  if (!bounds.empty()) md += "\nNsight Compute:\n" + bounds;
  if (fn) {
    auto it = rs.previousFunctions.find(results::functionKey(file.path, fn->qualName));
    if (it != rs.previousFunctions.end() && it->second.gpuNs > 0) {
      double change = static_cast<double>(fn->gpuNs - it->second.gpuNs) /
                      static_cast<double>(it->second.gpuNs);
      char pct[32];
      std::snprintf(pct, sizeof pct, "%+.0f %%", change * 100.0);
      md += "\nvs previous run" +
            (rs.previousRunId.empty() ? std::string() : " (`" + rs.previousRunId + "`)") + ": `" +
            fn->qualName + "` " + formatDuration(it->second.gpuNs, units) + " → " +
            formatDuration(fn->gpuNs, units) + " (" + pct + ")\n";
    }
  }
  const auto& p = rs.provenance;
  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  md += "\n---\nrun `" + p.runId + "` · backend " + p.backend;
  if (p.emulated) md += " (**emulated** GPU: modelled durations)";
  md += " · GPU " + (p.gpu.empty() ? std::string("unknown") : markdownSafe(p.gpu));
  md += " · commit " + (p.gitCommit.empty() ? std::string("unknown")
                                              : "`" + p.gitCommit.substr(0, 10) + "`" +
                                                    (p.gitDirty ? " (dirty)" : ""));
  if (std::string age = results::formatAge(p.createdUnix, now); !age.empty()) md += " · " + age;
  md += " · from " + std::string(p.source == "kl-ranges" ? "kl: NVTX ranges" : "Python stacks");
  if (dr.file.stale) md += "\n\n⚠ results are from an older version of this file";
  return md;
}

}  // namespace

void registerHover(Server& server, std::shared_ptr<FeatureContext> ctx) {
  server.addCapabilities({{"hoverProvider", true}});
  server.method<HoverParams, std::optional<Hover>>(
      "textDocument/hover",
      [&server, ctx](const HoverParams& p, Reply<std::optional<Hover>> reply) {
        auto doc = server.documents().get(p.textDocument.uri);
        const auto* dr = ctx->results->forDocument(doc);
        if (!doc || !dr || !dr->hasResults || !ctx->results->results()) return reply(std::optional<Hover>());
        uint32_t line = doc->lineOf(p.position);
        const results::LineResult* hit = nullptr;
        for (const auto& l : dr->file.file.lines)
          if (l.line <= line && line <= l.lastLine && (!hit || l.line >= hit->line)) hit = &l;
        if (!hit) return reply(std::optional<Hover>());
        std::string md = hoverText(*hit, *dr, *ctx->results->results(), *ctx->results,
                                   ctx->settings.units);
        reply(std::optional<Hover>(Hover{MarkupContent{MarkupKind::Markdown, md},
                                         doc->lineRange(hit->line, hit->lastLine)}));
      });
}

}  // namespace kl::lsp
