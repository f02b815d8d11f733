#include "cli/profile_text.h"

#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "core/attribution/kernel_label.h"
#include "core/support/format.h"
#include "core/support/note.h"
#include "core/support/saturating.h"

namespace kl::cli {

std::string lineAnnotation(const results::LineView& v, int maxKernels) {
  const auto& t = v.text;
  std::string a = t.time.empty() ? t.total : t.time;
  if (!t.backwardNote.empty()) a += " (" + t.backwardNote + ")";
  a += " · " + t.launches;
  if (!t.invocations.empty()) a += " · " + t.invocations;
  if (!t.atomic.empty()) a += " · " + t.atomic;
  if (!t.stepKind.empty()) a += " · " + t.stepKind;
  a += " · ";
  int shown = 0;
  for (const auto& k : v.kernels) {
    if (shown == maxKernels) {
      a += ", +" + std::to_string(v.kernels.size() - static_cast<size_t>(shown)) + " more";
      break;
    }
    a += (shown ? ", " : "") +
         std::string(k.pass == attribution::Pass::Backward    ? "bwd:"
                     : k.pass == attribution::Pass::Recompute ? "recompute:"
                                                              : "") +
         k.label + (k.launches > 1 ? " x" + std::to_string(k.launches) : "");
    ++shown;
  }
  return a;
}

std::string renderProfileText(const planner::LoopResult& r, planner::WorkspaceIndex& index,
                              const ProfileTextOptions& opts) {
  results::LineContext lc;
  lc.emulated = r.emulated;
  lc.backend = r.backend;
  results::ViewOptions vo;
  vo.labelWidth = 60;
  auto describe = [&](const results::LineResult& l) { return results::describeLine(l, lc, vo); };
  std::ostringstream os;
  const char* label = r.emulated ? "  [EMULATED: kernels and times modelled on CPU, not measured]" : "";
  // The stop reason in parentheses only where it says more than the verdict ("converged (converged)").
  os << "kernlens profile: " << (r.converged ? "converged" : "NOT converged")
     << (r.stopReason == planner::StopReason::Converged ? std::string()
                                                        : " (" + std::string(stopReasonName(r.stopReason)) + ")")
     << " after " << r.rounds << " round" << (r.rounds == 1 ? "" : "s") << ", backend " << r.backend << label << "\n";
  if (!r.why.empty()) os << "  why: " << rewordForTest(r.why) << "\n";
  int64_t total = 0;
  for (const auto& l : r.lines) addTo(total, l.gpuNs);
  os << "  mapped GPU time " << formatDuration(static_cast<double>(total)) << " on " << r.lines.size() << " lines\n\n";

  std::set<size_t> shown;
  auto printFile = [&](const std::string& path, uint32_t from, uint32_t to, const std::string& title) {
    auto f = index.file(path);
    if (!f) return;
    const auto& text = (*f)->text();
    const auto& li = (*f)->lines();
    uint32_t n = li.lineCount();
    if (from == 0) from = 1;
    if (to == 0 || to > n) to = n;
    std::map<uint32_t, std::vector<size_t>> at;
    for (size_t i = 0; i < r.lines.size(); ++i)
      if (r.lines[i].path == path && r.lines[i].line + 1 >= from && r.lines[i].line + 1 <= to)
        at[r.lines[i].line + 1].push_back(i);
    os << "== " << path << (title.empty() ? "" : "  (" + title + ")") << (r.emulated ? "  [EMULATED]" : "") << "\n";
    for (uint32_t line = from; line <= to; ++line) {
      std::string src(
          std::string_view(text).substr(li.lineStart(line - 1), li.lineEnd(line - 1, text) - li.lineStart(line - 1)));
      os << (line < 10 ? "   " : line < 100 ? "  " : line < 1000 ? " " : "") << line << " | " << src;
      auto it = at.find(line);
      if (it != at.end()) {
        for (size_t k = 0; k < it->second.size(); ++k) {
          const auto& l = r.lines[it->second[k]];
          shown.insert(it->second[k]);
          const auto view = describe(l);
          os << (k ? "\n       | " : "") << "    # " << lineAnnotation(view, opts.maxKernelsPerLine);
          if (l.lastLine > l.line) os << " (lines " << l.line + 1 << "-" << l.lastLine + 1 << ")";
          for (const auto& v : view.variants) os << "\n       |      " << v;
          if (!l.note.empty() &&
              (!l.atomic || l.atomicReason != attribution::AtomicReason::Library || l.noMatchingKernel))
            os << "  [" << rewordForTest(l.noteWithFocus()) << "]";
        }
      }
      os << "\n";
    }
    os << "\n";
  };
  if (!r.focusPath.empty()) {
    printFile(r.focusPath, r.focusFirstLine, r.focusLastLine, r.focusFunction);
  }
  if (opts.allFiles) {
    // The other lines, grouped by file (callees, callers, entry).
    std::map<std::string, std::vector<size_t>> rest;
    for (size_t i = 0; i < r.lines.size(); ++i)
      if (!shown.count(i)) rest[r.lines[i].path].push_back(i);
    for (const auto& [file, idx] : rest) {
      os << "== " << file << (r.emulated ? "  [EMULATED]" : "") << "\n";
      for (size_t i : idx) {
        const auto& l = r.lines[i];
        const auto view = describe(l);
        std::string src;
        if (auto f = index.file(file); f && l.line < (*f)->lines().lineCount()) {
          const auto& t = (*f)->text();
          const auto& li = (*f)->lines();
          src = std::string(
              std::string_view(t).substr(li.lineStart(l.line), li.lineEnd(l.line, t) - li.lineStart(l.line)));
          size_t s = src.find_first_not_of(" \t");
          src = s == std::string::npos ? "" : src.substr(s);
          if (src.size() > 60) src = src.substr(0, 57) + "...";
        }
        os << "  " << l.line + 1 << (l.lastLine > l.line ? "-" + std::to_string(l.lastLine + 1) : "") << "  " << src
           << "    # " << lineAnnotation(view, opts.maxKernelsPerLine)
           << (l.function.empty() ? "" : "  [" + l.function + "]") << "\n";
        for (const auto& v : view.variants) os << "        " << v << "\n";
      }
      os << "\n";
    }
  }
  if (!r.unmapped.empty()) {
    os << "unmapped (not launched inside any wrapped range):\n";
    std::vector<std::string> names;
    for (const auto& u : r.unmapped) names.push_back(u.name);
    const auto labels = attribution::kernelLabels(names, 60);
    for (size_t i = 0; i < r.unmapped.size(); ++i)
      os << "  " << labels[i] << "  x" << r.unmapped[i].launches << "  "
         << formatDuration(static_cast<double>(r.unmapped[i].gpuNs)) << "  ("
         << attribution::unmappedReasonName(r.unmapped[i].reason) << ")\n";
    os << "\n";
  }
  os << "overhead: " << r.rangesInserted << " ranges inserted, " << [&] {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", r.pushesPerLaunch);
    return std::string(b);
  }() << " NVTX pushes per launch";
  if (r.baselineWallMs > 0) {
    os << ", wall " << formatDuration(static_cast<double>(r.lastWallMs) * 1e6) << " vs "
       << formatDuration(static_cast<double>(r.baselineWallMs) * 1e6) << " uninstrumented ("
       << formatChange(static_cast<double>(r.lastWallMs) / static_cast<double>(r.baselineWallMs) - 1.0) << ")";
  }
  os << "\n";
  for (const auto& x : r.refusals) os << "refused: " << x << "\n";
  for (const auto& n : r.notes) os << "note: " << renderNote(n) << "\n";
  return os.str();
}

}  // namespace kl::cli
