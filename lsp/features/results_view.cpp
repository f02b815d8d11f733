// The shared results state of the editor features (see results_view.h) and the
// kernlens.clearResults command.
#include "lsp/features/results_view.h"

#include <fstream>
#include <sstream>

#include "core/ncu/catalog.h"
#include "core/ncu/classify.h"
#include "core/ncu/kernel_name.h"
#include "core/nvtx/naming.h"
#include "core/results/from_store.h"
#include "lsp/server/server.h"

namespace kl::lsp {

namespace fs = std::filesystem;

namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<fs::path> uriToPath(const std::string& uri) {
  static constexpr std::string_view kScheme = "file://";
  if (uri.rfind(kScheme, 0) != 0) return std::nullopt;
  std::string_view rest = std::string_view(uri).substr(kScheme.size());
  // file://host/path: only an empty host or "localhost" names this machine.
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view host = rest.substr(0, slash);
  if (!host.empty() && host != "localhost") return std::nullopt;
  rest = rest.substr(slash);
  std::string out;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size()) {
      int hi = hexValue(rest[i + 1]), lo = hexValue(rest[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += rest[i];
  }
  return fs::path(out);
}

std::string pathToUri(const fs::path& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string s = path.generic_string();
  std::string out = "file://";
  for (unsigned char c : s) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '/' || c == '-' || c == '_' || c == '.' || c == '~';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Position lineEndPosition(const Document& doc, uint32_t line) {
  const std::string& text = doc.text();
  uint32_t off = 0;
  if (doc.source()) {
    const auto& li = doc.source()->lines();
    if (line >= li.lineCount()) return doc.positionAt(static_cast<uint32_t>(text.size()));
    off = li.lineEnd(line, text);
  } else {
    uint32_t l = 0;
    while (off < text.size() && l < line) {
      if (text[off] == '\n') ++l;
      ++off;
    }
    while (off < text.size() && text[off] != '\n') ++off;
  }
  // lineEnd may include a '\r' of a CRLF ending: stop before it.
  while (off > 0 && off <= text.size() && text[off - 1] == '\r') --off;
  return doc.positionAt(off);
}

Range lineRange(const Document& doc, uint32_t first, uint32_t last) {
  uint32_t start = 0;
  if (doc.source()) {
    const auto& li = doc.source()->lines();
    start = first < li.lineCount() ? li.lineStart(first) : static_cast<uint32_t>(doc.text().size());
  }
  return {doc.positionAt(start), lineEndPosition(doc, last)};
}

uint32_t lineOf(const Document& doc, Position pos) {
  uint32_t off = doc.offsetAt(pos);
  if (doc.source()) return doc.source()->lines().toLineCol(off).line;
  const std::string& t = doc.text();
  uint32_t l = 0;
  for (uint32_t i = 0; i < off && i < t.size(); ++i)
    if (t[i] == '\n') ++l;
  return l;
}

void ResultsView::setResults(results::ResultSet rs, bool keepPrevious) {
  if (keepPrevious && rs.previousFunctions.empty() && results_) {
    for (const auto& f : results_->files)
      for (const auto& fn : f.functions) rs.previousFunctions[results::functionKey(f.path, fn.qualName)] = fn;
    rs.previousRunId = results_->provenance.runId;
  }
  results_ = std::make_shared<const results::ResultSet>(std::move(rs));
  ++generation_;
  cache_.clear();
  for (auto& h : changeHooks_) h();
  server_.refreshInlayHints();
  server_.refreshCodeLenses();
}

void ResultsView::clear() {
  results_.reset();
  ++generation_;
  cache_.clear();
  for (auto& h : changeHooks_) h();
  server_.refreshInlayHints();
  server_.refreshCodeLenses();
}

std::optional<ResultsView::BoundInfo> ResultsView::boundFor(const std::string& fullName,
                                                            const std::string& shortName) const {
  if (ncu_)
    for (const auto* n : {&fullName, &shortName}) {
      auto c = ncu::boundForKernel(*n, *ncu_);
      if (c.bound != ncu::Bound::Unknown)
        return BoundInfo{std::string(ncu::boundName(c.bound)), c.summary(), "ncu report"};
    }
  for (const auto* n : {&fullName, &shortName})
    if (auto it = catalog_.find(ncu::normalizedKey(*n)); it != catalog_.end()) return it->second;
  return std::nullopt;
}

namespace {
/// The catalogue's bound classes (empty when the workspace has no database or no ncu tables).
std::map<std::string, ResultsView::BoundInfo> catalogBounds(const fs::path& root) {
  std::map<std::string, ResultsView::BoundInfo> out;
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
    if (!k.limiter.empty()) summary += ", limiter " + k.limiter;
    if (!k.detail.empty()) summary += "; " + k.detail;
    ResultsView::BoundInfo b{std::string(ncu::boundName(k.bound)), summary, "kernel catalogue"};
    out.emplace(ncu::normalizedKey(k.name), b);
    if (!k.baseName.empty()) out.emplace(ncu::normalizedKey(k.baseName), b);
  }
  return out;
}
}  // namespace

void ResultsView::reloadFromStore() {
  if (root_.empty()) return;
  server_.background<std::shared_ptr<std::map<std::string, BoundInfo>>>(
      "kernlens.catalog.load", CancellationToken(),
      [root = root_](const CancellationToken&) {
        return std::make_shared<std::map<std::string, BoundInfo>>(catalogBounds(root));
      },
      [weak = weak_from_this()](std::shared_ptr<std::map<std::string, BoundInfo>> b) {
        if (auto v = weak.lock(); v && !b->empty()) v->setCatalogBounds(std::move(*b));
      });
  using Out = std::shared_ptr<Result<std::optional<results::ResultSet>>>;
  std::weak_ptr<ResultsView> weak = weak_from_this();
  server_.background<Out>(
      "kernlens.store.load", CancellationToken(),
      [root = root_](const CancellationToken&) -> Out {
        return std::make_shared<Result<std::optional<results::ResultSet>>>(results::loadFromStore(root));
      },
      [weak](Out out) {
        auto v = weak.lock();
        if (!v) return;
        if (!out->ok()) {
          v->server().logMessage(MessageType::Warning,
                                 "kernlens: stored results not loaded: " + out->error().message);
          return;
        }
        if (!out->value()) return;
        size_t lines = 0;
        for (const auto& f : (*out->value()).files) lines += f.lines.size();
        v->server().logMessage(MessageType::Info, "kernlens: loaded stored results (" +
                                                      std::to_string(lines) + " lines, run " +
                                                      (*out->value()).provenance.runId + ")");
        v->setResults(std::move(*out->value()), false);
      });
}

std::optional<std::string> ResultsView::relativePath(const std::string& uri) const {
  if (root_.empty()) return std::nullopt;
  auto p = uriToPath(uri);
  if (!p) return std::nullopt;
  auto rel = nvtx::relativeToWorkspace(root_, *p);
  if (!rel) return std::nullopt;
  return *rel;
}

const DocumentResults* ResultsView::forDocument(const DocumentPtr& doc) {
  if (!doc) return nullptr;
  auto it = cache_.find(doc->uri());
  if (it != cache_.end() && it->second.version == doc->version() &&
      it->second.generation == generation_)
    return &it->second.results;
  Cached c;
  c.version = doc->version();
  c.generation = generation_;
  if (auto rel = relativePath(doc->uri())) {
    c.results.path = *rel;
    if (results_)
      if (const auto* f = results_->file(*rel)) {
        c.results.file = results::remapFile(*f, doc->text());
        c.results.hasResults = true;
      }
  }
  auto& slot = cache_[doc->uri()];
  slot = std::move(c);
  return &slot.results;
}

std::optional<std::string> ResultsView::textOf(const std::string& relPath) const {
  if (root_.empty()) return std::nullopt;
  fs::path p = root_ / fs::path(relPath);
  if (auto doc = server_.documents().get(pathToUri(p))) return doc->text();
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

results::PathMatcher ResultsView::matcher() const {
  std::vector<std::string> files;
  if (!root_.empty()) files = results::scanPythonFiles(root_);
  for (const auto& d : server_.documents().all())
    if (auto rel = relativePath(d->uri())) files.push_back(*rel);
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return results::PathMatcher(std::move(files));
}

void ResultsView::reloadSettings() {
  const Settings& s = server_.settings();
  EditorSettings e;
  e.hintsEnabled = s.get<bool>("hints.enabled", true);
  e.minShare = s.get<double>("hints.minShare", 0.01);
  e.thresholdMs = s.get<double>("hints.thresholdMs", 0.0);
  e.units = results::parseUnits(s.get<std::string>("hints.units", "auto"));
  e.lensesEnabled = s.get<bool>("lenses.enabled", true);
  e.profileLenses = s.get<bool>("lenses.profileUnprofiled", true);
  bool changed = e.hintsEnabled != settings_.hintsEnabled || e.minShare != settings_.minShare ||
                 e.thresholdMs != settings_.thresholdMs || e.units != settings_.units ||
                 e.lensesEnabled != settings_.lensesEnabled ||
                 e.profileLenses != settings_.profileLenses;
  settings_ = e;
  if (changed && server_.isInitialized()) {
    server_.refreshInlayHints();
    server_.refreshCodeLenses();
  }
}

std::shared_ptr<ResultsView> registerResultsView(Server& server) {
  auto view = std::make_shared<ResultsView>(server);
  std::weak_ptr<ResultsView> weak = view;
  server.onSettingsChanged([weak] {
    if (auto v = weak.lock()) v->reloadSettings();
  });
  server.onInitialized([weak, &server] {
    auto v = weak.lock();
    if (!v) return;
    const auto& ip = server.initializeParams();
    std::optional<fs::path> root;
    if (ip.rootUri) root = uriToPath(*ip.rootUri);
    if (!root && !ip.workspaceFolders.empty()) root = uriToPath(ip.workspaceFolders.front());
    if (!root && ip.rootPath && !ip.rootPath->empty()) root = fs::path(*ip.rootPath);
    if (root) v->setRoot(root->lexically_normal());
    v->reloadSettings();
    v->reloadFromStore();
  });
  server.onDocumentClosed([weak](const std::string& uri) {
    if (auto v = weak.lock()) v->forget(uri);
  });
  server.command("kernlens.clearResults", [view](const json&, Reply<json> reply) {
    view->clear();
    reply(json(nullptr));
  });
  return view;
}

}  // namespace kl::lsp
