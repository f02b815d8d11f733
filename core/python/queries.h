// The tree-sitter queries of grammars/queries/*.scm, embedded at build time.
#pragma once

#include <string_view>

namespace kl::python {

struct EmbeddedQuery {
  const char* name;    // file name without ".scm"
  const char* source;  // file contents
};
/// Terminated by {nullptr, nullptr}.
extern const EmbeddedQuery kEmbeddedQueries[];

/// The source of grammars/queries/<name>.scm, or an empty view if there is none.
inline std::string_view embeddedQuery(std::string_view name) {
  for (const EmbeddedQuery* q = kEmbeddedQueries; q->name; ++q)
    if (name == q->name) return q->source;
  return {};
}

}  // namespace kl::python
