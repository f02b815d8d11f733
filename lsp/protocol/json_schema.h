// Checking a JSON value against a JSON Schema (the subset the MCP tools' input schemas use):
// type (one name or a list), properties, required, additionalProperties: false, enum, const,
// minimum / maximum, minLength, items, minItems / maxItems. The first violation is reported on
// the JPath of the offending value ("params.arguments.rounds: expected an integer"), the way
// every other params error of the server is (json_io.h). Any other keyword is a schema the
// server itself wrote wrongly: reported, never ignored.
#pragma once

#include "lsp/protocol/json_io.h"

namespace kl::lsp {

/// true when `value` satisfies `schema`; false after reporting the first violation on `path`.
bool validateJson(const json& schema, const json& value, JPath path);

}  // namespace kl::lsp
