// textDocument/codeLens + codeLens/resolve, per function of an open Python document:
//   with results:    "GPU 12.4 ms · 14 kernels · 31 %"  "▶ Profile"  "⟳ Refine"
//   without results: "▶ Profile"  (lenses.profileUnprofiled)
// Lenses are placed on the `def` line, starting at the `def` keyword column (Neovim 0.12 aligns
// its virtual line there). codeLens returns ranges + data only; titles and commands are filled
// by codeLens/resolve (cheap here, but the rust-analyzer pattern keeps the list request light).
// Commands: kernlens.profileFunction [{uri, function}] and kernlens.refineHere [{uri, range}]
// (the runner's and the planner's); the GPU lens has no command (title only).
// Counts are distinct kernel names; the percentage is the share of the run's GPU time.
#include <string_view>
#include <unordered_map>

#include "core/results/format.h"
#include "lsp/features/feature_context.h"
#include "lsp/protocol/commands.h"
#include "lsp/server/server.h"

namespace kl::lsp {

namespace {

/// Which lens of a function.
enum class LensKind { Gpu, Profile, Refine };
constexpr std::pair<LensKind, const char*> kLensKinds[] = {
    {LensKind::Gpu, "gpu"}, {LensKind::Profile, "profile"}, {LensKind::Refine, "refine"}};

/// What a lens carries to codeLens/resolve.
struct LensData {
  std::string uri;
  std::string function;  // qualified name
  LensKind kind = LensKind::Gpu;
  unsigned gen = 0;  // results generation of codeLens
};
bool fromJson(const json& j, LensData& d, JPath path) {
  ObjectReader o(j, path);
  std::string kind;
  if (!(o && o.req("uri", d.uri) && o.req("function", d.function) && o.req("kind", kind) && o.opt("gen", d.gen)))
    return false;
  for (const auto& [k, name] : kLensKinds)
    if (kind == name) {
      d.kind = k;
      return true;
    }
  return path.field("kind").report("expected \"gpu\", \"profile\" or \"refine\"");
}

}  // namespace

void registerCodeLens(Server& server, std::shared_ptr<FeatureContext> ctx) {
  server.addCapabilities({{"codeLensProvider", {{"resolveProvider", true}}}});

  server.method<CodeLensParams, RawJson>(
      "textDocument/codeLens", [&server, ctx](const CodeLensParams& params, Reply<RawJson> reply) {
        // Written as text (RawJson): thousands of lenses on a large file, no JSON tree each.
        RawJson out{"["};
        const std::string& uri = params.textDocument.uri;
        auto doc = server.documents().get(uri);
        if (!doc || !doc->source() || !ctx->settings.lensesEnabled) return reply(RawJson{"[]"});
        const auto* dr = ctx->results->forDocument(doc);
        const auto& mod = doc->source()->model();
        std::unordered_map<std::string_view, const results::FunctionResult*> withResults;
        if (dr && dr->hasResults)
          for (const auto& fr : dr->file.file.functions) withResults.emplace(fr.qualName, &fr);
        // {"data":{"function":F,"gen":G,"kind":K,"uri":U},"range":R} (LensData, keys sorted)
        std::string dataTail = R"(,"gen":)" + std::to_string(ctx->results->generation()) + R"(,"kind":")";
        std::string uriTail = R"(","uri":)";
        appendJson(uriTail, uri);
        uriTail += R"(},"range":)";
        bool any = false;
        for (const auto& f : mod.functions) {
          if (f.qualName.empty() || f.nameBytes.empty()) continue;
          auto found = withResults.find(f.qualName);
          const results::FunctionResult* fr = found != withResults.end() ? found->second : nullptr;
          // The `def` keyword: the function's bytes start at its decorators; the def line's
          // statement text starts at `def`/`async`.
          uint32_t defStart = doc->source()->lines().lineStart(f.defLine);
          const std::string& text = doc->text();
          while (defStart < text.size() && (text[defStart] == ' ' || text[defStart] == '\t')) ++defStart;
          Range r{doc->positionAt(defStart), doc->positionAt(f.nameBytes.end)};
          std::string head = R"({"data":{"function":)";
          appendJson(head, f.qualName);
          head += dataTail;
          std::string range;
          appendJson(range, r);
          auto lens = [&](LensKind kind) {
            if (any) out.text += ',';
            any = true;
            out.text += head;
            for (const auto& [k, name] : kLensKinds)
              if (k == kind) out.text += name;
            out.text += uriTail;
            out.text += range;
            out.text += '}';
          };
          if (fr) {
            lens(LensKind::Gpu);
            lens(LensKind::Profile);
            lens(LensKind::Refine);
          } else if (ctx->settings.profileLenses) {
            lens(LensKind::Profile);
          }
        }
        out.text += ']';
        reply(std::move(out));
      });

  server.method<CodeLens, CodeLens>("codeLens/resolve", [&server, ctx](const CodeLens& lens, Reply<CodeLens> reply) {
    if (!lens.data) return reply(lens);  // not one of ours
    LensData data;
    std::string error;
    if (!parseJson(*lens.data, data, error, "params.data")) return reply.error(ErrorCode::InvalidParams, error);
    CodeLens out = lens;
    if (data.kind == LensKind::Profile) {
      out.command = Command{"▶ Profile", "kernlens.profileFunction",
                            json::array({toJson(ProfileFunctionArgs{data.uri, std::nullopt, data.function})})};
      return reply(out);
    }
    auto doc = server.documents().get(data.uri);
    const auto* dr = ctx->results->forDocument(doc);
    const results::FunctionResult* fr = dr && dr->hasResults ? dr->file.file.function(data.function) : nullptr;
    if (data.kind == LensKind::Refine) {
      Range range = lens.range;
      if (doc && fr) range = doc->lineRange(fr->defLine, fr->lastLine);
      out.command = Command{"⟳ Refine", "kernlens.refineHere",
                            json::array({toJson(RefineHereArgs{data.uri, range, data.function})})};
      return reply(out);
    }
    // The GPU lens: the numbers (results may have changed since codeLens: say so, keep a title).
    std::string title = "GPU: results changed — refresh";
    if (fr && ctx->results->results()) {
      title = results::lensTitle(*fr, ctx->results->results()->totalGpuNs, ctx->settings.units);
      if (ctx->results->results()->provenance.emulated) title += " · emulated";
      if (dr->file.stale) title += " · stale";
    }
    out.command = Command{title, "", std::nullopt};
    reply(out);
  });
}

}  // namespace kl::lsp
