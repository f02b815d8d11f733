// strip(): the exact inverse of instrument(), computed from one parse of the annotated text.
// Inner ranges are undone before outer ones (see instrument.cpp for the forward rules):
//   - a header `H with <api>("kl:..."):` EOL plus the first body line's H+unit is deleted (the
//     deletion runs from `with` to the first body statement);
//   - an inline header (`  # kl:inline=<gap>`) is deleted from the EOL after the def's ':' to the
//     body statement and the gap restored;
//   - every later body line (not blank, not inside a multi-line string) loses the unit after H
//     when it starts with H+unit, else a leading unit.
#include <algorithm>

#include "core/nvtx/detail.h"
#include "core/nvtx/engine.h"
#include "core/nvtx/naming.h"

namespace kl::nvtx {

using detail::Lines;
using python::kNone;
using python::Module;

namespace {

struct Managed {
  int32_t range = 0;  // sourceRanges() index
  int32_t stmt = 0;
  uint32_t headerLine = 0, firstBodyLine = 0, lastLine = 0;
  std::string h, unit;
  bool inlineBody = false;
  uint32_t delStart = 0, delEnd = 0;
  std::string restore;  // inline: the gap
  std::string name;
};

std::string at(uint32_t line) { return "line " + std::to_string(line + 1); }

/// One kernlens `with` range of the annotated text, read back: its header and body lines, indents,
/// and the deletion that undoes its header (an inline one restores the gap). An error when the
/// range was edited by hand so that strip() cannot invert it exactly.
Result<Managed> readManaged(const SourceFile& f, const Lines& lines, const SourceRange& r, size_t i) {
  const Module& m = f.model();
  const std::string& text = f.text();
  const auto& st = m.statements[r.statement];
  Managed g;
  g.range = static_cast<int32_t>(i);
  g.stmt = r.statement;
  g.headerLine = lines.lineOf(st.bytes.start);
  std::string where = at(g.headerLine);
  auto edited = [&](std::string why) {
    return Error::invalid(where + ": the kernlens range was edited (" + why + "); remove it by hand");
  };
  if (r.withItemCount != 1) return edited("extra with-items");
  auto decoded = decodeLiteral(r.nameText);
  g.name = decoded ? *decoded : (r.name ? *r.name : std::string());
  if (lines.wsEnd(g.headerLine) != st.bytes.start) return edited("the header shares its line");
  if (text.compare(st.bytes.start, 5, "with ") != 0 || st.bytes.start + 5 != r.callBytes.start)
    return edited("unexpected header");
  uint32_t colon = r.callBytes.end;
  if (colon >= text.size() || text[colon] != ':') return edited("unexpected header");
  uint32_t hEnd = lines.end(g.headerLine);
  std::string_view after = std::string_view(text).substr(colon + 1, hEnd - colon - 1);
  if (!after.empty()) {
    if (after.substr(0, detail::kInlineMarker.size()) != detail::kInlineMarker ||
        !detail::decodeGap(after.substr(detail::kInlineMarker.size()), g.restore))
      return edited("text after the header");
    g.inlineBody = true;
  }
  if (st.blocks.empty()) return edited("no body");
  const auto& body = m.blocks[st.blocks[0]];
  if (body.statements.empty() || body.sameLine) return edited("body on the header line");
  const auto& first = m.statements[body.statements[0]];
  g.firstBodyLine = g.headerLine + 1;
  if (lines.lineOf(first.bytes.start) != g.firstBodyLine || lines.wsEnd(g.firstBodyLine) != first.bytes.start ||
      lines.wsBegin(g.firstBodyLine) != lines.start(g.firstBodyLine))
    return edited("the body does not start on the next line");
  g.h = std::string(lines.ws(g.headerLine));
  std::string_view bws = lines.ws(g.firstBodyLine);
  if (bws.size() <= g.h.size() || bws.substr(0, g.h.size()) != g.h)
    return edited("the body is not indented under the header");
  g.unit = std::string(bws.substr(g.h.size()));
  g.lastLine = lines.lineOf(f.lastCodeEnd(st.bytes.start, st.bytes.end) - 1);
  if (g.inlineBody) {
    // EOL + H precede `with`, and ':' ends the previous line.
    uint32_t ls = lines.start(g.headerLine);
    if (g.headerLine == 0 || lines.wsBegin(g.headerLine) != ls) return edited("inline header");
    std::string_view eol = lines.eol(g.headerLine - 1);
    uint32_t eolStart = ls - static_cast<uint32_t>(eol.size());
    if (eol.empty() || eolStart == 0 || text[eolStart - 1] != ':') return edited("inline header");
    g.delStart = eolStart;
  } else {
    g.delStart = st.bytes.start;
  }
  g.delEnd = first.bytes.start;
  return g;
}

/// The deletion of each module-level `import torch  # kl:import` line kernlens added.
void removeImports(const SourceFile& f, const Lines& lines, std::vector<TextEdit>& edits, Stripped& out) {
  const Module& m = f.model();
  const std::string& text = f.text();
  for (int32_t si : m.moduleBlock().statements) {
    const auto& s = m.statements[si];
    if (s.kind != python::StatementKind::Import) continue;
    uint32_t l = lines.lineOf(s.bytes.start);
    if (lines.start(l) != s.bytes.start) continue;
    if (std::string_view(text).substr(s.bytes.start, lines.end(l) - s.bytes.start) != detail::kImportLine) continue;
    uint32_t e = l + 1 < lines.count() ? lines.start(l + 1) : static_cast<uint32_t>(text.size());
    edits.push_back({s.bytes.start, e, ""});
    out.removedImport = true;
  }
}

/// The header deletions, and per later body line (not blank, not inside a multi-line string) the
/// unit of every range around it removed, inner ranges first.
void removeUnits(const SourceFile& f, const Lines& lines, const std::vector<Managed>& ms,
                 std::vector<TextEdit>& edits) {
  const Module& m = f.model();
  uint32_t n = lines.count();
  std::vector<uint8_t> consumed(n, 0);
  std::vector<std::vector<size_t>> covering(n);  // managed ranges per body line, outer first
  for (size_t k = 0; k < ms.size(); ++k) {
    const Managed& g = ms[k];
    consumed[g.firstBodyLine] = 1;
    if (g.inlineBody) {
      consumed[g.headerLine] = 1;
      continue;
    }
    for (uint32_t l = g.firstBodyLine + 1; l <= g.lastLine; ++l) covering[l].push_back(k);
  }
  for (const Managed& g : ms) edits.push_back({g.delStart, g.delEnd, g.restore});
  for (uint32_t l = 0; l < n; ++l) {
    if (covering[l].empty() || consumed[l] || lines.blank(l)) continue;
    uint32_t ls = lines.start(l);
    if (ls > 0 && m.insideMultilineString(ls)) continue;
    std::string cur(lines.ws(l));
    for (auto it = covering[l].rbegin(); it != covering[l].rend(); ++it) {
      const Managed& g = ms[*it];
      std::string hu = g.h + g.unit;
      if (cur.compare(0, hu.size(), hu) == 0 && cur.size() >= hu.size())
        cur.erase(g.h.size(), g.unit.size());
      else if (cur.compare(0, g.unit.size(), g.unit) == 0 && cur.size() >= g.unit.size())
        cur.erase(0, g.unit.size());
    }
    uint32_t wb = lines.wsBegin(l), we = lines.wsEnd(l);
    edits.push_back(detail::minimize(f.text(), TextEdit{wb, we, cur}));
  }
}

/// Line map: each annotated line's start, mapped through the edits, and whether kernlens inserted
/// it (a range header or the added import).
void mapLines(const SourceFile& f, const Lines& lines, const std::vector<Managed>& ms,
              const std::vector<TextEdit>& edits, Stripped& out) {
  const std::string& text = f.text();
  uint32_t n = lines.count();
  detail::OffsetMapper mapper(edits);
  LineIndex strippedIdx(out.text);
  std::vector<uint8_t> inserted(n, 0);
  for (const Managed& g : ms) inserted[g.headerLine] = 1;
  for (const auto& e : edits)
    if (e.newText.empty() && e.end > e.start && e.start == lines.start(lines.lineOf(e.start)) &&
        std::string_view(text).substr(e.start, detail::kImportLine.size()) == detail::kImportLine)
      inserted[lines.lineOf(e.start)] = 1;
  for (uint32_t l = 0; l < n; ++l) {
    uint32_t o = mapper.map(lines.rawStart(l));
    out.lines.toOriginal.push_back(
        strippedIdx.toLineCol(std::min<uint32_t>(o, static_cast<uint32_t>(out.text.size()))).line);
    out.lines.inserted.push_back(inserted[l]);
  }
}

/// Range g described on the original: its name, lines, and whether it wraps a whole function body
/// (inline, or the last statement of the body after only a docstring and global-like statements).
ManagedRange describe(const Module& m, const Managed& g, const LineMap& map) {
  ManagedRange mr;
  mr.name = g.name;
  if (auto p = parseName(g.name)) mr.parsed = *p;
  mr.lines = {g.headerLine, g.lastLine};
  PlacedRange& p = mr.placed;
  p.name = g.name;
  p.original = {map.originalLine(g.firstBodyLine), map.originalLine(g.lastLine)};
  p.instrumented = mr.lines;
  p.inlineBody = g.inlineBody;
  const auto& st = m.statements[g.stmt];
  bool fnBody = g.inlineBody;
  if (!fnBody && st.parentBlock != 0 && st.function != kNone) {
    const auto& pb = m.blocks[st.parentBlock];
    const auto& fn = m.functions[st.function];
    if (fn.body == st.parentBlock && pb.statements.back() == g.stmt) {
      fnBody = true;
      for (int32_t si : pb.statements) {
        if (si == g.stmt) break;
        const auto& s = m.statements[si];
        if (!s.docstring && !s.globalLike()) fnBody = false;
      }
    }
  }
  if (fnBody && st.function != kNone) {
    const auto& fn = m.functions[st.function];
    p.kind = RangeRequest::Kind::FunctionBody;
    p.qualName = fn.qualName;
    p.defLine = map.originalLine(fn.defLine);
  }
  return mr;
}

}  // namespace

Result<Stripped> strip(const SourceFile& f) {
  const Module& m = f.model();
  const std::string& text = f.text();
  Lines lines(f);
  Stripped out;
  if (f.hasErrors()) {
    uint32_t line = m.errors.empty() ? 0 : lines.lineOf(m.errors.front().start);
    return Error::invalid("the file has a syntax error (" + at(line) + "); fix it before removing kernlens ranges");
  }
  std::vector<Managed> ms;
  const std::vector<SourceRange> ranges = sourceRanges(f);
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto& r = ranges[i];
    if (!isManaged(r) || r.kind != SourceRange::Kind::With || r.statement == kNone) continue;
    auto g = readManaged(f, lines, r, i);
    if (!g) return g.error();
    ms.push_back(std::move(*g));
  }
  std::vector<TextEdit> edits;
  removeImports(f, lines, edits, out);
  removeUnits(f, lines, ms, edits);
  edits = detail::normalizeEdits(std::move(edits));
  out.text = text;
  if (!python::applyEditsToOriginal(out.text, edits))
    return Error::internal("kernlens bug: overlapping edits while stripping");
  mapLines(f, lines, ms, edits, out);
  // Describe each range on the original.
  for (const Managed& g : ms) out.ranges.push_back(describe(m, g, out.lines));
  return out;
}

}  // namespace kl::nvtx
