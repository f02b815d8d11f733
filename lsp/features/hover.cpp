// textDocument/hover on a mapped line (any line of a result's statement span), sized for an
// 80-column / 760 px hover:
//   - a header: the line's GPU time, kernels, launches, share of its function, invocations;
//   - for a line the convergence loop left atomic: why (library code / a workspace function not
//     followed / budget / no source) and the function to profile as the focus instead;
//   - for a call line (its work runs in workspace callees): the inclusive time and the callee
//     lines with their share, each a link (Markdown) or "path:line" (plain text);
//   - the kernel table, top 8 kernels by time, the rest summarised in one row; labels shortened
//     to what tells the kernels apart (core/attribution/kernel_label.h); one column per fact, a
//     column only when some kernel has data for it, optional columns (avg, min, max, grid, block,
//     stream) only while the table stays within 80 columns;
//   - Nsight Compute bound classes, the change against the previous run, the provenance
//     ("emulated" when it is) and a stale warning.
// Markdown for clients that render tables; plain text (aligned columns) for the others: the
// `hover.format` setting, "auto" = plain text for clients without Markdown hovers and for
// Neovim < 0.10 (FeatureContext::plainHover). null elsewhere.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

#include "core/attribution/kernel_label.h"
#include "core/ncu/classify.h"
#include "core/results/format.h"
#include "core/results/line_view.h"
#include "core/support/escape.h"
#include "core/support/text_table.h"
#include "lsp/features/feature_context.h"
#include "lsp/server/server.h"
#include "lsp/server/uri.h"

