#include "core/planner/report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "core/attribution/kernel_label.h"
#include "core/support/json_schema.h"
#include "core/support/json_writer.h"
#include "core/support/saturating.h"

namespace kl::planner {

std::string formatNs(int64_t ns) {
  char buf[48];
  if (ns >= 1000000)
    std::snprintf(buf, sizeof buf, "%.2f ms", static_cast<double>(ns) / 1e6);
  else if (ns >= 1000)
    std::snprintf(buf, sizeof buf, "%.1f us", static_cast<double>(ns) / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  return buf;
}

namespace {

/// The training-step kinds of a line's kernels, by name ("optimizer", "amp-scaler+optimizer"),
/// "" when it launched none inside a step scope.
std::string stepKinds(const LineResult& l) {
  std::set<std::string> kinds;
  for (const auto& k : l.kernels)
    if (k.stepPass()) kinds.insert(attribution::passName(k.pass));
  std::string out;
  for (const auto& p : kinds) out += (out.empty() ? "" : "+") + p;
  return out;
}

}  // namespace

std::string renderJson(const LoopResult& r) {
  std::ostringstream os;
  json::Writer w(os);
  w.beginObject();
  w.field("schema", json_schema::kProfile);
  w.field("converged", r.converged);
  w.field("stop_reason", std::string(stopReasonName(r.stopReason)));
  w.field("rounds", r.rounds);
  w.field("backend", r.backend);
  w.field("emulated", r.emulated);
  w.key("lines").beginArray();
  for (const auto& l : r.lines) {
    w.beginObject();
    w.field("file", l.path);
    w.field("line", l.line + 1);
    w.field("end_line", l.lastLine + 1);
    w.field("function", l.function);
    w.key("gpu_ns").value(static_cast<long long>(l.gpuNs));
    w.key("backward_gpu_ns").value(static_cast<long long>(l.backwardNs));
    if (std::string kinds = stepKinds(l); kinds.empty())
      w.key("step_kind").null();
    else
      w.field("step_kind", kinds);
    w.key("launches").value(static_cast<long long>(l.ops));
    w.field("invocations", l.invocations);
    w.field("atomic", l.atomic);
    if (l.atomicReason == attribution::AtomicReason::None)
      w.key("atomic_reason").null();
    else
      w.field("atomic_reason", attribution::atomicReasonName(l.atomicReason));
    // --kernel: the line launched none of the matching kernels (shown, left out of the counts).
    w.field("no_matching_kernel", l.noMatchingKernel);
    if (l.note.empty())
      w.key("note").null();
    else
      w.field("note", rewordForTest(l.note));
    if (l.suggestFocus.empty())
      w.key("suggest_focus").null();
    else
      w.field("suggest_focus", l.suggestFocus);
    w.key("kernels").beginArray();
    for (const auto& k : l.kernels) {
      w.beginObject();
      w.field("name", k.opName);
      w.field("backward", k.backward());
      w.field("pass", std::string(attribution::passName(k.pass)));
      if (k.backward()) w.field("forward_owner", !k.noForwardOwner);
      w.key("launches").value(static_cast<long long>(k.launches));
      w.key("gpu_ns").value(static_cast<long long>(k.totalNs));
      w.endObject();
    }
    w.endArray();
    w.endObject();
  }
  w.endArray();
  w.key("unmapped").beginArray();
  for (const auto& u : r.unmapped) {
    w.beginObject();
    w.field("name", u.name);
    w.key("launches").value(static_cast<long long>(u.launches));
    w.key("gpu_ns").value(static_cast<long long>(u.gpuNs));
    w.field("reason", std::string(attribution::unmappedReasonName(u.reason)));
    w.endObject();
  }
  w.endArray();
  w.key("notes").beginArray();
  for (const auto& n : r.notes) w.value(renderNote(n));
  w.endArray();
  w.key("round_log").beginArray();
  for (const auto& rl : r.roundLog) {
    w.beginObject();
    w.field("round", rl.index);
    w.key("ranges").value(static_cast<long long>(rl.ranges));
    w.key("pushes").value(static_cast<long long>(rl.pushes));
    w.key("launches").value(static_cast<long long>(rl.launches));
    w.key("wall_ms").value(static_cast<long long>(rl.wallMs));
    w.field("profiler_version", rl.profilerVersion);
    w.field("gpu", rl.gpu);
    w.key("profiles").beginArray();
    for (const auto& p : rl.profiles) w.value(p);
    w.endArray();
    w.field("dir", rl.dir);
    w.key("notes").beginArray();
    for (const auto& n : rl.notes) w.value(renderNote(n));
    w.endArray();
    w.endObject();
  }
  w.endArray();
  w.endObject();
  return os.str();
}

namespace {

/// "variant x3 (2 kernels): cunn_SoftMaxForward" — the kernels not shared by every variant.
std::string variantText(const LineResult& l, const attribution::KernelSet& v) {
  std::string out = "variant x" + std::to_string(v.invocations) + " (" + std::to_string(v.kernels.size()) + " kernel" +
                    (v.kernels.size() == 1 ? "" : "s") + "):";
  std::vector<std::string> own;  // the kernels not every variant launches
  for (const auto& k : v.kernels)
    if (!std::all_of(l.variants.begin(), l.variants.end(), [&](const attribution::KernelSet& o) {
          return std::find(o.kernels.begin(), o.kernels.end(), k) != o.kernels.end();
        }))
      own.push_back(k);
  const auto labels = attribution::kernelLabels(own, 70);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i == 4) {
      out += " ...";
      break;
    }
    out += " " + labels[i];
  }
  if (own.empty()) out += " (only kernels the other variants launch too)";
  return out;
}

/// "0.42 ms + bwd 0.91 ms": forward time, then what the backward pass spent for this line's ops.
/// Backward work with no forward owner (on the line that called backward()) says so.
std::string timeText(const LineResult& l) {
  if (l.backwardNs <= 0) return formatNs(l.gpuNs);
  bool anyOwned = false, anyUnowned = false;
  for (const auto& k : l.kernels)
    if (k.backward()) (k.noForwardOwner ? anyUnowned : anyOwned) = true;
  std::string a = formatNs(l.gpuNs - l.backwardNs) + " + bwd " + formatNs(l.backwardNs);
  if (anyUnowned && !anyOwned) a += " (backward work of no forward line: grad accumulation, engine)";
  return a;
}

std::string annotation(const LineResult& l, int maxKernels) {
  std::string a = timeText(l) + " · " + std::to_string(l.ops) + " launch" + (l.ops == 1 ? "" : "es");
  if (l.invocations > 1) a += " in " + std::to_string(l.invocations) + " calls";
  if (l.atomic)
    a += " · ATOMIC" + (l.atomicReason == attribution::AtomicReason::None
                            ? std::string()
                            : " (" + std::string(attribution::atomicReasonName(l.atomicReason)) + ")");
  if (std::string kinds = stepKinds(l); !kinds.empty()) a += " · " + kinds;
  a += " · ";
  int shown = 0;
  const auto labels = attribution::kernelLabels(l.kernels, 60);
  for (const auto& k : l.kernels) {
    if (shown == maxKernels) {
      a += ", +" + std::to_string(l.kernels.size() - shown) + " more";
      break;
    }
    a += (shown ? ", " : "") +
         std::string(k.pass == attribution::Pass::Backward    ? "bwd:"
                     : k.pass == attribution::Pass::Recompute ? "recompute:"
                                                              : "") +
         labels[static_cast<size_t>(shown)] + (k.launches > 1 ? " x" + std::to_string(k.launches) : "");
    ++shown;
  }
  return a;
}

}  // namespace

