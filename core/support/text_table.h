// THE renderer of text tables: aligned plain-text columns (the CLI's analyses, `kernlens profile`,
// plain-text hovers) and Markdown tables (hovers), from one column model.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kl {

/// Number of code points of UTF-8 text (the width a monospace terminal gives it).
size_t displayWidth(std::string_view s);

struct TextColumn {
  std::string header;
  bool right = false;  // right-aligned (numbers)
  std::vector<std::string> cells;
  /// The widest of the header and the cells (code points).
  size_t width() const;
};

/// Plain text: the header row, then one row per cell index; columns separated by two spaces,
/// padded to the widest cell, trailing spaces dropped. A cell wider than `maxCell` code points is
/// cut to maxCell with a final "…".
std::string renderPlainTable(const std::vector<TextColumn>& cols, size_t maxCell = SIZE_MAX);

/// Width of renderPlainTable's rows (without cutting).
size_t plainTableWidth(const std::vector<TextColumn>& cols);

/// A Markdown (GFM) table: "| a | b |", the alignment row ("--:" for right-aligned columns),
/// then the rows. `cell(column, text)` escapes one cell's text (the caller's Markdown rules).
std::string renderMarkdownTable(const std::vector<TextColumn>& cols,
                                const std::function<std::string(size_t, const std::string&)>& cell);

/// The rows-of-cells form of renderPlainTable (header + rows; `right[i]` aligns column i right).
std::string renderPlainTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                             const std::vector<bool>& right, size_t maxCell = SIZE_MAX);

}  // namespace kl
