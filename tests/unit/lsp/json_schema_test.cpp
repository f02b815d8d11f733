// validateJson: the subset of JSON Schema the MCP tools' input schemas use; the first violation
// named on its JSON path.
#include "lsp/protocol/json_schema.h"

#include <doctest/doctest.h>

using namespace kl::lsp;

namespace {

/// "" when valid, else the error.
std::string check(const json& schema, const json& value) {
  JPath::Root root("params");
  if (validateJson(schema, value, JPath(root).field("arguments"))) return "";
  return root.error;
}

const json kSchema = json::parse(R"({
  "type": "object", "additionalProperties": false, "required": ["entry"],
  "properties": {
    "entry": {"type": "string", "minLength": 1},
    "rounds": {"type": "integer", "minimum": 1, "maximum": 64},
    "backend": {"type": "string", "enum": ["nsys", "torch", "emulate"]},
    "timeout_s": {"type": "number", "minimum": 1},
    "files": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    "flag": {"type": "boolean"}
  }})");

}  // namespace

TEST_CASE("json schema: valid arguments") {
  CHECK(check(kSchema, {{"entry", "python x.py"}}) == "");
  CHECK(check(kSchema, {{"entry", "x"},
                        {"rounds", 3},
                        {"backend", "emulate"},
                        {"timeout_s", 2.5},
                        {"files", {"a", "b"}},
                        {"flag", false}}) == "");
  CHECK(check(kSchema, {{"entry", "x"}, {"rounds", 3.0}}) == "");  // an integral number is an integer
}

TEST_CASE("json schema: each violation names its field") {
  CHECK(check(kSchema, json::array()) == "params.arguments: expected an object");
  CHECK(check(kSchema, json::object()) == "params.arguments.entry: required");
  CHECK(check(kSchema, {{"entry", ""}}) == "params.arguments.entry: must not be empty");
  CHECK(check(kSchema, {{"entry", 3}}) == "params.arguments.entry: expected a string");
  CHECK(check(kSchema, {{"entry", "x"}, {"rounds", "2"}}) == "params.arguments.rounds: expected an integer");
  CHECK(check(kSchema, {{"entry", "x"}, {"rounds", 2.5}}) == "params.arguments.rounds: expected an integer");
  CHECK(check(kSchema, {{"entry", "x"}, {"rounds", 0}}) == "params.arguments.rounds: must be >= 1");
  CHECK(check(kSchema, {{"entry", "x"}, {"rounds", 65}}) == "params.arguments.rounds: must be <= 64");
  CHECK(check(kSchema, {{"entry", "x"}, {"backend", "gpu"}}) ==
        "params.arguments.backend: expected one of \"nsys\", \"torch\", \"emulate\"");
  CHECK(check(kSchema, {{"entry", "x"}, {"files", {"a", 1}}}) == "params.arguments.files[1]: expected a string");
  CHECK(check(kSchema, {{"entry", "x"}, {"files", {"a", "b", "c"}}}) ==
        "params.arguments.files: expected at most 2 items");
  CHECK(check(kSchema, {{"entry", "x"}, {"colour", 1}}) == "params.arguments.colour: unknown property");
}

TEST_CASE("json schema: a keyword the validator does not know is the schema's error, never ignored") {
  CHECK(check({{"type", "string"}, {"pattern", "^a"}}, "b") ==
        "params.arguments: schema error: unsupported keyword pattern");
}
