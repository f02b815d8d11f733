#include "core/ncu/csv.h"

#include <cctype>

namespace kl::ncu {

CsvRecord parseCsvRecord(std::string_view text, size_t& pos, size_t& line) {
  CsvRecord rec;
  rec.line = line + 1;
  std::string field;
  bool inQuotes = false;
  bool any = false;
  while (pos < text.size()) {
    char c = text[pos];
    if (inQuotes) {
      if (c == '"') {
        if (pos + 1 < text.size() && text[pos + 1] == '"') {
          field.push_back('"');
          pos += 2;
          continue;
        }
        inQuotes = false;
        ++pos;
        continue;
      }
      if (c == '\n') ++line;
      field.push_back(c);
      ++pos;
      continue;
    }
    if (c == '"') {
      inQuotes = true;
      any = true;
      ++pos;
      continue;
    }
    if (c == ',') {
      rec.fields.push_back(std::move(field));
      field.clear();
      any = true;
      ++pos;
      continue;
    }
    if (c == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n') {
      ++pos;
      continue;
    }
    if (c == '\n') {
      ++pos;
      ++line;
      break;
    }
    field.push_back(c);
    any = true;
    ++pos;
  }
  if (any || !field.empty()) rec.fields.push_back(std::move(field));
  return rec;
}

bool isToolMessageLine(std::string_view line) {
  if (line.size() < 5 || line[0] != '=' || line[1] != '=') return false;
  size_t i = 2;
  while (i < line.size() && std::isupper(static_cast<unsigned char>(line[i]))) ++i;
  return i > 2 && i + 1 < line.size() && line[i] == '=' && line[i + 1] == '=';
}

}  // namespace kl::ncu
