#include "core/results/from_profile.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <system_error>
#include <unordered_map>

#include "core/analysis/callsite.h"
#include "core/analysis/sync.h"
#include "core/attribution/attribution.h"
#include "core/nvtx/naming.h"
#include "core/profile/reader.h"
#include "core/python/source_file.h"

namespace kl::results {

namespace {

using profile::kNone;
using profile::StrId;

struct KernelAcc {
  KernelStat stat;
  std::set<uint32_t> streams;
};

struct LineAcc {
  uint32_t lastLine = 0;
  std::string label;
  int64_t gpuNs = 0;
  uint64_t ops = 0;
  std::set<uint32_t> invocations;  // range indices
  std::map<StrId, KernelAcc> kernels;
  int64_t syncNs = 0;
  uint32_t syncCalls = 0;
};

// (path, 0-based line) -> accumulator
using Acc = std::map<std::string, std::map<uint32_t, LineAcc>>;

void addOp(const profile::ProfileModel& m, uint32_t i, LineAcc& acc) {
  const auto& op = m.gpuOps[i];
  int64_t d = op.duration();
  acc.gpuNs += d;
  acc.ops += 1;
  auto [it, fresh] = acc.kernels.try_emplace(op.name);
  KernelAcc& k = it->second;
  const auto* kd = m.kernel(op);
  if (fresh) {
    k.stat.name = std::string(m.shortName(op));
    k.stat.fullName = kd && kd->demangledName != profile::kEmptyStr
                          ? std::string(m.str(kd->demangledName))
                          : std::string(m.str(op.name));
    if (k.stat.name.empty()) k.stat.name = k.stat.fullName;
    k.stat.kind = profile::gpuOpKindName(op.kind);
    k.stat.minNs = d;
    k.stat.maxNs = d;
    if (kd) {
      for (int a = 0; a < 3; ++a) {
        k.stat.grid[a] = kd->grid[a];
        k.stat.block[a] = kd->block[a];
      }
    }
  } else {
    k.stat.minNs = std::min(k.stat.minNs, d);
    k.stat.maxNs = std::max(k.stat.maxNs, d);
    if (kd) {
      for (int a = 0; a < 3; ++a)
        if (kd->grid[a] != k.stat.grid[a] || kd->block[a] != k.stat.block[a]) k.stat.shapeVaries = true;
    }
  }
  k.stat.launches += 1;
  k.stat.totalNs += d;
  k.streams.insert(op.streamId);
}

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

}  // namespace

Result<ResultSet> buildFromProfile(const profile::ProfileModel& m, const BuildOptions& opts) {
  ResultSet rs;
  std::string fileName = std::filesystem::path(opts.profilePath).filename().string();
  if (fileName.empty()) fileName = "profile";

  bool hasKl = false;
  for (const auto& r : m.ranges)
    if (nvtx::isManagedName(m.str(r.text))) {
      hasKl = true;
      break;
    }
  if (!hasKl && m.pyFrames.empty())
    return Error::invalid(fileName +
                          ": no kl: ranges and no python_function stacks: nothing maps to source "
                          "lines (profile with kernlens, or a torch.profiler trace with_stack=True)");

  attribution::Options ao;
  ao.cancel = opts.cancel;
  if (hasKl) ao.namePrefix = std::string(nvtx::kNamePrefix);
  ao.pythonFrames = !hasKl;
  auto attr = attribution::attribute(m, ao);
  if (!attr) return attr.error();
  const auto& a = *attr;

  auto matchPath = [&](std::string_view recorded) -> std::optional<std::string> {
    if (!opts.matcher) return std::nullopt;
    return opts.matcher->match(recorded);
  };

  Acc acc;
  std::map<StrId, std::pair<int64_t, uint64_t>> unmappedByName;
  std::unordered_map<StrId, std::optional<std::pair<std::string, nvtx::RangeName>>> nameCache;
  std::unordered_map<StrId, std::optional<std::string>> fileCache;

  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    if ((i & 0xFFFF) == 0 && opts.cancel.isCancelled()) return Error::cancelled();
    const auto& op = m.gpuOps[i];
    rs.totalGpuNs += op.duration();
    rs.totalOps += 1;
    LineAcc* target = nullptr;
    if (hasKl) {
      uint32_t r = a.innermost(i);
      if (r != kNone) {
        StrId text = m.ranges[r].text;
        auto it = nameCache.find(text);
        if (it == nameCache.end()) {
          std::optional<std::pair<std::string, nvtx::RangeName>> v;
          if (auto parsed = nvtx::parseName(m.str(text)))
            if (auto p = matchPath(parsed->path)) v.emplace(*p, *parsed);
          it = nameCache.emplace(text, std::move(v)).first;
        }
        if (it->second) {
          const auto& [path, name] = *it->second;
          LineAcc& la = acc[path][name.firstLine - 1];
          la.lastLine = name.lastLine - 1;
          la.label = name.label;
          la.invocations.insert(r);
          target = &la;
        }
      }
    } else {
      uint32_t f = a.op(i).pyFrame;
      for (int guard = 0; f != kNone && guard < 256; ++guard) {
        const auto& fr = m.pyFrames[f];
        auto it = fileCache.find(fr.file);
        if (it == fileCache.end())
          it = fileCache.emplace(fr.file, fr.file == profile::kEmptyStr
                                              ? std::nullopt
                                              : matchPath(m.str(fr.file))).first;
        if (it->second && fr.line > 0) {
          LineAcc& la = acc[*it->second][static_cast<uint32_t>(fr.line - 1)];
          la.lastLine = static_cast<uint32_t>(fr.line - 1);
          if (la.label.empty()) la.label = std::string(m.str(fr.function));
          target = &la;
          break;
        }
        f = fr.parent;
      }
    }
    if (target) {
      addOp(m, i, *target);
    } else {
      auto& u = unmappedByName[op.name];
      u.first += op.duration();
      u.second += 1;
      rs.unmapped.ops += 1;
      rs.unmapped.gpuNs += op.duration();
    }
  }