namespace kl::lsp {

namespace {

constexpr size_t kWidth = 80;      // columns a hover must fit
constexpr size_t kTopKernels = 8;  // rows before the summary row

std::string pad(const std::string& s, size_t w, bool right) {
  size_t n = displayWidth(s);
  std::string fill(n < w ? w - n : 0, ' ');
  return right ? fill + s : s + fill;
}

/// Untrusted text (kernel names, GPU name) on one line: control characters shown as escapes
/// (terminalSafe), a line break as "\n", a tab as a space — a name cannot end a row or a line.
std::string oneLine(const std::string& s) {
  std::string out;
  for (char c : terminalSafe(s)) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += ' ';
    else
      out += c;
  }
  return out;
}

/// Markdown: inline code for the first column; '|' escaped. A number cell's spaces are
/// non-breaking ("240 µs", "27 %"): a narrow hover must not wrap a value onto two lines.
std::string mdCell(const std::string& s, bool code, bool number) {
  std::string out;
  for (char c : oneLine(s)) {
    if (c == '|')
      out += "\\|";
    else if (c == '`' && code)
      out += '\'';
    else if (c == ' ' && number)
      out += "\u00a0";
    else
      out += c;
  }
  return code && !s.empty() && s[0] != '(' ? "`" + out + "`" : out;
}

/// The one table renderer (core/support/text_table.h); Markdown cells escaped by mdCell.
std::string renderTable(const std::vector<TextColumn>& cols, bool plain) {
  if (plain) return renderPlainTable(cols);
  return renderMarkdownTable(cols, [&](size_t i, const std::string& c) { return mdCell(c, i == 0, cols[i].right); });
}

std::string streamList(const std::vector<uint32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < 2; ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  if (ids.size() > 2) out += ",…";
  return out;
}

std::string kernelTable(const results::LineResult& line, int64_t denom, Units units, bool plain) {
  const auto& ks = line.kernels;
  if (ks.empty()) return {};
  size_t shown = ks.size() > kTopKernels + 1 ? kTopKernels : ks.size();
  bool anyRange = false, anyShape = false, anyStream = false, anyRepeat = false;
  for (size_t i = 0; i < shown; ++i) {
    anyRange |= ks[i].maxNs > 0 && ks[i].launches > 1;
    anyShape |= ks[i].kind == profile::GpuOpKind::Kernel && (ks[i].grid[0] > 0 || ks[i].block[0] > 0);
    anyStream |= !ks[i].streams.empty();
    anyRepeat |= ks[i].launches > 1;
  }
  auto share = [&](int64_t ns) {
    return denom > 0 ? formatShare(static_cast<double>(ns) / static_cast<double>(denom)) : std::string();
  };
  TextColumn launches{"launches", true}, total{"total", true}, pct{"share", true}, avg{"avg", true}, mn{"min", true},
      mx{"max", true}, grid{"grid", false}, block{"block", false}, stream{"stream", true};
  for (size_t i = 0; i < shown; ++i) {
    const auto& k = ks[i];
    launches.cells.push_back(std::to_string(k.launches));
    total.cells.push_back(formatDuration(k.totalNs, units));
    pct.cells.push_back(share(k.totalNs));
    avg.cells.push_back(k.launches > 1 ? formatDuration(k.avgNs(), units) : std::string());
    bool range = k.maxNs > 0 && k.launches > 1;
    mn.cells.push_back(range ? formatDuration(k.minNs, units) : std::string());
    mx.cells.push_back(range ? formatDuration(k.maxNs, units) : std::string());
    bool shape = k.kind == profile::GpuOpKind::Kernel && (k.grid[0] > 0 || k.block[0] > 0);
    grid.cells.push_back(k.kind != profile::GpuOpKind::Kernel ? profile::gpuOpKindName(k.kind)
                         : shape                              ? results::formatDims(k.grid) + (k.shapeVaries ? "*" : "")
                                                              : std::string());
    block.cells.push_back(shape ? results::formatDims(k.block) : std::string());
    stream.cells.push_back(streamList(k.streams));
  }
  if (shown < ks.size()) {  // the rest, summed
    uint64_t n = 0;
    int64_t ns = 0;
    for (size_t i = shown; i < ks.size(); ++i) {
      n += ks[i].launches;
      ns += ks[i].totalNs;
    }
    launches.cells.push_back(std::to_string(n));
    total.cells.push_back(formatDuration(ns, units));
    pct.cells.push_back(share(ns));
    for (auto* c : {&avg, &mn, &mx, &grid, &block, &stream}) c->cells.push_back("");
  }
  // Labels: as wide as the room left by the other columns allows, at most 44. Optional column
  // groups (avg; min + max; grid + block; stream) are added while the labels keep 40 columns.
  std::vector<TextColumn> cols{TextColumn{"kernel", false}, launches, total};
  if (denom > 0) cols.push_back(pct);
  std::vector<std::vector<TextColumn*>> optional;
  if (anyRepeat) optional.push_back({&avg});
  if (anyRange) optional.push_back({&mn, &mx});
  if (anyShape) optional.push_back({&grid, &block});
  if (anyStream) optional.push_back({&stream});
  auto labels = attribution::kernelLabels(ks, 44);
  size_t labelWidth = 6;
  for (size_t i = 0; i < shown; ++i) labelWidth = std::max(labelWidth, displayWidth(labels[i]));
  labelWidth = std::min<size_t>(labelWidth, 40);
  for (const auto& group : optional) {
    std::vector<TextColumn> trial = cols;
    for (auto* c : group) trial.push_back(*c);
    size_t rest = plainTableWidth(trial) - trial[0].width();
    if (rest + labelWidth + 2 <= kWidth) cols = std::move(trial);
  }
  size_t room = kWidth - (plainTableWidth(cols) - cols[0].width()) - 2;
  labels = attribution::kernelLabels(ks, std::min<size_t>(room, 44));
  for (size_t i = 0; i < shown; ++i) cols[0].cells.push_back(oneLine(labels[i]));
  if (shown < ks.size()) cols[0].cells.push_back("(" + std::to_string(ks.size() - shown) + " more kernels)");
  return renderTable(cols, plain);
}

/// "a · b · c" fragments (or words, with sep " ") joined into lines of at most kWidth columns
/// (plain text).
std::string wrapFragments(const std::vector<std::string>& parts, const std::string& sep = " · ") {
  std::string out, line;
  for (const auto& p : parts) {
    if (!line.empty() && displayWidth(line) + displayWidth(sep) + displayWidth(p) > kWidth) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : sep) + p;
  }
  return out + line;
}

