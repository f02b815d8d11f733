#include "cli/lines_json.h"

#include <regex>
#include <string_view>

#include "cli/cli.h"
#include "core/results/line_view.h"
#include "core/support/json_schema.h"

namespace kl::cli {

namespace {

using nlohmann::json;

/// Line `line` (0-based) of a snapshot, trailing blanks cut; "" without a snapshot.
std::string lineText(const results::FileResult& f, uint32_t line) {
  if (!f.hasSnapshot) return "";
  std::string_view text = f.snapshot;
  size_t p = 0;
  for (uint32_t i = 0; i < line; ++i) {
    p = text.find('\n', p);
    if (p == std::string_view::npos) return "";
    ++p;
  }
  size_t e = text.find('\n', p);
  std::string s(text.substr(p, e == std::string_view::npos ? std::string_view::npos : e - p));
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

bool pathMatches(std::string_view path, std::string_view want) {
  if (want.empty() || path == want) return true;
  return path.size() > want.size() && path.substr(path.size() - want.size()) == want &&
         path[path.size() - want.size() - 1] == '/';
}

}  // namespace

results::ResultSet filterLines(const results::ResultSet& rs, const LinesFilter& filter) {
  std::optional<std::regex> re;
  if (!filter.kernelPattern.empty()) {
    try {
      re.emplace(filter.kernelPattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      throw UsageError("--kernel: " + filter.kernelPattern + " is not a valid regular expression (" + e.what() + ")");
    }
  }
  results::ResultSet out = rs;
  out.files.clear();
  for (const auto& f : rs.files) {
    if (!pathMatches(f.path, filter.file)) continue;
    results::FileResult kept = f;
    kept.lines.clear();
    for (const auto& l : f.lines) {
      if (filter.line && (*filter.line < l.line + 1 || *filter.line > l.lastLine + 1)) continue;
      results::LineResult line = l;
      if (re) {
        line.kernels.clear();
        for (const auto& k : l.kernels)
          if (std::regex_search(k.fullName, *re) || std::regex_search(k.name, *re)) line.kernels.push_back(k);
        if (line.kernels.empty()) continue;
      }
      kept.lines.push_back(std::move(line));
    }
    if (!kept.lines.empty()) out.files.push_back(std::move(kept));
  }
  return out;
}

json linesJson(const results::ResultSet& rs) {
  const auto& p = rs.provenance;
  json j = {
      {"schema", json_schema::kLines},
      {"source", results::attributionSourceName(p.source)},
      {"run",
       {{"id", p.runId},
        {"backend", p.backend},
        {"command", p.command},
        {"profile", p.profilePath},
        {"gpu", p.gpu},
        {"git_commit", p.gitCommit}}},
      {"emulated", p.emulated},
      {"total_gpu_ns", rs.totalGpuNs},
      {"lines", json::array()},
      {"unmapped", {{"ops", rs.unmapped.ops}, {"gpu_ns", rs.unmapped.gpuNs}, {"top_kernels", rs.unmapped.topKernels}}}};
  uint64_t launches = 0;
  int64_t ns = 0;
  for (const auto& f : rs.files) {
    for (const auto& l : f.lines) {
      // The words a person is shown for this line: the same as the editor's hover and hint.
      const results::LineView view = results::describeLine(rs, f, l);
      const auto& t = view.text;
      json ks = json::array();
      for (const auto& k : l.kernels) {
        ks.push_back({{"name", k.fullName},
                      {"short_name", k.name},
                      {"launches", k.launches},
                      {"gpu_ns", k.totalNs},
                      {"backward", k.backward()},
                      {"pass", attribution::passName(k.pass)},
                      {"forward_owner", !k.noForwardOwner}});
        launches += k.launches;
        ns += k.totalNs;
      }
      json variants = json::array();
      for (const auto& v : l.variants) variants.push_back({{"kernels", v.kernels}, {"invocations", v.invocations}});
      json callees = json::array();
      for (const auto& c : l.callees)
        callees.push_back({{"file", c.path}, {"line", c.line + 1}, {"function", c.function}, {"gpu_ns", c.gpuNs}});
      j["lines"].push_back({{"file", f.path},
                            {"line", l.line + 1},
                            {"end_line", l.lastLine + 1},
                            {"function", l.function},
                            {"text", lineText(f, l.line)},
                            {"gpu_ns", l.gpuNs},
                            {"backward_gpu_ns", l.backwardNs},
                            {"inclusive_gpu_ns", l.inclusiveNs},
                            {"launches", l.ops},
                            {"invocations", l.invocations},
                            {"sync_ns", l.syncNs},
                            {"sync_calls", l.syncCalls},
                            // the store keeps the verdict as its reason: a reason means atomic
                            {"atomic", l.atomic || l.atomicReason != attribution::AtomicReason::None},
                            {"atomic_reason", attribution::atomicReasonName(l.atomicReason)},
                            {"note", l.note},
                            {"suggest_focus", l.suggestFocus},
                            {"kernels", std::move(ks)},
                            {"variants", std::move(variants)},
                            {"callees", std::move(callees)},
                            {"share", view.share},
                            {"shown",
                             {{"time", t.time},
                              {"total", t.total},
                              {"kernels", t.kernels},
                              {"launches", t.launches},
                              {"share", t.share},
                              {"share_of", t.shareOf},
                              {"hint", results::hintLabel(t, "")}}}});
    }
  }
  j["kernels_shown"] = {{"launches", launches}, {"gpu_ns", ns}};
  return j;
}

}  // namespace kl::cli
