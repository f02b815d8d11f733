#include "core/runner/line_results.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/nvtx/engine.h"
#include "core/nvtx/file_io.h"
#include "core/nvtx/naming.h"
#include "core/python/source_file.h"

namespace kl::runner {
namespace {

using profile::StrId;

struct SpanAgg {
  store::SpanResult r;
  std::set<StrId> kernelsInclusive;
  std::set<std::vector<StrId>> sets;
  bool any = false;
  std::map<std::string, store::KernelStat> excl;  // by op name
};

/// Per file: the original text's model and its disk-line map, for functions and disk lines.
struct FileInfo {
  python::SourceFilePtr original;
  const nvtx::LineMap* diskLines = nullptr;
  nvtx::LineMap ownDiskLines;
  bool loaded = false;
};

std::string functionAtLine(const python::SourceFile& f, uint32_t line0) {
  const auto& li = f.lines();
  if (line0 >= li.lineCount()) return "";
  uint32_t off = li.lineStart(line0);
  const std::string& t = f.text();
  while (off < t.size() && (t[off] == ' ' || t[off] == '\t')) ++off;
  int32_t fn = f.model().functionAt(off);
  return fn == python::kNone ? "" : f.model().functions[static_cast<size_t>(fn)].qualName;
}

}  // namespace

Result<store::LineResults> lineResults(const profile::ProfileModel& model, const LineResultOptions& opts) {
  attribution::Options ao;
  ao.namePrefix = std::string(nvtx::kNamePrefix);
  ao.cpuOp = false;
  ao.cancel = opts.cancel;
  auto attr = attribution::attribute(model, ao);
  if (!attr) return attr.error();
  return lineResults(model, *attr, opts);
}

Result<store::LineResults> lineResults(const profile::ProfileModel& model, const attribution::Attribution& attr,
                                       const LineResultOptions& opts) {
  store::LineResults out;
  out.emulated = model.meta.emulated;
  out.warnings = model.meta.warnings;
  const auto& rstats = attr.ranges();

  // Which ranges are managed (by StrId) and their parsed names.
  std::unordered_map<StrId, std::optional<nvtx::RangeName>> parsed;
  auto managed = [&](uint32_t r) -> const std::optional<nvtx::RangeName>* {
    if (r >= model.ranges.size()) return nullptr;
    StrId t = model.ranges[r].text;
    auto it = parsed.find(t);
    if (it == parsed.end()) {
      std::string_view name = model.str(t);
      if (!nvtx::isManagedName(name)) {
        it = parsed.emplace(t, std::nullopt).first;
        return nullptr;
      }
      auto p = nvtx::parseName(name);
      if (!p) out.badRangeNames.emplace_back(name);
      it = parsed.emplace(t, p ? std::optional<nvtx::RangeName>(*p) : std::nullopt).first;
    }
    if (!nvtx::isManagedName(model.str(t))) return nullptr;
    return &it->second;
  };

  std::map<std::string, SpanAgg> spans;  // by range name
  for (uint32_t r = 0; r < model.ranges.size(); ++r) {
    if (r % 4096 == 0 && opts.cancel.isCancelled()) return Error::cancelled();
    const auto& rg = model.ranges[r];
    if (rg.kind == profile::RangeKind::NvtxMark || rg.kind == profile::RangeKind::CpuOp) continue;
    const auto* p = managed(r);
    if (!p) continue;
    ++out.klRanges;
    if (!*p) continue;
    std::string name(model.str(rg.text));
    SpanAgg& a = spans[name];
    if (!a.any) {
      a.any = true;
      a.r.rangeName = name;
      a.r.path = (*p)->path;
      a.r.firstLine = (*p)->firstLine;
      a.r.lastLine = (*p)->lastLine;
      a.r.label = (*p)->label;
      a.r.minKernelsPerInvocation = UINT32_MAX;
    }
    ++a.r.invocations;
    if (r < rstats.size()) {
      const auto& s = rstats[r];
      a.r.launches += s.ops;
      a.r.gpuNs += s.inclusiveGpuNs;
      auto ks = attr.kernelSet(r);
      std::vector<StrId> set(ks.begin(), ks.end());
      a.kernelsInclusive.insert(set.begin(), set.end());
      a.r.minKernelsPerInvocation = std::min<uint32_t>(a.r.minKernelsPerInvocation, static_cast<uint32_t>(set.size()));
      a.r.maxKernelsPerInvocation = std::max<uint32_t>(a.r.maxKernelsPerInvocation, static_cast<uint32_t>(set.size()));
      a.sets.insert(std::move(set));
      // Parent: the tightest enclosing kl: range.
      uint32_t par = s.parent;
      while (par != profile::kNone && par < model.ranges.size() && !managed(par)) par = rstats[par].parent;
      if (par != profile::kNone && par < model.ranges.size() && a.r.parentRange.empty()) {
        a.r.parentRange = std::string(model.str(model.ranges[par].text));
      }
    }
  }

  // Ops: exclusive owner = innermost kl: range of the stack; else unmapped with a reason.
  std::map<std::pair<std::string, std::string>, store::UnmappedKernel> unmapped;
  for (uint32_t i = 0; i < model.gpuOps.size(); ++i) {
    if (i % 8192 == 0 && opts.cancel.isCancelled()) return Error::cancelled();
    const auto& op = model.gpuOps[i];
    ++out.totalOps;
    out.totalGpuNs += op.duration();
    std::string opName(model.str(op.name));
    const char* kind = profile::gpuOpKindName(op.kind);
    auto stack = i < attr.ops().size() ? attr.stack(i) : std::span<const uint32_t>();
    const std::optional<nvtx::RangeName>* owner = nullptr;
    uint32_t ownerRange = profile::kNone;
    for (size_t k = stack.size(); k-- > 0;) {
      if (const auto* p = managed(stack[k])) {
        owner = p;
        ownerRange = stack[k];
        break;
      }
    }
    std::string reason;
    if (!owner) {
      bool noLaunch = i < attr.ops().size() && attr.op(i).reason == attribution::Unattributed::NoLaunchCall;
      reason = noLaunch ? "no_launch_call" : "outside_kl_ranges";
    } else if (!*owner) {
      reason = "bad_range_name";
    }
    if (!reason.empty()) {
      auto& u = unmapped[{opName, reason}];
      u.name = opName;
      u.kind = kind;
      u.reason = reason;
      ++u.launches;
      u.gpuNs += op.duration();
      continue;
    }
    ++out.mappedOps;
    SpanAgg& a = spans[std::string(model.str(model.ranges[ownerRange].text))];
    ++a.r.exclusiveLaunches;
    a.r.exclusiveGpuNs += op.duration();
    auto& k = a.excl[opName];
    if (k.name.empty()) {
      k.name = opName;
      k.shortName = std::string(model.shortName(op));
      k.kind = kind;
    }
    ++k.launches;
    k.gpuNs += op.duration();
  }

  // Ranges the overlay placed that never ran.
  if (opts.overlay) {
    for (const auto& [rel, f] : opts.overlay->files) {
      for (const auto& pr : f.ranges) {
        if (spans.count(pr.name)) continue;
        auto p = nvtx::parseName(pr.name);
        if (!p) continue;
        SpanAgg& a = spans[pr.name];
        a.r.rangeName = pr.name;
        a.r.path = p->path;
        a.r.firstLine = p->firstLine;
        a.r.lastLine = p->lastLine;
        a.r.label = p->label;
      }
    }
  }

  // Files: functions and disk lines.
  std::map<std::string, FileInfo> files;
  auto fileInfo = [&](const std::string& rel) -> FileInfo& {
    FileInfo& fi = files[rel];
    if (fi.loaded) return fi;
    fi.loaded = true;
    const nvtx::OverlayFile* of = opts.overlay ? opts.overlay->find(rel) : nullptr;
    if (of) {
      if (auto sf = python::SourceFile::parse(of->original)) fi.original = *sf;
      fi.diskLines = &of->diskLines;
    } else if (!opts.workspace.empty()) {
      auto path = nvtx::resolveInWorkspace(opts.workspace, rel);
      if (!path) return fi;
      auto text = nvtx::readWholeFile(*path);
      if (!text) return fi;
      auto sf = python::SourceFile::parse(std::move(*text));
      if (!sf) return fi;
      auto st = nvtx::strip(**sf);
      if (st) {
        if (auto orig = python::SourceFile::parse(st->text)) fi.original = *orig;
        fi.ownDiskLines = st->lines;
        fi.diskLines = &fi.ownDiskLines;
      } else {
        fi.original = *sf;
      }
    }
    return fi;
  };
  std::set<std::string> parents;
  for (auto& [name, a] : spans)
    if (!a.r.parentRange.empty()) parents.insert(a.r.parentRange);
  std::set<std::string> bodyNames;
  if (opts.overlay)
    for (const auto& [rel, f] : opts.overlay->files)
      for (const auto& pr : f.ranges)
        if (pr.kind == nvtx::RangeRequest::Kind::FunctionBody) bodyNames.insert(pr.name);

  for (auto& [name, a] : spans) {
    store::SpanResult& r = a.r;
    if (r.minKernelsPerInvocation == UINT32_MAX) r.minKernelsPerInvocation = 0;
    r.distinctKernels = static_cast<uint32_t>(a.kernelsInclusive.size());
    r.distinctKernelSets = static_cast<uint32_t>(a.sets.size());
    for (const auto& set : a.sets) {
      if (r.kernelSets.size() >= opts.maxKernelSets) break;
      std::vector<std::string> names;
      for (StrId s : set) names.emplace_back(model.str(s));
      std::sort(names.begin(), names.end());
      r.kernelSets.push_back(std::move(names));
    }
    for (auto& [n, k] : a.excl) r.kernels.push_back(std::move(k));
    std::sort(r.kernels.begin(), r.kernels.end(), [](const store::KernelStat& x, const store::KernelStat& y) {
      return x.gpuNs != y.gpuNs ? x.gpuNs > y.gpuNs : x.name < y.name;
    });
    r.leaf = !parents.count(name);
    r.functionBody = bodyNames.count(name) > 0;
    // Depth among kl: ranges: follow the parent chain by name.
    int depth = 0;
    for (std::string p = r.parentRange; !p.empty() && depth < 256; ++depth) {
      auto it = spans.find(p);
      p = it == spans.end() ? "" : it->second.r.parentRange;
    }
    r.depth = depth;
    FileInfo& fi = fileInfo(r.path);
    r.diskFirst = r.firstLine;
    r.diskLast = r.lastLine;
    if (fi.diskLines && !fi.diskLines->toOriginal.empty()) {
      if (auto d = fi.diskLines->instrumentedLine(r.firstLine - 1)) r.diskFirst = *d + 1;
      if (auto d = fi.diskLines->instrumentedLine(r.lastLine - 1)) r.diskLast = *d + 1;
    }
    if (fi.original) r.function = functionAtLine(*fi.original, r.firstLine - 1);
    out.spans.push_back(std::move(r));
  }
  std::sort(out.spans.begin(), out.spans.end(), [](const store::SpanResult& x, const store::SpanResult& y) {
    if (x.path != y.path) return x.path < y.path;
    if (x.firstLine != y.firstLine) return x.firstLine < y.firstLine;
    if (x.lastLine != y.lastLine) return x.lastLine > y.lastLine;
    return x.rangeName < y.rangeName;
  });
  for (auto& [k, u] : unmapped) out.unmapped.push_back(std::move(u));
  std::sort(out.unmapped.begin(), out.unmapped.end(), [](const store::UnmappedKernel& x, const store::UnmappedKernel& y) {
    return x.gpuNs != y.gpuNs ? x.gpuNs > y.gpuNs : std::tie(x.name, x.reason) < std::tie(y.name, y.reason);
  });
  std::sort(out.badRangeNames.begin(), out.badRangeNames.end());
  return out;
}

}  // namespace kl::runner
