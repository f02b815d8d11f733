// The one list of features. To add a feature: write lsp/features/<feature>.cpp defining
// `void registerXxx(Server&)` (see docs/lsp.md), then add its declaration and its call here.
#include "lsp/features/all.h"

#include "lsp/features/cute_regions.h"  // registerCuteRegions
#include "lsp/features/feature_context.h"
#include "lsp/server/server.h"

namespace kl::lsp {

// Feature registrations (one line each; keep sorted).
// Editor features share one FeatureContext (lsp/features/feature_context.h).
void registerCodeActions(Server&);
void registerCodeLens(Server&, std::shared_ptr<FeatureContext>);
void registerDiagnostics(Server&, std::shared_ptr<FeatureContext>);
void registerHover(Server&, std::shared_ptr<FeatureContext>);
void registerInlayHints(Server&, std::shared_ptr<FeatureContext>);
void registerLoadProfile(Server&, std::shared_ptr<FeatureContext>);
void registerProfileRun(Server&, std::shared_ptr<FeatureContext>);

void registerAllFeatures(Server& server) {
  auto ctx = registerFeatureContext(server);
  registerCodeActions(server);
  registerCodeLens(server, ctx);
  registerCuteRegions(server, ctx);
  registerDiagnostics(server, ctx);
  registerHover(server, ctx);
  registerInlayHints(server, ctx);
  registerLoadProfile(server, ctx);
  registerProfileRun(server, ctx);
}

}  // namespace kl::lsp
