// Resolution rules (documented in docs/annotations.md):
// - Statements [a, b]: descend from the module block into the single compound statement whose one
//   body holds the whole selection (no clause header selected); the run is every statement of that
//   block overlapping the lines. No statement overlapping -> error.
// - A run in the body of a one-line compound (`if x: y()`) escalates to the compound statement.
// - `;`-joined neighbours on the first/last logical line join the run.
// - A leading docstring and `from __future__` imports leave the run (they must stay first).
// - FunctionBody: the body after the docstring and leading global/nonlocal lines; a one-line body
//   (`def f(): return g()`) is wrapped inline (moved to its own lines, restored exactly by strip).
#include "core/nvtx/resolve.h"

#include <algorithm>

#include "core/nvtx/detail.h"

namespace kl::nvtx::detail {
namespace {

using python::Block;
using python::kNone;
using python::Module;
using python::Statement;

std::string lineRef(uint32_t a, uint32_t b) {
  return a == b ? "line " + std::to_string(a + 1) : "lines " + std::to_string(a + 1) + "-" + std::to_string(b + 1);
}

uint32_t positionInBlock(const Module& m, int32_t block, int32_t stmt) {
  const auto& v = m.blocks[block].statements;
  return static_cast<uint32_t>(std::find(v.begin(), v.end(), stmt) - v.begin());
}

/// Line of the ':' that ends a block's header.
uint32_t headerEndLine(const python::SourceFile& f, const Block& b) {
  uint32_t e = b.header.end > 0 ? b.header.end - 1 : 0;
  return f.lines().toLineCol(e).line;
}

}  // namespace

bool startsLogicalLine(const python::SourceFile& f, int32_t block, uint32_t pos) {
  const Module& m = f.model();
  const Block& b = m.blocks[block];
  const Statement& s = m.statements[b.statements[pos]];
  uint32_t from;
  if (pos > 0)
    from = m.statements[b.statements[pos - 1]].bytes.end;
  else if (block == 0)
    return true;
  else
    from = b.header.end;
  return realNewlineBetween(f.text(), from, s.bytes.start);
}

std::vector<std::pair<uint32_t, uint32_t>> logicalGroups(const python::SourceFile& f, int32_t block, uint32_t first,
                                                         uint32_t last) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint32_t p = first; p <= last; ++p) {
    if (out.empty() || startsLogicalLine(f, block, p))
      out.push_back({p, p});
    else
      out.back().second = p;
  }
  return out;
}

