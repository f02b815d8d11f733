#include "core/results/result_set.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <unordered_map>

#include "core/python/source_file.h"
#include "core/support/saturating.h"

namespace kl::results {

const char* attributionSourceName(AttributionSource s) {
  return s == AttributionSource::KlRanges ? "kl-ranges" : "python-stacks";
}

const LineResult* FileResult::lineAt(uint32_t line) const {
  auto it =
      std::lower_bound(lines.begin(), lines.end(), line, [](const LineResult& r, uint32_t l) { return r.line < l; });
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

void computeFunctions(FileResult& file, const std::vector<FunctionSpan>& spans) {
  auto byLine = [](const LineResult& a, const LineResult& b) { return a.line < b.line; };
  if (!std::is_sorted(file.lines.begin(), file.lines.end(), byLine))
    std::sort(file.lines.begin(), file.lines.end(), byLine);
  file.functions.clear();
  const auto& lines = file.lines;
  // Spans by first line; among equal first lines the later span is the inner one.
  std::vector<uint32_t> order(spans.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return spans[a].defLine < spans[b].defLine; });
  // Innermost span per line: a stack of the spans started so far, ended ones skipped.
  std::vector<uint32_t> open;
  size_t next = 0;
  for (auto& l : file.lines) {
    while (next < order.size() && spans[order[next]].defLine <= l.line) open.push_back(order[next++]);
    while (!open.empty() && spans[open.back()].lastLine < l.line) open.pop_back();
    const FunctionSpan* best = nullptr;
    for (size_t i = open.size(); i-- > 0 && !best;)
      if (spans[open[i]].lastLine >= l.line) best = &spans[open[i]];
    if (best) {
      if (l.function != best->qualName) l.function = best->qualName;
    } else {
      l.function.clear();
    }
  }
  // Totals per span: over its range of the sorted lines (ops by prefix sums, GPU time summed
  // saturating); distinct kernels by dense name ids.
  std::vector<uint64_t> ops(lines.size() + 1, 0);
  std::vector<uint32_t> kernelStart(lines.size() + 1, 0);
  std::vector<uint32_t> kernelIds;
  std::unordered_map<std::string_view, uint32_t> ids;
  for (size_t i = 0; i < lines.size(); ++i) {
    ops[i + 1] = ops[i] + lines[i].ops;
    for (const auto& k : lines[i].kernels) {
      std::string_view name = k.fullName.empty() ? k.name : k.fullName;
      kernelIds.push_back(ids.emplace(name, static_cast<uint32_t>(ids.size())).first->second);
    }
    kernelStart[i + 1] = static_cast<uint32_t>(kernelIds.size());
  }
  std::vector<uint32_t> seenBy(ids.size(), UINT32_MAX);
  for (uint32_t si = 0; si < spans.size(); ++si) {
    const auto& s = spans[si];
    auto lo = static_cast<size_t>(std::lower_bound(lines.begin(), lines.end(), s.defLine,
                                                   [](const LineResult& r, uint32_t v) { return r.line < v; }) -
                                  lines.begin());
    auto hi = static_cast<size_t>(std::upper_bound(lines.begin(), lines.end(), s.lastLine,
                                                   [](uint32_t v, const LineResult& r) { return v < r.line; }) -
                                  lines.begin());
    if (hi <= lo || ops[hi] == ops[lo]) continue;
    FunctionResult f{s.qualName, s.defLine, s.lastLine, 0, ops[hi] - ops[lo], 0};
    for (size_t i = lo; i < hi; ++i) {  // saturating, never a wrapped total
      addTo(f.gpuNs, lines[i].gpuNs);
      addTo(f.backwardNs, lines[i].backwardNs);
    }
    for (uint32_t k = kernelStart[lo]; k < kernelStart[hi]; ++k)
      if (seenBy[kernelIds[k]] != si) {
        seenBy[kernelIds[k]] = si;
        ++f.distinctKernels;
      }
    file.functions.push_back(std::move(f));
  }
  std::sort(file.functions.begin(), file.functions.end(), [](const FunctionResult& a, const FunctionResult& b) {
    return a.defLine != b.defLine ? a.defLine < b.defLine : a.qualName < b.qualName;
  });
}

std::vector<FunctionSpan> functionSpans(const std::vector<python::FunctionExtent>& extents) {
  std::vector<FunctionSpan> out;
  out.reserve(extents.size());
  for (const auto& f : extents)
    if (!f.qualName.empty()) out.push_back({f.qualName, f.defLine, f.lastLine});
  return out;
}

std::vector<FunctionSpan> functionSpans(const python::SourceFile& source) {
  return functionSpans(python::functionExtents(source.root(), source.text(), source.lines()));
}

std::vector<FunctionSpan> functionSpans(const std::string& text) {
  auto parsed = python::SourceFile::parse(text);
  if (!parsed) return {};
  return functionSpans(**parsed);
}

}  // namespace kl::results
