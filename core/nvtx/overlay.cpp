#include "core/nvtx/overlay.h"

#include <fstream>
#include <sstream>

namespace kl::nvtx {

Result<OverlayFile> instrumentFile(std::string relPath, std::string diskText, std::span<const RangeRequest> requests,
                                   const OverlayOptions& options) {
  auto disk = SourceFile::parse(std::move(diskText));
  if (!disk) return disk.error();
  auto stripped = strip(**disk);
  if (!stripped) return Error::invalid(relPath + ": " + stripped.error().message);
  python::SourceFilePtr original = *disk;
  bool hadRanges = !stripped->ranges.empty() || stripped->removedImport;
  if (hadRanges) {
    auto p = SourceFile::parse(stripped->text);
    if (!p) return p.error();
    original = std::move(*p);
  }
  std::vector<RangeRequest> all;
  for (const auto& r : stripped->ranges) all.push_back(r.placed.request());
  for (RangeRequest r : requests) {
    if (r.kind == RangeRequest::Kind::Statements) {
      r.firstLine = stripped->lines.originalLine(r.firstLine);
      r.lastLine = stripped->lines.originalLine(r.lastLine);
    } else if (r.defLine) {
      r.defLine = stripped->lines.originalLine(*r.defLine);
    }
    all.push_back(std::move(r));
  }
  Options opt;
  opt.relPath = relPath;
  opt.skipUnwrappable = options.skipUnwrappable;
  opt.verify = options.verify;
  auto inst = instrument(*original, all, opt);
  if (!inst) return Error{inst.error().code, relPath + ": " + inst.error().message};
  OverlayFile out;
  out.relPath = std::move(relPath);
  out.original = original->text();
  out.text = std::move(inst->text);
  out.lines = std::move(inst->lines);
  out.ranges = std::move(inst->ranges);
  for (const auto& r : out.ranges) out.requests.push_back(r.request());
  out.skipped = std::move(inst->skipped);
  out.diskLines = std::move(stripped->lines);
  return out;
}

Result<Overlay> buildOverlay(const std::filesystem::path& root, std::span<const FilePlan> plan,
                             const OverlayOptions& options) {
  Overlay out;
  for (const FilePlan& fp : plan) {
    auto path = resolveInWorkspace(root, fp.relPath);
    if (!path) return path.error();
    std::ifstream in(*path, std::ios::binary);
    if (!in) return Error::io(fp.relPath + ": cannot read " + path->string());
    std::ostringstream ss;
    ss << in.rdbuf();
    if (out.files.count(fp.relPath))
      return Error::invalid(fp.relPath + ": planned twice; merge its requests into one FilePlan");
    auto f = instrumentFile(fp.relPath, ss.str(), fp.ranges, options);
    if (!f) return f.error();
    out.files.emplace(fp.relPath, std::move(*f));
  }
  return out;
}

}  // namespace kl::nvtx
