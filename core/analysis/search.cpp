#include "core/analysis/search.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <unordered_map>

#include "core/support/saturating.h"

namespace kl::analysis {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Result<SearchResult> computeSearch(const View& v, const SearchOptions& o) {
  const auto& m = v.m;
  std::regex re;
  if (o.regex) {
    try {
      re = std::regex(o.pattern, std::regex::ECMAScript | std::regex::icase);
    } catch (const std::regex_error& e) {
      return Error::invalid("invalid regular expression '" + o.pattern + "': " + e.what());
    }
  }
  std::string needle = lower(o.pattern);
  std::unordered_map<StrId, bool> memo;
  auto matches = [&](StrId id) {
    auto it = memo.find(id);
    if (it != memo.end()) return it->second;
    std::string_view s = m.str(id);
    bool ok = o.regex ? std::regex_search(s.begin(), s.end(), re) : lower(s).find(needle) != std::string::npos;
    memo.emplace(id, ok);
    return ok;
  };
  SearchResult r;
  if (o.kernels) {
    std::unordered_map<StrId, SearchKernelRow> rows;
    for (uint32_t i : v.ops) {
      const auto& op = m.gpuOps[i];
      if (!matches(op.name)) continue;
      auto& row = rows[op.name];
      if (row.count == 0) {
        row.name = op.name;
        row.firstStart = op.start;
      }
      ++row.count;
      addTo(row.totalNs, op.duration());
      if (v.attr) {
        uint32_t in = v.attr->innermost(i);
        if (in != kNone && row.innermostRanges.size() < 5) {
          StrId t = m.ranges[in].text;
          if (std::find(row.innermostRanges.begin(), row.innermostRanges.end(), t) == row.innermostRanges.end())
            row.innermostRanges.push_back(t);
        }
      }
    }
    for (auto& [k, row] : rows) r.kernels.push_back(row);
    std::sort(r.kernels.begin(), r.kernels.end(), [&](const SearchKernelRow& a, const SearchKernelRow& b) {
      return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : m.str(a.name) < m.str(b.name);
    });
  }
  if (o.ranges) {
    std::unordered_map<StrId, SearchRangeRow> rows;
    for (uint32_t ri = 0; ri < m.ranges.size(); ++ri) {
      const auto& rg = m.ranges[ri];
      if (!v.inWindow(rg.start) || !matches(rg.text)) continue;
      auto& row = rows[rg.text];
      if (row.invocations == 0) {
        row.text = rg.text;
        row.firstStart = rg.start;
      }
      ++row.invocations;
      addTo(row.cpuNs, rg.end - rg.start);
      if (v.attr && ri < v.attr->ranges().size()) {
        addTo(row.gpuNs, v.attr->ranges()[ri].inclusiveGpuNs);
        row.ops += v.attr->ranges()[ri].ops;
      }
    }
    for (auto& [k, row] : rows) r.ranges.push_back(row);
    std::sort(r.ranges.begin(), r.ranges.end(), [&](const SearchRangeRow& a, const SearchRangeRow& b) {
      if (a.gpuNs != b.gpuNs) return a.gpuNs > b.gpuNs;
      if (a.cpuNs != b.cpuNs) return a.cpuNs > b.cpuNs;
      return m.str(a.text) < m.str(b.text);
    });
  }
  return r;
}

void writeJson(json::Writer& w, const SearchResult& r, const View& v) {
  const auto& m = v.m;
  w.beginObject().key("kernels").beginArray();
  for (const auto& k : r.kernels) {
    w.beginObject()
        .field("name", m.str(k.name))
        .field("count", k.count)
        .field("total_ns", k.totalNs)
        .field("first_start_ns", v.rel(k.firstStart));
    w.key("innermost_ranges").beginArray();
    for (StrId t : k.innermostRanges) w.value(m.str(t));
    w.endArray().endObject();
  }
  w.endArray().key("ranges").beginArray();
  for (const auto& rg : r.ranges) {
    w.beginObject()
        .field("name", m.str(rg.text))
        .field("invocations", rg.invocations)
        .field("cpu_ns", rg.cpuNs)
        .field("gpu_ns", rg.gpuNs)
        .field("ops", rg.ops)
        .field("first_start_ns", v.rel(rg.firstStart))
        .endObject();
  }
  w.endArray().endObject();
}

}  // namespace kl::analysis
