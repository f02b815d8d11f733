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

namespace {

/// What instrument() refuses before it resolves anything: a file with a syntax error or lone CR
/// line endings, one that already holds kernlens ranges, a bad relative path.
Result<void> checkInstrumentable(const SourceFile& f, const Options& opt) {
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
  return {};
}

/// Step 1: every request resolved (its index in `request`); one that cannot be is skipped into
/// out.skipped with skipUnwrappable (unless the failure is internal), else the error.
Result<std::vector<Resolved>> resolveAll(const SourceFile& f, std::span<const RangeRequest> requests,
                                         const Options& opt, Instrumented& out) {
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
  return rs;
}

/// Step 2: the ranges ordered outer before inner (inline bodies innermost); duplicates (same kind
/// and statements) dropped; a range that overlaps another without nesting, or nests inside a
/// one-line body, skipped into out.skipped with skipUnwrappable, else an error.
Result<std::vector<Resolved>> nestRanges(std::vector<Resolved> rs, std::span<const RangeRequest> requests,
                                         const Options& opt, Instrumented& out) {
  std::stable_sort(rs.begin(), rs.end(), [](const Resolved& a, const Resolved& b) {
    if (a.startByte != b.startByte) return a.startByte < b.startByte;
    if (a.endByte != b.endByte) return a.endByte > b.endByte;
    if (a.inlineBody != b.inlineBody) return !a.inlineBody;  // inline ranges are innermost
    return a.kind == RangeRequest::Kind::FunctionBody && b.kind != RangeRequest::Kind::FunctionBody;
  });
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
    std::string msg;
    if (!stack.empty() && kept[stack.back()].endByte < r.endByte)
      msg = "ranges overlap without nesting: " + kept[stack.back()].name + " and " + r.name;
    else if (!stack.empty() && kept[stack.back()].inlineBody)
      msg = "cannot nest " + r.name + " inside a one-line function body";
    if (!msg.empty()) {
      if (!opt.skipUnwrappable) return Error::invalid(msg);
      out.skipped.push_back({requests[r.request], msg});
      continue;
    }
    kept.push_back(std::move(r));
    stack.push_back(kept.size() - 1);
  }
  return kept;
}

/// Per line, whether it is a code line: a statement, clause or decorator starts there (code lines
/// must keep the block structure; comments and continuation lines only need to stay inside).
std::vector<uint8_t> codeLines(const Module& m, const Lines& lines) {
  std::vector<uint8_t> codeLine(lines.count(), 0);
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
  return codeLine;
}

/// Steps 3 to 5 on the nested ranges: the import, the per-line edits, the inline bodies, the
/// edited text, its line map and the placed ranges.
class Placer {
 public:
  Placer(const SourceFile& f, const std::vector<Resolved>& rs, Instrumented& out)
      : f_(f),
        m_(f.model()),
        text_(f.text()),
        lines_(f),
        rs_(rs),
        out_(out),
        nLines_(lines_.count()),
        eolDefault_(detail::majorityEol(f)),
        headersBefore_(nLines_, 0) {}

  /// Step 3: the callee (out.api) and, when no import of torch comes before every range, the
  /// `import torch` edit.
  Result<void> addImport() {
    uint32_t firstStart = rs_.empty() ? static_cast<uint32_t>(text_.size()) : rs_.front().startByte;
    api_ = chooseApi(f_, firstStart);
    out_.api = api_.api;
    if (rs_.empty() || !api_.addImport) return {};
    importAt_ = importOffset(f_, lines_);
    uint32_t line = lines_.lineOf(importAt_);
    std::string eol(lines_.eol(line));
    if (eol.empty()) eol = eolDefault_;
    if (importAt_ == text_.size() && !text_.empty() && text_.back() != '\n')
      return Error::invalid("cannot add `import torch` after the last line");
    edits_.push_back({importAt_, importAt_, std::string(detail::kImportLine) + eol});
    out_.addedImport = true;
    return {};
  }

