#include "core/results/line_view.h"

#include <algorithm>

#include "core/attribution/kernel_label.h"
#include "core/results/format.h"

namespace kl::results {

int64_t lineTimeNs(const LineResult& line) { return std::max(line.gpuNs, line.inclusiveNs); }

namespace {

/// The raw denominator of a line's shares: its function's GPU time, else the run's.
int64_t shareDenominator(int64_t functionNs, int64_t runNs) { return functionNs > 0 ? functionNs : runNs; }

/// "variant x3 (2 kernels): cunn_SoftMaxForward" — the kernels not shared by every variant.
std::string variantText(const LineResult& l, const attribution::KernelSet& v) {
  std::string out = "variant x" + std::to_string(v.invocations) + " (" + formatCount(v.kernels.size(), "kernel") + "):";
  std::vector<std::string> own;  // the kernels not every variant launches
  for (const auto& k : v.kernels)
    if (!std::all_of(l.variants.begin(), l.variants.end(), [&](const attribution::KernelSet& o) {
          return std::find(o.kernels.begin(), o.kernels.end(), k) != o.kernels.end();
        }))
      own.push_back(k);
  const auto labels = attribution::kernelLabels(own, 70);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i == 4) {
      out += " ...";
      break;
    }
    out += " " + labels[i];
  }
  if (own.empty()) out += " (only kernels the other variants launch too)";
  return out;
}

}  // namespace

double shareOfFunction(const LineResult& line, int64_t functionNs, int64_t runNs) {
  int64_t ns = lineTimeNs(line);
  int64_t denom = shareDenominator(functionNs, runNs);
  if (denom <= 0) denom = ns;  // nothing else known: the line is all of it
  if (denom <= 0) return 0;
  return std::min(1.0, static_cast<double>(ns) / static_cast<double>(denom));
}

LineFigures lineFigures(const LineResult& l, const LineContext& ctx, Units units) {
  LineFigures f;
  bool call = l.isCallLine();
  f.syncOnly = l.ops == 0 && l.syncCalls && !call;
  if (!call || l.ops > 0) {
    f.time = formatPassTime(l.gpuNs, l.backwardNs, units);
    f.kernels = formatCount(l.distinctKernels(), "kernel");
  }
  f.launches = formatCount(l.ops, "launch", "launches");
  if (call) {
    f.inclusive = formatDuration(static_cast<double>(l.inclusiveNs), units);
    f.total = f.inclusive + " total";
  }
  if (l.invocations > 1) f.invocations = formatCount(l.invocations, "invocation");
  if (l.syncCalls) {
    f.sync = std::string(kSyncGlyph) + " sync " + formatDuration(static_cast<double>(l.syncNs), units);
    f.syncBlocked = "CPU blocked " + formatDuration(static_cast<double>(l.syncNs), units);
    f.syncCalls = formatCount(l.syncCalls, "sync call");
  }
  if (shareDenominator(ctx.functionNs, ctx.runNs) > 0)
    f.share = formatShare(shareOfFunction(l, ctx.functionNs, ctx.runNs));
  if (ctx.runNs > 0) f.runShare = formatShare(static_cast<double>(lineTimeNs(l)) / static_cast<double>(ctx.runNs));
  f.shareOf = ctx.functionNs > 0 && !ctx.functionName.empty() ? ctx.functionName : "the run";
  f.stepKind = l.stepKind();
  if (l.atomic)
    f.atomic = "ATOMIC" + (l.atomicReason == attribution::AtomicReason::None
                               ? std::string()
                               : " (" + std::string(attribution::atomicReasonName(l.atomicReason)) + ")");
  bool owned = false, unowned = false;
  for (const auto& k : l.kernels)
    if (k.backward()) (k.noForwardOwner ? unowned : owned) = true;
  if (l.backwardNs > 0 && unowned && !owned)
    f.backwardNote = "backward work of no forward line: grad accumulation, engine";
  return f;
}