namespace {

struct Run {
  int32_t block = 0;
  uint32_t first = 0, last = 0;
};

/// Escalates out of one-line bodies and extends over `;`-joined neighbours, to a fixpoint.
Run adjust(const python::SourceFile& f, Run r) {
  const Module& m = f.model();
  for (;;) {
    const Block& b = m.blocks[r.block];
    if (r.block != 0 && !startsLogicalLine(f, r.block, 0)) {
      int32_t owner = b.owner;
      const Statement& os = m.statements[owner];
      r.block = os.parentBlock;
      r.first = r.last = positionInBlock(m, r.block, owner);
      continue;
    }
    while (r.first > 0 && !startsLogicalLine(f, r.block, r.first)) --r.first;
    while (r.last + 1 < b.statements.size() && !startsLogicalLine(f, r.block, r.last + 1)) ++r.last;
    return r;
  }
}

Result<Run> selectLines(const python::SourceFile& f, uint32_t a, uint32_t b) {
  const Module& m = f.model();
  int32_t block = 0;
  for (;;) {
    const Block& blk = m.blocks[block];
    std::vector<uint32_t> cands;
    for (uint32_t p = 0; p < blk.statements.size(); ++p) {
      const Statement& s = m.statements[blk.statements[p]];
      if (s.lines.first <= b && s.lines.last >= a) cands.push_back(p);
    }
    if (cands.empty()) return Error::invalid("no statement on " + lineRef(a, b));
    if (cands.size() == 1) {
      const Statement& s = m.statements[blk.statements[cands[0]]];
      if (s.compound && !s.blocks.empty()) {
        uint32_t a2 = std::max(a, s.lines.first), b2 = std::min(b, s.lines.last);
        int32_t hit = kNone;
        int hits = 0;
        bool headerSelected = a2 < m.blocks[s.blocks[0]].headerLine;  // decorators
        for (int32_t bi : s.blocks) {
          const Block& cb = m.blocks[bi];
          if (cb.headerLine >= a2 && cb.headerLine <= b2) headerSelected = true;
          if (cb.headerLine <= b2 && cb.lines.last >= a2) {
            ++hits;
            hit = bi;
          }
        }
        if (!headerSelected && hits == 1 && !m.blocks[hit].sameLine && a2 > headerEndLine(f, m.blocks[hit]) &&
            !m.blocks[hit].statements.empty()) {
          block = hit;
          continue;
        }
      }
    }
    return Run{block, cands.front(), cands.back()};
  }
}

std::string statementHead(const python::SourceFile& f, const Statement& s) {
  Lines lines(f);
  uint32_t from = s.bytes.start, to = std::min(lines.end(s.lines.first), s.bytes.end);
  // Decorated definitions: name them by their def/class line.
  if (s.decorated && (s.definesFunction != kNone || s.definesClass != kNone)) {
    uint32_t l = s.definesFunction != kNone ? f.model().functions[s.definesFunction].defLine
                                            : f.model().classes[s.definesClass].classLine;
    from = lines.wsEnd(l);
    to = lines.end(l);
  }
  // The code of that line: a trailing comment is cut (the tree knows which '#' starts one).
  to = f.codeEnd(from, to).value_or(from);
  return makeLabel(std::string_view(f.text()).substr(from, to - from));
}

Result<void> fillGeometry(const python::SourceFile& f, Resolved& r) {
  const Module& m = f.model();
  const Block& blk = m.blocks[r.block];
  const Statement& s1 = m.statements[blk.statements[r.first]];
  const Statement& s2 = m.statements[blk.statements[r.last]];
  Lines lines(f);
  r.startByte = s1.bytes.start;
  r.endByte = f.lastCodeEnd(s2.bytes.start, s2.bytes.end);
  r.L1 = lines.lineOf(r.startByte);
  r.L2 = lines.lineOf(r.endByte > 0 ? r.endByte - 1 : 0);
  std::string fileUnit = m.indentation.unit();
  if (r.inlineBody) {
    r.unit = fileUnit;
    return {};
  }
  if (lines.wsEnd(r.L1) != r.startByte)
    return Error::internal("statement at line " + std::to_string(r.L1 + 1) + " does not start its line");
  r.indent = std::string(lines.ws(r.L1));
  r.unit = fileUnit;
  if (r.block != 0) {
    std::string_view p = lines.ws(blk.headerLine);
    if (r.indent.size() > p.size() && r.indent.compare(0, p.size(), p) == 0) r.unit = r.indent.substr(p.size());
  }
  return {};
}

Result<std::string> makeName(const std::string& relPath, const Resolved& r, const RangeRequest& req,
                             std::string label) {
  if (req.name) {
    auto parsed = parseName(*req.name);
    if (!parsed) return parsed.error();
    return *req.name;
  }
  label = makeLabel(req.label ? *req.label : label);
  return formatName(RangeName{relPath, r.L1 + 1, r.L2 + 1, std::move(label)});
}

}  // namespace

