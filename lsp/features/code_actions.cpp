// textDocument/codeAction + codeAction/resolve: the NVTX annotation engine (core/nvtx) as code
// actions. codeAction only decides which actions apply (cheap checks on the parsed document) and
// returns them with `data` naming the document version; codeAction/resolve computes the edit on
// the pool against that exact version and answers a WorkspaceEdit whose documentChanges carry
// the version. Resolving for a version that is no longer current is refused with ContentModified.
//
//   "Wrap in NVTX range"                  refactor.rewrite.nvtx.wrap    statement(s) of the range
//   "Wrap body of f() in NVTX range"      refactor.rewrite.nvtx.wrap    the enclosing function
//   "Refine NVTX here"                    refactor.rewrite.nvtx.refine  innermost managed range
//   "Remove kernlens NVTX ranges"         source.removeNvtx             every managed range
#include <filesystem>
#include <optional>

#include "core/nvtx/engine.h"
#include "core/nvtx/naming.h"
#include "lsp/features/cute_regions.h"
#include "lsp/server/server.h"
#include "lsp/server/uri.h"

namespace kl::lsp {
namespace {

constexpr const char* kWrap = "refactor.rewrite.nvtx.wrap";
constexpr const char* kRefine = "refactor.rewrite.nvtx.refine";
constexpr const char* kRemove = "source.removeNvtx";

/// Where an offered action applies; every provider's `data` has these (cute regions' too).
struct ActionTarget {
  std::string uri;
  std::optional<int32_t> version;  // the document version the action was offered for
};
bool fromJson(const json& j, ActionTarget& t, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("uri", t.uri) && o.opt("version", t.version);
}

enum class NvtxAction { Wrap, WrapFunction, Refine, Remove };
constexpr std::pair<NvtxAction, const char*> kNvtxActions[] = {{NvtxAction::Wrap, "wrap"},
                                                               {NvtxAction::WrapFunction, "wrapFunction"},
                                                               {NvtxAction::Refine, "refine"},
                                                               {NvtxAction::Remove, "remove"}};

/// The `data` of an NVTX action, as offered and as read back by codeAction/resolve.
struct NvtxActionData {
  std::string uri;
  int32_t version = 0;
  NvtxAction action = NvtxAction::Wrap;
  uint32_t firstLine = 0, lastLine = 0;  // Wrap: the selected core lines
  std::string function;                  // WrapFunction: qualified name
  std::optional<uint32_t> defLine;       // WrapFunction: its `def` line (tells overloads apart)
  uint32_t line = 0;                     // Refine: the cursor's core line
};
bool fromJson(const json& j, NvtxActionData& d, JPath path) {
  ObjectReader o(j, path);
  std::string action;
  if (!(o && o.req("uri", d.uri) && o.req("version", d.version) && o.req("action", action))) return false;
  bool known = false;
  for (const auto& [a, name] : kNvtxActions)
    if (action == name) {
      d.action = a;
      known = true;
    }
  if (!known) return path.field("action").report("expected \"wrap\", \"wrapFunction\", \"refine\" or \"remove\"");
  switch (d.action) {
    case NvtxAction::Wrap: return o.req("firstLine", d.firstLine) && o.req("lastLine", d.lastLine);
    case NvtxAction::WrapFunction: return o.req("function", d.function) && o.opt("defLine", d.defLine);
    case NvtxAction::Refine: return o.req("line", d.line);
    case NvtxAction::Remove: return true;
  }
  return true;
}
json toJson(const NvtxActionData& d) {
  json j = {{"uri", d.uri}, {"version", d.version}};
  for (const auto& [a, name] : kNvtxActions)
    if (a == d.action) j["action"] = name;
  switch (d.action) {
    case NvtxAction::Wrap:
      j["firstLine"] = d.firstLine;
      j["lastLine"] = d.lastLine;
      break;
    case NvtxAction::WrapFunction:
      j["function"] = d.function;
      writeOptional(j, "defLine", d.defLine);
      break;
    case NvtxAction::Refine: j["line"] = d.line; break;
    case NvtxAction::Remove: break;
  }
  return j;
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

CodeAction action(const std::string& title, const char* kind, const NvtxActionData& data) {
  CodeAction ca;
  ca.title = title;
  ca.kind = kind;
  ca.data = toJson(data);
  return ca;
}

/// Byte offsets of an LSP range in a document, ordered.
std::pair<uint32_t, uint32_t> offsets(const Document& doc, const Range& r) {
  uint32_t a = doc.offsetAt(r.start), b = doc.offsetAt(r.end);
  return a <= b ? std::pair{a, b} : std::pair{b, a};
}

Result<WorkspaceEdit> computeEdit(const DocumentPtr& doc, const json& data, const std::string& relPath) {
  // Providers of other features (the same version check and pool run apply to them).
  if (isCuteRegionAction(data)) return cuteRegionEdit(*doc, data);
  NvtxActionData d;
  std::string error;
  if (!parseJson(data, d, error, "params.data")) return Error::invalid(error);
  const auto& src = *doc->source();
  nvtx::Options opt;
  opt.relPath = relPath;
  Result<nvtx::FileEdit> fe = Error::invalid("no edit");
  switch (d.action) {
    case NvtxAction::Wrap:
      fe = nvtx::annotate(src, std::vector{nvtx::RangeRequest::statements(d.firstLine, d.lastLine)}, opt);
      break;
    case NvtxAction::WrapFunction: {
      auto req = nvtx::RangeRequest::functionBody(d.function);
      if (d.defLine) req.defLine = *d.defLine;
      fe = nvtx::annotate(src, std::vector{req}, opt);
      break;
    }
    case NvtxAction::Refine: fe = nvtx::refine(src, d.line, opt); break;
    case NvtxAction::Remove: fe = nvtx::stripEdit(src); break;
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
      "textDocument/codeAction", [&server](const CodeActionParams& params, Reply<std::vector<CodeAction>> reply) {
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
        NvtxActionData base;
        base.uri = uri;
        base.version = doc->version();
        const CodeActionContext& context = params.context;

        bool anyManaged = false;
        bool inManaged = false;
        for (const auto& r : nvtx::sourceRanges(src)) {
          if (!nvtx::isManaged(r) || r.kind != nvtx::SourceRange::Kind::With) continue;
          anyManaged = true;
          uint32_t first = src.lines().toLineCol(r.bytes.start).line;
          uint32_t last = src.lines().toLineCol(r.bytes.end > 0 ? r.bytes.end - 1 : 0).line;
          if (first <= la && la <= last) inManaged = true;
        }
        bool statementThere = false;
        for (const auto& s : m.statements)
          if (s.lines.first <= lb && s.lines.last >= la) statementThere = true;

        if (statementThere && context.wants(kWrap)) {
          NvtxActionData d = base;
          d.action = NvtxAction::Wrap;
          d.firstLine = la;
          d.lastLine = lb;
          out.push_back(action("Wrap in NVTX range", kWrap, d));
        }
        int32_t fi = m.functionAt(a);
        if (fi != python::kNone && context.wants(kWrap)) {
          const auto& f = m.functions[fi];
          if (!f.qualName.empty()) {
            NvtxActionData d = base;
            d.action = NvtxAction::WrapFunction;
            d.function = f.qualName;
            d.defLine = f.defLine;
            out.push_back(action("Wrap body of " + f.qualName + "() in NVTX range", kWrap, d));
          }
        }
        if (inManaged && context.wants(kRefine)) {
          NvtxActionData d = base;
          d.action = NvtxAction::Refine;
          d.line = la;
          out.push_back(action("Refine NVTX here", kRefine, d));
        }
        if (anyManaged && context.wants(kRemove)) {
          NvtxActionData d = base;
          d.action = NvtxAction::Remove;
          out.push_back(action("Remove kernlens NVTX ranges", kRemove, d));
        }
        for (auto& ca : cuteRegionCodeActions(*doc, params)) out.push_back(std::move(ca));
        reply(out);
      });

  server.method<CodeAction, CodeAction>("codeAction/resolve", [&server](const CodeAction& ca, Reply<CodeAction> reply) {
    if (!ca.data) return reply.error(ErrorCode::InvalidParams, "params.data: required field is missing");
    ActionTarget data;
    std::string error;
    if (!parseJson(*ca.data, data, error, "params.data")) return reply.error(ErrorCode::InvalidParams, error);
    auto doc = server.documents().get(data.uri);
    if (!doc || !doc->source())
      return reply.error(ErrorCode::InvalidParams, "code action for a document that is not open: " + data.uri);
    if (data.version != doc->version())
      return reply.error(ErrorCode::ContentModified,
                         "the document changed since this code action was offered (version " +
                             (data.version ? std::to_string(*data.version) : std::string("?")) + ", now " +
                             std::to_string(doc->version()) + "); ask for actions again");
    std::string relPath = namePath(server, data.uri);
    server.backgroundReply<CodeAction>(reply, [doc, ca, relPath](const CancellationToken& token) -> Result<CodeAction> {
      if (token.isCancelled()) return Error::cancelled();
      auto edit = computeEdit(doc, *ca.data, relPath);
      if (!edit) return edit.error();
      CodeAction out = ca;
      out.edit = std::move(*edit);
      return out;
    });
  });
}

}  // namespace kl::lsp