  /// Step 4: per line, the headers of the ranges that start there and the units of every range
  /// around it (see the file comment); then the inline bodies; then the edited text.
  Result<void> transformLines() {
    const std::vector<uint8_t> codeLine = codeLines(m_, lines_);
    std::vector<std::vector<size_t>> active(nLines_);  // non-inline ranges per line, outer first
    for (size_t k = 0; k < rs_.size(); ++k)
      if (!rs_[k].inlineBody)
        for (uint32_t l = rs_[k].L1; l <= rs_[k].L2; ++l) active[l].push_back(k);
    std::vector<std::string> iPrime(rs_.size());
    for (const auto& r : rs_)
      if (r.inlineBody) finalWs_[r.L1] = std::string(lines_.ws(r.L1));
    for (uint32_t l = 0; l < nLines_; ++l) {
      if (active[l].empty()) continue;
      bool starts = false;
      for (size_t k : active[l]) starts |= rs_[k].L1 == l;
      uint32_t ls = lines_.start(l);
      bool skip = lines_.blank(l) || (ls > 0 && m_.insideMultilineString(ls));
      if (skip) {
        if (starts) return Error::internal("range starts on a blank line " + std::to_string(l + 1));
        continue;
      }
      std::string cur(lines_.ws(l));
      std::string head;
      for (size_t k : active[l]) {
        const Resolved& r = rs_[k];
        if (r.L1 == l) {
          iPrime[k] = cur;
          std::string eol(lines_.eol(l));
          if (eol.empty()) eol = eolDefault_;
          head += cur + "with " + api_.api + "(" + pythonLiteral(r.name) + "):" + eol;
          ++headersBefore_[l];
          cur += r.unit;
          continue;
        }
        KL_TRY(indentUnder(l, iPrime[k], r.unit, codeLine[l] != 0, cur));
      }
      if (finalWs_.count(l)) finalWs_[l] = cur;
      uint32_t wb = lines_.wsBegin(l), we = lines_.wsEnd(l);
      edits_.push_back(detail::minimize(text_, TextEdit{wb, we, head + cur}));
    }
    addInlineBodies();
    edits_ = detail::normalizeEdits(std::move(edits_));
    out_.text = text_;
    if (!python::applyEditsToOriginal(out_.text, edits_))
      return Error::internal("kernlens bug: overlapping edits while instrumenting");
    out_.edits = std::move(edits_);
    return {};
  }

  /// Step 5: the line map (instrumented line -> original line, inserted or not) and each range's
  /// original and instrumented lines.
  void placeRanges() {
    uint32_t importLine = out_.addedImport ? lines_.lineOf(importAt_) : 0;
    bool importAtEnd = out_.addedImport && importAt_ == text_.size();
    std::vector<uint32_t> lastInstrOf(nLines_ + 1, 0);  // last instrumented line of an original line
    std::map<uint32_t, uint32_t> inlineHeaderLine;      // original def line -> instrumented with line
    std::vector<std::vector<uint32_t>> headerLinesOf(nLines_);
    auto add = [this](uint32_t original, uint8_t inserted) {
      out_.lines.toOriginal.push_back(original);
      out_.lines.inserted.push_back(inserted);
    };
    for (uint32_t l = 0; l < nLines_; ++l) {
      if (out_.addedImport && !importAtEnd && l == importLine) add(l, 1);
      for (uint32_t h = 0; h < headersBefore_[l]; ++h) {
        headerLinesOf[l].push_back(static_cast<uint32_t>(out_.lines.toOriginal.size()));
        add(l, 1);
      }
      add(l, 0);
      if (finalWs_.count(l)) {
        inlineHeaderLine[l] = static_cast<uint32_t>(out_.lines.toOriginal.size());
        add(l, 1);
        add(l, 0);  // the body, moved to its own line
      }
      lastInstrOf[l] = static_cast<uint32_t>(out_.lines.toOriginal.size() - 1);
    }
    if (importAtEnd) add(nLines_ ? nLines_ - 1 : 0, 1);
    std::vector<uint32_t> headerUsed(nLines_, 0);
    for (const auto& r : rs_) {
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
      out_.ranges.push_back(std::move(p));
    }
  }

