// ResultsView: the server's current GPU-time results, as the editor features see them.
//
// Owns the current ResultSet (core/results) and presents it per OPEN DOCUMENT: results of the
// document's workspace file, remapped from the profiled snapshot onto the live buffer
// (core/results/remap.h), cached per (document version, results generation). Every editor
// feature (inlay_hints, hover, code_lens, diagnostics) reads through here; producers
// (load_profile, the runner's background runs, the store at start-up) call setResults().
//
// Main loop only. Created once per server by registerResultsView() and shared (shared_ptr)
// with the feature registrations in lsp/features/all.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ncu/report.h"
#include "core/results/format.h"
#include "core/results/path_match.h"
#include "core/results/remap.h"
#include "core/results/result_set.h"
#include "lsp/server/documents.h"

namespace kl::lsp {

class Server;

/// Editor settings read from `kernlens.*` (see docs/editor-features.md).
struct EditorSettings {
  bool hintsEnabled = true;      // hints.enabled
  double minShare = 0.01;        // hints.minShare: hide lines below this share of their function
  double thresholdMs = 0.0;      // hints.thresholdMs: hide lines below this absolute time
  results::Units units = results::Units::Auto;  // hints.units
  bool lensesEnabled = true;     // lenses.enabled
  bool profileLenses = true;     // lenses.profileUnprofiled: "▶ Profile" on functions without results
};

/// One document's view of the results.
struct DocumentResults {
  std::string path;              // workspace-relative
  results::RemappedFile file;    // lines/functions in the LIVE buffer's lines
  bool hasResults = false;       // the result set covers this file
};

class ResultsView : public std::enable_shared_from_this<ResultsView> {
 public:
  explicit ResultsView(Server& server) : server_(server) {}

  /// Replaces the results (generation + 1), republishes diagnostics of open documents and asks
  /// clients to refresh hints and lenses. `keepPrevious`: the replaced set's function totals
  /// become previousFunctions of the new one when it has none of its own.
  void setResults(results::ResultSet rs, bool keepPrevious = true);
  void clear();
  /// Loads the latest stored results of the workspace (core/results/from_store.h) on the pool
  /// and installs them (no-op when the store has none). Called after initialize; the runner
  /// calls it after a profiling run wrote its rounds.
  void reloadFromStore();
  const std::shared_ptr<const results::ResultSet>& results() const { return results_; }
  unsigned generation() const { return generation_; }

  /// Nsight Compute data for bound classes in hovers: a loaded ncu CSV (kernlens.loadProfile
  /// of a .csv) and the workspace's kernel catalogue (.kernlens/kernlens.db ncu_* tables, read
  /// with the stored results). Kernels match by ncu::normalizedKey.
  struct BoundInfo {
    std::string bound;    // "compute", "memory", "latency", "balanced"
    std::string summary;  // one sentence
    std::string source;   // "ncu report" | "kernel catalogue"
  };
  void setNcu(std::shared_ptr<const ncu::NcuReport> report) { ncu_ = std::move(report); }
  const std::shared_ptr<const ncu::NcuReport>& ncu() const { return ncu_; }
  /// normalizedKey -> bound class, from the catalogue.
  void setCatalogBounds(std::map<std::string, BoundInfo> bounds) { catalog_ = std::move(bounds); }
  /// The bound class of a kernel (full or short name), or nullopt when no data covers it.
  std::optional<BoundInfo> boundFor(const std::string& fullName, const std::string& shortName) const;

  /// The workspace root (from initialize: rootUri, first workspace folder, or rootPath); empty
  /// when the client opened no folder.
  const std::filesystem::path& root() const { return root_; }
  void setRoot(std::filesystem::path root) { root_ = std::move(root); }

  /// Workspace-relative path of a document URI (nullopt: not a file under the root).
  std::optional<std::string> relativePath(const std::string& uri) const;
  /// Results of an open document, remapped to its current text; null when the document is
  /// not open. Cached until the document or the results change.
  const DocumentResults* forDocument(const DocumentPtr& doc);
  /// Text of a workspace file: the open buffer when open, else the file on disk.
  std::optional<std::string> textOf(const std::string& relPath) const;
  /// Workspace Python files plus open documents, for suffix matching.
  results::PathMatcher matcher() const;

  const EditorSettings& settings() const { return settings_; }
  /// Re-reads settings from the server; refreshes hints/lenses when they changed.
  void reloadSettings();

  /// Inlay hints contributed by other features (e.g. cute_regions): called by
  /// textDocument/inlayHint for EVERY open document (with or without GPU results) with the
  /// requested '\n'-lines [firstLine, lastLine]; returns a JSON array of complete InlayHint
  /// objects (nothing to resolve). Not affected by hints.enabled / minShare.
  using HintProvider =
      std::function<json(const DocumentPtr& doc, uint32_t firstLine, uint32_t lastLine)>;
  void addHintProvider(HintProvider p) { hintProviders_.push_back(std::move(p)); }
  const std::vector<HintProvider>& hintProviders() const { return hintProviders_; }

  /// Called on every results change (after the generation bump), e.g. by diagnostics.
  void onChange(std::function<void()> fn) { changeHooks_.push_back(std::move(fn)); }
  /// Drops the cache entry of a closed document.
  void forget(const std::string& uri) { cache_.erase(uri); }

  Server& server() { return server_; }

 private:
  struct Cached {
    int32_t version = 0;
    unsigned generation = 0;
    DocumentResults results;
  };
  Server& server_;
  std::filesystem::path root_;
  std::shared_ptr<const results::ResultSet> results_;
  unsigned generation_ = 0;
  std::shared_ptr<const ncu::NcuReport> ncu_;
  std::map<std::string, BoundInfo> catalog_;
  EditorSettings settings_;
  std::map<std::string, Cached> cache_;
  std::vector<std::function<void()>> changeHooks_;
  std::vector<HintProvider> hintProviders_;
};

/// file:// URI <-> path (percent-decoding / -encoding; other schemes -> nullopt).
std::optional<std::filesystem::path> uriToPath(const std::string& uri);
std::string pathToUri(const std::filesystem::path& path);

/// LSP position of the END of 0-based '\n'-line `line` of `doc` (clamped).
Position lineEndPosition(const Document& doc, uint32_t line);
/// LSP range covering 0-based '\n'-lines [first, last] of `doc` (start of first to end of last).
Range lineRange(const Document& doc, uint32_t first, uint32_t last);
/// 0-based '\n'-line of an LSP position in `doc`.
uint32_t lineOf(const Document& doc, Position pos);

/// Registration (lsp/features/all.cpp): creates the view, reads the root and settings on
/// initialize / didChangeConfiguration, registers kernlens.clearResults.
std::shared_ptr<ResultsView> registerResultsView(Server& server);

}  // namespace kl::lsp
