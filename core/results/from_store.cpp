#include "core/results/from_store.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <set>
#include <system_error>
#include <tuple>

#include "core/store/store.h"
#include "core/support/saturating.h"

namespace kl::results {

namespace {

/// "2026-11-21T12:34:56Z" -> seconds since the epoch (0 when unparsable).
int64_t parseIso(const std::string& s) {
  std::tm tm{};
  if (std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec) != 6)
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm));
}

/// A stored span as the line result editors see: `refinable` added, kernels by time.
LineResult lineOf(const LineResult& s) {
  LineResult l = s;
  l.refinable = !s.range.leaf || l.lastLine > l.line;
  std::sort(l.kernels.begin(), l.kernels.end(), [](const KernelStat& a, const KernelStat& b) {
    return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.name < b.name;
  });
  return l;
}

/// The lines of other functions (or files) measured inside span `s` of the same round: its
/// callees. Most GPU time first.
std::vector<CalleeLine> calleesOf(const LineResult& s, const std::vector<LineResult>& round) {
  std::vector<CalleeLine> out;
  for (const auto& c : round) {
    if (c.range.parent != s.range.name || c.range.gpuNs <= 0) continue;
    if (c.path == s.path && c.function == s.function) continue;  // a nested statement, not a callee
    CalleeLine cl;
    cl.path = c.path;
    cl.line = c.line;
    cl.label = c.label;
    cl.function = c.function;
    cl.gpuNs = c.range.gpuNs;
    out.push_back(std::move(cl));
  }
  std::sort(out.begin(), out.end(), [](const CalleeLine& a, const CalleeLine& b) {
    return a.gpuNs != b.gpuNs ? a.gpuNs > b.gpuNs : std::tie(a.path, a.line) < std::tie(b.path, b.line);
  });
  return out;
}

/// Merges `l` into `it`, another span that starts on the same line (a function range and its
/// first statement's): the line's one result.
void mergeInto(LineResult& it, LineResult&& l) {
  addTo(it.gpuNs, l.gpuNs);
  addTo(it.backwardNs, l.backwardNs);
  it.ops += l.ops;
  it.lastLine = std::min(it.lastLine, l.lastLine);
  if (it.atomicReason == attribution::AtomicReason::None && it.note.empty()) {  // whichever span has one
    it.atomicReason = l.atomicReason;
    it.note = std::move(l.note);
    it.suggestFocus = std::move(l.suggestFocus);
  }
  if (l.inclusiveNs > it.inclusiveNs) {
    it.inclusiveNs = l.inclusiveNs;
    it.callees = std::move(l.callees);
  }
  for (auto& k : l.kernels) {
    auto kt = std::find_if(it.kernels.begin(), it.kernels.end(),
                           [&](const KernelStat& x) { return x.fullName == k.fullName && x.pass == k.pass; });
    if (kt == it.kernels.end()) {
      it.kernels.push_back(std::move(k));
    } else {
      kt->launches += k.launches;
      addTo(kt->totalNs, k.totalNs);
    }
  }
}

/// The file's lines from its newest round's spans; call lines (spans whose nested kl: ranges lie
/// in other functions) get their inclusive time and callees.
void addLines(FileResult& file, const store::FileResults& f, const std::vector<LineResult>& roundSpans) {
  for (const auto& s : f.spans) {
    std::vector<CalleeLine> callees = s.range.launches > 0 ? calleesOf(s, roundSpans) : std::vector<CalleeLine>{};
    if (s.ops == 0 && callees.empty()) continue;
    LineResult l = lineOf(s);
    if (!callees.empty()) {
      l.inclusiveNs = s.range.gpuNs;
      l.callees = std::move(callees);
    }
    auto it = std::find_if(file.lines.begin(), file.lines.end(), [&](const LineResult& x) { return x.line == l.line; });
    if (it == file.lines.end())
      file.lines.push_back(std::move(l));
    else
      mergeInto(*it, std::move(l));
  }
}

/// The previous run of each function of `file`: its spans of this file, summed within the function.
void addPreviousRuns(ResultSet& rs, const store::Store& st, const FileResult& file, int64_t runId) {
  for (const auto& fn : file.functions) {
    auto prev = st.previousRun(file.path, fn.qualName, runId);
    if (!prev || !*prev) continue;
    auto rounds = st.rounds((*prev)->id);
    if (!rounds || rounds->empty()) continue;
    FunctionResult pf{fn.qualName, 0, 0, 0, 0, 0};
    for (auto rd = rounds->rbegin(); rd != rounds->rend(); ++rd) {
      auto spans = st.spans(rd->id);
      if (!spans) break;
      for (const auto& s : *spans)
        if (s.path == file.path && s.function == fn.qualName) {
          addTo(pf.gpuNs, s.gpuNs);
          pf.ops += s.ops;
        }
      if (pf.ops) break;  // the newest round of that run that measured the function
    }
    if (pf.ops) {
      rs.previousFunctions[functionKey(file.path, fn.qualName)] = pf;
      rs.previousRunId = (*prev)->key;
    }
  }
}