struct Style {
  bool plain;
  std::string bold(const std::string& s) const { return plain ? s : "**" + s + "**"; }
  /// Inline code; untrusted text is kept on one line and a '`' cannot close the span.
  std::string code(const std::string& s) const {
    std::string t = oneLine(s);
    if (plain) return t;
    for (char& c : t)
      if (c == '`') c = '\'';
    return "`" + t + "`";
  }
  std::string em(const std::string& s) const { return plain ? s : "*" + s + "*"; }
  /// Untrusted prose (a note naming workspace functions): Markdown-escaped, or plain text on
  /// lines of at most kWidth columns.
  std::string prose(const std::string& s) const {
    if (!plain) return markdownSafe(oneLine(s));
    std::vector<std::string> words;
    std::string t = oneLine(s);
    for (size_t i = 0, j; i < t.size(); i = j + 1) {
      j = t.find(' ', i);
      if (j == std::string::npos) j = t.size();
      if (j > i) words.push_back(t.substr(i, j - i));
    }
    return wrapFragments(words, " ");
  }
  std::string join(const std::vector<std::string>& parts) const {
    if (plain) return wrapFragments(parts);
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : " · ") + p;
    return out;
  }
};

/// Why the loop left this line atomic (several kernels, nothing finer wrapped) and, when a
/// workspace function beneath it was not followed, which function to profile instead; or the
/// loop's note on the line. Store-backed results only (results::LineResult::atomicReason).
std::string verdictSection(const results::LineResult& line, const Style& st) {
  const char* title = "";
  switch (line.atomicReason) {
    case attribution::AtomicReason::None:
      return line.note.empty() ? std::string() : st.em(st.prose(line.note)) + "\n\n";
    case attribution::AtomicReason::Library: title = "library code: a final answer"; break;
    case attribution::AtomicReason::Unfollowed: title = "a workspace function beneath it was not followed"; break;
    case attribution::AtomicReason::Budget: title = "NVTX budget"; break;
    case attribution::AtomicReason::NoSource: title = "no source beneath it"; break;
  }
  std::string why = title + (": " + line.note);
  std::string out = (st.plain ? st.prose("ATOMIC — " + why) : st.bold("ATOMIC") + " — " + st.prose(why)) + "\n\n";
  if (!line.suggestFocus.empty()) {
    auto sep = line.suggestFocus.find("::");
    std::string fn = sep == std::string::npos ? line.suggestFocus : line.suggestFocus.substr(sep + 2);
    std::string file = sep == std::string::npos ? std::string() : line.suggestFocus.substr(0, sep);
    std::string tail = " to see its lines: profile it as the focus.";
    out += (st.plain ? st.prose("Focus on " + fn + (file.empty() ? "" : " (" + file + ")") + tail)
                     : "Focus on " + st.code(fn) + (file.empty() ? "" : " (" + st.code(file) + ")") + tail) +
           "\n\n";
  }
  return out;
}

std::string calleeSection(const results::LineResult& line, const std::filesystem::path& root, Units units,
                          const Style& st) {
  std::string out = st.bold("GPU " + formatDuration(line.inclusiveNs, units) + " total") +
                    " in the code this line calls" + (line.ops ? " (its own kernels below)" : "") + ":\n\n";
  size_t shown = std::min<size_t>(line.callees.size(), kTopKernels);
  auto share = [&](int64_t ns) {
    return line.inclusiveNs > 0 ? formatShare(static_cast<double>(ns) / static_cast<double>(line.inclusiveNs))
                                : std::string("?");
  };
  for (size_t i = 0; i < shown; ++i) {
    const auto& c = line.callees[i];
    std::string where = c.path + ":" + std::to_string(c.line + 1);
    std::string head = c.label.empty() ? c.function : c.label;
    if (displayWidth(head) > 40) head = head.substr(0, 39) + "…";
    if (st.plain) {
      out += "  " + pad(formatDuration(c.gpuNs, units), 8, true) + "  " + pad(share(c.gpuNs), 5, true) + "  " + where +
             (head.empty() ? "" : "  " + head) + "\n";
    } else {
      std::string link = root.empty()
                             ? where
                             : "[" + where + "](" + pathToUri(root / c.path) + "#L" + std::to_string(c.line + 1) + ")";
      out += "- " + formatDuration(c.gpuNs, units) + " (" + share(c.gpuNs) + ") " + link +
             (head.empty() ? "" : " " + st.code(head)) + "\n";
    }
  }
  if (line.callees.size() > shown)
    out += (st.plain ? "  " : "- ") + std::to_string(line.callees.size() - shown) + " more lines\n";
  return out + "\n";
}

