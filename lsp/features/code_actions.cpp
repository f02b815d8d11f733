// textDocument/codeAction + codeAction/resolve: the NVTX annotation engine (core/nvtx) as code
// actions. codeAction only decides which actions apply (cheap checks on the parsed document) and
// returns them with `data` naming the document version; codeAction/resolve computes the edit on
// the pool against that exact version and answers a WorkspaceEdit whose documentChanges carry
// the version. Resolving for a version that is no longer current is refused with ContentModified.
//
//   "Wrap in NVTX range"                  refactor.rewrite.nvtx.wrap    statement(s) of the range
//   "Wrap body of `f` in NVTX range"      refactor.rewrite.nvtx.wrap    the enclosing function
//   "Refine NVTX here"                    refactor.rewrite.nvtx.refine  innermost managed range
//   "Remove kernlens NVTX ranges"         source.removeNvtx             every managed range
#include <filesystem>
#include <optional>

#include "core/nvtx/engine.h"
#include "lsp/features/cute_regions.h"
#include "lsp/server/server.h"
#include "lsp/server/uri.h"

namespace kl::lsp {
namespace {

constexpr const char* kWrap = "refactor.rewrite.nvtx.wrap";
constexpr const char* kRefine = "refactor.rewrite.nvtx.refine";
constexpr const char* kRemove = "source.removeNvtx";

/// The `data` of an NVTX action, as offered and as read back by codeAction/resolve.
struct ActionData {
  std::string uri;
  std::optional<int32_t> version;  // the document version the action was offered for
  std::string action;              // wrap | wrapFunction | refine | remove | (other providers')
  uint32_t firstLine = 0, lastLine = 0;  // wrap
  std::string function;                  // wrapFunction
  std::optional<uint32_t> defLine;       // wrapFunction
  uint32_t line = 0;                     // refine
};
bool fromJson(const json& j, ActionData& d, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("uri", d.uri) && o.opt("version", d.version) && o.opt("action", d.action) &&
         o.opt("firstLine", d.firstLine) && o.opt("lastLine", d.lastLine) &&
         o.opt("function", d.function) && o.opt("defLine", d.defLine) && o.opt("line", d.line);
}

/// Workspace-relative path used in range names; the file name when the document is not a file
/// under the workspace root.
std::string namePath(const Server& server, const std::string& uri) {
  if (auto rel = server.workspace().relativePath(uri)) return *rel;
  auto p = uriToPath(uri);
  std::string name = p ? p->filename().string() : uri.substr(uri.find_last_of('/') + 1);
  if (nvtx::checkRelativePath(name).ok()) return name;
  return "untitled.py";
}

CodeAction action(const std::string& title, const char* kind, json data) {
  CodeAction ca;
  ca.title = title;
  ca.kind = kind;
  ca.data = std::move(data);
  return ca;
}

/// Byte offsets of an LSP range in a document, ordered.
std::pair<uint32_t, uint32_t> offsets(const Document& doc, const Range& r) {
  uint32_t a = doc.offsetAt(r.start), b = doc.offsetAt(r.end);
  return a <= b ? std::pair{a, b} : std::pair{b, a};
}

Result<WorkspaceEdit> computeEdit(const DocumentPtr& doc, const json& rawData, const ActionData& data,
                                  const std::string& relPath) {
  // Providers of other features (the same version check and pool run apply to them).
  if (isCuteRegionAction(rawData)) return cuteRegionEdit(*doc, rawData);
  const auto& src = *doc->source();
  nvtx::Options opt;
  opt.relPath = relPath;
  Result<nvtx::FileEdit> fe = Error::invalid("unknown code action '" + data.action + "'");
  if (data.action == "wrap") {
    fe = nvtx::annotate(src, std::vector{nvtx::RangeRequest::statements(data.firstLine, data.lastLine)}, opt);
  } else if (data.action == "wrapFunction") {
    auto req = nvtx::RangeRequest::functionBody(data.function);
    if (data.defLine) req.defLine = *data.defLine;
    fe = nvtx::annotate(src, std::vector{req}, opt);
  } else if (data.action == "refine") {
    fe = nvtx::refine(src, data.line, opt);
  } else if (data.action == "remove") {
    fe = nvtx::stripEdit(src);
  }
  if (!fe) return fe.error();
  TextDocumentEdit tde;
  tde.textDocument = {doc->uri(), doc->version()};
  for (const auto& e : fe->edits) tde.edits.push_back({doc->rangeOf(e.start, e.end), e.newText});
  WorkspaceEdit we;
  we.documentChanges.push_back(std::move(tde));
  return we;
}

}  // namespace

void registerCodeActions(Server& server) {
  server.addCapabilities(
      {{"codeActionProvider",
        {{"codeActionKinds", {kWrap, kRefine, kRemove, kCuteRegionActionKind}}, {"resolveProvider", true}}}});

  server.method<CodeActionParams, std::vector<CodeAction>>(
      "textDocument/codeAction",
      [&server](const CodeActionParams& params, Reply<std::vector<CodeAction>> reply) {
        std::vector<CodeAction> out;
        const std::string& uri = params.textDocument.uri;
        auto doc = server.documents().get(uri);
        if (!doc || !doc->source() || doc->source()->hasErrors()) return reply(out);
        const auto& src = *doc->source();
        const auto& m = src.model();
        auto [a, b] = offsets(*doc, params.range);
        // A selection ending at column 0 of a line does not select that line.
        if (b > a && src.lines().toLineCol(b).col == 0) --b;
        uint32_t la = src.lines().toLineCol(a).line, lb = src.lines().toLineCol(b).line;
        json base = {{"uri", uri}, {"version", doc->version()}};
        const CodeActionContext& context = params.context;

        bool anyManaged = false;
        bool inManaged = false;
        for (const auto& r : m.nvtxRanges) {
          if (!r.managed || r.kind != python::NvtxRange::Kind::With) continue;
          anyManaged = true;
          uint32_t first = src.lines().toLineCol(r.bytes.start).line;
          uint32_t last = src.lines().toLineCol(r.bytes.end > 0 ? r.bytes.end - 1 : 0).line;
          if (first <= la && la <= last) inManaged = true;
        }
        bool statementThere = false;
        for (const auto& s : m.statements)
          if (s.lines.first <= lb && s.lines.last >= la) statementThere = true;

        if (statementThere && context.wants(kWrap)) {
          json d = base;
          d["action"] = "wrap";
          d["firstLine"] = la;
          d["lastLine"] = lb;
          out.push_back(action("Wrap in NVTX range", kWrap, d));
        }
        int32_t fi = m.functionAt(a);
        if (fi != python::kNone && context.wants(kWrap)) {
          const auto& f = m.functions[fi];
          if (!f.qualName.empty()) {
            json d = base;
            d["action"] = "wrapFunction";
            d["function"] = f.qualName;
            d["defLine"] = f.defLine;
            out.push_back(action("Wrap body of `" + f.qualName + "` in NVTX range", kWrap, d));
          }
        }
        if (inManaged && context.wants(kRefine)) {
          json d = base;
          d["action"] = "refine";
          d["line"] = la;
          out.push_back(action("Refine NVTX here", kRefine, d));
        }
        if (anyManaged && context.wants(kRemove)) {
          json d = base;
          d["action"] = "remove";
          out.push_back(action("Remove kernlens NVTX ranges", kRemove, d));
        }
        for (auto& ca : cuteRegionCodeActions(*doc, params)) out.push_back(std::move(ca));
        reply(out);
      });

  server.method<CodeAction, CodeAction>(
      "codeAction/resolve", [&server](const CodeAction& ca, Reply<CodeAction> reply) {
        if (!ca.data) return reply.error(ErrorCode::InvalidParams, "params.data: required field is missing");
        ActionData data;
        std::string error;
        if (!parseJson(*ca.data, data, error, "params.data"))
          return reply.error(ErrorCode::InvalidParams, error);
        auto doc = server.documents().get(data.uri);
        if (!doc || !doc->source())
          return reply.error(ErrorCode::InvalidParams,
                             "code action for a document that is not open: " + data.uri);
        if (data.version != doc->version())
          return reply.error(ErrorCode::ContentModified,
                             "the document changed since this code action was offered (version " +
                                 (data.version ? std::to_string(*data.version) : std::string("?")) +
                                 ", now " + std::to_string(doc->version()) + "); ask for actions again");
        std::string relPath = namePath(server, data.uri);
        server.backgroundReply<CodeAction>(
            reply, [doc, ca, data, relPath](const CancellationToken& token) -> Result<CodeAction> {
              if (token.isCancelled()) return Error::cancelled();
              auto edit = computeEdit(doc, *ca.data, data, relPath);
              if (!edit) return edit.error();
              CodeAction out = ca;
              out.edit = std::move(*edit);
              return out;
            });
      });
}

}  // namespace kl::lsp