std::string renderText(const LoopResult& r, WorkspaceIndex& index, const TextOptions& opts) {
  std::ostringstream os;
  const char* label = r.emulated ? "  [EMULATED: kernels and times modelled on CPU, not measured]" : "";
  // The stop reason in parentheses only where it says more than the verdict ("converged (converged)").
  os << "kernlens profile: " << (r.converged ? "converged" : "NOT converged")
     << (r.stopReason == StopReason::Converged ? std::string() : " (" + std::string(stopReasonName(r.stopReason)) + ")")
     << " after " << r.rounds << " round" << (r.rounds == 1 ? "" : "s") << ", backend " << r.backend << label << "\n";
  if (!r.why.empty()) os << "  why: " << rewordForTest(r.why) << "\n";
  int64_t total = 0;
  for (const auto& l : r.lines) addTo(total, l.gpuNs);
  os << "  mapped GPU time " << formatNs(total) << " on " << r.lines.size() << " lines\n\n";

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
          os << (k ? "\n       | " : "") << "    # " << annotation(l, opts.maxKernelsPerLine);
          if (l.lastLine > l.line) os << " (lines " << l.line + 1 << "-" << l.lastLine + 1 << ")";
          for (const auto& v : l.variants) os << "\n       |      " << variantText(l, v);
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
           << "    # " << annotation(l, opts.maxKernelsPerLine) << (l.function.empty() ? "" : "  [" + l.function + "]")
           << "\n";
        for (const auto& v : l.variants) os << "        " << variantText(l, v) << "\n";
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
      os << "  " << labels[i] << "  x" << r.unmapped[i].launches << "  " << formatNs(r.unmapped[i].gpuNs) << "  ("
         << attribution::unmappedReasonName(r.unmapped[i].reason) << ")\n";
    os << "\n";
  }
  os << "overhead: " << r.rangesInserted << " ranges inserted, " << [&] {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", r.pushesPerLaunch);
    return std::string(b);
  }() << " NVTX pushes per launch";
  if (r.baselineWallMs > 0) {
    char b[64];
    std::snprintf(b, sizeof b, ", wall %lld ms vs %lld ms uninstrumented (%+.0f%%)",
                  static_cast<long long>(r.lastWallMs), static_cast<long long>(r.baselineWallMs),
                  (static_cast<double>(r.lastWallMs) / static_cast<double>(r.baselineWallMs) - 1.0) * 100.0);
    os << b;
  }
  os << "\n";
  for (const auto& x : r.refusals) os << "refused: " << x << "\n";
  for (const auto& n : r.notes) os << "note: " << renderNote(n) << "\n";
  return os.str();
}

}  // namespace kl::planner
