// textDocument/codeLens + codeLens/resolve, per function of an open Python document:
//   with results:    "GPU 12.4 ms · 14 kernels · 31 %"  "▶ Profile"  "⟳ Refine"
//   without results: "▶ Profile"  (lenses.profileUnprofiled)
// Lenses are placed on the `def` line, starting at the `def` keyword column (Neovim 0.12 aligns
// its virtual line there). codeLens returns ranges + data only; titles and commands are filled
// by codeLens/resolve (cheap here, but the rust-analyzer pattern keeps the list request light).
// Commands: kernlens.profileFunction [{uri, function}] and kernlens.refineHere [{uri, range}]
// (the runner's and the planner's); the GPU lens has no command (title only).
// Counts are distinct kernel names; the percentage is the share of the run's GPU time.
#include "core/results/format.h"
#include "lsp/features/feature_context.h"
#include "lsp/server/server.h"

namespace kl::lsp {

void registerCodeLens(Server& server, std::shared_ptr<FeatureContext> ctx) {
  server.addCapabilities({{"codeLensProvider", {{"resolveProvider", true}}}});

  server.method<json, json>("textDocument/codeLens", [&server, ctx](const json& params,
                                                                    Reply<json> reply) {
    json out = json::array();
    std::string uri = params.value("/textDocument/uri"_json_pointer, std::string());
    auto doc = server.documents().get(uri);
    if (!doc || !doc->source() || !ctx->settings.lensesEnabled) return reply(out);
    const auto* dr = ctx->results->forDocument(doc);
    const auto& mod = doc->source()->model();
    for (const auto& f : mod.functions) {
      if (f.qualName.empty() || f.nameBytes.empty()) continue;
      const results::FunctionResult* fr =
          dr && dr->hasResults ? dr->file.file.function(f.qualName) : nullptr;
      // The `def` keyword: the function's bytes start at its decorators; the def line's
      // statement text starts at `def`/`async`.
      uint32_t defStart = doc->source()->lines().lineStart(f.defLine);
      const std::string& text = doc->text();
      while (defStart < text.size() && (text[defStart] == ' ' || text[defStart] == '\t')) ++defStart;
      Range r{doc->positionAt(defStart), doc->positionAt(f.nameBytes.end)};
      auto lens = [&](const char* kind) {
        out.push_back({{"range", toJson(r)},
                       {"data", {{"uri", uri}, {"function", f.qualName}, {"kind", kind},
                                 {"gen", ctx->results->generation()}}}});
      };
      if (fr) {
        lens("gpu");
        lens("profile");
        lens("refine");
      } else if (ctx->settings.profileLenses) {
        lens("profile");
      }
    }
    reply(out);
  });

  server.method<json, json>("codeLens/resolve", [&server, ctx](const json& lens,
                                                               Reply<json> reply) {
    json out = lens;
    const json* data = lens.contains("data") ? &lens["data"] : nullptr;
    if (!data || !data->is_object()) return reply(out);
    std::string uri = data->value("uri", std::string());
    std::string fn = data->value("function", std::string());
    std::string kind = data->value("kind", std::string());
    if (kind == "profile") {
      out["command"] = {{"title", "▶ Profile"},
                        {"command", "kernlens.profileFunction"},
                        {"arguments", json::array({{{"uri", uri}, {"function", fn}}})}};
      return reply(out);
    }
    auto doc = server.documents().get(uri);
    const auto* dr = ctx->results->forDocument(doc);
    const results::FunctionResult* fr =
        dr && dr->hasResults ? dr->file.file.function(fn) : nullptr;
    if (kind == "refine") {
      json range = lens.contains("range") ? lens["range"] : json();
      if (doc && fr) range = toJson(doc->lineRange(fr->defLine, fr->lastLine));
      out["command"] = {{"title", "⟳ Refine"},
                        {"command", "kernlens.refineHere"},
                        {"arguments", json::array({{{"uri", uri}, {"range", range}, {"function", fn}}})}};
      return reply(out);
    }
    // kind == "gpu": the numbers (results may have changed since codeLens: say so, keep a title).
    std::string title = "GPU: results changed — refresh";
    if (fr && ctx->results->results()) {
      title = results::lensTitle(*fr, ctx->results->results()->totalGpuNs, ctx->settings.units);
      if (ctx->results->results()->provenance.emulated) title += " · emulated";
      if (dr->file.stale) title += " · stale";
    }
    out["command"] = {{"title", title}, {"command", ""}};
    reply(out);
  });
}

}  // namespace kl::lsp
