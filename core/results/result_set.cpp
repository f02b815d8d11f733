#include "core/results/result_set.h"

#include <algorithm>
#include <set>

#include "core/python/source_file.h"
#include "core/support/saturating.h"

namespace kl::results {

const LineResult* FileResult::lineAt(uint32_t line) const {
  auto it = std::lower_bound(lines.begin(), lines.end(), line,
                             [](const LineResult& r, uint32_t l) { return r.line < l; });
  return it != lines.end() && it->line == line ? &*it : nullptr;
}

const FunctionResult* FileResult::function(std::string_view qualName) const {
  for (const auto& f : functions)
    if (f.qualName == qualName) return &f;
  return nullptr;
}

const FileResult* ResultSet::file(std::string_view path) const {
  auto it = std::lower_bound(files.begin(), files.end(), path,
                             [](const FileResult& f, std::string_view p) { return f.path < p; });
  return it != files.end() && it->path == path ? &*it : nullptr;
}

std::string functionKey(std::string_view path, std::string_view qualName) {
  std::string k(path);
  k += "::";
  k += qualName;
  return k;
}

uint32_t LineResult::distinctKernels() const {
  std::set<std::string_view> names;
  for (const auto& k : kernels) names.insert(k.fullName.empty() ? k.name : k.fullName);
  return static_cast<uint32_t>(names.size());
}

void computeFunctions(FileResult& file, const std::vector<FunctionSpan>& spans) {
  std::sort(file.lines.begin(), file.lines.end(),
            [](const LineResult& a, const LineResult& b) { return a.line < b.line; });
  file.functions.clear();
  for (auto& l : file.lines) {
    // Innermost = the containing span that starts last.
    const FunctionSpan* best = nullptr;
    for (const auto& s : spans)
      if (s.defLine <= l.line && l.line <= s.lastLine && (!best || s.defLine >= best->defLine))
        best = &s;
    l.function = best ? best->qualName : std::string();
  }
  for (const auto& s : spans) {
    FunctionResult f;
    f.qualName = s.qualName;
    f.defLine = s.defLine;
    f.lastLine = s.lastLine;
    std::set<std::string> names;
    for (const auto& l : file.lines) {
      if (l.line < s.defLine || l.line > s.lastLine) continue;
      addTo(f.gpuNs, l.gpuNs);
      addTo(f.backwardNs, l.backwardNs);
      f.ops += l.ops;
      for (const auto& k : l.kernels) names.insert(k.fullName.empty() ? k.name : k.fullName);
    }
    if (f.ops == 0) continue;
    f.distinctKernels = static_cast<uint32_t>(names.size());
    file.functions.push_back(std::move(f));
  }
  std::sort(file.functions.begin(), file.functions.end(),
            [](const FunctionResult& a, const FunctionResult& b) {
              return a.defLine != b.defLine ? a.defLine < b.defLine : a.qualName < b.qualName;
            });
}

std::vector<FunctionSpan> functionSpans(const std::string& text) {
  std::vector<FunctionSpan> out;
  auto parsed = python::SourceFile::parse(text);
  if (!parsed) return out;
  const auto& m = (*parsed)->model();
  for (const auto& f : m.functions) {
    if (f.qualName.empty()) continue;
    out.push_back({f.qualName, f.defLine, f.lines.last});
  }
  return out;
}

}  // namespace kl::results
