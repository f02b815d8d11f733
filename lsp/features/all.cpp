// The one list of features. To add a feature: write lsp/features/<feature>.cpp defining
// `void registerXxx(Server&)` (see docs/lsp.md), then declare it in all.h and call it here.
#include "lsp/features/all.h"

#include "lsp/features/cute_regions.h"  // registerCuteRegions
#include "lsp/features/feature_context.h"
#include "lsp/server/server.h"

namespace kl::lsp {

void registerAllFeatures(Server& server) {
  auto ctx = registerFeatureContext(server);
  registerCodeActions(server);
  registerCodeLens(server, ctx);
  registerCuteRegions(server, ctx);
  registerDiagnostics(server, ctx);
  registerHover(server, ctx);
  registerInlayHints(server, ctx);
  registerKeepAnnotations(server, ctx);
  registerLoadProfile(server, ctx);
  registerProfileRun(server, ctx);
  registerRunView(server, ctx);
}

}  // namespace kl::lsp
