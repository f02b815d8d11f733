// ResultStore: the server's current GPU-time results and the kernel data that goes with them.
//
// Owns the current ResultSet (core/results) with a generation counter, the Nsight Compute bound
// classes of kernels (a loaded ncu CSV, the workspace's kernel catalogue), and a per-document
// cache of the results remapped from the profiled snapshot onto the live buffer
// (core/results/remap.h), keyed by (document version, results generation). Producers
// (load_profile, the runner's background runs, the workspace store at start-up) install results;
// every editor feature reads through forDocument().
//
// Main loop only. One per server, owned by the FeatureContext (feature_context.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ncu/classify.h"
#include "core/ncu/report.h"
#include "core/python/source_file.h"
#include "core/results/remap.h"
#include "core/results/result_set.h"
#include "core/support/result.h"
#include "lsp/server/documents.h"

namespace kl::lsp {

class Server;

/// One document's view of the results.
struct DocumentResults {
  std::string path;            // workspace-relative
  results::RemappedFile file;  // lines/functions in the LIVE buffer's lines
  bool hasResults = false;     // the result set covers this file
  /// Per file.file.lines[i]: the GPU time of the function holding it (0: module level), so
  /// that a line's share of its function needs no lookup.
  std::vector<int64_t> functionNs;
};

/// Nsight Compute's verdict on one kernel, for hovers.
struct BoundInfo {
  enum class Source { NcuReport, KernelCatalogue };
  ncu::Bound bound = ncu::Bound::Unknown;  // never Unknown in a BoundInfo that is returned
  std::string summary;                     // one sentence
  Source source = Source::NcuReport;
  /// "ncu report" / "kernel catalogue", as hovers name it.
  static const char* sourceName(Source s) { return s == Source::NcuReport ? "ncu report" : "kernel catalogue"; }
};

class ResultStore : public std::enable_shared_from_this<ResultStore> {
 public:
  explicit ResultStore(Server& server) : server_(server) {}

  /// Replaces the results (generation + 1), runs the change hooks and asks clients to refresh
  /// hints and lenses. `keepPrevious`: the replaced set's function totals become
  /// previousFunctions of the new one when it has none of its own.
  void setResults(results::ResultSet rs, bool keepPrevious = true);
  void clear();
  /// kernlens.clearResults: clear() and remember the cleared run (.kernlens/cleared-run), so
  /// that the stored results of that run are not shown again after a restart; a newer run is.
  void clearPersistently();
  /// Loads the latest stored results and the kernel catalogue of the workspace
  /// (core/results/from_store.h, core/ncu/catalog.h) on the pool and installs them (no-op when
  /// the store has none). Called after initialize and after each round of a profiling run.
  void reloadFromStore();
  /// Installs what results::loadFromStore answered (an error is logged; "no results" keeps the
  /// current ones; at start-up, a run the user cleared is skipped). Main loop. A profiling run
  /// loads on its own pool thread after each round and installs here, so rounds show while the
  /// run goes on (the pool may have no other thread free).
  void installStored(Result<std::optional<results::ResultSet>> loaded);

  /// A profiling run is going and the results are its rounds so far (hints say "(so far)").
  bool provisional() const { return provisional_; }
  void setProvisional(bool on);

  /// How the last profiling run of this session ended (the run view's "rounds, why stopped").
  struct RunOutcome {
    std::string runKey, stopReason, why;
    int rounds = 0;
  };
  const std::optional<RunOutcome>& lastOutcome() const { return lastOutcome_; }
  void setLastOutcome(RunOutcome o) { lastOutcome_ = std::move(o); }
  const std::shared_ptr<const results::ResultSet>& results() const { return results_; }
  unsigned generation() const { return generation_; }

  /// Results of an open document, positioned in its current text; null when `doc` is null.
  /// Cached per document. A new version of a cached document is reached edit by edit
  /// (results::lineDelta/applyLineDelta from the cached version's text, function spans from the
  /// document's own incrementally parsed tree): O(text) memcmp + O(results), no diff, no parse,
  /// no Module. New results, a newly opened document, or a text equal to the profiled snapshot
  /// remap from the snapshot (a line diff).
  const DocumentResults* forDocument(const DocumentPtr& doc);
  /// Edits settled: when the cached results of `doc` were moved edit by edit while some of
  /// their lines were dropped, remaps them from the snapshot (a line edited back to its profiled text gets its
  /// results back) and, when that changes what is shown, asks clients to refresh hints and
  /// lenses. Cheap otherwise.
  void settle(const DocumentPtr& doc);
  /// Drops the cache entry of a closed document.
  void forget(const std::string& uri) { cache_.erase(uri); }

  /// A loaded Nsight Compute report (kernlens.loadProfile of a .csv).
  void setNcu(std::shared_ptr<const ncu::NcuReport> report) { ncu_ = std::move(report); }
  /// normalizedKey -> bound class, from the workspace's kernel catalogue.
  void setCatalogBounds(std::map<std::string, BoundInfo> bounds) { catalog_ = std::move(bounds); }
  /// The bound class of a kernel (full or short name; ncu::normalizedKey matching): the ncu
  /// report first, then the catalogue; nullopt when no data covers it.
  std::optional<BoundInfo> boundFor(const std::string& fullName, const std::string& shortName) const;

  /// Called on every results change (after the generation bump), e.g. by diagnostics.
  void onChange(std::function<void()> fn) { changeHooks_.push_back(std::move(fn)); }

 private:
  struct Cached {
    DocumentPtr doc;  // the version `results` are positioned in
    unsigned generation = 0;
    DocumentResults results;
    bool exact = true;  // as remapped from the snapshot (false: moved edit by edit with lines dropped)
    /// doc's function extents per top-level statement, reused for the next version's spans.
    std::vector<python::TopLevelExtents> extents;
  };
  /// The function spans of c.doc's text: reusing c.extents of `previous` when given.
  std::vector<results::FunctionSpan> liveSpans(Cached& c, const Document* previous);
  /// Remaps `c` from the snapshot onto c.doc.
  void remapExact(Cached& c);
  void changed();
  /// `kernlens/results` {runId, backend, emulated, files, lines, provisional} (no runId: none)
  /// to clients that asked with initializationOptions.resultsNotification (status bars).
  void announce();

  Server& server_;
  std::shared_ptr<const results::ResultSet> results_;
  unsigned generation_ = 0;
  std::shared_ptr<const ncu::NcuReport> ncu_;
  std::map<std::string, BoundInfo> catalog_;
  std::map<std::string, Cached> cache_;
  std::vector<std::function<void()>> changeHooks_;
  bool provisional_ = false;
  std::optional<RunOutcome> lastOutcome_;
};

}  // namespace kl::lsp
