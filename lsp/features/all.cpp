// The one list of features. To add a feature: write lsp/features/<feature>.cpp defining
// `void registerXxx(Server&)` (see docs/lsp.md), then add its declaration and its call here.
#include "lsp/features/all.h"

#include "lsp/server/server.h"

namespace kl::lsp {

// Feature registrations (one line each; keep sorted).

void registerAllFeatures(Server& server) {
  (void)server;  // no features yet: later issues add hover, inlay hints, code lens, actions...
}

}  // namespace kl::lsp
