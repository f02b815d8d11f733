// Protocol types: parsing with JSON-path errors, optional vs absent, round trips.
#include "lsp/protocol/protocol.h"

#include <doctest/doctest.h>

#include "lsp/protocol/commands.h"

using namespace kl::lsp;

namespace {
template <typename T>
std::string parseError(const json& j) {
  T out{};
  std::string error;
  if (parseJson(j, out, error)) return "";
  return error;
}
}  // namespace

TEST_CASE("protocol: errors name the JSON path") {
  CHECK(parseError<DidChangeTextDocumentParams>(json::parse(
            R"({"textDocument":{"uri":"file:///a.py","version":2},
                "contentChanges":[{"text":"x"},{"range":{"start":{"line":0,"character":"0"},
                                   "end":{"line":0,"character":1}},"text":"y"}]})")) ==
        "params.contentChanges[1].range.start.character: expected an unsigned 32-bit integer");
  CHECK(parseError<DidOpenTextDocumentParams>(json::parse(R"({"textDocument":{"uri":"u"}})")) ==
        "params.textDocument.languageId: required field is missing");
  CHECK(parseError<Position>(json::parse(R"({"line":-1,"character":0})")) ==
        "params.line: expected an unsigned 32-bit integer");
  CHECK(parseError<Position>(json::parse("[1,2]")) == "params: expected an object");
  CHECK(parseError<CancelParams>(json::parse(R"({"id":1.5})")) == "params.id: expected an integer or a string");
}

TEST_CASE("protocol: optional fields accept absent and null") {
  TextDocumentContentChangeEvent c;
  std::string error;
  REQUIRE(parseJson(json::parse(R"({"text":"all","range":null})"), c, error));
  CHECK(!c.range);
  REQUIRE(parseJson(json::parse(R"({"text":"x","range":{"start":{"line":1,"character":2},
                                  "end":{"line":1,"character":3}},"rangeLength":1})"),
                    c, error));
  REQUIRE(c.range);
  CHECK(c.range->start == Position{1, 2});
}

TEST_CASE("protocol: initialize params and flattened client capabilities") {
  InitializeParams p;
  std::string error;
  REQUIRE(parseJson(json::parse(R"({
      "processId": 42, "rootUri": "file:///ws", "initializationOptions": {"kernlens": {"a": 1}},
      "workspaceFolders": [{"uri": "file:///ws", "name": "ws"}],
      "capabilities": {
        "general": {"positionEncodings": ["utf-8", "utf-16"]},
        "window": {"workDoneProgress": true},
        "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": "yes"}},
        "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}}}})"),
                    p, error));
  CHECK(p.processId == 42);
  CHECK(p.rootUri == "file:///ws");
  CHECK(p.workspaceFolders == std::vector<std::string>{"file:///ws"});
  CHECK(p.capabilities.positionEncodings == std::vector<std::string>{"utf-8", "utf-16"});
  CHECK(p.capabilities.workDoneProgress);
  CHECK(p.capabilities.inlayHintRefresh);
  CHECK_FALSE(p.capabilities.codeLensRefresh);  // malformed flag: unsupported, not an error
  CHECK(p.capabilities.hoverMarkdown);
  CHECK(p.initializationOptions["kernlens"]["a"] == 1);

  InitializeParams minimal;
  REQUIRE(parseJson(json::parse(R"({"processId":null,"rootUri":null,"capabilities":{}})"), minimal, error));
  CHECK(!minimal.processId);
  CHECK(minimal.capabilities.positionEncodings.empty());
  CHECK(parseError<InitializeParams>(json::parse(R"({"processId":1})")) ==
        "params.capabilities: required field is missing");
}

TEST_CASE("protocol: writers omit empty optionals") {
  Command c{"Profile", "kernlens.profileFunction", std::nullopt};
  CHECK(toJson(c) == json::parse(R"({"title":"Profile","command":"kernlens.profileFunction"})"));
  c.arguments = json::array({1});
  CHECK(toJson(c)["arguments"] == json::array({1}));
  WorkspaceEdit we{{{{"file:///a.py", 3}, {{{{0, 0}, {0, 1}}, "x"}}}}};
  CHECK(toJson(we) == json::parse(R"({"documentChanges":[{"textDocument":{"uri":"file:///a.py",
      "version":3},"edits":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,
      "character":1}},"newText":"x"}]}]})"));
  CHECK(toJson(ResponseError{ErrorCode::MethodNotFound, "m"}) == json::parse(R"({"code":-32601,"message":"m"})"));
  CHECK(toJson(std::optional<Position>()) == json(nullptr));
}

