#include "core/support/text_table.h"

#include <algorithm>

namespace kl {

size_t displayWidth(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

size_t TextColumn::width() const {
  size_t w = displayWidth(header);
  for (const auto& c : cells) w = std::max(w, displayWidth(c));
  return w;
}

namespace {

std::string cut(const std::string& s, size_t maxCell) {
  if (maxCell == 0 || displayWidth(s) <= maxCell) return s;
  std::string out;
  size_t n = 0;
  for (char ch : s) {
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80 && ++n > maxCell - 1) break;
    out.push_back(ch);
  }
  return out + "…";
}

}  // namespace

size_t plainTableWidth(const std::vector<TextColumn>& cols) {
  size_t w = 0;
  for (const auto& c : cols) w += c.width() + 2;
  return w > 2 ? w - 2 : 0;
}

std::string renderPlainTable(const std::vector<TextColumn>& in, size_t maxCell) {
  if (in.empty()) return {};
  std::vector<TextColumn> cols = in;
  if (maxCell != SIZE_MAX)
    for (auto& c : cols) {
      c.header = cut(c.header, maxCell);
      for (auto& x : c.cells) x = cut(x, maxCell);
    }
  std::vector<size_t> w;
  size_t rows = 0;
  for (const auto& c : cols) {
    w.push_back(c.width());
    rows = std::max(rows, c.cells.size());
  }
  std::string out;
  auto line = [&](auto cell) {
    std::string l;
    for (size_t i = 0; i < cols.size(); ++i) {
      const std::string s = cell(i);
      std::string fill(w[i] - std::min(w[i], displayWidth(s)), ' ');
      l += (i ? "  " : "") + (cols[i].right ? fill + s : s + fill);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line([&](size_t i) { return cols[i].header; });
  for (size_t r = 0; r < rows; ++r)
    line([&](size_t i) { return r < cols[i].cells.size() ? cols[i].cells[r] : std::string(); });
  return out;
}

std::string renderMarkdownTable(const std::vector<TextColumn>& cols,
                                const std::function<std::string(size_t, const std::string&)>& cell) {
  if (cols.empty()) return {};
  size_t rows = 0;
  for (const auto& c : cols) rows = std::max(rows, c.cells.size());
  std::string out = "|";
  for (const auto& c : cols) out += " " + c.header + " |";
  out += "\n|";
  for (const auto& c : cols) out += c.right ? "--:|" : "---|";
  out += "\n";
  for (size_t r = 0; r < rows; ++r) {
    out += "|";
    for (size_t i = 0; i < cols.size(); ++i)
      out += " " + cell(i, r < cols[i].cells.size() ? cols[i].cells[r] : std::string()) + " |";
    out += "\n";
  }
  return out;
}

std::string renderPlainTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                             const std::vector<bool>& right, size_t maxCell) {
  std::vector<TextColumn> cols(header.size());
  for (size_t i = 0; i < header.size(); ++i) {
    cols[i].header = header[i];
    cols[i].right = i < right.size() && right[i];
    for (const auto& r : rows) cols[i].cells.push_back(i < r.size() ? r[i] : std::string());
  }
  return renderPlainTable(cols, maxCell);
}

}  // namespace kl