LineView describeLine(const LineResult& l, const LineContext& ctx, const ViewOptions& opts) {
  LineView v;
  v.path = l.path;
  v.line = l.line;
  v.lastLine = l.lastLine;
  v.function = l.function;
  v.gpuNs = l.gpuNs;
  v.backwardNs = l.backwardNs;
  v.forwardNs = l.gpuNs - l.backwardNs;
  for (const auto& k : l.kernels)
    if (k.pass == attribution::Pass::Recompute) v.recomputeNs += k.totalNs;
  v.inclusiveNs = l.inclusiveNs;
  v.callLine = l.isCallLine();
  v.launches = l.ops;
  v.invocations = l.invocations;
  v.distinctKernels = l.distinctKernels();
  v.syncNs = l.syncNs;
  v.syncCalls = l.syncCalls;
  v.share = shareOfFunction(l, ctx.functionNs, ctx.runNs);
  v.shareDenominatorNs = shareDenominator(ctx.functionNs, ctx.runNs);
  v.runShare = ctx.runNs > 0 ? static_cast<double>(lineTimeNs(l)) / static_cast<double>(ctx.runNs) : 0;
  v.atomic = l.atomic;
  v.atomicReason = l.atomicReason;
  v.note = l.note;
  v.suggestFocus = l.suggestFocus;
  v.stale = ctx.stale;
  v.emulated = ctx.emulated;
  v.backend = ctx.backend;
  auto labels = attribution::kernelLabels(l.kernels, opts.labelWidth);
  for (size_t i = 0; i < l.kernels.size(); ++i) {
    const auto& k = l.kernels[i];
    KernelView kv;
    kv.name = k.name;
    kv.fullName = k.fullName;
    kv.label = labels[i];
    kv.pass = k.pass;
    kv.noForwardOwner = k.noForwardOwner;
    if (k.pass != attribution::Pass::Forward)
      kv.passTag = std::string(attribution::passName(k.pass)) + (k.noForwardOwner ? ", no forward op" : "");
    kv.launches = k.launches;
    kv.totalNs = k.totalNs;
    kv.time = formatDuration(static_cast<double>(k.totalNs), opts.units);
    if (v.shareDenominatorNs > 0)
      kv.share = formatShare(static_cast<double>(k.totalNs) / static_cast<double>(v.shareDenominatorNs));
    v.kernels.push_back(std::move(kv));
  }
  for (const auto& set : l.variants) v.variants.push_back(variantText(l, set));
  v.text = lineFigures(l, ctx, opts.units);
  return v;
}

LineContext lineContext(const ResultSet& rs, const FileResult& file, const LineResult& line, bool stale) {
  LineContext c;
  if (const FunctionResult* fn = line.function.empty() ? nullptr : file.function(line.function)) {
    c.functionNs = fn->gpuNs;
    c.functionName = fn->qualName;
  }
  c.runNs = rs.totalGpuNs;
  c.stale = stale;
  c.emulated = rs.provenance.emulated;
  c.backend = rs.provenance.backend;
  return c;
}

LineView describeLine(const ResultSet& rs, const FileResult& file, const LineResult& line, bool stale,
                      const ViewOptions& opts) {
  return describeLine(line, lineContext(rs, file, line, stale), opts);
}

std::string hintLabel(const LineFigures& f, std::string_view prefix) {
  if (f.syncOnly) return f.sync;
  std::string out;
  for (const std::string* part : {&f.time, &f.kernels, &f.total, &f.sync}) {
    if (part->empty()) continue;
    if (out.empty() && part != &f.sync && !prefix.empty())
      out = std::string(prefix) + " ";
    else if (!out.empty())
      out += " · ";
    out += *part;
  }
  return out;
}

std::string hintLabel(const LineResult& line, Units units, std::string_view prefix) {
  return hintLabel(lineFigures(line, {}, units), prefix);
}

}  // namespace kl::results