/// The kernel table; with kernels of other passes on the line, one table per group: forward,
/// backward (for this line's ops), recompute (activation checkpointing), backward work of no
/// forward op (on the line that called backward()), and the training-step kinds (optimizer
/// step, zero_grad, gradient clipping, AMP GradScaler).
std::string passGroups(const results::LineResult& line, int64_t denom, Units units, const Style& st) {
  if (std::all_of(line.kernels.begin(), line.kernels.end(),
                  [](const results::KernelStat& k) { return k.pass == attribution::Pass::Forward; }))
    return kernelTable(line, denom, units, st.plain);
  struct Group {
    const char* title;
    std::function<bool(const results::KernelStat&)> in;
  };
  const Group groups[] = {
      {"forward", [](const results::KernelStat& k) { return k.pass == attribution::Pass::Forward; }},
      {"backward",
       [](const results::KernelStat& k) { return k.pass == attribution::Pass::Backward && !k.noForwardOwner; }},
      {"recompute (activation checkpointing)",
       [](const results::KernelStat& k) { return k.pass == attribution::Pass::Recompute && !k.noForwardOwner; }},
      {"backward, no forward op (gradient accumulation, engine work)",
       [](const results::KernelStat& k) { return k.backward() && k.noForwardOwner; }},
      {"optimizer step", [](const results::KernelStat& k) { return k.pass == attribution::Pass::Optimizer; }},
      {"zero_grad", [](const results::KernelStat& k) { return k.pass == attribution::Pass::ZeroGrad; }},
      {"gradient clipping", [](const results::KernelStat& k) { return k.pass == attribution::Pass::GradClip; }},
      {"AMP GradScaler", [](const results::KernelStat& k) { return k.pass == attribution::Pass::AmpScaler; }},
  };
  std::string out;
  for (const auto& g : groups) {
    results::LineResult part = line;
    part.kernels.clear();
    int64_t ns = 0;
    uint64_t n = 0;
    for (const auto& k : line.kernels)
      if (g.in(k)) {
        part.kernels.push_back(k);
        ns += k.totalNs;
        n += k.launches;
      }
    if (part.kernels.empty()) continue;
    out += st.bold(std::string(g.title) + " " + formatDuration(ns, units)) + " · " +
           formatCount(n, "launch", "launches") + "\n\n" + kernelTable(part, denom, units, st.plain) + "\n";
  }
  return out;
}

