#include "core/python/ts_handles.h"

#include <string>

namespace kl::python {

Result<const TSLanguage*> pythonLanguage() {
  static const Result<const TSLanguage*> checked = []() -> Result<const TSLanguage*> {
    const TSLanguage* lang = tree_sitter_python();
    if (!lang) return Error::internal("tree-sitter-python grammar is missing");
    uint32_t v = ts_language_version(lang);
    if (v < TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION || v > TREE_SITTER_LANGUAGE_VERSION)
      return Error::internal("tree-sitter-python grammar has ABI " + std::to_string(v) +
                             " but this tree-sitter runtime loads ABI " +
                             std::to_string(TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION) + ".." +
                             std::to_string(TREE_SITTER_LANGUAGE_VERSION));
    // The runtime's own check, once: the version range above mirrors it, but trust the library.
    Parser probe(ts_parser_new());
    if (!ts_parser_set_language(probe.get(), lang))
      return Error::internal("tree-sitter rejected the tree-sitter-python grammar (ABI " + std::to_string(v) + ")");
    return lang;
  }();
  return checked;
}

Result<Parser> makePythonParser() {
  auto lang = pythonLanguage();
  if (!lang) return lang.error();
  Parser p(ts_parser_new());
  if (!ts_parser_set_language(p.get(), *lang))
    return Error::internal("ts_parser_set_language refused the tree-sitter-python grammar (ABI " +
                           std::to_string(ts_language_version(*lang)) + ")");
  return p;
}

}  // namespace kl::python