  // Sync calls -> the line that made them (kl: range, else the innermost user Python frame).
  {
    std::unordered_map<uint32_t, const profile::MemcpyDetail*> copyOf;
    for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
      const auto& op = m.gpuOps[i];
      if (op.kind == profile::GpuOpKind::Memcpy && op.detail < m.memcpys.size() && a.op(i).launch != kNone)
        copyOf[a.op(i).launch] = &m.memcpys[op.detail];
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
      auto path = matchPath(site.file);
      if (!path) continue;
      LineAcc& la = acc[*path][static_cast<uint32_t>(site.line - 1)];
      if (la.ops == 0 && la.syncCalls == 0) la.lastLine = static_cast<uint32_t>(site.line - 1);
      la.syncNs += m.apiCalls[calls[k]].end - m.apiCalls[calls[k]].start;
      ++la.syncCalls;
    }
  }

  rs.unmapped.distinctKernels = static_cast<uint32_t>(unmappedByName.size());
  std::vector<std::pair<int64_t, std::string>> top;
  for (const auto& [name, v] : unmappedByName) top.emplace_back(v.first, std::string(m.str(name)));
  std::sort(top.begin(), top.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  for (size_t k = 0; k < top.size() && k < 5; ++k) rs.unmapped.topKernels.push_back(top[k].second);

  for (auto& [path, lines] : acc) {
    FileResult fr;
    fr.path = path;
    if (opts.textOf)
      if (auto text = opts.textOf(path)) {
        fr.snapshot = std::move(*text);
        fr.hasSnapshot = true;
      }
    python::SourceFilePtr src;
    if (fr.hasSnapshot)
      if (auto parsed = python::SourceFile::parse(fr.snapshot)) src = *parsed;
    const python::Module* mod = src ? &src->model() : nullptr;
    for (auto& [line, la] : lines) {
      LineResult lr;
      lr.line = line;
      lr.lastLine = std::max(line, la.lastLine);
      lr.label = la.label;
      lr.gpuNs = la.gpuNs;
      lr.ops = la.ops;
      lr.invocations = static_cast<uint32_t>(la.invocations.size());
      lr.syncNs = la.syncNs;
      lr.syncCalls = la.syncCalls;
      for (auto& [id, k] : la.kernels) {
        k.stat.streams.assign(k.streams.begin(), k.streams.end());
        lr.kernels.push_back(std::move(k.stat));
      }
      std::sort(lr.kernels.begin(), lr.kernels.end(), [](const KernelStat& x, const KernelStat& y) {
        return x.totalNs != y.totalNs ? x.totalNs > y.totalNs : x.name < y.name;
      });
      lr.refinable = isRefinable(mod, lr.line, lr.lastLine);
      fr.lines.push_back(std::move(lr));
    }
    std::vector<FunctionSpan> spans;
    if (mod)
      for (const auto& f : mod->functions)
        if (!f.qualName.empty()) spans.push_back({f.qualName, f.defLine, f.lines.last});
    computeFunctions(fr, spans);
    rs.files.push_back(std::move(fr));
  }

  auto& p = rs.provenance;
  p.runId = "profile:" + fileName;
  p.source = hasKl ? "kl-ranges" : "python-stacks";
  p.emulated = m.meta.emulated;
  p.backend = m.meta.emulated ? "emulate"
              : m.meta.format == profile::SourceFormat::Nsys ? "nsys"
                                                              : "torch";
  p.profilePath = opts.profilePath;
  p.gpu = gpuNames(m);
  std::error_code ec;
  auto mtime = std::filesystem::last_write_time(opts.profilePath, ec);
  if (!ec)
    p.createdUnix = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::file_clock::to_sys(mtime).time_since_epoch())
                        .count();
  return rs;
}

Result<ResultSet> loadProfile(const std::filesystem::path& path, const BuildOptions& opts) {
  profile::ReadOptions ro;
  ro.cancel = opts.cancel;
  auto model = profile::readProfile(path, ro);
  if (!model) return model.error();
  BuildOptions o = opts;
  if (o.profilePath.empty()) o.profilePath = path.string();
  return buildFromProfile(*model, o);
}

}  // namespace kl::results
