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

/// `only` filter of the request: an action of kind K passes when some entry E equals K or is a
/// dot-prefix of it (LSP semantics).
bool wanted(const json& params, const std::string& kind) {
  const json* only = nullptr;
  if (params.contains("context") && params["context"].is_object() &&
      params["context"].contains("only") && params["context"]["only"].is_array())
    only = &params["context"]["only"];
  if (!only) return true;
  for (const auto& e : *only) {
    if (!e.is_string()) continue;
    std::string o = e.get<std::string>();
    if (kind == o || (kind.size() > o.size() && kind.compare(0, o.size(), o) == 0 && kind[o.size()] == '.'))
      return true;
  }
  return false;
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

json action(const std::string& title, const char* kind, json data) {
  return {{"title", title}, {"kind", kind}, {"data", std::move(data)}};
}

/// Byte offsets of an LSP range in a document, ordered.
std::pair<uint32_t, uint32_t> offsets(const Document& doc, const Range& r) {
  uint32_t a = doc.offsetAt(r.start), b = doc.offsetAt(r.end);
  return a <= b ? std::pair{a, b} : std::pair{b, a};
}

Result<json> computeEdit(const DocumentPtr& doc, const json& data, const std::string& relPath) {
  // Providers of other features (the same version check and pool run apply to them).
  if (isCuteRegionAction(data)) return cuteRegionEdit(*doc, data);
  const auto& src = *doc->source();
  std::string what = data.value("action", std::string());
  nvtx::Options opt;
  opt.relPath = relPath;
  Result<nvtx::FileEdit> fe = Error::invalid("unknown code action '" + what + "'");
  if (what == "wrap") {
    uint32_t a = data.value("firstLine", 0u), b = data.value("lastLine", 0u);
    fe = nvtx::annotate(src, std::vector{nvtx::RangeRequest::statements(a, b)}, opt);
  } else if (what == "wrapFunction") {
    auto req = nvtx::RangeRequest::functionBody(data.value("function", std::string()));
    if (data.contains("defLine")) req.defLine = data["defLine"].get<uint32_t>();
    fe = nvtx::annotate(src, std::vector{req}, opt);
  } else if (what == "refine") {
    fe = nvtx::refine(src, data.value("line", 0u), opt);
  } else if (what == "remove") {
    fe = nvtx::stripEdit(src);
  }
  if (!fe) return fe.error();
  TextDocumentEdit tde;
  tde.textDocument = {doc->uri(), doc->version()};
  for (const auto& e : fe->edits) tde.edits.push_back({doc->rangeOf(e.start, e.end), e.newText});
  WorkspaceEdit we;
  we.documentChanges.push_back(std::move(tde));
  return toJson(we);
}

}  // namespace

void registerCodeActions(Server& server) {
  server.addCapabilities(
      {{"codeActionProvider",
        {{"codeActionKinds", {kWrap, kRefine, kRemove, kCuteRegionActionKind}}, {"resolveProvider", true}}}});

  server.method<json, json>("textDocument/codeAction", [&server](const json& params,
                                                                Reply<json> reply) {
    json out = json::array();
    std::string uri = params.value("/textDocument/uri"_json_pointer, std::string());
    Range range;
    JPath::Root root("params");
    if (!params.is_object() || !params.contains("range") ||
        !fromJson(params["range"], range, JPath(root).field("range")))
      return reply.error(ErrorCode::InvalidParams, "params.range: missing or not a range");
    auto doc = server.documents().get(uri);
    if (!doc || !doc->source() || doc->source()->hasErrors()) return reply(out);
    const auto& src = *doc->source();
    const auto& m = src.model();
    auto [a, b] = offsets(*doc, range);
    // A selection ending at column 0 of a line does not select that line.
    if (b > a && src.lines().toLineCol(b).col == 0) --b;
    uint32_t la = src.lines().toLineCol(a).line, lb = src.lines().toLineCol(b).line;
    json base = {{"uri", uri}, {"version", doc->version()}};

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

    if (statementThere && wanted(params, kWrap)) {
      json d = base;
      d["action"] = "wrap";
      d["firstLine"] = la;
      d["lastLine"] = lb;
      out.push_back(action("Wrap in NVTX range", kWrap, d));
    }
    int32_t fi = m.functionAt(a);
    if (fi != python::kNone && wanted(params, kWrap)) {
      const auto& f = m.functions[fi];
      if (!f.qualName.empty()) {
        json d = base;
        d["action"] = "wrapFunction";
        d["function"] = f.qualName;
        d["defLine"] = f.defLine;
        out.push_back(action("Wrap body of `" + f.qualName + "` in NVTX range", kWrap, d));
      }
    }
    if (inManaged && wanted(params, kRefine)) {
      json d = base;
      d["action"] = "refine";
      d["line"] = la;
      out.push_back(action("Refine NVTX here", kRefine, d));
    }
    if (anyManaged && wanted(params, kRemove)) {
      json d = base;
      d["action"] = "remove";
      out.push_back(action("Remove kernlens NVTX ranges", kRemove, d));
    }
    for (auto& ca : cuteRegionCodeActions(*doc, params)) out.push_back(std::move(ca));
    reply(out);
  });

  server.method<json, json>("codeAction/resolve", [&server](const json& ca,
                                                           Reply<json> reply) {
    if (!ca.is_object() || !ca.contains("data") || !ca["data"].is_object())
      return reply.error(ErrorCode::InvalidParams, "params.data: required field is missing");
    const json& data = ca["data"];
    std::string uri = data.value("uri", std::string());
    auto doc = server.documents().get(uri);
    if (!doc || !doc->source())
      return reply.error(ErrorCode::InvalidParams, "code action for a document that is not open: " + uri);
    if (!data.contains("version") || !data["version"].is_number_integer() ||
        data["version"].get<int64_t>() != doc->version())
      return reply.error(ErrorCode::ContentModified,
                         "the document changed since this code action was offered (version " +
                             (data.contains("version") ? data["version"].dump() : std::string("?")) +
                             ", now " + std::to_string(doc->version()) + "); ask for actions again");
    std::string relPath = namePath(server, uri);
    server.backgroundReply<json>(reply, [doc, ca, relPath](const CancellationToken& token)
                                            -> Result<json> {
      if (token.isCancelled()) return Error::cancelled();
      auto edit = computeEdit(doc, ca["data"], relPath);
      if (!edit) return edit.error();
      json out = ca;
      out["edit"] = std::move(*edit);
      return out;
    });
  });
}

}  // namespace kl::lsp
