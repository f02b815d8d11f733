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

}  // namespace

Result<store::RoundResults> lineResults(const attribution::RangeTable& table, const LineResultOptions& opts) {
  store::RoundResults out;
  out.emulated = table.emulated;
  out.warnings = table.warnings;
  out.totalOps = table.totalOps;
  out.totalGpuNs = table.totalGpuNs;
  out.mappedOps = table.mappedOps;
  out.klRanges = table.invocations;
  out.badRangeNames = table.badRangeNames;
  out.unmapped = table.unmapped;

  std::map<std::string, attribution::LineResult> spans;  // by range name
  for (const auto& e : table.ranges) {
    if (opts.cancel.isCancelled()) return Error::cancelled();
    spans[e.name] = attribution::lineResult(e, opts.maxKernelSets);
  }

  // Ranges the overlay placed that never ran.
  if (opts.overlay) {
    for (const auto& [rel, f] : opts.overlay->files) {
      for (const auto& pr : f.ranges) {
        if (spans.count(pr.name)) continue;
        auto p = nvtx::parseName(pr.name);
        if (!p) continue;
        attribution::LineResult& r = spans[pr.name];
        r.range.name = pr.name;
        r.path = p->path;
        r.range.firstLine = p->firstLine;
        r.range.lastLine = p->lastLine;
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
    r.body = bodyNames.count(name) > 0;
    FileInfo& fi = fileInfo(r.path);
    const uint32_t first = r.range.firstLine - 1, last = r.range.lastLine - 1;
    r.line = first;
    r.lastLine = last;
    if (fi.diskLines && !fi.diskLines->toOriginal.empty()) {
      if (auto d = fi.diskLines->instrumentedLine(first)) r.line = *d;
      if (auto d = fi.diskLines->instrumentedLine(last)) r.lastLine = *d;
    }
    if (fi.original) r.function = functionAtLine(*fi.original, first);
    out.spans.push_back(std::move(r));
  }
  std::sort(out.spans.begin(), out.spans.end(), [](const attribution::LineResult& x, const attribution::LineResult& y) {
    if (x.path != y.path) return x.path < y.path;
    if (x.range.firstLine != y.range.firstLine) return x.range.firstLine < y.range.firstLine;
    if (x.range.lastLine != y.range.lastLine) return x.range.lastLine > y.range.lastLine;
    return x.range.name < y.range.name;
  });
  return out;
}

}  // namespace kl::runner
