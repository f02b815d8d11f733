// Intra-kernel regions of CUTE DSL kernels in the editor; contracts in cute_regions.h.
//
//   kernlens.loadRegions  [{"path": BUFFER(.bin|.npy), "tags"?: TAG_FILE, "uri"?: KERNEL_DOC,
//                           "capacity"?: N, "allowOverflow"?: bool}]
//   kernlens.clearRegions []
//
// Tag names: the tag file when given, else the `TAG_X = n` constants of `uri` (the open
// document's current text, else the file), else `tag_<id>`. Relative paths are resolved against
// the workspace root. Errors (unreadable or malformed buffer, overflow without allowOverflow, no
// events, bad tag file) answer RequestFailed with a one-line message that is also shown with
// window/showMessage; the loaded state is left as it was.
#include "lsp/features/cute_regions.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <optional>

#include "core/cute/buffer.h"
#include "lsp/features/feature_context.h"
#include "lsp/protocol/commands.h"
#include "lsp/server/server.h"
#include "lsp/server/uri.h"

namespace kl::lsp {

namespace fs = std::filesystem;

namespace {

constexpr const char* kAction = "cute.timeRegion";

/// The `data` of "Time this region inside the kernel" that codeAction/resolve reads back.
struct TimeRegionData {
  uint32_t firstLine = 0, lastLine = 0;
  std::string label;  // empty: region_<id>
};
bool fromJson(const json& j, TimeRegionData& d, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("firstLine", d.firstLine) && o.req("lastLine", d.lastLine) && o.opt("label", d.label);
}

std::string upperNoPrefix(const std::string& s) {
  std::string u;
  for (char c : s) u.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (u.rfind("TAG_", 0) == 0) u.erase(0, 4);
  return u;
}

/// Where the names of the buffer's tags come from (decided on the main loop).
struct NameSource {
  std::optional<fs::path> tagFile;
  std::optional<fs::path> kernelFile;         // not open: mapped from disk on the pool
  std::optional<cute::TagTable> fromOpenDoc;  // open: its current constants
  std::vector<std::string> mapWarnings;
};

Result<LoadedRegions> loadRegions(const fs::path& bufferPath, const NameSource& names, std::optional<int64_t> capacity,
                                  bool allowOverflow, const CancellationToken& token) {
  const std::string where = bufferPath.string();
  if (capacity && *capacity <= 0)
    return Error::invalid(where + ": capacity must be a positive number of events per unit");
  auto buf = cute::readEventBuffer(bufferPath, capacity);
  if (!buf) return buf.error();
  if (token.isCancelled()) return Error::cancelled();
  int64_t lost = buf->totalOverflow();
  if (lost > 0 && !allowOverflow)
    return Error::invalid(where + ": buffer overflow: " + std::to_string(lost) +
                          " events lost (the kernel counted more than the capacity of " +
                          std::to_string(buf->capacity) +
                          " events per unit); raise max_events, or load with allowOverflow");
  if (buf->events.empty()) return Error::invalid(where + ": no events recorded in the buffer");

  LoadedRegions out;
  out.path = where;
  cute::TagTable table;
  if (names.tagFile) {
    auto t = cute::readTagFile(*names.tagFile);
    if (!t) return t.error();
    table = std::move(*t);
  } else if (names.fromOpenDoc) {
    table = *names.fromOpenDoc;
    out.warnings = names.mapWarnings;
  } else if (names.kernelFile) {
    auto m = cute::mapCuteSourceFile(*names.kernelFile);
    if (!m) return m.error();
    table = m->tagTable();
    out.warnings = m->warnings;
  }
  out.stats = cute::summarize(*buf, table);
  for (const auto& s : out.stats)
    out.named.push_back(s.tag >= 0 && static_cast<size_t>(s.tag) < table.names.size() &&
                        s.name != "tag_" + std::to_string(s.tag));
  out.events = static_cast<int64_t>(buf->events.size());
  out.units = buf->units;
  out.capacity = buf->capacity;
  out.overflow = lost;
  if (lost > 0)
    out.warnings.push_back("buffer overflow: " + std::to_string(lost) +
                           " events lost; statistics cover the recorded events only");
  for (const auto& w : buf->warnings) out.warnings.push_back(w);
  return out;
}

json summaryJson(const LoadedRegions& r, const std::vector<std::string>& documents) {
  json tags = json::array();
  for (const auto& s : r.stats)
    tags.push_back({{"tag", s.tag},
                    {"name", s.name},
                    {"count", s.count},
                    {"meanNs", s.meanNs},
                    {"minNs", s.minNs},
                    {"maxNs", s.maxNs},
                    {"totalNs", s.totalNs},
                    {"share", s.share}});
  return {{"path", r.path},         {"events", r.events},      {"units", r.units},       {"capacity", r.capacity},
          {"overflow", r.overflow}, {"tags", std::move(tags)}, {"warnings", r.warnings}, {"documents", documents}};
}

std::string tooltipFor(const std::string& constant, const cute::TagStats& s, const LoadedRegions& r, Units units) {
  auto d = [&](double ns) { return formatDuration(std::llround(ns), units); };
  std::string t =
      "**" + constant + "** (tag " + std::to_string(s.tag) + "): " + std::to_string(s.count) + " events\n\n";
  t += "mean " + d(s.meanNs) + " · min " + d(static_cast<double>(s.minNs)) + " · max " +
       d(static_cast<double>(s.maxNs)) + " · total " + d(static_cast<double>(s.totalNs)) + "\n\n";
  t += formatShare(s.share) + " of all recorded region time (nested regions count in both)\n\n";
  t += "buffer: `" + r.path + "`";
  if (r.overflow > 0) t += "\n\n⚠ " + std::to_string(r.overflow) + " events were lost (buffer overflow)";
  return t;
}

/// The function (or an enclosing one) of statement `st` is a CUTE DSL kernel.
bool inCuteKernel(const python::Module& m, int32_t st) {
  return st != python::kNone && cute::inCuteKernel(m, m.statements[static_cast<size_t>(st)].function);
}

}  // namespace

const cute::TagStats* LoadedRegions::find(int64_t tag) const {
  auto it =
      std::lower_bound(stats.begin(), stats.end(), tag, [](const cute::TagStats& s, int64_t t) { return s.tag < t; });
  return it != stats.end() && it->tag == tag ? &*it : nullptr;
}

const cute::CuteSourceMap& CuteRegions::mapOf(const Document& doc) {
  static const cute::CuteSourceMap kEmpty;
  if (!doc.source()) return kEmpty;
  auto it = maps_.find(doc.uri());
  if (it == maps_.end() || it->second.source != doc.source()) {
    Cached c{doc.source(), cute::mapCuteSource(*doc.source())};
    it = maps_.insert_or_assign(doc.uri(), std::move(c)).first;
  }
  return it->second.map;
}

bool sameTagName(const std::string& constant, const std::string& loadedName) {
  return !constant.empty() && upperNoPrefix(constant) == upperNoPrefix(loadedName);
}

const cute::TagStats* siteStats(const LoadedRegions& loaded, const cute::TagSite& site) {
  if (site.tag < 0) return nullptr;
  const cute::TagStats* s = loaded.find(site.tag);
  if (!s) return nullptr;
  size_t i = static_cast<size_t>(s - loaded.stats.data());
  if (i < loaded.named.size() && loaded.named[i] && !sameTagName(site.constant, s->name)) return nullptr;
  return s;
}

bool documentMatches(const LoadedRegions& loaded, const cute::CuteSourceMap& map) {
  for (size_t i = 0; i < loaded.stats.size(); ++i) {
    if (i >= loaded.named.size() || !loaded.named[i]) continue;
    for (const auto& c : map.constants)
      if (sameTagName(c.name, loaded.stats[i].name) && c.value != loaded.stats[i].tag) return false;
  }
  return std::any_of(map.sites.begin(), map.sites.end(),
                     [&](const cute::TagSite& s) { return siteStats(loaded, s) != nullptr; });
}

std::string regionHintLabel(const std::string& constant, const cute::TagStats& s, Units units,
                            std::string_view prefix) {
  return (prefix.empty() ? std::string() : std::string(prefix) + " ") + "region " + constant + ": mean " +
         formatDuration(std::llround(s.meanNs), units) + " · n=" + std::to_string(s.count) + " · " +
         formatShare(s.share);
}

std::vector<InlayHint> cuteRegionHints(CuteRegions& state, const Document& doc, uint32_t firstLine, uint32_t lastLine,
                                       Units units, std::string_view prefix) {
  std::vector<InlayHint> out;
  const auto& loaded = state.loaded();
  if (!loaded) return out;
  const cute::CuteSourceMap& map = state.mapOf(doc);
  if (!documentMatches(*loaded, map)) return out;
  for (const auto& site : map.sites) {
    if (site.anchorLine < firstLine || site.anchorLine > lastLine) continue;
    const cute::TagStats* s = siteStats(*loaded, site);
    if (!s) continue;
    InlayHint h;
    h.position = doc.lineEndPosition(site.anchorLine);
    h.label = regionHintLabel(site.constant, *s, units, prefix);
    h.paddingLeft = true;
    h.tooltip = MarkupContent{MarkupKind::Markdown, tooltipFor(site.constant, *s, *loaded, units)};
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<CodeAction> cuteRegionCodeActions(const Document& doc, const CodeActionParams& params) {
  std::vector<CodeAction> out;
  if (!params.context.wants(kCuteRegionActionKind)) return out;
  if (!doc.source() || doc.source()->hasErrors()) return out;
  const Range& range = params.range;
  const auto& src = *doc.source();
  uint32_t a = doc.offsetAt(range.start), b = doc.offsetAt(range.end);
  if (a > b) std::swap(a, b);
  // A selection ending at column 0 of a line does not select that line.
  if (b > a && src.lines().toLineCol(b).col == 0) --b;
  uint32_t la = src.lines().toLineCol(a).line, lb = src.lines().toLineCol(b).line;
  const python::Module& m = src.model();
  int32_t sa = m.statementAtLine(la), sb = m.statementAtLine(lb);
  if (!inCuteKernel(m, sa) || !inCuteKernel(m, sb)) return out;
  CodeAction ca;
  ca.title = "Time this region inside the kernel";
  ca.kind = kCuteRegionActionKind;
  ca.data =
      json{{"uri", doc.uri()}, {"version", doc.version()}, {"action", kAction}, {"firstLine", la}, {"lastLine", lb}};
  out.push_back(std::move(ca));
  return out;
}

bool isCuteRegionAction(const json& data) {
  struct Tag {
    std::optional<std::string> action;
  } tag;
  JPath::Root root("data");
  ObjectReader o(data, JPath(root));
  return o && o.opt("action", tag.action) && tag.action == kAction;
}

Result<WorkspaceEdit> cuteRegionEdit(const Document& doc, const json& data) {
  if (!doc.source()) return Error::invalid("the document could not be parsed");
  TimeRegionData d;
  std::string error;
  if (!parseJson(data, d, error, "params.data")) return Error::invalid(error);
  auto plan = cute::planTimeRegion(*doc.source(), d.firstLine, d.lastLine, d.label);
  if (!plan) return plan.error();
  TextDocumentEdit tde;
  tde.textDocument = {doc.uri(), doc.version()};
  for (const auto& e : plan->edits) tde.edits.push_back({doc.rangeOf(e.start, e.end), e.newText});
  WorkspaceEdit we;
  we.documentChanges.push_back(std::move(tde));
  return we;
}

std::shared_ptr<CuteRegions> registerCuteRegions(Server& server, std::shared_ptr<FeatureContext> ctx) {
  auto state = std::make_shared<CuteRegions>();

  server.onDocumentClosed([state](const std::string& uri) { state->forget(uri); });

  server.command<LoadRegionsArgs>(
      "kernlens.loadRegions", [&server, state](const LoadRegionsArgs& a, Reply<json> reply) {
        auto resolve = [&](const std::string& p) { return server.workspace().resolve(p); };
        auto fail = [&server](const Reply<json>& r, const std::string& msg) {
          server.showMessage(MessageType::Error, "kernlens.loadRegions: " + msg);
          r.error(ErrorCode::RequestFailed, msg);
        };
        if (a.path.empty()) return fail(reply, "arguments[0].path: empty");
        NameSource names;
        if (a.tags) {
          names.tagFile = resolve(*a.tags);
        } else if (a.uri) {
          if (auto doc = server.documents().get(*a.uri); doc && doc->source()) {
            const auto& map = state->mapOf(*doc);
            names.fromOpenDoc = map.tagTable();
            names.mapWarnings = map.warnings;
          } else if (auto p = uriToPath(*a.uri)) {
            names.kernelFile = *p;
          } else {
            return fail(reply, *a.uri + ": not an open document and not a file:// URI");
          }
        }
        const fs::path bufferPath = resolve(a.path);
        const uint64_t seq = state->nextSeq();
        using Out = std::shared_ptr<Result<LoadedRegions>>;
        server.background<Out>(
            "kernlens.loadRegions", reply.token(),
            [bufferPath, names, capacity = a.capacity, allow = a.allowOverflow](const CancellationToken& token) {
              return std::make_shared<Result<LoadedRegions>>(loadRegions(bufferPath, names, capacity, allow, token));
            },
            [&server, state, reply, seq, fail](Out out) {
              if (!out->ok()) {
                if (out->error().code == Error::Code::Cancelled) return reply(Error::cancelled());
                return fail(reply, out->error().message);
              }
              if (seq != state->seq())
                return reply.error(ErrorCode::ContentModified,
                                   "superseded by a later kernlens.loadRegions or kernlens.clearRegions");
              auto loaded = std::make_shared<const LoadedRegions>(std::move(out->value()));
              state->set(loaded);
              std::vector<std::string> docs;
              for (const auto& d : server.documents().all())
                if (documentMatches(*loaded, state->mapOf(*d))) docs.push_back(d->uri());
              if (loaded->overflow > 0)
                server.showMessage(MessageType::Warning,
                                   "kernlens.loadRegions: " + loaded->path + ": " + std::to_string(loaded->overflow) +
                                       " events lost (buffer overflow); means cover the recorded events");
              server.logMessage(MessageType::Info, "kernlens: regions " + loaded->path + ": " +
                                                       std::to_string(loaded->events) + " events, " +
                                                       std::to_string(loaded->stats.size()) + " tags, " +
                                                       std::to_string(docs.size()) + " open kernels match");
              server.refreshInlayHints();
              reply(summaryJson(*loaded, docs));
            });
      });

  server.command<NoArguments>("kernlens.clearRegions", [&server, state](const NoArguments&, Reply<json> reply) {
    state->nextSeq();
    bool had = state->loaded() != nullptr;
    state->clear();
    if (had) server.refreshInlayHints();
    reply(json(nullptr));
  });

  // Hints ride on textDocument/inlayHint of inlay_hints.cpp (see cute_regions.h).
  std::weak_ptr<FeatureContext> weakCtx = ctx;
  ctx->hintProviders.push_back([state, weakCtx](const DocumentPtr& doc, uint32_t first, uint32_t last) {
    auto v = weakCtx.lock();
    if (!doc || !v) return std::vector<InlayHint>{};
    return cuteRegionHints(*state, *doc, first, last, v->settings.units, v->settings.hintPrefix);
  });
  return state;
}

}  // namespace kl::lsp
