#include "lsp/features/result_store.h"

#include <cstdio>
#include <fstream>
#include <unordered_map>

#include "core/ncu/catalog.h"
#include "core/ncu/classify.h"
#include "core/profile/kernel_name.h"
#include "core/results/format.h"
#include "core/results/from_store.h"
#include "lsp/server/server.h"

namespace kl::lsp {

namespace fs = std::filesystem;

void ResultStore::setResults(results::ResultSet rs, bool keepPrevious) {
  if (keepPrevious && rs.previousFunctions.empty() && results_) {
    for (const auto& f : results_->files)
      for (const auto& fn : f.functions) rs.previousFunctions[results::functionKey(f.path, fn.qualName)] = fn;
    rs.previousRunId = results_->provenance.runId;
  }
  results_ = std::make_shared<const results::ResultSet>(std::move(rs));
  changed();
}

void ResultStore::clear() {
  results_.reset();
  changed();
}

void ResultStore::changed() {
  ++generation_;
  cache_.clear();
  for (auto& h : changeHooks_) h();
  server_.refreshInlayHints();
  server_.refreshCodeLenses();
  announce();
}

namespace {
/// Where "Clear results" records the run it cleared, so a restart does not bring it back.
fs::path clearedMarker(const fs::path& root) { return root / ".kernlens" / "cleared-run"; }
}  // namespace

void ResultStore::clearPersistently() {
  std::string runId = results_ ? results_->provenance.runId : std::string();
  bool stored = results_ && results_->provenance.origin == results::ResultOrigin::StoredRun;
  clear();
  const fs::path& root = server_.workspace().root();
  if (root.empty() || runId.empty() || !stored) return;
  std::error_code ec;
  fs::create_directories(root / ".kernlens", ec);
  std::ofstream out(clearedMarker(root), std::ios::trunc);
  out << runId << "\n";
  if (!out)
    server_.logMessage(MessageType::Warning,
                       "kernlens: could not record the cleared run in " + clearedMarker(root).string());
}

void ResultStore::setProvisional(bool on) {
  if (provisional_ == on) return;
  provisional_ = on;
  if (server_.isInitialized()) {
    server_.refreshInlayHints();
    announce();
  }
}

void ResultStore::announce() {
  if (!server_.initializeParams().resultsNotification) return;
  json p = {{"provisional", provisional_}};
  if (results_) {
    size_t lines = 0;
    for (const auto& f : results_->files) lines += f.lines.size();
    p["runId"] = results_->provenance.runId;
    p["backend"] = results_->provenance.backend;
    p["emulated"] = results_->provenance.emulated;
    p["files"] = results_->files.size();
    p["lines"] = lines;
  }
  server_.notify("kernlens/results", std::move(p));
}

void ResultStore::installStored(Result<std::optional<results::ResultSet>> loaded) {
  if (!loaded.ok()) {
    server_.logMessage(MessageType::Warning, "kernlens: stored results not loaded: " + loaded.error().message);
    return;
  }
  if (!*loaded) return;
  results::ResultSet& rs = **loaded;
  const fs::path& root = server_.workspace().root();
  if (!results_ && !root.empty()) {  // start-up: the user cleared this run before
    std::ifstream in(clearedMarker(root));
    std::string cleared;
    if (in && std::getline(in, cleared) && cleared == rs.provenance.runId) return;
  }
  size_t lines = 0;
  for (const auto& f : rs.files) lines += f.lines.size();
  server_.logMessage(MessageType::Info, "kernlens: loaded stored results (" + std::to_string(lines) + " lines, run " +
                                            rs.provenance.runId + ")");
  setResults(std::move(rs), false);
}

std::optional<BoundInfo> ResultStore::boundFor(const std::string& fullName, const std::string& shortName) const {
  if (ncu_)
    for (const auto* n : {&fullName, &shortName}) {
      auto c = ncu::boundForKernel(*n, *ncu_);
      if (c.bound != ncu::Bound::Unknown) return BoundInfo{c.bound, c.summary(), BoundInfo::Source::NcuReport};
    }
  for (const auto* n : {&fullName, &shortName})
    if (auto it = catalog_.find(profile::normalizedKey(*n)); it != catalog_.end()) return it->second;
  return std::nullopt;
}

namespace {
/// The catalogue's bound classes (empty when the workspace has no database or no ncu tables).
std::map<std::string, BoundInfo> catalogBounds(const fs::path& root) {
  std::map<std::string, BoundInfo> out;
  std::error_code ec;
  auto path = ncu::defaultCatalogPath(root);
  if (!fs::exists(path, ec)) return out;
  auto cat = ncu::Catalog::open(path);
  if (!cat) return out;
  auto rows = cat->kernels();
  if (!rows) return out;
  for (const auto& k : *rows) {
    if (k.bound == ncu::Bound::Unknown) continue;
    std::string summary = std::string(ncu::boundName(k.bound)) + "-bound";
    if (k.smPct && k.memPct) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " (SM %.0f %%, memory %.0f %%)", *k.smPct, *k.memPct);
      summary += buf;
    }
    if (k.limiter != ncu::MemoryLevel::Unknown) summary += ", limiter " + std::string(ncu::memoryLevelName(k.limiter));
    if (!k.detail.empty()) summary += "; " + k.detail;
    BoundInfo b{k.bound, summary, BoundInfo::Source::KernelCatalogue};
    out.emplace(profile::normalizedKey(k.name), b);
    if (!k.baseName.empty()) out.emplace(profile::normalizedKey(k.baseName), b);
  }
  return out;
}
}  // namespace