std::string hoverText(const results::LineResult& line, const DocumentResults& dr, const results::ResultSet& rs,
                      const FeatureContext& ctx, Units units, const Style& st) {
  const auto& file = dr.file.file;
  const results::FunctionResult* fn = line.function.empty() ? nullptr : file.function(line.function);
  results::ViewOptions vo;
  vo.units = units;
  const results::LineView v = results::describeLine(rs, file, line, dr.file.stale, vo);
  const auto& t = v.text;
  std::vector<std::string> head;
  if (!t.time.empty()) {
    head.push_back(st.bold("GPU " + t.time));
    head.push_back(t.kernels);
    head.push_back(t.launches);
    if (!t.share.empty())
      head.push_back(t.share + " of " + (t.shareOf == v.function && fn ? st.code(t.shareOf) : t.shareOf));
  }
  if (!t.total.empty()) head.push_back(st.bold(t.total));
  if (!t.invocations.empty()) head.push_back(t.invocations);
  if (v.emulated) head.push_back(st.em("emulated"));
  if (ctx.results->provisional()) head.push_back(st.em("provisional: the run is still going"));
  std::string md = st.join(head) + "\n\n" + verdictSection(line, st);
  if (!t.syncBlocked.empty())
    md += st.bold(t.syncBlocked) + " in " + t.syncCalls +
          " (cudaDeviceSynchronize / StreamSynchronize / EventSynchronize, blocking copies such as " +
          st.code(".item()") + ")\n\n";
  const int64_t denom = v.shareDenominatorNs;
  if (line.isCallLine()) md += calleeSection(line, ctx.server.workspace().root(), units, st);
  md += passGroups(line, denom, units, st);
  std::string bounds;
  auto labels = attribution::kernelLabels(line.kernels, 40);
  for (size_t i = 0; i < line.kernels.size(); ++i)
    if (auto b = ctx.results->boundFor(line.kernels[i].fullName, line.kernels[i].name))
      bounds += "- " + st.code(labels[i]) + ": " + st.bold(std::string(ncu::boundName(b->bound)) + "-bound") + " — " +
                b->summary + " " + st.em("(" + std::string(BoundInfo::sourceName(b->source)) + ")") + "\n";
  if (!bounds.empty()) md += "\nNsight Compute:\n" + bounds;
  if (fn) {
    auto it = rs.previousFunctions.find(results::functionKey(file.path, fn->qualName));
    if (it != rs.previousFunctions.end() && it->second.gpuNs > 0) {
      double change = static_cast<double>(fn->gpuNs - it->second.gpuNs) / static_cast<double>(it->second.gpuNs);
      md += "\nvs previous run" + (rs.previousRunId.empty() ? std::string() : " (" + st.code(rs.previousRunId) + ")") +
            ": " + st.code(fn->qualName) + " " + formatDuration(it->second.gpuNs, units) + " → " +
            formatDuration(fn->gpuNs, units) + " (" + formatChange(change) + ")\n";
    }
  }
  const auto& p = rs.provenance;
  int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::vector<std::string> prov{
      "run " + st.code(p.runId),
      "backend " + p.backend + (p.emulated ? " (" + st.bold("emulated") + " GPU: modelled durations)" : ""),
      "GPU " + (p.gpu.empty() ? std::string("unknown")
                : st.plain    ? oneLine(p.gpu)
                              : markdownSafe(p.gpu)),
      "commit " + (p.gitCommit.empty() ? std::string("unknown")
                                       : st.code(p.gitCommit.substr(0, 10)) + (p.gitDirty ? " (dirty)" : ""))};
  if (std::string age = results::formatAge(p.createdUnix, now); !age.empty()) prov.push_back(age);
  prov.push_back("from " +
                 std::string(p.source == results::AttributionSource::KlRanges ? "kl: NVTX ranges" : "Python stacks"));
  md += (st.plain ? "\n" : "\n---\n") + st.join(prov);
  if (v.stale) md += "\n\n⚠ results are from an older version of this file";
  return md;
}

}  // namespace

void registerHover(Server& server, std::shared_ptr<FeatureContext> ctx) {
  server.addCapabilities({{"hoverProvider", true}});
  server.method<HoverParams, std::optional<Hover>>(
      "textDocument/hover", [&server, ctx](const HoverParams& p, Reply<std::optional<Hover>> reply) {
        auto doc = server.documents().get(p.textDocument.uri);
        const auto* dr = ctx->results->forDocument(doc);
        if (!doc || !dr || !dr->hasResults || !ctx->results->results()) return reply(std::optional<Hover>());
        uint32_t line = doc->lineOf(p.position);
        const results::LineResult* hit = nullptr;
        for (const auto& l : dr->file.file.lines)
          if (l.line <= line && line <= l.lastLine && (!hit || l.line >= hit->line)) hit = &l;
        if (!hit) return reply(std::optional<Hover>());
        Style st{ctx->plainHover()};
        std::string text = hoverText(*hit, *dr, *ctx->results->results(), *ctx, ctx->settings.units, st);
        reply(std::optional<Hover>(Hover{MarkupContent{st.plain ? MarkupKind::PlainText : MarkupKind::Markdown, text},
                                         doc->lineRange(hit->line, hit->lastLine)}));
      });
}

}  // namespace kl::lsp
