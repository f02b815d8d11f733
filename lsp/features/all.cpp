// The one list of features. To add a feature: write lsp/features/<feature>.cpp defining
// `void registerXxx(Server&)` (see docs/lsp.md), then add its declaration and its call here.
#include "lsp/features/all.h"

#include "lsp/features/cute_regions.h"  // registerCuteRegions
#include "lsp/features/results_view.h"
#include "lsp/server/server.h"

namespace kl::lsp {

// Feature registrations (one line each; keep sorted).
// Editor features share one ResultsView (lsp/features/results_view.h).
void registerCodeActions(Server&);
void registerCodeLens(Server&, std::shared_ptr<ResultsView>);
void registerDiagnostics(Server&, std::shared_ptr<ResultsView>);
void registerHover(Server&, std::shared_ptr<ResultsView>);
void registerInlayHints(Server&, std::shared_ptr<ResultsView>);
void registerLoadProfile(Server&, std::shared_ptr<ResultsView>);
void registerProfileRun(Server&, std::shared_ptr<ResultsView>);

void registerAllFeatures(Server& server) {
  auto results = registerResultsView(server);
  registerCodeActions(server);
  registerCodeLens(server, results);
  registerCuteRegions(server, results);
  registerDiagnostics(server, results);
  registerHover(server, results);
  registerInlayHints(server, results);
  registerLoadProfile(server, results);
  registerProfileRun(server, results);
}

}  // namespace kl::lsp
