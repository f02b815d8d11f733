// textDocument/inlayHint + inlayHint/resolve: "◷ 1.92 ms · 2 kernels" at the end of each
// mapped line (the first line of the statement / range the GPU work was attributed to).
//
// Shown when hints.enabled, the line's time >= hints.thresholdMs, and its share of its
// function's GPU time (module level: of the run's) >= hints.minShare. paddingLeft, no kind.
// The tooltip (kernel names with times) is filled lazily by inlayHint/resolve from `data`
// {uri, line, gen}; a hint from an older results generation resolves unchanged.
#include <algorithm>

#include "core/results/format.h"
#include "lsp/features/feature_context.h"
#include "lsp/server/server.h"

namespace kl::lsp {

namespace {

/// What a GPU-time hint carries to inlayHint/resolve.
struct HintData {
  std::string uri;
  uint32_t line = 0;
  unsigned gen = 0;  // results generation the hint was made from
};
bool fromJson(const json& j, HintData& d, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("uri", d.uri) && o.req("line", d.line) && o.req("gen", d.gen);
}
json toJson(const HintData& d) { return {{"uri", d.uri}, {"line", d.line}, {"gen", d.gen}}; }

/// The share of `line` in its function (or in the run, at module level).
/// A call line counts with its inclusive time (its function's total holds only its own kernels).
double shareOf(const results::LineResult& line, const results::FileResult& file, int64_t total) {
  double ns = static_cast<double>(std::max(line.gpuNs, line.inclusiveNs));
  if (!line.function.empty())
    if (const auto* f = file.function(line.function); f && f->gpuNs > 0)
      return ns / static_cast<double>(f->gpuNs);
  return total > 0 ? ns / static_cast<double>(total) : 1.0;
}

std::string tooltipFor(const results::LineResult& line, const results::ResultSet& rs,
                       bool stale, bool provisional, results::Units units) {
  std::string t;
  if (line.isCallLine())
    t += "GPU " + results::formatDuration(line.inclusiveNs, units) + " total in the code this line calls\n\n";
  for (const auto& k : line.kernels)
    t += "- " + k.name + (k.backward() ? " (" + k.pass + (k.noForwardOwner ? ", no forward op" : "") + ")" : "") +
         " — " + std::to_string(k.launches) + "× " + results::formatDuration(k.totalNs, units) + "\n";
  if (rs.provenance.emulated) t += "\n(emulated GPU: modelled durations)";
  if (stale) t += "\n(measured on an older version of this file)";
  if (provisional) t += "\n(provisional: the profiling run is still going)";
  return t;
}

}  // namespace

void registerInlayHints(Server& server, std::shared_ptr<FeatureContext> ctx) {
  server.addCapabilities({{"inlayHintProvider", {{"resolveProvider", true}}}});

  server.method<InlayHintParams, std::vector<json>>(
      "textDocument/inlayHint",
      [&server, ctx](const InlayHintParams& params, Reply<std::vector<json>> reply) {
        std::vector<json> out;
        auto doc = server.documents().get(params.textDocument.uri);
        const auto& st = ctx->settings;
        if (!doc) return reply(out);
        const auto* dr = ctx->results->forDocument(doc);
        uint32_t first = 0, last = UINT32_MAX;
        if (params.range) {
          first = doc->lineOf(params.range->start);
          last = doc->lineOf(params.range->end);
        }
        static const results::FileResult empty;
        static const results::ResultSet none;
        const bool gpu = dr && dr->hasResults && st.hintsEnabled && ctx->results->results();
        const results::ResultSet& rs = gpu ? *ctx->results->results() : none;
        for (const auto& line : gpu ? dr->file.file.lines : empty.lines) {
          if (line.line < first || line.line > last) continue;
          // A line that blocks the CPU in a sync call is shown by its sync time alone.
          const bool syncs = line.syncCalls && static_cast<double>(line.syncNs) >= st.thresholdMs * 1e6;
          if (!syncs && static_cast<double>(std::max(line.gpuNs, line.inclusiveNs)) < st.thresholdMs * 1e6) continue;
          if (!syncs && shareOf(line, dr->file.file, rs.totalGpuNs) < st.minShare) continue;
          InlayHint h;
          h.position = doc->lineEndPosition(line.line);
          h.label = results::hintLabel(line, st.units, st.hintPrefix) + (ctx->results->provisional() ? " (so far)" : "");
          h.paddingLeft = true;
          h.data = toJson(HintData{params.textDocument.uri, line.line, ctx->results->generation()});
          out.push_back(toJson(h));
        }
        for (const auto& provider : ctx->hintProviders)
          for (const auto& h : provider(doc, first, last)) out.push_back(toJson(h));
        reply(out);
      });

  server.method<InlayHint, InlayHint>(
      "inlayHint/resolve", [&server, ctx](const InlayHint& hint, Reply<InlayHint> reply) {
        // Hints of other producers, or of an older results generation, resolve unchanged.
        HintData data;
        std::string error;
        if (!hint.data || !parseJson(*hint.data, data, error, "params.data") ||
            data.gen != ctx->results->generation() || !ctx->results->results())
          return reply(hint);
        auto doc = server.documents().get(data.uri);
        const auto* dr = ctx->results->forDocument(doc);
        if (!dr || !dr->hasResults) return reply(hint);
        InlayHint out = hint;
        if (const auto* line = dr->file.file.lineAt(data.line))
          out.tooltip = MarkupContent{MarkupKind::Markdown,
                                      tooltipFor(*line, *ctx->results->results(), dr->file.stale, ctx->results->provisional(),
                                                 ctx->settings.units)};
        reply(out);
      });
}

}  // namespace kl::lsp
