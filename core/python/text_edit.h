// TextEdit: one replacement in a UTF-8 text, by byte range. Shared by core/python (incremental
// re-parse) and the modules that compute edits to a source file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kl::python {

/// Replace the bytes [start, end) of the OLD text with newText. Valid when start <= end <= size.
struct TextEdit {
  uint32_t start = 0;
  uint32_t end = 0;
  std::string newText;
  friend bool operator==(const TextEdit&, const TextEdit&) = default;
};

/// Applies `edit` to `text` in place. Returns false (text unchanged) when the range is invalid.
bool applyEdit(std::string& text, const TextEdit& edit);

/// Applies non-overlapping edits whose ranges all refer to the ORIGINAL text (any order), as an
/// LSP WorkspaceEdit does. Returns false (text unchanged) when a range is invalid or two overlap.
/// (SourceFile::edit(vector) is different: there each edit refers to the text after the previous.)
bool applyEditsToOriginal(std::string& text, std::vector<TextEdit> edits);

}  // namespace kl::python
