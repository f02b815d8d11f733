// The shared state of the editor features (see feature_context.h) and kernlens.clearResults.
#include "lsp/features/feature_context.h"

#include <cstdio>

#include "lsp/protocol/commands.h"
#include "lsp/server/server.h"

namespace kl::lsp {

bool FeatureContext::plainHover() const {
  if (settings.hoverFormat == "plaintext") return true;
  if (settings.hoverFormat == "markdown") return false;
  const auto& ip = server.initializeParams();
  if (!ip.capabilities.hoverMarkdown) return true;
  if (ip.clientName == "Neovim") {  // Markdown tables render from 0.10 on
    int major = 0, minor = 0;
    if (std::sscanf(ip.clientVersion.c_str(), "%d.%d", &major, &minor) == 2) return major == 0 && minor < 10;
  }
  return false;
}

std::shared_ptr<FeatureContext> registerFeatureContext(Server& server) {
  auto ctx = std::make_shared<FeatureContext>(server);
  std::weak_ptr<FeatureContext> weak = ctx;
  server.onSettingsChanged([weak, &server] {
    auto c = weak.lock();
    if (!c) return;
    EditorSettings next = EditorSettings::read(server.settings());
    bool changed = !(next == c->settings);
    c->settings = next;
    if (changed && server.isInitialized()) {
      server.refreshInlayHints();
      server.refreshCodeLenses();
    }
  });
  server.onInitialized([weak] {
    if (auto c = weak.lock()) c->results->reloadFromStore();
  });
  server.onDocumentClosed([weak](const std::string& uri) {
    if (auto c = weak.lock()) c->results->forget(uri);
  });
  server.command<NoArguments>("kernlens.clearResults", [weak](const NoArguments&, Reply<json> reply) {
    if (auto c = weak.lock()) c->results->clearPersistently();
    reply(json(nullptr));
  });
  return ctx;
}

}  // namespace kl::lsp
