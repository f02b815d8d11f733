// RFC 4180 CSV records for Nsight Compute / nsys text output. Tolerates what ncu prints around a
// table: program stdout before the header, `==PROF==`/`==WARNING==`/`==ERROR==` lines anywhere,
// ragged rows (a trailing comma, rows shorter than the header), quoted fields holding commas,
// doubled quotes and line breaks.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kl::ncu {

/// One parsed record: its fields (quotes removed) and the 1-based line it starts on.
struct CsvRecord {
  std::vector<std::string> fields;
  size_t line = 0;
};

/// Splits one record starting at `pos` in `text`; advances `pos` past its line end. A quoted
/// field may span lines. An unterminated quote ends the record at the end of the text.
CsvRecord parseCsvRecord(std::string_view text, size_t& pos, size_t& line);

/// True for the lines Nsight tools print around a table (`==PROF==`, `==WARNING==`, `==ERROR==`,
/// `==NVPROF==`...): a line starting with "==" followed by upper-case letters and "==".
bool isToolMessageLine(std::string_view line);

}  // namespace kl::ncu
