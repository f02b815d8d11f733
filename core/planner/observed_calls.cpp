#include "core/planner/observed_calls.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace kl::planner {

namespace {

std::vector<std::string_view> splitTabs(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) return out;
    start = tab + 1;
  }
}

template <typename T>
bool number(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

Result<ObservedCalls> ObservedCalls::parse(std::string_view text) {
  ObservedCalls out;
  size_t pos = 0;
  size_t lineNo = 0;
  bool header = false;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    auto f = splitTabs(line);
    auto bad = [&](const char* what) {
      return Error::invalid("call discovery line " + std::to_string(lineNo) + ": " + what);
    };
    if (!header) {
      if (f.size() < 2 || f[0] != "kernlens-calls") return bad("not a kernlens call discovery file");
      if (f[1] != "1") return bad("unsupported version (expected 1)");
      header = true;
      continue;
    }
    if (f[0] == "code") {
      int32_t id = 0;
      ObservedCode c;
      if (f.size() < 6 || !number(f[1], id) || !number(f[3], c.firstLine) || !number(f[5], c.calls))
        return bad("expected code ID PATH FIRST_LINE QUALNAME CALLS");
      if (id != static_cast<int32_t>(out.codes_.size())) return bad("code ids must be consecutive from 0");
      c.path = std::string(f[2]);
      c.qualName = std::string(f[4]);
      out.byName_[{c.path, c.qualName}].push_back(id);
      out.codes_.push_back(std::move(c));
    } else if (f[0] == "line") {
      int32_t id = 0;
      uint32_t ln = 0;
      uint64_t hits = 0;
      if (f.size() < 4 || !number(f[1], id) || !number(f[2], ln) || !number(f[3], hits))
        return bad("expected line ID LINE HITS");
      if (id < 0 || static_cast<size_t>(id) >= out.codes_.size()) return bad("unknown code id");
      out.lines_[{id, ln}] += hits;
    } else if (f[0] == "edge") {
      ObservedEdge e;
      if (f.size() < 5 || !number(f[1], e.caller) || !number(f[2], e.line) || !number(f[3], e.callee) ||
          !number(f[4], e.count))
        return bad("expected edge CALLER LINE CALLEE COUNT");
      auto n = static_cast<int32_t>(out.codes_.size());
      if (e.caller < 0 || e.caller >= n || e.callee < 0 || e.callee >= n) return bad("unknown code id");
      out.edges_.push_back(e);
    } else if (f[0] == "root") {
      int32_t id = 0;
      if (f.size() < 3 || !number(f[1], id) || id < 0 || static_cast<size_t>(id) >= out.codes_.size())
        return bad("expected root ID COUNT");
    } else if (f[0] == "backward") {
      uint64_t n = 0;
      if (f.size() < 2 || !number(f[1], n)) return bad("expected backward COUNT");
      out.backwardCalls_ = n;
    }
    // Other record kinds: written by a newer probe, ignored.
  }
  if (!header) return Error::invalid("call discovery: empty file");
  std::sort(out.edges_.begin(), out.edges_.end(), [](const ObservedEdge& a, const ObservedEdge& b) {
    return std::tie(a.caller, a.line, a.callee) < std::tie(b.caller, b.line, b.callee);
  });
  return out;
}

Result<ObservedCalls> ObservedCalls::read(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error::io(file.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  auto r = parse(ss.str());
  if (!r) return Error{r.error().code, file.string() + ": " + r.error().message};
  return r;
}

std::vector<int32_t> ObservedCalls::codesOf(const std::string& path, const std::string& qualName) const {
  auto it = byName_.find({path, qualName});
  return it == byName_.end() ? std::vector<int32_t>{} : it->second;
}

std::vector<ObservedEdge> ObservedCalls::edgesFrom(int32_t caller, uint32_t first, uint32_t last) const {
  ObservedEdge key;
  key.caller = caller;
  key.line = first;
  key.callee = -1;
  auto it = std::lower_bound(edges_.begin(), edges_.end(), key, [](const ObservedEdge& a, const ObservedEdge& b) {
    return std::tie(a.caller, a.line, a.callee) < std::tie(b.caller, b.line, b.callee);
  });
  std::vector<ObservedEdge> out;
  for (; it != edges_.end() && it->caller == caller && it->line <= last; ++it) out.push_back(*it);
  return out;
}

std::vector<ObservedEdge> ObservedCalls::edgesInto(int32_t callee) const {
  std::vector<ObservedEdge> out;
  for (const auto& e : edges_)
    if (e.callee == callee) out.push_back(e);
  return out;
}

uint64_t ObservedCalls::lineHits(int32_t id, uint32_t line) const {
  auto it = lines_.find({id, line});
  return it == lines_.end() ? 0 : it->second;
}

bool ObservedCalls::anyLineRan(int32_t id, uint32_t first, uint32_t last) const {
  auto it = lines_.lower_bound({id, first});
  return it != lines_.end() && it->first.first == id && it->first.second <= last;
}

uint64_t ObservedCalls::maxLineHits(int32_t id, uint32_t first, uint32_t last) const {
  uint64_t best = 0;
  for (auto it = lines_.lower_bound({id, first});
       it != lines_.end() && it->first.first == id && it->first.second <= last; ++it)
    best = std::max(best, it->second);
  return best;
}

}  // namespace kl::planner
