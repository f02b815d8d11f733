// Editor-level operations built on strip + instrument: every change is "strip to the original,
// change the set of range requests, instrument again", then one minimal replacement of the buffer.
// This keeps names, indentation and the import decision identical to what a profiling run uses.
#include <algorithm>

#include "core/nvtx/detail.h"
#include "core/nvtx/engine.h"
#include "core/nvtx/resolve.h"

namespace kl::nvtx {

using python::kNone;
using python::Module;

namespace {

struct Base {
  Stripped stripped;
  python::SourceFilePtr original;  // parse of stripped.text (shares nothing with the buffer)
};

Result<Base> stripAndParse(const SourceFile& file) {
  auto s = strip(file);
  if (!s) return s.error();
  auto p = SourceFile::parse(s->text);
  if (!p) return p.error();
  return Base{std::move(*s), std::move(*p)};
}

std::vector<RangeRequest> existingRequests(const Stripped& s) {
  std::vector<RangeRequest> out;
  for (const auto& r : s.ranges) out.push_back(r.placed.request());
  return out;
}

Result<FileEdit> reinstrument(const SourceFile& file, const SourceFile& original,
                              const std::vector<RangeRequest>& requests, const Options& opt) {
  auto inst = instrument(original, requests, opt);
  if (!inst) return inst.error();
  FileEdit fe;
  fe.newText = std::move(inst->text);
  fe.edits = minimalEdit(file.text(), fe.newText);
  fe.skipped = std::move(inst->skipped);
  fe.ranges = inst->ranges.size();
  return fe;
}

}  // namespace

Result<FileEdit> annotate(const SourceFile& file, std::span<const RangeRequest> requests, const Options& opt) {
  auto base = stripAndParse(file);
  if (!base) return base.error();
  std::vector<RangeRequest> all = existingRequests(base->stripped);
  const LineMap& map = base->stripped.lines;
  for (RangeRequest r : requests) {
    if (r.kind == RangeRequest::Kind::Statements) {
      r.firstLine = map.originalLine(r.firstLine);
      r.lastLine = map.originalLine(r.lastLine);
    } else if (r.defLine) {
      r.defLine = map.originalLine(*r.defLine);
    }
    all.push_back(std::move(r));
  }
  return reinstrument(file, *base->original, all, opt);
}

Result<FileEdit> stripEdit(const SourceFile& file) {
  auto s = strip(file);
  if (!s) return s.error();
  FileEdit fe;
  fe.newText = std::move(s->text);
  fe.edits = minimalEdit(file.text(), fe.newText);
  return fe;
}

Result<std::vector<RangeRequest>> refinedChildren(const SourceFile& original, const PlacedRange& range) {
  const Module& m = original.model();
  RangeRequest req = range.request();
  req.name.reset();
  auto r = detail::resolveRequest(original, req, "x");
  if (!r) return r.error();
  const std::string where = "the range at line " + std::to_string(range.original.first + 1);

  auto groupsOf = [&](int32_t block, uint32_t first, uint32_t last) {
    std::vector<RangeRequest> out;
    const auto& blk = m.blocks[block];
    for (auto [a, b] : detail::logicalGroups(original, block, first, last)) {
      const auto& sa = m.statements[blk.statements[a]];
      const auto& sb = m.statements[blk.statements[b]];
      uint32_t endLine = original.lines().toLineCol(original.lastCodeEnd(sb.bytes.start, sb.bytes.end) - 1).line;
      out.push_back(RangeRequest::statements(sa.lines.first, endLine));
    }
    return out;
  };

  auto groups = detail::logicalGroups(original, r->block, r->first, r->last);
  if (groups.size() >= 2) return groupsOf(r->block, r->first, r->last);
  const auto& blk = m.blocks[r->block];
  if (groups[0].first != groups[0].second)
    return Error::invalid(where + " holds one line of ';'-joined statements; nothing finer to wrap");
  const auto& s = m.statements[blk.statements[r->first]];
  if (!s.compound || s.blocks.empty())
    return Error::invalid(where + " holds a single simple statement; nothing finer to wrap");
  if (s.definesFunction != kNone) return Error::invalid(where + " holds a function definition; wrap its body instead");
  std::vector<RangeRequest> out;
  for (int32_t bi : s.blocks) {
    const auto& cb = m.blocks[bi];
    if (cb.statements.empty() || !detail::startsLogicalLine(original, bi, 0)) continue;
    uint32_t first = 0;
    // A class docstring and leading global/nonlocal stay out, as for function bodies.
    while (first < cb.statements.size()) {
      const auto& c = m.statements[cb.statements[first]];
      if (!(c.docstring || c.globalLike())) break;
      if (first + 1 < cb.statements.size() && !detail::startsLogicalLine(original, bi, first + 1)) break;
      ++first;
    }
    if (first >= cb.statements.size()) continue;
    auto g = groupsOf(bi, first, static_cast<uint32_t>(cb.statements.size() - 1));
    out.insert(out.end(), g.begin(), g.end());
  }
  if (out.empty())
    return Error::invalid(where +
                          " holds a compound statement whose bodies share its lines; "
                          "nothing finer to wrap");
  return out;
}

Result<FileEdit> refine(const SourceFile& file, uint32_t line, const Options& opt) {
  auto base = stripAndParse(file);
  if (!base) return base.error();
  const auto& ranges = base->stripped.ranges;
  int32_t target = kNone;
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (!ranges[i].lines.contains(line)) continue;
    if (target == kNone || ranges[i].lines.first >= ranges[target].lines.first)
      target = static_cast<int32_t>(i);  // later starts are inner (outer before inner)
  }
  if (target == kNone) return Error::notFound("no kernlens range at line " + std::to_string(line + 1));
  auto children = refinedChildren(*base->original, ranges[target].placed);
  if (!children) return children.error();
  std::vector<RangeRequest> all;
  for (size_t i = 0; i < ranges.size(); ++i)
    if (static_cast<int32_t>(i) != target) all.push_back(ranges[i].placed.request());
  for (auto& c : *children) all.push_back(std::move(c));
  return reinstrument(file, *base->original, all, opt);
}

Result<FileEdit> keep(const SourceFile& file, std::span<const RangeRequest> runRanges, const Options& opt,
                      std::optional<std::string_view> runOriginal) {
  auto base = stripAndParse(file);
  if (!base) return base.error();
  if (runOriginal && *runOriginal != base->stripped.text)
    return Error::invalid(
        "the file changed since the profiling run; re-run or re-plan before "
        "keeping its annotations");
  std::vector<RangeRequest> all = existingRequests(base->stripped);
  all.insert(all.end(), runRanges.begin(), runRanges.end());
  return reinstrument(file, *base->original, all, opt);
}

}  // namespace kl::nvtx
