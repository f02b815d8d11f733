#include "core/python/text_edit.h"

#include <algorithm>

namespace kl::python {

bool applyEdit(std::string& text, const TextEdit& edit) {
  if (edit.start > edit.end || edit.end > text.size()) return false;
  text.replace(edit.start, edit.end - edit.start, edit.newText);
  return true;
}

bool applyEditsToOriginal(std::string& text, std::vector<TextEdit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const TextEdit& a, const TextEdit& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  for (size_t i = 0; i < edits.size(); ++i) {
    if (edits[i].start > edits[i].end || edits[i].end > text.size()) return false;
    if (i > 0 && edits[i].start < edits[i - 1].end) return false;
  }
  std::string out;
  out.reserve(text.size());
  uint32_t pos = 0;
  for (const TextEdit& e : edits) {
    out.append(text, pos, e.start - pos);
    out += e.newText;
    pos = e.end;
  }
  out.append(text, pos, std::string::npos);
  text = std::move(out);
  return true;
}

}  // namespace kl::python