void fillProvenance(ResultSet& rs, const store::FileResults& f) {
  auto& p = rs.provenance;
  p.runId = f.run.key;
  p.backend = f.run.backend;
  p.source = AttributionSource::KlRanges;
  p.gpu = f.run.gpu;
  p.gitCommit = f.run.gitCommit;
  p.gitDirty = f.run.gitDirty;
  p.command = f.run.command;
  p.createdUnix = parseIso(f.run.endedAt.empty() ? f.run.startedAt : f.run.endedAt);
  p.emulated = f.run.emulated || f.round.emulated;
  rs.totalGpuNs = f.round.totalGpuNs;
  rs.totalOps = static_cast<uint64_t>(f.round.totalOps);
  p.profilePath = f.round.profiles.empty() ? std::string() : f.round.profiles.front();
}

/// The unmapped ops of round `roundId`: counts, time and the five names with the most time.
void addUnmapped(ResultSet& rs, const store::Store& st, int64_t roundId) {
  auto un = st.unmapped(roundId);
  if (!un) return;
  std::vector<std::pair<int64_t, std::string>> top;
  for (const auto& u : *un) {
    rs.unmapped.ops += static_cast<uint64_t>(u.launches);
    addTo(rs.unmapped.gpuNs, u.gpuNs);
    top.emplace_back(u.gpuNs, u.name);
  }
  std::set<std::string> names;
  for (const auto& [ns, n] : top) names.insert(n);
  rs.unmapped.distinctKernels = static_cast<uint32_t>(names.size());
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; i < top.size() && rs.unmapped.topKernels.size() < 5; ++i)
    if (std::find(rs.unmapped.topKernels.begin(), rs.unmapped.topKernels.end(), top[i].second) ==
        rs.unmapped.topKernels.end())
      rs.unmapped.topKernels.push_back(top[i].second);
}

}  // namespace

Result<std::optional<ResultSet>> loadFromStore(const std::filesystem::path& workspace) {
  std::error_code ec;
  auto dbPath = store::Store::dbPathFor(workspace);
  if (!std::filesystem::exists(dbPath, ec)) return std::optional<ResultSet>();
  auto st = store::Store::openFile(dbPath);
  if (!st) return st.error();
  auto runs = st->runs(20);
  if (!runs) return runs.error();
  // Paths with spans in recent runs (latestFileResults then picks each file's newest round).
  std::set<std::string> paths;
  const store::RunInfo* newest = nullptr;
  int64_t newestRound = 0;
  for (const auto& r : *runs) {
    auto rounds = st->rounds(r.id);
    if (!rounds) return rounds.error();
    for (const auto& rd : *rounds) {
      auto spans = st->spans(rd.id);
      if (!spans) return spans.error();
      for (const auto& s : *spans) paths.insert(s.path);
      if (!spans->empty() && !newest) newest = &r;
      if (newest == &r) newestRound = std::max(newestRound, rd.id);
    }
  }
  if (paths.empty() || !newest) return std::optional<ResultSet>();

  ResultSet rs;
  for (const auto& path : paths) {
    auto fr = st->latestFileResults(path);
    if (!fr) return fr.error();
    if (!*fr) continue;
    const auto& f = **fr;
    FileResult file;
    file.path = path;
    if (!f.snapshotId.empty()) {
      auto text = st->snapshot(f.snapshotId);
      if (!text) return text.error();
      if (*text) {
        file.snapshot = std::move(**text);
        file.hasSnapshot = true;
      }
    }
    auto roundSpans = st->spans(f.round.id);
    if (!roundSpans) return roundSpans.error();
    addLines(file, f, *roundSpans);
    computeFunctions(file, file.hasSnapshot ? functionSpans(file.snapshot) : std::vector<FunctionSpan>{});
    addPreviousRuns(rs, *st, file, f.run.id);
    if (rs.provenance.runId.empty() || f.run.id == newest->id) fillProvenance(rs, f);
    std::sort(file.lines.begin(), file.lines.end(),
              [](const LineResult& a, const LineResult& b) { return a.line < b.line; });
    rs.files.push_back(std::move(file));
  }
  addUnmapped(rs, *st, newestRound);
  std::sort(rs.files.begin(), rs.files.end(), [](const FileResult& a, const FileResult& b) { return a.path < b.path; });
  return std::optional<ResultSet>(std::move(rs));
}

}  // namespace kl::results
