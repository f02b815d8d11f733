// instrument(): places resolved ranges on an original text in one pass.
//
// Semantics (what strip() inverts): ranges apply outer to inner. For a range R over lines
// [L1, L2] whose first line's indentation is I (after outer ranges: I'):
//   - line L1 gets the header line `I' with <api>("<name>"):` before it and the unit after I';
//   - every later line of [L1, L2] that is not blank and does not start inside a multi-line
//     string gets the unit inserted after I' when it starts with I', else at its start (only
//     comments and continuation lines can be like that; code lines must start with I').
// A one-line function body is split instead: the gap after ':' becomes
//   EOL P `with <api>("<name>"):  # kl:inline=<gap>` EOL P unit
// with P = the def line's indentation plus one unit; later lines are untouched.
#include <algorithm>
#include <map>

#include "core/nvtx/detail.h"
#include "core/nvtx/engine.h"
#include "core/nvtx/naming.h"
#include "core/nvtx/resolve.h"

namespace kl::nvtx {

using detail::Lines;
using detail::Resolved;
using python::kNone;
using python::Module;

std::optional<uint32_t> LineMap::instrumentedLine(uint32_t original) const {
  for (uint32_t i = 0; i < toOriginal.size(); ++i)
    if (toOriginal[i] == original && !isInserted(i)) return i;
  return std::nullopt;
}

RangeRequest PlacedRange::request() const {
  RangeRequest r;
  r.kind = kind;
  r.name = name;
  if (kind == RangeRequest::Kind::Statements) {
    r.firstLine = original.first;
    r.lastLine = original.last;
  } else {
    r.qualName = qualName;
    r.defLine = defLine;
  }
  return r;
}

std::vector<RangeRequest> allFunctionBodies(const SourceFile& original) {
  std::vector<RangeRequest> out;
  for (const auto& fn : original.model().functions)
    if (!fn.qualName.empty()) out.push_back(RangeRequest::functionBody(fn.qualName, fn.defLine));
  return out;
}

std::vector<TextEdit> minimalEdit(std::string_view from, std::string_view to) {
  if (from == to) return {};
  TextEdit e{0, static_cast<uint32_t>(from.size()), std::string(to)};
  return {detail::minimize(from, std::move(e))};
}

namespace {

/// Columns of a whitespace prefix with tab size 8 and 1 (Python's two consistency views).
uint32_t col8(std::string_view ws) {
  uint32_t c = 0;
  for (char ch : ws) c = ch == '\t' ? (c / 8 + 1) * 8 : c + 1;
  return c;
}

struct ApiChoice {
  std::string api = "torch.cuda.nvtx.range";
  bool addImport = true;
};

/// Uses a module-level import of torch placed before every range, else adds `import torch`.
ApiChoice chooseApi(const SourceFile& f, uint32_t firstRangeStart) {
  const Module& m = f.model();
  int best = 99;
  ApiChoice out;
  for (const auto& b : m.imports) {
    if (b.statement == kNone) continue;
    const auto& s = m.statements[b.statement];
    if (s.parent != kNone || s.parentBlock != 0 || s.bytes.start >= firstRangeStart) continue;
    int rank = 99;
    std::string api;
    if (b.target == "torch" || (b.local == "torch" && b.target.rfind("torch.", 0) == 0)) {
      rank = 0;
      api = b.local + ".cuda.nvtx.range";
    } else if (b.target == "torch.cuda") {
      rank = 1;
      api = b.local + ".nvtx.range";
    } else if (b.target == "torch.cuda.nvtx") {
      rank = 2;
      api = b.local + ".range";
    }
    if (rank < best) {
      best = rank;
      out.api = api;
      out.addImport = false;
    }
  }
  return out;
}

/// Where `import torch  # kl:import` goes: after a module docstring and `from __future__`
/// imports, else before the first statement (so shebang and coding lines stay first).
uint32_t importOffset(const SourceFile& f, const Lines& lines) {
  const Module& m = f.model();
  const auto& mod = m.moduleBlock();
  int32_t lastPrefix = kNone;
  for (size_t k = 0; k < mod.statements.size(); ++k) {
    const auto& s = m.statements[mod.statements[k]];
    if ((k == 0 && s.docstring) || s.futureImport)
      lastPrefix = mod.statements[k];
    else
      break;
  }
  if (lastPrefix == kNone) {
    if (mod.statements.empty()) return f.sourceStart();
    return lines.start(m.statements[mod.statements[0]].lines.first);
  }
  const auto& s = m.statements[lastPrefix];
  uint32_t endLine = lines.lineOf(f.lastCodeEnd(s.bytes.start, s.bytes.end) - 1);
  if (endLine + 1 >= lines.count()) return static_cast<uint32_t>(f.text().size());
  return lines.start(endLine + 1);
}

}  // namespace

Result<Instrumented> instrument(const SourceFile& f, std::span<const RangeRequest> requests, const Options& opt) {
  const Module& m = f.model();
  const std::string& text = f.text();
  if (f.hasErrors()) {
    uint32_t line = m.errors.empty() ? 0 : f.lines().toLineCol(m.errors.front().start).line;
    return Error::invalid("the file has a syntax error (line " + std::to_string(line + 1) +
                          "); kernlens does not annotate broken code");
  }
  if (size_t cr = detail::findLoneCr(text); cr != std::string_view::npos)
    return Error::unsupported("line " + std::to_string(f.lines().toLineCol(cr).line + 1) +
                              ": lone CR line endings are not supported");
  for (const auto& r : sourceRanges(f))
    if (isManaged(r))
      return Error::invalid("the file already holds kernlens ranges (line " +
                            std::to_string(f.lines().toLineCol(r.bytes.start).line + 1) +
                            "); strip it first or use annotate");
  if (auto ok = checkRelativePath(opt.relPath); !ok) return ok.error();

  Instrumented out;
  Lines lines(f);

  // 1. Resolve.
  std::vector<Resolved> rs;
  for (size_t i = 0; i < requests.size(); ++i) {
    auto r = detail::resolveRequest(f, requests[i], opt.relPath);
    if (!r) {
      if (opt.skipUnwrappable && r.error().code != Error::Code::Internal) {
        out.skipped.push_back({requests[i], r.error().message});
        continue;
      }
      return r.error();
    }
    r->request = i;
    rs.push_back(std::move(*r));
  }

  // 2. Order outer before inner; drop duplicates (same kind and statements); reject overlaps.
  std::stable_sort(rs.begin(), rs.end(), [](const Resolved& a, const Resolved& b) {
    if (a.startByte != b.startByte) return a.startByte < b.startByte;
    if (a.endByte != b.endByte) return a.endByte > b.endByte;
    if (a.inlineBody != b.inlineBody) return !a.inlineBody;  // inline ranges are innermost
    return a.kind == RangeRequest::Kind::FunctionBody && b.kind != RangeRequest::Kind::FunctionBody;
  });
  {
    std::vector<Resolved> kept;
    std::vector<size_t> stack;  // indices into kept
    for (auto& r : rs) {
      bool dup = false;
      for (size_t k : stack)
        if (kept[k].startByte == r.startByte && kept[k].endByte == r.endByte && kept[k].kind == r.kind &&
            kept[k].inlineBody == r.inlineBody)
          dup = true;
      if (!kept.empty() && kept.back().startByte == r.startByte && kept.back().endByte == r.endByte &&
          kept.back().kind == r.kind)
        dup = true;
      if (dup) continue;
      while (!stack.empty() && kept[stack.back()].endByte <= r.startByte) stack.pop_back();
      if (!stack.empty() && kept[stack.back()].endByte < r.endByte) {
        std::string msg = "ranges overlap without nesting: " + kept[stack.back()].name + " and " + r.name;
        if (opt.skipUnwrappable) {
          out.skipped.push_back({requests[r.request], msg});
          continue;
        }
        return Error::invalid(msg);
      }
      if (!stack.empty() && kept[stack.back()].inlineBody) {
        std::string msg = "cannot nest " + r.name + " inside a one-line function body";
        if (opt.skipUnwrappable) {
          out.skipped.push_back({requests[r.request], msg});
          continue;
        }
        return Error::invalid(msg);
      }
      kept.push_back(std::move(r));
      stack.push_back(kept.size() - 1);
    }
    rs = std::move(kept);
  }

  // 3. The callee and the import.
  uint32_t firstStart = rs.empty() ? static_cast<uint32_t>(text.size()) : rs.front().startByte;
  ApiChoice api = chooseApi(f, firstStart);
  out.api = api.api;
  std::vector<TextEdit> edits;
  uint32_t importAt = 0;
  std::string eolDefault(detail::majorityEol(f));
  if (!rs.empty() && api.addImport) {
    importAt = importOffset(f, lines);
    uint32_t line = lines.lineOf(importAt);
    std::string eol(lines.eol(line));
    if (eol.empty()) eol = eolDefault;
    if (importAt == text.size() && !text.empty() && text.back() != '\n')
      return Error::invalid("cannot add `import torch` after the last line");
    edits.push_back({importAt, importAt, std::string(detail::kImportLine) + eol});
    out.addedImport = true;
  }

  // 4. Per-line transformation. Code lines (statement, clause or decorator starts) must keep the
  //    block structure; comments and continuation lines only need to stay inside the range.
  uint32_t nLines = lines.count();
  std::vector<uint8_t> codeLine(nLines, 0);
  auto markCode = [&](uint32_t offset) {
    uint32_t l = lines.lineOf(offset);
    if (lines.wsEnd(l) == offset) codeLine[l] = 1;
  };
  for (const auto& s : m.statements) markCode(s.bytes.start);
  for (size_t b = 1; b < m.blocks.size(); ++b) markCode(m.blocks[b].header.start);
  for (const auto& fn : m.functions)
    for (const auto& d : fn.decorators) markCode(d.bytes.start);
  for (const auto& c : m.classes)
    for (const auto& d : c.decorators) markCode(d.bytes.start);

  std::vector<std::vector<size_t>> active(nLines);  // non-inline ranges per line, outer first
  for (size_t k = 0; k < rs.size(); ++k)
    if (!rs[k].inlineBody)
      for (uint32_t l = rs[k].L1; l <= rs[k].L2; ++l) active[l].push_back(k);

  std::vector<std::string> iPrime(rs.size());
  std::vector<uint32_t> headersBefore(nLines, 0);
  std::map<uint32_t, std::string> finalWs;  // lines holding an inline range: their final indent
  for (const auto& r : rs)
    if (r.inlineBody) finalWs[r.L1] = std::string(lines.ws(r.L1));

  for (uint32_t l = 0; l < nLines; ++l) {
    if (active[l].empty()) continue;
    bool starts = false;
    for (size_t k : active[l]) starts |= rs[k].L1 == l;
    uint32_t ls = lines.start(l);
    bool skip = lines.blank(l) || (ls > 0 && m.insideMultilineString(ls));
    if (skip) {
      if (starts) return Error::internal("range starts on a blank line " + std::to_string(l + 1));
      continue;
    }
    std::string cur(lines.ws(l));
    std::string head;
    for (size_t k : active[l]) {
      const Resolved& r = rs[k];
      if (r.L1 == l) {
        iPrime[k] = cur;
        std::string eol(lines.eol(l));
        if (eol.empty()) eol = eolDefault;
        head += cur + "with " + api.api + "(" + pythonLiteral(r.name) + "):" + eol;
        ++headersBefore[l];
        cur += r.unit;
        continue;
      }
      const std::string& ip = iPrime[k];
      bool under = cur.compare(0, ip.size(), ip) == 0 && cur.size() >= ip.size();
      if (codeLine[l]) {
        if (!under)
          return Error::unsupported("line " + std::to_string(l + 1) +
                                    ": indentation does not extend its block's (mixed tabs and "
                                    "spaces); not wrapping");
        if ((col8(ip + r.unit) - col8(ip)) % 8 != 0 && cur.find('\t', ip.size()) != std::string::npos)
          return Error::unsupported("line " + std::to_string(l + 1) +
                                    ": mixed tabs and spaces would change meaning; not wrapping");
      }
      cur.insert(under ? ip.size() : 0, r.unit);
    }
    if (finalWs.count(l)) finalWs[l] = cur;
    uint32_t wb = lines.wsBegin(l), we = lines.wsEnd(l);
    edits.push_back(detail::minimize(text, TextEdit{wb, we, head + cur}));
  }

  // Inline bodies.
  for (const auto& r : rs) {
    if (!r.inlineBody) continue;
    std::string eol(lines.eol(r.L1));
    if (eol.empty()) eol = eolDefault;
    std::string p = finalWs[r.L1] + r.unit;
    std::string gap = text.substr(r.gapStart, r.gapEnd - r.gapStart);
    std::string ins = eol + p + "with " + api.api + "(" + pythonLiteral(r.name) +
                      "):" + std::string(detail::kInlineMarker) + detail::encodeGap(gap) + eol + p + r.unit;
    edits.push_back({r.gapStart, r.gapEnd, std::move(ins)});
  }

  edits = detail::normalizeEdits(std::move(edits));
  out.text = text;
  if (!python::applyEditsToOriginal(out.text, edits))
    return Error::internal("kernlens bug: overlapping edits while instrumenting");
  out.edits = std::move(edits);

  // 5. Line map and placed ranges.
  uint32_t importLine = out.addedImport ? lines.lineOf(importAt) : 0;
  bool importAtEnd = out.addedImport && importAt == text.size();
  std::vector<uint32_t> lastInstrOf(nLines + 1, 0);  // last instrumented line of an original line
  std::map<uint32_t, uint32_t> inlineHeaderLine;     // original def line -> instrumented with line
  std::vector<std::vector<uint32_t>> headerLinesOf(nLines);
  for (uint32_t l = 0; l < nLines; ++l) {
    if (out.addedImport && !importAtEnd && l == importLine) {
      out.lines.toOriginal.push_back(l);
      out.lines.inserted.push_back(1);
    }
    for (uint32_t h = 0; h < headersBefore[l]; ++h) {
      headerLinesOf[l].push_back(static_cast<uint32_t>(out.lines.toOriginal.size()));
      out.lines.toOriginal.push_back(l);
      out.lines.inserted.push_back(1);
    }
    out.lines.toOriginal.push_back(l);
    out.lines.inserted.push_back(0);
    if (finalWs.count(l)) {
      inlineHeaderLine[l] = static_cast<uint32_t>(out.lines.toOriginal.size());
      out.lines.toOriginal.push_back(l);
      out.lines.inserted.push_back(1);
      out.lines.toOriginal.push_back(l);  // the body, moved to its own line
      out.lines.inserted.push_back(0);
    }
    lastInstrOf[l] = static_cast<uint32_t>(out.lines.toOriginal.size() - 1);
  }
  if (importAtEnd) {
    out.lines.toOriginal.push_back(nLines ? nLines - 1 : 0);
    out.lines.inserted.push_back(1);
  }
  std::vector<uint32_t> headerUsed(nLines, 0);
  for (const auto& r : rs) {
    PlacedRange p;
    p.kind = r.kind;
    p.name = r.name;
    p.original = {r.L1, r.L2};
    p.qualName = r.qualName;
    p.defLine = r.defLine;
    p.inlineBody = r.inlineBody;
    uint32_t last = lastInstrOf[r.L2];
    if (r.inlineBody) {
      p.instrumented = {inlineHeaderLine[r.L1], last};
    } else {
      p.instrumented = {headerLinesOf[r.L1][headerUsed[r.L1]++], last};
    }
    out.ranges.push_back(std::move(p));
  }

  // 6. Check the result before anyone sees it.
  if (opt.verify && !rs.empty()) {
    auto parsed = SourceFile::parse(out.text);
    if (!parsed) return parsed.error();
    if ((*parsed)->hasErrors()) return Error::internal("kernlens bug: the instrumented text does not parse; refusing");
    auto back = strip(**parsed);
    if (!back) return Error::internal("kernlens bug: cannot strip the instrumented text: " + back.error().message);
    if (back->text != text || back->ranges.size() != rs.size())
      return Error::internal(
          "kernlens bug: wrapping would not strip back to the original; "
          "refusing");
  }
  return out;
}

}  // namespace kl::nvtx
