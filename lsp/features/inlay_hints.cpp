// textDocument/inlayHint + inlayHint/resolve: "◷ 1.92 ms · 2 kernels" at the end of each
// mapped line (the first line of the statement / range the GPU work was attributed to).
//
// Shown when hints.enabled, the line's time (results::lineTimeNs) >= hints.thresholdMs, and its
// share of its function (results::shareOfFunction) >= hints.minShare. paddingLeft, no kind.
// The tooltip (kernel names with times) is filled lazily by inlayHint/resolve from `data`
// {uri, line, gen}; a hint from an older results generation resolves unchanged.
//
// Cost: labels are serialised once per (results generation, file, units, prefix, provisional)
// — LabelCache, indexed by the line's index in the profiled FileResult (RemappedFile::
// sourceIndex), so they survive edits — and a request binary-searches its range in the
// document's remapped lines and splices the pieces into the response text (RawJson): no JSON
// tree is built per hint.
#include <algorithm>

#include "core/results/line_view.h"
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

/// The serialised labels (JSON strings, quotes included) of one file's LineResults, by index
/// in the FileResult; rebuilt when anything a label shows changes.
class LabelCache {
 public:
  const std::vector<std::string>& labels(const results::FileResult& file, unsigned generation, const EditorSettings& st,
                                         bool provisional) {
    if (generation != generation_ || file.path != path_ || st.units != units_ || st.hintPrefix != prefix_ ||
        provisional != provisional_ || labels_.size() != file.lines.size()) {
      generation_ = generation;
      path_ = file.path;
      units_ = st.units;
      prefix_ = st.hintPrefix;
      provisional_ = provisional;
      labels_.clear();
      labels_.reserve(file.lines.size());
      for (const auto& l : file.lines) {
        labels_.emplace_back();
        appendJson(labels_.back(), results::hintLabel(l, st.units, st.hintPrefix) + (provisional ? " (so far)" : ""));
      }
    }
    return labels_;
  }

 private:
  unsigned generation_ = 0;
  std::string path_;
  Units units_ = Units::Auto;
  std::string prefix_;
  bool provisional_ = false;
  std::vector<std::string> labels_;
};

/// The tooltip: the line's kernels from its description, then its provenance and freshness.
std::string tooltipFor(const results::LineView& v, bool provisional) {
  std::string t;
  if (!v.text.total.empty()) t += "GPU " + v.text.total + " in the code this line calls\n\n";
  for (const auto& k : v.kernels)
    t += "- " + k.name + (k.passTag.empty() ? "" : " (" + k.passTag + ")") + " — " + std::to_string(k.launches) + "× " +
         k.time + "\n";
  if (v.emulated) t += "\n(emulated GPU: modelled durations)";
  if (v.stale) t += "\n(measured on an older version of this file)";
  if (provisional) t += "\n(provisional: the profiling run is still going)";
  return t;
}

}  // namespace

void registerInlayHints(Server& server, std::shared_ptr<FeatureContext> ctx) {
  server.addCapabilities({{"inlayHintProvider", {{"resolveProvider", true}}}});

  auto cache = std::make_shared<LabelCache>();
  server.method<InlayHintParams, RawJson>("textDocument/inlayHint", [&server, ctx, cache](const InlayHintParams& params,
                                                                                          Reply<RawJson> reply) {
    RawJson out{"["};
    auto doc = server.documents().get(params.textDocument.uri);
    const auto& st = ctx->settings;
    if (!doc) return reply(RawJson{"[]"});
    const auto* dr = ctx->results->forDocument(doc);
    uint32_t first = 0, last = UINT32_MAX;
    if (params.range) {
      first = doc->lineOf(params.range->start);
      last = doc->lineOf(params.range->end);
    }
    const results::FileResult* profiled = dr && dr->hasResults && st.hintsEnabled && ctx->results->results()
                                              ? ctx->results->results()->file(dr->path)
                                              : nullptr;
    bool any = false;
    if (profiled) {
      const auto& rs = *ctx->results->results();
      const auto& lines = dr->file.file.lines;
      const auto& index = dr->file.sourceIndex;
      const auto& labels = cache->labels(*profiled, ctx->results->generation(), st, ctx->results->provisional());
      // {"data":{"gen":G,"line":L,"uri":U},"label":…,"paddingLeft":true,"position":{…}}
      const std::string dataHead = R"({"data":{"gen":)" + std::to_string(ctx->results->generation()) + R"(,"line":)";
      std::string dataTail = R"(,"uri":)";
      appendJson(dataTail, params.textDocument.uri);
      dataTail += R"(},"label":)";
      auto from = std::lower_bound(lines.begin(), lines.end(), first,
                                   [](const results::LineResult& l, uint32_t v) { return l.line < v; });
      for (auto it = from; it != lines.end() && it->line <= last; ++it) {
        const auto& line = *it;
        size_t i = static_cast<size_t>(it - lines.begin());
        // A line that blocks the CPU in a sync call is shown by its sync time alone.
        const bool syncs = line.syncCalls && static_cast<double>(line.syncNs) >= st.thresholdMs * 1e6;
        if (!syncs && static_cast<double>(results::lineTimeNs(line)) < st.thresholdMs * 1e6) continue;
        if (!syncs && results::shareOfFunction(line, i < dr->functionNs.size() ? dr->functionNs[i] : 0, rs.totalGpuNs) <
                          st.minShare)
          continue;
        if (i >= index.size() || index[i] >= labels.size()) continue;  // cannot happen: remap keeps them aligned
        Position pos = doc->lineEndPosition(line.line);
        if (any) out.text += ',';
        any = true;
        out.text += dataHead;
        out.text += std::to_string(line.line);
        out.text += dataTail;
        out.text += labels[index[i]];
        out.text += R"(,"paddingLeft":true,"position":)";
        appendJson(out.text, pos);
        out.text += '}';
      }
    }
    for (const auto& provider : ctx->hintProviders)
      for (const auto& h : provider(doc, first, last)) {
        if (any) out.text += ',';
        any = true;
        out.text += toJson(h).dump(-1, ' ', false, json::error_handler_t::replace);
      }
    out.text += ']';
    reply(std::move(out));
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
        if (const auto* line = dr->file.file.lineAt(data.line)) {
          results::ViewOptions vo;
          vo.units = ctx->settings.units;
          auto view = results::describeLine(*ctx->results->results(), dr->file.file, *line, dr->file.stale, vo);
          out.tooltip = MarkupContent{MarkupKind::Markdown, tooltipFor(view, ctx->results->provisional())};
        }
        reply(out);
      });
}

}  // namespace kl::lsp