void ResultStore::reloadFromStore() {
  const fs::path& root = server_.workspace().root();
  if (root.empty()) return;
  server_.background<std::shared_ptr<std::map<std::string, BoundInfo>>>(
      "kernlens.catalog.load", CancellationToken(),
      [root](const CancellationToken&) {
        return std::make_shared<std::map<std::string, BoundInfo>>(catalogBounds(root));
      },
      [weak = weak_from_this()](std::shared_ptr<std::map<std::string, BoundInfo>> b) {
        if (auto v = weak.lock(); v && !b->empty()) v->setCatalogBounds(std::move(*b));
      });
  using Out = std::shared_ptr<Result<std::optional<results::ResultSet>>>;
  server_.background<Out>(
      "kernlens.store.load", CancellationToken(),
      [root](const CancellationToken&) -> Out {
        return std::make_shared<Result<std::optional<results::ResultSet>>>(results::loadFromStore(root));
      },
      [weak = weak_from_this()](Out out) {
        if (auto v = weak.lock()) v->installStored(std::move(*out));
      });
}

namespace {

void fillFunctionNs(DocumentResults& r) {
  std::unordered_map<std::string_view, int64_t> byName;
  for (const auto& f : r.file.file.functions) byName.emplace(f.qualName, f.gpuNs);
  r.functionNs.assign(r.file.file.lines.size(), 0);
  for (size_t i = 0; i < r.file.file.lines.size(); ++i) {
    const auto& fn = r.file.file.lines[i].function;
    if (fn.empty()) continue;
    if (auto it = byName.find(fn); it != byName.end()) r.functionNs[i] = it->second;
  }
}

}  // namespace

std::vector<results::FunctionSpan> ResultStore::liveSpans(Cached& c, const Document* previous) {
  const auto& src = c.doc->source();
  if (!src) {
    c.extents.clear();
    return results::functionSpans(c.doc->text());
  }
  bool reuse = previous && previous->source() && !c.extents.empty();
  c.extents = python::topLevelExtents(src->root(), src->text(), src->lines(), reuse ? &c.extents : nullptr,
                                      reuse ? std::string_view(previous->text()) : std::string_view());
  return results::functionSpans(python::flatten(c.extents));
}

void ResultStore::remapExact(Cached& c) {
  c.exact = true;
  c.extents.clear();  // they are of c.doc only when computed below
  c.results.hasResults = false;
  c.results.file = {};
  c.results.functionNs.clear();
  if (!results_) return;
  const auto* f = results_->file(c.results.path);
  if (!f) return;
  const std::string& text = c.doc->text();
  auto spans = liveSpans(c, nullptr);  // also the extents the next edit reuses
  c.results.file =
      !f->hasSnapshot || f->snapshot == text ? results::remapFile(*f, text, {}) : results::remapFile(*f, text, spans);
  c.results.hasResults = true;
  fillFunctionNs(c.results);
}

const DocumentResults* ResultStore::forDocument(const DocumentPtr& doc) {
  if (!doc) return nullptr;
  auto it = cache_.find(doc->uri());
  if (it != cache_.end() && it->second.generation == generation_) {
    Cached& c = it->second;
    if (c.doc == doc) return &c.results;
    const results::FileResult* f = c.results.hasResults && results_ ? results_->file(c.results.path) : nullptr;
    DocumentPtr previous = std::exchange(c.doc, doc);
    if (!f || !f->hasSnapshot) {  // nothing to move: results apply as they are
      c.extents.clear();
      return &c.results;
    }
    if (f->snapshot == doc->text()) {
      remapExact(c);  // back to the profiled text: exactly the results as measured
      return &c.results;
    }
    auto delta = results::lineDelta(previous->text(), doc->text());
    results::applyLineDelta(c.results.file, delta, liveSpans(c, previous.get()), true);
    // With lines dropped since the snapshot, the snapshot diff may now keep some of them.
    if (c.results.file.dropped > 0) c.exact = false;
    fillFunctionNs(c.results);
    return &c.results;
  }
  Cached c;
  c.doc = doc;
  c.generation = generation_;
  if (auto rel = server_.workspace().relativePath(doc->uri())) {
    c.results.path = *rel;
    remapExact(c);
  }
  auto& slot = cache_[doc->uri()];
  slot = std::move(c);
  return &slot.results;
}

void ResultStore::settle(const DocumentPtr& doc) {
  if (!doc) return;
  forDocument(doc);  // brings the cache entry to this version first
  auto it = cache_.find(doc->uri());
  if (it == cache_.end() || it->second.generation != generation_ || it->second.doc != doc || it->second.exact) return;
  Cached& c = it->second;
  auto shown = [](const DocumentResults& r) {
    std::vector<std::pair<uint32_t, uint32_t>> out;  // (live line, source index)
    for (size_t i = 0; i < r.file.file.lines.size(); ++i)
      out.emplace_back(r.file.file.lines[i].line, i < r.file.sourceIndex.size() ? r.file.sourceIndex[i] : 0);
    return out;
  };
  auto before = shown(c.results);
  remapExact(c);
  if (shown(c.results) != before && server_.isInitialized()) {
    server_.refreshInlayHints();
    server_.refreshCodeLenses();
  }
}

}  // namespace kl::lsp
