// kernlens.keepAnnotations [] or [{"uri"}]: the kl: ranges of the run the editor shows become
// real edits of the user's files (core/nvtx keep()), sent as ONE workspace/applyEdit — the
// client applies it (VS Code: undoable; the extension asks the user first). With a uri, only
// that file.
//
// The ranges are the spans of the run's last round that measured each file (the store), as
// requests on the text the run instrumented: a whole-body range stays a function-body range,
// the others are statement ranges, each keeping the name it had in the run. A file that
// changed since the run is refused with keep()'s reason, and so is a file whose latest stored
// results come from another run. Answers {"applied", "files", "ranges", "refused": [reason...]}.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/nvtx/engine.h"
#include "core/store/store.h"
#include "lsp/features/feature_context.h"
#include "lsp/protocol/commands.h"
#include "lsp/server/server.h"
#include "lsp/server/uri.h"

namespace kl::lsp {

namespace fs = std::filesystem;

namespace {

struct Buffer {
  std::string uri;
  std::optional<int32_t> version;  // open documents
  std::string text;
};

struct FileKeep {
  std::string path, uri;
  std::optional<int32_t> version;
  std::string text;                     // the text the edits apply to
  std::vector<python::TextEdit> edits;  // byte offsets in `text`
  size_t ranges = 0;
};

struct KeepPlan {
  std::vector<FileKeep> files;
  std::vector<std::string> refused;
};

KeepPlan plan(const fs::path& root, const std::string& runKey, const std::map<std::string, Buffer>& open,
              const std::optional<std::string>& onlyPath) {
  KeepPlan out;
  auto st = store::Store::openFile(store::Store::dbPathFor(root));
  if (!st) {
    out.refused.push_back("the results store cannot be read: " + st.error().message);
    return out;
  }
  auto runs = st->runs(50);
  if (!runs) return out;
  const store::RunInfo* run = nullptr;
  for (const auto& r : *runs)
    if (r.key == runKey) run = &r;
  if (!run) {
    out.refused.push_back("run " + runKey + " is not in the store");
    return out;
  }
  auto rounds = st->rounds(run->id);
  if (!rounds) return out;
  std::set<std::string> paths;
  for (const auto& rd : *rounds)
    if (auto spans = st->spans(rd.id))
      for (const auto& s : *spans) paths.insert(s.path);
  for (const auto& path : paths) {
    if (onlyPath && path != *onlyPath) continue;
    auto fr = st->latestFileResults(path);
    if (!fr || !*fr) continue;
    const auto& f = **fr;
    if (f.run.key != runKey) {
      out.refused.push_back(path + ": its latest results come from run " + f.run.key);
      continue;
    }
    std::vector<nvtx::RangeRequest> requests;
    for (const auto& s : f.spans) {
      nvtx::RangeRequest r = s.body ? nvtx::RangeRequest::functionBody(s.function)
                                    : nvtx::RangeRequest::statements(s.range.firstLine - 1, s.range.lastLine - 1);
      r.name = s.range.name;
      if (std::find(requests.begin(), requests.end(), r) == requests.end()) requests.push_back(std::move(r));
    }
    FileKeep fk;
    fk.path = path;
    fk.uri = pathToUri(root / path);
    if (auto it = open.find(fk.uri); it != open.end()) {
      fk.version = it->second.version;
      fk.text = it->second.text;
    } else {
      std::ifstream in(root / path, std::ios::binary);
      if (!in) {
        out.refused.push_back(path + ": cannot be read");
        continue;
      }
      std::ostringstream ss;
      ss << in.rdbuf();
      fk.text = ss.str();
    }
    // The text the run's line numbers refer to: its snapshot without kernlens ranges.
    std::optional<std::string> original;
    if (!f.snapshotId.empty())
      if (auto snap = st->snapshot(f.snapshotId); snap && *snap)
        if (auto parsed = python::SourceFile::parse(**snap))
          if (auto stripped = nvtx::strip(**parsed)) original = stripped->text;
    auto src = python::SourceFile::parse(fk.text);
    if (!src) {
      out.refused.push_back(path + ": " + src.error().message);
      continue;
    }
    nvtx::Options opt;
    opt.relPath = path;
    opt.skipUnwrappable = true;
    auto fe = nvtx::keep(**src, requests, opt, original ? std::optional<std::string_view>(*original) : std::nullopt);
    if (!fe) {
      out.refused.push_back(path + ": " + fe.error().message);
      continue;
    }
    if (fe->edits.empty()) continue;
    fk.edits = fe->edits;
    fk.ranges = fe->ranges;
    out.files.push_back(std::move(fk));
  }
  return out;
}

}  // namespace

void registerKeepAnnotations(Server& server, std::shared_ptr<FeatureContext> ctx) {
  server.command<KeepAnnotationsArgs>("kernlens.keepAnnotations", [&server, ctx](const KeepAnnotationsArgs& args,
                                                                                 Reply<json> reply) {
    const auto& rs = ctx->results->results();
    if (!rs || server.workspace().root().empty())
      return reply.error(ErrorCode::RequestFailed, "kernlens: no profiling run to keep annotations from");
    if (rs->provenance.runId.empty() || rs->provenance.origin != results::ResultOrigin::StoredRun)
      return reply.error(ErrorCode::RequestFailed,
                         "kernlens: the results come from a loaded profile; keep the annotations of a profiling run");
    if (!server.clientCapabilities().applyEdit)
      return reply.error(ErrorCode::RequestFailed, "kernlens: this client cannot apply workspace edits");
    std::optional<std::string> only;
    if (args.uri) {
      only = server.workspace().relativePath(*args.uri);
      if (!only) return reply.error(ErrorCode::InvalidParams, "kernlens.keepAnnotations: not a file of the workspace");
    }
    std::map<std::string, Buffer> open;
    for (const auto& d : server.documents().all()) open[d->uri()] = Buffer{d->uri(), d->version(), d->text()};
    using Out = std::shared_ptr<KeepPlan>;
    server.background<Out>(
        "kernlens.keepAnnotations", CancellationToken(),
        [root = server.workspace().root(), runKey = rs->provenance.runId, open = std::move(open),
         only](const CancellationToken&) { return std::make_shared<KeepPlan>(plan(root, runKey, open, only)); },
        [&server, reply](Out p) {
          json refused = p->refused;
          if (p->files.empty())
            return reply(json{{"applied", false}, {"files", 0}, {"ranges", 0}, {"refused", refused}});
          json changes = json::array();
          size_t ranges = 0;
          for (const auto& f : p->files) {
            // Positions in the client's encoding, on the text the edits were computed for.
            Document doc(f.uri, "python", f.version.value_or(0), server.encoding(), nullptr, f.text);
            json edits = json::array();
            for (const auto& e : f.edits)
              edits.push_back({{"range", toJson(doc.rangeOf(e.start, e.end))}, {"newText", e.newText}});
            changes.push_back(
                {{"textDocument", {{"uri", f.uri}, {"version", f.version ? json(*f.version) : json(nullptr)}}},
                 {"edits", std::move(edits)}});
            ranges += f.ranges;
          }
          size_t files = p->files.size();
          server.call("workspace/applyEdit",
                      {{"label", "kernlens: keep annotations"}, {"edit", {{"documentChanges", std::move(changes)}}}},
                      [reply, files, ranges, refused](Result<json> r) {
                        if (!r.ok())
                          return reply.error(ErrorCode::RequestFailed, "workspace/applyEdit: " + r.error().message);
                        ApplyEditResult res;
                        std::string error;
                        bool applied = parseJson(*r, res, error, "result") && res.applied;
                        reply(json{{"applied", applied}, {"files", files}, {"ranges", ranges}, {"refused", refused}});
                      });
        });
  });
}

}  // namespace kl::lsp
