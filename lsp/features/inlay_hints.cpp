// textDocument/inlayHint + inlayHint/resolve: "⏱ 1.92 ms · 2 kernels" at the end of each
// mapped line (the first line of the statement / range the GPU work was attributed to).
//
// Shown when hints.enabled, the line's time >= hints.thresholdMs, and its share of its
// function's GPU time (module level: of the run's) >= hints.minShare. paddingLeft, no kind.
// The tooltip (kernel names with times) is filled lazily by inlayHint/resolve from `data`
// {uri, line, gen}; a hint from an older results generation resolves unchanged.
#include "core/results/format.h"
#include "lsp/features/feature_context.h"
#include "lsp/server/server.h"

namespace kl::lsp {

namespace {

/// The share of `line` in its function (or in the run, at module level).
double shareOf(const results::LineResult& line, const results::FileResult& file, int64_t total) {
  if (!line.function.empty())
    if (const auto* f = file.function(line.function); f && f->gpuNs > 0)
      return static_cast<double>(line.gpuNs) / static_cast<double>(f->gpuNs);
  return total > 0 ? static_cast<double>(line.gpuNs) / static_cast<double>(total) : 1.0;
}

std::string tooltipFor(const results::LineResult& line, const results::ResultSet& rs,
                       bool stale, results::Units units) {
  std::string t;
  for (const auto& k : line.kernels)
    t += "- " + k.name + " — " + std::to_string(k.launches) + "× " +
         results::formatDuration(k.totalNs, units) + "\n";
  if (rs.provenance.emulated) t += "\n(emulated GPU: modelled durations)";
  if (stale) t += "\n(measured on an older version of this file)";
  return t;
}

}  // namespace

void registerInlayHints(Server& server, std::shared_ptr<FeatureContext> ctx) {
  server.addCapabilities({{"inlayHintProvider", {{"resolveProvider", true}}}});

  server.method<json, json>("textDocument/inlayHint", [&server, ctx](const json& params,
                                                                      Reply<json> reply) {
    json out = json::array();
    std::string uri = params.value("/textDocument/uri"_json_pointer, std::string());
    auto doc = server.documents().get(uri);
    const auto& st = ctx->settings;
    if (!doc) return reply(out);
    const auto* dr = ctx->results->forDocument(doc);
    uint32_t first = 0, last = UINT32_MAX;
    Range r;
    std::string err;
    if (params.contains("range") && parseJson(params["range"], r, err)) {
      first = doc->lineOf(r.start);
      last = doc->lineOf(r.end);
    }
    static const results::FileResult empty;
    static const results::ResultSet none;
    const bool gpu = dr && dr->hasResults && st.hintsEnabled && ctx->results->results();
    const results::ResultSet& rs = gpu ? *ctx->results->results() : none;
    for (const auto& line : gpu ? dr->file.file.lines : empty.lines) {
      if (line.line < first || line.line > last) continue;
      if (static_cast<double>(line.gpuNs) < st.thresholdMs * 1e6) continue;
      if (shareOf(line, dr->file.file, rs.totalGpuNs) < st.minShare) continue;
      out.push_back({{"position", toJson(doc->lineEndPosition(line.line))},
                     {"label", results::hintLabel(line, st.units)},
                     {"paddingLeft", true},
                     {"data", {{"uri", uri}, {"line", line.line}, {"gen", ctx->results->generation()}}}});
    }
    for (const auto& provider : ctx->hintProviders)
      for (auto& h : provider(doc, first, last)) out.push_back(std::move(h));
    reply(out);
  });

  server.method<json, json>("inlayHint/resolve", [&server, ctx](const json& hint,
                                                                 Reply<json> reply) {
    json out = hint;
    const json* data = hint.contains("data") ? &hint["data"] : nullptr;
    if (!data || !data->is_object() || !ctx->results->results()) return reply(out);
    if (data->value("gen", 0u) != ctx->results->generation()) return reply(out);
    auto doc = server.documents().get(data->value("uri", std::string()));
    const auto* dr = ctx->results->forDocument(doc);
    if (!dr || !dr->hasResults) return reply(out);
    if (const auto* line = dr->file.file.lineAt(data->value("line", 0u)))
      out["tooltip"] = {{"kind", "markdown"},
                        {"value", tooltipFor(*line, *ctx->results->results(), dr->file.stale,
                                             ctx->settings.units)}};
    reply(out);
  });
}

}  // namespace kl::lsp
