#include "core/nvtx/detail.h"

#include <algorithm>

namespace kl::nvtx::detail {

Lines::Lines(const python::SourceFile& f) : text_(f.text()), idx_(f.lines()), sourceStart_(f.sourceStart()) {}

uint32_t Lines::start(uint32_t line) const {
  uint32_t s = idx_.lineStart(line);
  return line == 0 ? std::max(s, sourceStart_) : s;
}

uint32_t Lines::wsBegin(uint32_t line) const {
  uint32_t s = start(line), e = end(line);
  uint32_t after = s;
  for (uint32_t i = s; i < e; ++i) {
    char c = text_[i];
    if (c == '\f')
      after = i + 1;
    else if (c != ' ' && c != '\t')
      break;
  }
  return after;
}

uint32_t Lines::wsEnd(uint32_t line) const {
  uint32_t i = wsBegin(line), e = end(line);
  while (i < e && (text_[i] == ' ' || text_[i] == '\t')) ++i;
  return i;
}

bool Lines::blank(uint32_t line) const {
  uint32_t s = start(line), e = end(line);
  for (uint32_t i = s; i < e; ++i)
    if (text_[i] != ' ' && text_[i] != '\t' && text_[i] != '\f') return false;
  return true;
}

std::string_view Lines::eol(uint32_t line) const {
  uint32_t e = end(line);
  if (e < text_.size() && text_[e] == '\r' && e + 1 < text_.size() && text_[e + 1] == '\n') return "\r\n";
  if (e < text_.size() && text_[e] == '\n') return "\n";
  return "";
}

bool realNewlineBetween(std::string_view text, uint32_t from, uint32_t to) {
  to = std::min<uint32_t>(to, static_cast<uint32_t>(text.size()));
  for (uint32_t i = from; i < to; ++i) {
    char c = text[i];
    if (c == '#') {
      while (i < to && text[i] != '\n') ++i;
      if (i < to) return true;
      return false;
    }
    if (c == '\\') {
      if (i + 1 < to && text[i + 1] == '\n') {
        ++i;
        continue;
      }
      if (i + 2 < to && text[i + 1] == '\r' && text[i + 2] == '\n') {
        i += 2;
        continue;
      }
      continue;
    }
    if (c == '\n') return true;
  }
  return false;
}

std::string_view majorityEol(const python::SourceFile& f) {
  return f.model().lineEnding == python::LineEnding::CRLF ? "\r\n" : "\n";
}

std::string encodeGap(std::string_view gap) {
  std::string out;
  for (char c : gap) out += c == '\t' ? 't' : 's';
  return out;
}

bool decodeGap(std::string_view enc, std::string& out) {
  out.clear();
  for (char c : enc) {
    if (c == 's')
      out += ' ';
    else if (c == 't')
      out += '\t';
    else
      return false;
  }
  return true;
}

size_t findLoneCr(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n')) return i;
  return std::string_view::npos;
}

std::vector<python::TextEdit> normalizeEdits(std::vector<python::TextEdit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) {
    if (a.start != b.start) return a.start < b.start;
    return (a.end - a.start) < (b.end - b.start);  // insertions before replacements
  });
  std::vector<python::TextEdit> out;
  for (auto& e : edits) {
    if (e.start == e.end && e.newText.empty()) continue;
    if (!out.empty() && out.back().start == e.start && out.back().start == out.back().end) {
      out.back().end = e.end;
      out.back().newText += e.newText;
      continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

python::TextEdit minimize(std::string_view text, python::TextEdit e) {
  std::string_view old = text.substr(e.start, e.end - e.start);
  size_t p = 0;
  while (p < old.size() && p < e.newText.size() && old[p] == e.newText[p]) ++p;
  size_t s = 0;
  while (s < old.size() - p && s < e.newText.size() - p &&
         old[old.size() - 1 - s] == e.newText[e.newText.size() - 1 - s])
    ++s;
  python::TextEdit out;
  out.start = e.start + static_cast<uint32_t>(p);
  out.end = e.end - static_cast<uint32_t>(s);
  out.newText = e.newText.substr(p, e.newText.size() - p - s);
  return out;
}

uint32_t OffsetMapper::map(uint32_t offset) const {
  int64_t delta = 0;
  for (const auto& e : edits_) {
    if (e.start >= offset && !(e.start == offset && e.end == e.start)) break;
    if (offset < e.end) return static_cast<uint32_t>(e.start + delta);  // inside a replacement
    delta += static_cast<int64_t>(e.newText.size()) - (e.end - e.start);
  }
  return static_cast<uint32_t>(offset + delta);
}

bool OffsetMapper::insideEdit(uint32_t offset) const {
  for (const auto& e : edits_)
    if (e.start <= offset && offset < e.end) return true;
  return false;
}

}  // namespace kl::nvtx::detail
