// FeatureContext: what the editor features of one server share — the result store, the current
// editor settings, and the inlay hints other features contribute. Created once per server by
// registerFeatureContext() (lsp/features/all.cpp) and handed to each feature registration.
//
// Main loop only. Features hold it by shared_ptr in their handlers; hooks the context itself
// runs (store change hooks, hint providers) must capture it weakly (no cycles).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "lsp/features/editor_settings.h"
#include "lsp/features/result_store.h"
#include "lsp/protocol/protocol.h"
#include "lsp/server/documents.h"

namespace kl::lsp {

class Server;

struct FeatureContext {
  explicit FeatureContext(Server& s) : server(s), results(std::make_shared<ResultStore>(s)) {}

  Server& server;
  std::shared_ptr<ResultStore> results;
  /// Re-read after initialize and each didChangeConfiguration; a change refreshes hints and
  /// lenses.
  EditorSettings settings;

  /// Inlay hints contributed by other features (e.g. cute_regions): called by
  /// textDocument/inlayHint for EVERY open document (with or without GPU results) with the
  /// requested core lines [firstLine, lastLine]; returns complete hints (nothing to resolve).
  /// Not affected by hints.enabled / minShare.
  using HintProvider =
      std::function<std::vector<InlayHint>(const DocumentPtr& doc, uint32_t firstLine, uint32_t lastLine)>;
  std::vector<HintProvider> hintProviders;

  /// Hovers in plain text: hover.format "plaintext", or "auto" with a client that renders no
  /// Markdown hovers or no Markdown tables (Neovim before 0.10, from clientInfo).
  bool plainHover() const;
};

/// Creates the context and wires it to the server: settings re-read on change, stored results
/// loaded after `initialized`, cache entries dropped on didClose, the kernlens.clearResults
/// command (ResultStore::clearPersistently).
std::shared_ptr<FeatureContext> registerFeatureContext(Server& server);

}  // namespace kl::lsp