 private:
  /// Line l (indent so far `cur`) inside a range whose header line's indent was `ip`: the unit
  /// goes after ip when the line starts with it, else at its start. A code line must start with
  /// ip and must not mix tabs and spaces in a way the unit would change the meaning of.
  static Result<void> indentUnder(uint32_t l, const std::string& ip, const std::string& unit, bool code,
                                  std::string& cur) {
    bool under = cur.compare(0, ip.size(), ip) == 0 && cur.size() >= ip.size();
    if (code) {
      if (!under)
        return Error::unsupported("line " + std::to_string(l + 1) +
                                  ": indentation does not extend its block's (mixed tabs and "
                                  "spaces); not wrapping");
      if ((col8(ip + unit) - col8(ip)) % 8 != 0 && cur.find('\t', ip.size()) != std::string::npos)
        return Error::unsupported("line " + std::to_string(l + 1) +
                                  ": mixed tabs and spaces would change meaning; not wrapping");
    }
    cur.insert(under ? ip.size() : 0, unit);
    return {};
  }

  /// The edit of each one-line function body: the gap after ':' becomes the header (with the gap
  /// encoded after kInlineMarker) and the body moves to its own line.
  void addInlineBodies() {
    for (const auto& r : rs_) {
      if (!r.inlineBody) continue;
      std::string eol(lines_.eol(r.L1));
      if (eol.empty()) eol = eolDefault_;
      std::string p = finalWs_[r.L1] + r.unit;
      std::string gap = text_.substr(r.gapStart, r.gapEnd - r.gapStart);
      std::string ins = eol + p + "with " + api_.api + "(" + pythonLiteral(r.name) +
                        "):" + std::string(detail::kInlineMarker) + detail::encodeGap(gap) + eol + p + r.unit;
      edits_.push_back({r.gapStart, r.gapEnd, std::move(ins)});
    }
  }

  const SourceFile& f_;
  const Module& m_;
  const std::string& text_;
  Lines lines_;
  const std::vector<Resolved>& rs_;
  Instrumented& out_;
  const uint32_t nLines_;
  const std::string eolDefault_;
  ApiChoice api_;
  std::vector<TextEdit> edits_;
  uint32_t importAt_ = 0;
  std::vector<uint32_t> headersBefore_;
  std::map<uint32_t, std::string> finalWs_;  // lines holding an inline range: their final indent
};

/// Step 6: the instrumented text parses and strips back to the original text with every range.
Result<void> verifyRoundTrip(const Instrumented& out, const std::string& text, size_t ranges) {
  auto parsed = SourceFile::parse(out.text);
  if (!parsed) return parsed.error();
  if ((*parsed)->hasErrors()) return Error::internal("kernlens bug: the instrumented text does not parse; refusing");
  auto back = strip(**parsed);
  if (!back) return Error::internal("kernlens bug: cannot strip the instrumented text: " + back.error().message);
  if (back->text != text || back->ranges.size() != ranges)
    return Error::internal(
        "kernlens bug: wrapping would not strip back to the original; "
        "refusing");
  return {};
}

}  // namespace

Result<Instrumented> instrument(const SourceFile& f, std::span<const RangeRequest> requests, const Options& opt) {
  KL_TRY(checkInstrumentable(f, opt));
  Instrumented out;
  // 1. Resolve.
  auto resolved = resolveAll(f, requests, opt, out);
  if (!resolved) return resolved.error();
  // 2. Order outer before inner; drop duplicates (same kind and statements); reject overlaps.
  auto rs = nestRanges(std::move(*resolved), requests, opt, out);
  if (!rs) return rs.error();
  Placer placer(f, *rs, out);
  // 3. The callee and the import.
  KL_TRY(placer.addImport());
  // 4. Per-line transformation. Code lines (statement, clause or decorator starts) must keep the
  //    block structure; comments and continuation lines only need to stay inside the range.
  KL_TRY(placer.transformLines());
  // 5. Line map and placed ranges.
  placer.placeRanges();
  // 6. Check the result before anyone sees it.
  if (opt.verify && !rs->empty()) KL_TRY(verifyRoundTrip(out, f.text(), rs->size()));
  return out;
}

}  // namespace kl::nvtx
