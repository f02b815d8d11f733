// Protocol types: parsing with JSON-path errors, optional vs absent, round trips.
#include <doctest/doctest.h>

#include "lsp/protocol/protocol.h"

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
  CHECK(parseError<CancelParams>(json::parse(R"({"id":1.5})")) ==
        "params.id: expected an integer or a string");
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
  REQUIRE(parseJson(json::parse(R"({"processId":null,"rootUri":null,"capabilities":{}})"), minimal,
                    error));
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
  CHECK(toJson(ResponseError{ErrorCode::MethodNotFound, "m"}) ==
        json::parse(R"({"code":-32601,"message":"m"})"));
  CHECK(toJson(std::optional<Position>()) == json(nullptr));
}
