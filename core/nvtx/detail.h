// Internal helpers of core/nvtx shared by instrument.cpp, strip.cpp and edit_ops.cpp. Not API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/python/source_file.h"

namespace kl::nvtx::detail {

/// The exact text kernlens writes; strip() recognises exactly these.
inline constexpr std::string_view kImportLine = "import torch  # kl:import";
inline constexpr std::string_view kInlineMarker = "  # kl:inline=";

/// Line geometry of one text. Leading whitespace of a line is the [ \t] run after the last form
/// feed of its leading [ \t\f] run (a form feed resets Python's indentation column, so kernlens
/// indents after it). Line 0 starts after a BOM.
class Lines {
 public:
  explicit Lines(const python::SourceFile& f);
  uint32_t count() const { return idx_.lineCount(); }
  uint32_t start(uint32_t line) const;  // first byte of the line (after a BOM on line 0)
  uint32_t rawStart(uint32_t line) const { return idx_.lineStart(line); }
  uint32_t end(uint32_t line) const { return idx_.lineEnd(line, text_); }  // before EOL
  uint32_t wsBegin(uint32_t line) const;                                   // after the last leading form feed
  uint32_t wsEnd(uint32_t line) const;  // first byte that is not ' ' or '\t' after wsBegin
  std::string_view ws(uint32_t line) const { return text_.substr(wsBegin(line), wsEnd(line) - wsBegin(line)); }
  bool blank(uint32_t line) const;            // only [ \t\f] before the EOL
  std::string_view eol(uint32_t line) const;  // "\r\n", "\n" or "" (last line)
  uint32_t lineOf(uint32_t offset) const { return idx_.toLineCol(offset).line; }
  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
  const LineIndex& idx_;
  uint32_t sourceStart_;
};

/// Whether [from, to) holds a newline that ends a logical line: scanning whitespace, comments
/// and backslash-newline continuations (which do not count). Any other byte is skipped too (the
/// caller passes gaps between statements, where only ';' can appear).
bool realNewlineBetween(std::string_view text, uint32_t from, uint32_t to);

/// The preferred line ending of the text (the majority one, "\n" if none).
std::string_view majorityEol(const python::SourceFile& f);

/// "s"/"t" encoding of a run of spaces and tabs (the gap of a one-line body), and back.
std::string encodeGap(std::string_view gap);
bool decodeGap(std::string_view enc, std::string& out);

/// Offset of the first lone '\r' (not followed by '\n'), or npos.
size_t findLoneCr(std::string_view text);

/// Merges edits at equal start offsets (insertions first, in order) and sorts them.
std::vector<python::TextEdit> normalizeEdits(std::vector<python::TextEdit> edits);

/// Minimal form of one replacement [start, end) -> newText of `text` (common prefix/suffix cut).
python::TextEdit minimize(std::string_view text, python::TextEdit e);

/// Maps an offset of the edited text's source to the text after `edits` (sorted, disjoint):
/// offsets inside a replaced range map to its start.
class OffsetMapper {
 public:
  explicit OffsetMapper(const std::vector<python::TextEdit>& sortedEdits) : edits_(sortedEdits) {}
  uint32_t map(uint32_t offset) const;
  bool insideEdit(uint32_t offset) const;  // strictly inside a replaced (non-empty) range

 private:
  const std::vector<python::TextEdit>& edits_;
};

}  // namespace kl::nvtx::detail
