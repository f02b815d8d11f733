#include "lsp/protocol/protocol.h"

namespace kl::lsp {

json toJson(const ResponseError& e) { return {{"code", static_cast<int>(e.code)}, {"message", e.message}}; }

bool fromJson(const json& j, Position& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("line", out.line) && o.req("character", out.character);
}
json toJson(const Position& p) { return {{"line", p.line}, {"character", p.character}}; }

bool fromJson(const json& j, Range& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("start", out.start) && o.req("end", out.end);
}
json toJson(const Range& r) { return {{"start", toJson(r.start)}, {"end", toJson(r.end)}}; }

void appendJson(std::string& out, const Position& p) {
  out += R"({"character":)";
  out += std::to_string(p.character);
  out += R"(,"line":)";
  out += std::to_string(p.line);
  out += '}';
}
void appendJson(std::string& out, const Range& r) {
  out += R"({"end":)";
  appendJson(out, r.end);
  out += R"(,"start":)";
  appendJson(out, r.start);
  out += '}';
}
void appendJson(std::string& out, std::string_view s) {
  out += json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

bool fromJson(const json& j, Location& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("uri", out.uri) && o.req("range", out.range);
}
json toJson(const Location& l) { return {{"uri", l.uri}, {"range", toJson(l.range)}}; }

bool fromJson(const json& j, TextDocumentIdentifier& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("uri", out.uri);
}
json toJson(const TextDocumentIdentifier& t) { return {{"uri", t.uri}}; }

bool fromJson(const json& j, VersionedTextDocumentIdentifier& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("uri", out.uri) && o.req("version", out.version);
}
json toJson(const VersionedTextDocumentIdentifier& t) { return {{"uri", t.uri}, {"version", t.version}}; }

bool fromJson(const json& j, TextDocumentPositionParams& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("textDocument", out.textDocument) && o.req("position", out.position);
}

bool fromJson(const json& j, TextDocumentItem& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("uri", out.uri) && o.req("languageId", out.languageId) && o.req("version", out.version) &&
         o.req("text", out.text);
}

bool fromJson(const json& j, TextEdit& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("range", out.range) && o.req("newText", out.newText);
}
json toJson(const TextEdit& e) { return {{"range", toJson(e.range)}, {"newText", e.newText}}; }

json toJson(const TextDocumentEdit& e) {
  return {{"textDocument", toJson(e.textDocument)}, {"edits", toJson(e.edits)}};
}

json toJson(const WorkspaceEdit& e) { return {{"documentChanges", toJson(e.documentChanges)}}; }

bool fromJson(const json& j, Command& out, JPath path) {
  ObjectReader o(j, path);
  if (!(o && o.req("title", out.title) && o.req("command", out.command))) return false;
  if (const json* a = o.get("arguments")) {
    if (!a->is_array()) return path.field("arguments").report("expected an array");
    out.arguments = *a;
  }
  return true;
}
json toJson(const Command& c) {
  json j = {{"title", c.title}, {"command", c.command}};
  writeOptional(j, "arguments", c.arguments);
  return j;
}

json toJson(const MarkupContent& m) {
  return {{"kind", m.kind == MarkupKind::Markdown ? "markdown" : "plaintext"}, {"value", m.value}};
}

bool fromJson(const json& j, MarkupContent& out, JPath path) {
  if (j.is_string()) {
    out = {MarkupKind::PlainText, j.get<std::string>()};
    return true;
  }
  ObjectReader o(j, path);
  std::string kind;
  if (!(o && o.req("kind", kind) && o.req("value", out.value))) return false;
  if (kind == "markdown")
    out.kind = MarkupKind::Markdown;
  else if (kind == "plaintext")
    out.kind = MarkupKind::PlainText;
  else
    return path.field("kind").report("expected \"markdown\" or \"plaintext\"");
  return true;
}

json toJson(const Hover& h) {
  json j = {{"contents", toJson(h.contents)}};
  writeOptional(j, "range", h.range);
  return j;
}

bool fromJson(const json& j, InlayHintParams& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("textDocument", out.textDocument) && o.opt("range", out.range);
}

bool fromJson(const json& j, InlayHint& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("position", out.position) && o.req("label", out.label) && o.opt("kind", out.kind) &&
         o.opt("tooltip", out.tooltip) && o.opt("paddingLeft", out.paddingLeft) &&
         o.opt("paddingRight", out.paddingRight) && o.opt("data", out.data);
}
json toJson(const InlayHint& h) {
  json j = {{"position", toJson(h.position)}, {"label", h.label}};
  writeOptional(j, "kind", h.kind);
  writeOptional(j, "tooltip", h.tooltip);
  writeOptional(j, "paddingLeft", h.paddingLeft);
  writeOptional(j, "paddingRight", h.paddingRight);
  writeOptional(j, "data", h.data);
  return j;
}

bool fromJson(const json& j, CodeLensParams& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("textDocument", out.textDocument);
}

bool fromJson(const json& j, CodeLens& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("range", out.range) && o.opt("command", out.command) && o.opt("data", out.data);
}
json toJson(const CodeLens& l) {
  json j = {{"range", toJson(l.range)}};
  writeOptional(j, "command", l.command);
  writeOptional(j, "data", l.data);
  return j;
}

bool CodeActionContext::wants(std::string_view kind) const {
  if (!only) return true;
  for (const std::string& o : *only)
    if (kind == o || (kind.size() > o.size() && kind.compare(0, o.size(), o) == 0 && kind[o.size()] == '.'))
      return true;
  return false;
}

bool fromJson(const json& j, CodeActionContext& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.opt("diagnostics", out.diagnostics) && o.opt("only", out.only);
}

bool fromJson(const json& j, CodeActionParams& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("textDocument", out.textDocument) && o.req("range", out.range) && o.opt("context", out.context);
}

bool fromJson(const json& j, CodeAction& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("title", out.title) && o.opt("kind", out.kind) && o.opt("diagnostics", out.diagnostics) &&
         o.opt("isPreferred", out.isPreferred) && o.opt("command", out.command) && o.opt("data", out.data);
}
json toJson(const CodeAction& a) {
  json j = {{"title", a.title}};
  writeOptional(j, "kind", a.kind);
  writeOptional(j, "diagnostics", a.diagnostics);
  writeOptional(j, "isPreferred", a.isPreferred);
  writeOptional(j, "edit", a.edit);
  writeOptional(j, "command", a.command);
  writeOptional(j, "data", a.data);
  return j;
}

json toJson(const Diagnostic& d) {
  return {{"range", toJson(d.range)},
          {"severity", static_cast<int>(d.severity)},
          {"source", d.source},
          {"code", d.code},
          {"message", d.message}};
}

json toJson(const PublishDiagnosticsParams& p) {
  json j = {{"uri", p.uri}};
  writeOptional(j, "version", p.version);
  j["diagnostics"] = toJson(p.diagnostics);
  return j;
}

bool fromJson(const json& j, DidOpenTextDocumentParams& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("textDocument", out.textDocument);
}

bool fromJson(const json& j, TextDocumentContentChangeEvent& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.opt("range", out.range) && o.req("text", out.text);
}

bool fromJson(const json& j, DidChangeTextDocumentParams& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("textDocument", out.textDocument) && o.req("contentChanges", out.contentChanges);
}

bool fromJson(const json& j, DidCloseTextDocumentParams& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("textDocument", out.textDocument);
}

namespace {
/// j[a][b]... if every step exists, else nullptr. Never throws.
const json* dig(const json& j, std::initializer_list<const char*> keys) {
  const json* cur = &j;
  for (const char* k : keys) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(k);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}
bool digBool(const json& j, std::initializer_list<const char*> keys) {
  const json* v = dig(j, keys);
  return v && v->is_boolean() && v->get<bool>();
}
}  // namespace

bool fromJson(const json& j, ClientCapabilities& out, JPath path) {
  if (!j.is_object()) return path.report("expected an object");
  out.raw = j;
  // Capabilities are advisory: a malformed flag is read as "not supported", not an error.
  if (const json* encs = dig(j, {"general", "positionEncodings"}); encs && encs->is_array())
    for (const auto& e : *encs)
      if (e.is_string()) out.positionEncodings.push_back(e.get<std::string>());
  out.workDoneProgress = digBool(j, {"window", "workDoneProgress"});
  out.showDocument = digBool(j, {"window", "showDocument", "support"});
  out.applyEdit = digBool(j, {"workspace", "applyEdit"});
  out.configuration = digBool(j, {"workspace", "configuration"});
  out.inlayHintRefresh = digBool(j, {"workspace", "inlayHint", "refreshSupport"});
  out.codeLensRefresh = digBool(j, {"workspace", "codeLens", "refreshSupport"});
  if (const json* fmts = dig(j, {"textDocument", "hover", "contentFormat"}); fmts && fmts->is_array())
    for (const auto& f : *fmts)
      if (f == "markdown") out.hoverMarkdown = true;
  return true;
}

bool fromJson(const json& j, InitializeParams& out, JPath path) {
  ObjectReader o(j, path);
  if (!(o && o.opt("processId", out.processId) && o.opt("rootUri", out.rootUri) && o.opt("rootPath", out.rootPath) &&
        o.req("capabilities", out.capabilities)))
    return false;
  if (const json* opts = o.get("initializationOptions")) out.initializationOptions = *opts;
  if (out.initializationOptions.is_object())
    if (auto n = out.initializationOptions.find("resultsNotification");
        n != out.initializationOptions.end() && n->is_boolean())
      out.resultsNotification = n->get<bool>();
  if (const json* info = o.get("clientInfo"); info && info->is_object()) {
    if (auto n = info->find("name"); n != info->end() && n->is_string()) out.clientName = n->get<std::string>();
    if (auto v = info->find("version"); v != info->end() && v->is_string()) out.clientVersion = v->get<std::string>();
  }
  if (const json* folders = o.get("workspaceFolders"); folders && !folders->is_null()) {
    if (!folders->is_array()) return path.field("workspaceFolders").report("expected an array");
    JPath fp = path.field("workspaceFolders");
    for (size_t i = 0; i < folders->size(); ++i) {
      std::string uri;
      ObjectReader f((*folders)[i], fp.index(i));
      if (!(f && f.req("uri", uri))) return false;
      out.workspaceFolders.push_back(std::move(uri));
    }
  }
  return true;
}

bool fromJson(const json& j, ExecuteCommandParams& out, JPath path) {
  ObjectReader o(j, path);
  if (!(o && o.req("command", out.command))) return false;
  if (const json* a = o.get("arguments"); a && !a->is_null()) {
    if (!a->is_array()) return path.field("arguments").report("expected an array");
    out.arguments = *a;
  }
  return true;
}

namespace {
bool readId(const json& j, json& out, JPath path) {
  if (!j.is_number_integer() && !j.is_string()) return path.report("expected an integer or a string");
  out = j;
  return true;
}
}  // namespace

bool fromJson(const json& j, CancelParams& out, JPath path) {
  ObjectReader o(j, path);
  if (!o) return false;
  const json* id = o.get("id");
  if (!id) return path.field("id").report("required field is missing");
  return readId(*id, out.id, path.field("id"));
}

bool fromJson(const json& j, DidChangeConfigurationParams& out, JPath path) {
  ObjectReader o(j, path);
  if (!o) return false;
  const json* s = o.get("settings");
  out.settings = s ? *s : json();
  return true;
}

bool fromJson(const json& j, WorkDoneProgressCancelParams& out, JPath path) {
  ObjectReader o(j, path);
  if (!o) return false;
  const json* t = o.get("token");
  if (!t) return path.field("token").report("required field is missing");
  return readId(*t, out.token, path.field("token"));
}

}  // namespace kl::lsp