TEST_CASE("protocol: feature types round-trip and name bad fields") {
  InlayHint h;
  std::string error;
  REQUIRE(parseJson(json::parse(R"({"position":{"line":3,"character":7},"label":"◷ 1 ms",
                                   "paddingLeft":true,"tooltip":"plain","data":{"k":1},"extra":0})"),
                    h, error));
  CHECK(h.tooltip->kind == MarkupKind::PlainText);
  CHECK(toJson(h) == json::parse(R"({"position":{"line":3,"character":7},"label":"◷ 1 ms",
        "paddingLeft":true,"tooltip":{"kind":"plaintext","value":"plain"},"data":{"k":1}})"));
  CHECK(parseError<InlayHint>(json::parse(R"({"position":{"line":0,"character":0},"label":"x",
                                             "tooltip":{"kind":"html","value":""}})")) ==
        "params.tooltip.kind: expected \"markdown\" or \"plaintext\"");

  CodeLens l;
  REQUIRE(parseJson(json::parse(R"({"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":3}},
                                   "data":{"kind":"gpu"}})"),
                    l, error));
  CHECK_FALSE(l.command);
  l.command = Command{"GPU 1 ms", "", std::nullopt};
  CHECK(toJson(l)["command"] == json::parse(R"({"title":"GPU 1 ms","command":""})"));
  CHECK(parseError<CodeLens>(json::parse(R"({"range":{"start":{"line":1,"character":0}}})")) ==
        "params.range.end: required field is missing");

  CodeActionParams cap;
  REQUIRE(parseJson(json::parse(R"({"textDocument":{"uri":"file:///a.py"},
        "range":{"start":{"line":1,"character":0},"end":{"line":2,"character":0}},
        "context":{"diagnostics":[],"only":["refactor","source.removeNvtx"]}})"),
                    cap, error));
  CHECK(cap.context.wants("refactor.rewrite.nvtx.wrap"));
  CHECK(cap.context.wants("source.removeNvtx"));
  CHECK_FALSE(cap.context.wants("source"));
  CHECK_FALSE(cap.context.wants("refactorx"));
  CHECK(CodeActionContext{}.wants("anything"));
  CHECK(parseError<CodeActionParams>(json::parse(R"({"textDocument":{"uri":"file:///a.py"},
        "range":{"start":{"line":1,"character":0},"end":{"line":2,"character":0}},
        "context":{"only":["refactor",3]}})")) == "params.context.only[1]: expected a string");

  CodeAction ca;
  REQUIRE(parseJson(json::parse(R"({"title":"Wrap","kind":"refactor.rewrite.nvtx.wrap",
        "edit":{"ignored":true},"data":{"action":"wrap"}})"),
                    ca, error));
  CHECK_FALSE(ca.edit);  // recomputed by codeAction/resolve, never read back
  ca.edit = WorkspaceEdit{};
  CHECK(toJson(ca) == json::parse(R"({"title":"Wrap","kind":"refactor.rewrite.nvtx.wrap",
        "edit":{"documentChanges":[]},"data":{"action":"wrap"}})"));

  Hover hv{MarkupContent{MarkupKind::Markdown, "**x**"}, std::nullopt};
  CHECK(toJson(hv) == json::parse(R"({"contents":{"kind":"markdown","value":"**x**"}})"));
  CHECK(toJson(std::optional<Hover>()) == json(nullptr));

  PublishDiagnosticsParams pd{
      "file:///a.py", 3, {Diagnostic{Range{}, DiagnosticSeverity::Hint, "refine", "kernlens", "m"}}};
  CHECK(toJson(pd)["diagnostics"][0]["severity"] == 4);
  CHECK(toJson(pd)["version"] == 3);
}

TEST_CASE("protocol: command arguments") {
  std::string error;
  LoadProfileArgs lp;
  REQUIRE(parseJson(json("trace.json"), lp, error, "arguments[0]"));
  CHECK(lp.path == "trace.json");
  REQUIRE(parseJson(json::parse(R"({"path":"p.sqlite"})"), lp, error, "arguments[0]"));
  CHECK(lp.path == "p.sqlite");
  CHECK_FALSE(parseJson(json(), lp = {}, error, "arguments[0]"));
  CHECK(error.find("arguments[0]: expected arguments [path]") == 0);
  CHECK_FALSE(parseJson(json(3), lp = {}, error, "arguments[0]"));
  CHECK(error == "arguments[0]: expected a path or {\"path\": path}");

  ProfileFunctionArgs pf;
  REQUIRE(parseJson(json::parse(R"({"uri":"file:///a.py","position":{"line":1,"character":2}})"), pf, error));
  CHECK(pf.position->character == 2);
  CHECK(toJson(ProfileFunctionArgs{"file:///a.py", std::nullopt, "f"}) ==
        json::parse(R"({"uri":"file:///a.py","function":"f"})"));

  RefineHereArgs rh;
  REQUIRE(
      parseJson(json::parse(R"({"uri":"u","range":{"start":{"line":1,"character":0},"end":{"line":4,"character":0}}})"),
                rh, error));
  CHECK(rh.function.empty());
  CHECK(parseError<RefineHereArgs>(json::parse(R"({"uri":"u"})")) == "params.range: required field is missing");
  CHECK(toJson(RunStarted{"k", "f", "a.py", "", "emulate"})["backend"] == "emulate");
  CHECK(toJson(CancelResult{true}) == json::parse(R"({"cancelled":true})"));
  NoArguments none;
  CHECK(parseJson(json::parse("[1,2]"), none, error));
}
