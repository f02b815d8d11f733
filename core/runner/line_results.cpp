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

store::KernelStat kernelStat(const attribution::KernelEntry& k) {
  return store::KernelStat{k.name,     k.shortName, profile::gpuOpKindName(k.kind), k.launches, k.gpuNs,
                           attribution::passName(k.pass)};
}

}  // namespace

Result<store::LineResults> lineResults(const attribution::RangeTable& table, const LineResultOptions& opts) {
  store::LineResults out;
  out.emulated = table.emulated;
  out.warnings = table.warnings;
  out.totalOps = table.totalOps;
  out.totalGpuNs = table.totalGpuNs;
  out.mappedOps = table.mappedOps;
  out.klRanges = table.invocations;
  out.badRangeNames = table.badRangeNames;
  for (const auto& u : table.unmapped)
    out.unmapped.push_back(store::UnmappedKernel{u.name, profile::gpuOpKindName(u.kind),
                                                 std::string(attribution::unmappedReasonName(u.reason)), u.launches,
                                                 u.gpuNs});

  std::map<std::string, store::SpanResult> spans;  // by range name
  for (const auto& e : table.ranges) {
    if (opts.cancel.isCancelled()) return Error::cancelled();
    store::SpanResult& r = spans[e.name];
    r.rangeName = e.name;
    r.path = e.path;
    r.firstLine = e.firstLine;
    r.lastLine = e.lastLine;
    r.label = e.label;
    r.parentRange = e.parentRange;
    r.depth = e.depth;
    r.leaf = e.leaf;
    r.invocations = e.invocations;
    r.launches = e.launches;
    r.gpuNs = e.gpuNs;
    r.distinctKernels = e.distinctKernels();
    r.exclusiveLaunches = e.exclusiveLaunches;
    r.exclusiveGpuNs = e.exclusiveGpuNs;
    r.exclusiveBackwardGpuNs = e.exclusiveBackwardGpuNs;
    r.minKernelsPerInvocation = e.minKernelsPerInvocation;
    r.maxKernelsPerInvocation = e.maxKernelsPerInvocation;
    r.distinctKernelSets = static_cast<uint32_t>(e.kernelSets.size());
    for (const auto& set : e.kernelSets) {
      if (r.kernelSets.size() >= opts.maxKernelSets) break;
      r.kernelSets.push_back(set.kernels);
    }
    for (const auto& k : e.kernels) r.kernels.push_back(kernelStat(k));
  }

  // Ranges the overlay placed that never ran.
  if (opts.overlay) {
    for (const auto& [rel, f] : opts.overlay->files) {
      for (const auto& pr : f.ranges) {
        if (spans.count(pr.name)) continue;
        auto p = nvtx::parseName(pr.name);
        if (!p) continue;
        store::SpanResult& r = spans[pr.name];
        r.rangeName = pr.name;
        r.path = p->path;
        r.firstLine = p->firstLine;
        r.lastLine = p->lastLine;
        r.label = p->label;
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
  std::set<std::string> bodyNames;
  if (opts.overlay)
    for (const auto& [rel, f] : opts.overlay->files)
      for (const auto& pr : f.ranges)
        if (pr.kind == nvtx::RangeRequest::Kind::FunctionBody) bodyNames.insert(pr.name);

  for (auto& [name, r] : spans) {
    r.functionBody = bodyNames.count(name) > 0;
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
  return out;
}

}  // namespace kl::runner
