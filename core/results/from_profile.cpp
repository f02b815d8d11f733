#include "core/results/from_profile.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <system_error>
#include <tuple>
#include <unordered_map>

#include "core/analysis/callsite.h"
#include "core/analysis/sync.h"
#include "core/attribution/range_table.h"
#include "core/nvtx/naming.h"
#include "core/profile/reader.h"
#include "core/python/source_file.h"
#include "core/support/saturating.h"

namespace kl::results {

namespace {

using profile::kNone;
using profile::StrId;

struct LineAcc {
  uint32_t lastLine = 0;
  std::string label;
  int64_t gpuNs = 0;
  int64_t backwardNs = 0;
  uint64_t ops = 0;
  uint32_t invocations = 0;  // range invocations that launched here (kl: ranges)
  /// By (op name, pass, no forward owner): a line's backward kernels are separate entries.
  std::map<std::tuple<std::string, attribution::Pass, bool>, attribution::KernelEntry> kernels;
  int64_t syncNs = 0;
  uint32_t syncCalls = 0;
};

// (path, 0-based line) -> accumulator
using Acc = std::map<std::string, std::map<uint32_t, LineAcc>>;

/// Whether a source range [first, last] could be split further: it is (or starts with) a
/// compound statement, or holds several statements.
bool isRefinable(const python::Module* mod, uint32_t first, uint32_t last) {
  if (!mod) return last > first;
  int32_t s = mod->statementAtLine(first);
  if (s == python::kNone) return last > first;
  // statementAtLine gives the innermost statement; climb to the one starting on `first`.
  int32_t cur = s;
  while (cur != python::kNone) {
    const auto& c = mod->statements[static_cast<size_t>(cur)];
    if (c.lines.first < first) break;
    s = cur;
    cur = c.parent;
  }
  const auto& top = mod->statements[static_cast<size_t>(s)];
  return top.compound || top.lines.last < last;
}

std::string gpuNames(const profile::ProfileModel& m) {
  std::set<std::string> names;
  for (const auto& g : m.gpus)
    if (g.name != profile::kEmptyStr) names.insert(std::string(m.str(g.name)));
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool hasManagedRanges(const profile::ProfileModel& m) {
  for (const auto& r : m.ranges)
    if (nvtx::isManagedName(m.str(r.text))) return true;
  return false;
}

/// What one build accumulates: the lines, the ops no workspace line owns (by name), and where a
/// recorded path lies in the workspace.
struct Build {
  const profile::ProfileModel& m;
  const BuildOptions& opts;
  ResultSet& rs;
  Acc acc;
  std::map<std::string, std::pair<int64_t, uint64_t>> unmappedByName;

  std::optional<std::string> matchPath(std::string_view recorded) const {
    if (!opts.matcher) return std::nullopt;
    return opts.matcher->match(recorded);
  }
  void unmapped(const std::string& name, int64_t ns, uint64_t ops) {
    auto& u = unmappedByName[name];
    addTo(u.first, ns);
    u.second += ops;
    rs.unmapped.ops += ops;
    addTo(rs.unmapped.gpuNs, ns);
  }
};

/// kl: ranges: the round's per-range aggregation; each range's exclusive ops go to its first line.
Result<void> accumulateRanges(Build& b) {
  auto table = attribution::tabulateRanges(b.m, b.opts.cancel);
  if (!table) return table.error();
  b.rs.totalGpuNs = table->totalGpuNs;
  b.rs.totalOps = static_cast<uint64_t>(table->totalOps);
  std::map<std::string, std::optional<std::string>> fileCache;
  for (const auto& e : table->ranges) {
    if (e.exclusiveLaunches == 0) continue;
    auto it = fileCache.find(e.path);
    if (it == fileCache.end()) it = fileCache.emplace(e.path, b.matchPath(e.path)).first;
    if (!it->second) {
      for (const auto& k : e.kernels) b.unmapped(k.name, k.gpuNs, static_cast<uint64_t>(k.launches));
      continue;
    }
    LineAcc& la = b.acc[*it->second][e.firstLine - 1];
    la.lastLine = e.lastLine - 1;
    la.label = e.label;
    addTo(la.gpuNs, e.exclusiveGpuNs);
    addTo(la.backwardNs, e.exclusiveBackwardGpuNs);
    la.ops += static_cast<uint64_t>(e.exclusiveLaunches);
    for (const auto& v : e.variants) la.invocations += v.invocations;
    for (const auto& k : e.kernels)
      attribution::mergeKernel(la.kernels[std::make_tuple(k.name, k.pass, k.noForwardOwner)], k);
  }
  for (const auto& u : table->unmapped) b.unmapped(u.name, u.gpuNs, static_cast<uint64_t>(u.launches));
  return {};
}

/// Python stacks: each op goes to the innermost workspace frame of its launch call's stack.
Result<void> accumulateStacks(Build& b) {
  const auto& m = b.m;
  attribution::Options ao;
  ao.cancel = b.opts.cancel;
  ao.pythonFrames = true;
  auto attr = attribution::attribute(m, ao);
  if (!attr) return attr.error();
  const auto& a = *attr;
  std::unordered_map<StrId, std::optional<std::string>> fileCache;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    if ((i & 0xFFFF) == 0 && b.opts.cancel.isCancelled()) return Error::cancelled();
    const auto& op = m.gpuOps[i];
    addTo(b.rs.totalGpuNs, op.duration());
    b.rs.totalOps += 1;
    LineAcc* target = nullptr;
    uint32_t f = a.op(i).pyFrame;
    for (int guard = 0; f != kNone && guard < 256; ++guard) {
      const auto& fr = m.pyFrames[f];
      auto it = fileCache.find(fr.file);
      if (it == fileCache.end())
        it = fileCache.emplace(fr.file, fr.file == profile::kEmptyStr ? std::nullopt : b.matchPath(m.str(fr.file)))
                 .first;
      if (it->second && fr.line > 0) {
        LineAcc& la = b.acc[*it->second][static_cast<uint32_t>(fr.line - 1)];
        la.lastLine = static_cast<uint32_t>(fr.line - 1);
        if (la.label.empty()) la.label = std::string(m.str(fr.function));
        target = &la;
        break;
      }
      f = fr.parent;
    }
    if (target) {
      auto [pass, unowned] = attribution::opPass(a, i);
      addTo(target->gpuNs, op.duration());
      if (attribution::isBackwardPass(pass)) addTo(target->backwardNs, op.duration());
      target->ops += 1;
      attribution::addLaunch(target->kernels[std::make_tuple(std::string(m.str(op.name)), pass, unowned)], m, i, &a);
    } else {
      b.unmapped(std::string(m.str(op.name)), op.duration(), 1);
    }
  }
  return {};
}

/// Sync calls -> the line that made them (kl: range, else the innermost user Python frame).
void accumulateSyncCalls(Build& b, bool hasKl) {
  const auto& m = b.m;
  std::unordered_map<uint32_t, const profile::MemcpyDetail*> copyOf;
  const auto launchOf = attribution::linkLaunches(m);
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    const auto& op = m.gpuOps[i];
    if (op.kind == profile::GpuOpKind::Memcpy && op.detail < m.memcpys.size() && launchOf[i] != kNone)
      copyOf[launchOf[i]] = &m.memcpys[op.detail];
  }
  std::vector<uint32_t> calls;
  for (uint32_t c = 0; c < m.apiCalls.size(); ++c) {
    auto it = copyOf.find(c);
    analysis::SyncKind kind;
    if (analysis::syncKindOf(m.str(m.apiCalls[c].name), it == copyOf.end() ? nullptr : it->second, kind))
      calls.push_back(c);
  }
  auto sites = analysis::callSites(m, calls);
  for (size_t k = 0; k < calls.size(); ++k) {
    const auto& site = sites[k];
    if (site.file.empty() || site.line <= 0 || (hasKl ? site.via != "kl" : site.via != "python")) continue;
    auto path = b.matchPath(site.file);
    if (!path) continue;
    LineAcc& la = b.acc[*path][static_cast<uint32_t>(site.line - 1)];
    if (la.ops == 0 && la.syncCalls == 0) la.lastLine = static_cast<uint32_t>(site.line - 1);
    addTo(la.syncNs, m.apiCalls[calls[k]].end - m.apiCalls[calls[k]].start);
    ++la.syncCalls;
  }
}

/// The five unmapped kernel names with the most time, and their count.
void summariseUnmapped(Build& b) {
  b.rs.unmapped.distinctKernels = static_cast<uint32_t>(b.unmappedByName.size());
  std::vector<std::pair<int64_t, std::string>> top;
  for (const auto& [name, v] : b.unmappedByName) top.emplace_back(v.first, name);
  std::sort(top.begin(), top.end(),
            [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
  for (size_t k = 0; k < top.size() && k < 5; ++k) b.rs.unmapped.topKernels.push_back(top[k].second);
}

LineResult lineResultOf(const std::string& path, uint32_t line, const LineAcc& la, const python::Module* mod) {
  LineResult lr;
  lr.path = path;
  lr.line = line;
  lr.lastLine = std::max(line, la.lastLine);
  lr.label = la.label;
  lr.gpuNs = la.gpuNs;
  lr.backwardNs = la.backwardNs;
  lr.ops = la.ops;
  lr.invocations = la.invocations;
  lr.syncNs = la.syncNs;
  lr.syncCalls = la.syncCalls;
  for (const auto& [key, k] : la.kernels) lr.kernels.push_back(attribution::kernelStat(k));
  std::sort(lr.kernels.begin(), lr.kernels.end(), [](const KernelStat& x, const KernelStat& y) {
    return x.totalNs != y.totalNs ? x.totalNs > y.totalNs : x.name < y.name;
  });
  lr.refinable = isRefinable(mod, lr.line, lr.lastLine);
  return lr;
}

/// One file's results: its snapshot (BuildOptions::textOf), its lines and functions. Lines past
/// the end of the file as it is now (a stale or foreign profile) are not shown; their ops count
/// as unmapped.
FileResult fileResult(Build& b, const std::string& path, const std::map<uint32_t, LineAcc>& lines) {
  FileResult fr;
  fr.path = path;
  if (b.opts.textOf)
    if (auto text = b.opts.textOf(path)) {
      fr.snapshot = std::move(*text);
      fr.hasSnapshot = true;
    }
  python::SourceFilePtr src;
  if (fr.hasSnapshot)
    if (auto parsed = python::SourceFile::parse(fr.snapshot)) src = *parsed;
  const python::Module* mod = src ? &src->model() : nullptr;
  size_t lineCount = fr.hasSnapshot ? static_cast<size_t>(std::count(fr.snapshot.begin(), fr.snapshot.end(), '\n')) +
                                          (!fr.snapshot.empty() && fr.snapshot.back() != '\n')
                                    : SIZE_MAX;
  for (const auto& [line, la] : lines) {
    if (static_cast<size_t>(line) >= lineCount) {
      b.rs.unmapped.ops += la.ops;
      addTo(b.rs.unmapped.gpuNs, la.gpuNs);
      continue;
    }
    fr.lines.push_back(lineResultOf(fr.path, line, la, mod));
  }
  std::vector<FunctionSpan> spans;
  if (mod)
    for (const auto& f : mod->functions)
      if (!f.qualName.empty()) spans.push_back({f.qualName, f.defLine, f.lines.last});
  computeFunctions(fr, spans);
  return fr;
}

void fillProvenance(Provenance& p, const profile::ProfileModel& m, const BuildOptions& opts,
                    const std::string& fileName, bool hasKl) {
  p.origin = ResultOrigin::LoadedProfile;
  p.profileFile = fileName;
  p.runId = "profile:" + fileName;
  p.source = hasKl ? AttributionSource::KlRanges : AttributionSource::PythonStacks;
  p.emulated = m.meta.emulated;
  p.backend = m.meta.emulated ? "emulate" : m.meta.format == profile::SourceFormat::Nsys ? "nsys" : "torch";
  p.profilePath = opts.profilePath;
  p.gpu = gpuNames(m);
  std::error_code ec;
  auto mtime = std::filesystem::last_write_time(opts.profilePath, ec);
  if (!ec)
    p.createdUnix =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::file_clock::to_sys(mtime).time_since_epoch())
            .count();
}

}  // namespace

bool mapsToSource(const profile::ProfileModel& m) { return !m.pyFrames.empty() || hasManagedRanges(m); }

Result<ResultSet> buildFromProfile(const profile::ProfileModel& m, const BuildOptions& opts) {
  ResultSet rs;
  std::string fileName = std::filesystem::path(opts.profilePath).filename().string();
  if (fileName.empty()) fileName = "profile";

  const bool hasKl = hasManagedRanges(m);
  if (!hasKl && m.pyFrames.empty())
    return Error::invalid(fileName +
                          ": no kl: ranges and no python_function stacks: nothing maps to source "
                          "lines (profile with kernlens, or a torch.profiler trace with_stack=True)");
  Build b{m, opts, rs, {}, {}};
  if (auto ok = hasKl ? accumulateRanges(b) : accumulateStacks(b); !ok) return ok.error();
  accumulateSyncCalls(b, hasKl);
  summariseUnmapped(b);
  for (const auto& [path, lines] : b.acc) rs.files.push_back(fileResult(b, path, lines));
  fillProvenance(rs.provenance, m, opts, fileName, hasKl);
  return rs;
}

}  // namespace kl::results