Result<Resolved> resolveRequest(const python::SourceFile& f, const RangeRequest& req, const std::string& relPath) {
  const Module& m = f.model();
  Resolved r;
  r.kind = req.kind;
  std::string label;
  if (req.kind == RangeRequest::Kind::Statements) {
    if (req.firstLine > req.lastLine) return Error::invalid("bad selection: first line after last line");
    if (req.firstLine >= f.lines().lineCount())
      return Error::invalid(lineRef(req.firstLine, req.lastLine) + " past the end of the file");
    auto run = selectLines(f, req.firstLine, req.lastLine);
    if (!run) return run.error();
    Run a = adjust(f, *run);
    const Block& blk = m.blocks[a.block];
    // Leading docstring / __future__ imports stay first, outside the range.
    while (a.first <= a.last) {
      const Statement& s = m.statements[blk.statements[a.first]];
      if (!s.docstring && !s.futureImport) break;
      if (a.first < a.last && !startsLogicalLine(f, a.block, a.first + 1))
        return Error::invalid("cannot wrap " + lineRef(s.lines.first, s.lines.last) +
                              ": a docstring or `from __future__` import shares its line with "
                              "other statements (';')");
      ++a.first;
    }
    if (a.first > a.last)
      return Error::invalid("nothing to wrap on " + lineRef(req.firstLine, req.lastLine) +
                            ": a docstring or `from __future__` imports must stay first");
    r.block = a.block;
    r.first = a.first;
    r.last = a.last;
    label = statementHead(f, m.statements[blk.statements[a.first]]);
    if (a.last > a.first) label = makeLabel(label + " +" + std::to_string(a.last - a.first));
  } else {
    int32_t fi = kNone;
    for (size_t i = 0; i < m.functions.size(); ++i) {
      const auto& fn = m.functions[i];
      if (fn.qualName != req.qualName) continue;
      if (req.defLine && fn.defLine != *req.defLine) continue;
      fi = static_cast<int32_t>(i);
      break;
    }
    if (fi == kNone)
      return Error::notFound("no function '" + req.qualName + "'" +
                             (req.defLine ? " at line " + std::to_string(*req.defLine + 1) : ""));
    const auto& fn = m.functions[fi];
    r.qualName = fn.qualName;
    r.defLine = fn.defLine;
    label = fn.qualName;
    if (fn.body == kNone || m.blocks[fn.body].statements.empty())
      return Error::invalid("function '" + fn.qualName + "' has no body");
    const Block& body = m.blocks[fn.body];
    r.block = fn.body;
    uint32_t n = static_cast<uint32_t>(body.statements.size());
    const Statement& s0 = m.statements[body.statements[0]];
    if (!startsLogicalLine(f, fn.body, 0)) {
      if (s0.docstring)
        return Error::invalid("function '" + fn.qualName + "' (line " + std::to_string(fn.defLine + 1) +
                              ") has a one-line body starting with its docstring; nothing to wrap");
      std::string_view gap = std::string_view(f.text()).substr(body.header.end, s0.bytes.start - body.header.end);
      if (gap.find_first_not_of(" \t") != std::string_view::npos)
        return Error::unsupported("function '" + fn.qualName + "' (line " + std::to_string(fn.defLine + 1) +
                                  "): one-line body continued with '\\' is not supported");
      r.inlineBody = true;
      r.gapStart = body.header.end;
      r.gapEnd = s0.bytes.start;
      r.first = 0;
      r.last = n - 1;
    } else {
      uint32_t k = 0;
      if (s0.docstring) {
        if (n > 1 && !startsLogicalLine(f, fn.body, 1))
          return Error::invalid("function '" + fn.qualName +
                                "': its docstring shares its line with other statements (';')");
        k = 1;
      }
      while (k < n && m.statements[body.statements[k]].globalLike() &&
             (k + 1 == n || startsLogicalLine(f, fn.body, k + 1)))
        ++k;
      if (k == n)
        return Error::invalid("function '" + fn.qualName + "' (line " + std::to_string(fn.defLine + 1) +
                              ") has nothing to wrap besides its docstring and global/nonlocal lines");
      r.first = k;
      r.last = n - 1;
    }
  }
  if (auto ok = fillGeometry(f, r); !ok) return ok.error();
  auto name = makeName(relPath, r, req, label);
  if (!name) return name.error();
  r.name = std::move(*name);
  return r;
}

}  // namespace kl::nvtx::detail
