// LineView: what a person is shown about one source line, editor-neutral — THE description every
// front end renders (hover, inlay hint and its tooltip, the run view, `kernlens profile`'s text,
// the `kernlens/lines@1` document of `map` and the MCP line tools). Front ends compose no user
// text from raw results: they lay out a LineView's fields (Markdown, plain text, JSON) and add
// only markup and their own editor state (e.g. "provisional").
//
// Each figure is computed once here and worded once (core/support/format.h): the numbers
// (forward / backward / recompute time, launches, invocations, share of its function) and their
// words (LineFigures). describeLine() builds it from a LineResult and the facts around it
// (LineContext); the ResultSet overload fills the context from a result set.
//
// The hint label is assembled from the figures in order of priority (hintLabel), so a shorter
// label drops the lowest-priority figures rather than rewording them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/results/result_set.h"
#include "core/support/format.h"

namespace kl::results {

/// The time a line is ranked and filtered by: its own GPU time, or for a call line its inclusive
/// time when that is larger (the work of the workspace functions it calls).
int64_t lineTimeNs(const LineResult& line);

/// THE share of a line in its function: lineTimeNs(line) over the GPU time of the function
/// holding it (`functionNs`), or of the run (`runNs`) at module level or when the function has
/// none of its own; never above 1 (a call line whose callees outweigh its function's own kernels
/// is the whole of it). 0 when there is no denominator.
double shareOfFunction(const LineResult& line, int64_t functionNs, int64_t runNs);

/// The words of a line's figures, each formatted once.
struct LineFigures {
  std::string time;         // own GPU time by pass: "420 µs + bwd 910 µs"; "" for a call line without kernels
  std::string kernels;      // "5 kernels" (distinct names); "" for a call line without kernels
  std::string launches;     // "15 launches"
  std::string inclusive;    // a call line's inclusive time: "730 µs"; "" otherwise
  std::string total;        // the same as the hint and hover say it: "730 µs total"; "" otherwise
  std::string invocations;  // "3 invocations" when more than one, else ""
  std::string sync;         // "‖ sync 3.10 ms" when the line blocks the CPU in sync calls, else ""
  std::string syncBlocked;  // "CPU blocked 3.10 ms" when it blocks, else ""
  std::string syncCalls;    // "2 sync calls" when it blocks, else ""
  std::string share;        // "59 %" (shareOfFunction), "" when there is no denominator
  std::string shareOf;      // what the share is of: the function's qualified name, or "the run"
  std::string runShare;     // lineTimeNs over the run's GPU time ("12 %"), "" when the run has none
  std::string stepKind;     // the training-step kinds: "optimizer", "amp-scaler+optimizer"; ""
  std::string atomic;       // "ATOMIC" or "ATOMIC (library)" for an atomic line, else ""
  /// Said after the time when all of the line's backward work has no forward op:
  /// "backward work of no forward line: grad accumulation, engine"; "" otherwise.
  std::string backwardNote;
  /// The line blocks the CPU in sync calls and launched nothing: its hint is the sync figure alone.
  bool syncOnly = false;
};

/// One kernel (GPU op name, per pass) of a line as shown.
struct KernelView {
  std::string name;      // the short display name (KernelStat::name)
  std::string fullName;  // demangled when known
  std::string label;     // the label that tells it apart from the line's other kernels (kernel_label.h)
  attribution::Pass pass = attribution::Pass::Forward;
  bool noForwardOwner = false;
  /// "" for forward, else the pass ("backward", "recompute", "optimizer", ...) with
  /// ", no forward op" for backward work of no forward op.
  std::string passTag;
  uint64_t launches = 0;
  int64_t totalNs = 0;
  std::string time;   // formatDuration(totalNs)
  std::string share;  // of the line's share denominator ("" when none)
};

/// The facts around a line that its description needs.
struct LineContext {
  int64_t functionNs = 0;    // GPU time of the function holding the line (0: module level / unknown)
  std::string functionName;  // its qualified name ("" when none)
  int64_t runNs = 0;         // every GPU op of the run (ResultSet::totalGpuNs)
  bool stale = false;        // measured on an older version of the file
  bool emulated = false;     // the emulate backend modelled every number
  std::string backend;       // "nsys", "torch", "emulate", "loaded"
};

struct ViewOptions {
  Units units = Units::Auto;
  size_t labelWidth = 44;  // kernel labels, code points
};

struct LineView {
  // Where.
  std::string path;                 // workspace-relative
  uint32_t line = 0, lastLine = 0;  // 0-based
  std::string function;             // qualified name ("" = module level)

  // The numbers.
  int64_t gpuNs = 0;        // own GPU time (every pass)
  int64_t forwardNs = 0;    // gpuNs - backwardNs
  int64_t backwardNs = 0;   // launched by the backward pass for this line's ops (recompute included)
  int64_t recomputeNs = 0;  // the part of backwardNs that recomputed activations (checkpointing)
  int64_t inclusiveNs = 0;  // 0 = not measured
  bool callLine = false;    // LineResult::isCallLine
  uint64_t launches = 0;
  uint32_t invocations = 0;
  uint32_t distinctKernels = 0;
  int64_t syncNs = 0;
  uint32_t syncCalls = 0;
  double share = 0;  // shareOfFunction
  int64_t shareDenominatorNs = 0;
  double runShare = 0;  // lineTimeNs / the run's GPU time (rankings across files)

  // The loop's verdict.
  bool atomic = false;
  attribution::AtomicReason atomicReason = attribution::AtomicReason::None;
  std::string note;          // the loop's note (untrusted: names workspace functions)
  std::string suggestFocus;  // FILE::QUALNAME to profile instead, or ""

  std::vector<KernelView> kernels;    // most time first
  std::vector<std::string> variants;  // "variant x3 (2 kernels): a b" per distinct kernel set (> 1 sets)
  /// Lines whose kernels were fused with this line's (reserved: filled by no producer yet).
  std::vector<std::string> fusedWith;

  // Provenance and freshness.
  bool stale = false;
  bool emulated = false;
  std::string backend;

  LineFigures text;
};

/// The words of a line's figures alone (no kernels): what a hint label needs, cheap enough for
/// every line of a file.
LineFigures lineFigures(const LineResult& line, const LineContext& ctx, Units units = Units::Auto);

/// THE description of a line.
LineView describeLine(const LineResult& line, const LineContext& ctx, const ViewOptions& opts = {});

/// The context of a line of `file` in `rs` (its function's GPU time: `file`'s functions).
LineContext lineContext(const ResultSet& rs, const FileResult& file, const LineResult& line, bool stale = false);

/// describeLine with lineContext.
LineView describeLine(const ResultSet& rs, const FileResult& file, const LineResult& line, bool stale = false,
                      const ViewOptions& opts = {});

/// The inlay-hint label, from the figures by priority: time (or, for a call line, time and
/// kernels when it has its own, then its total), kernel count, then the sync figure:
/// "◷ 420 µs + bwd 910 µs · 5 kernels", "◷ 730 µs total", "◷ 12.0 µs · 1 kernel · 730 µs total",
/// "… · ‖ sync 3.10 ms", "‖ sync 3.10 ms" alone for a line that only blocks. `prefix` precedes
/// the time (empty: none).
std::string hintLabel(const LineFigures& f, std::string_view prefix);
/// The default glyph before a hint's time, and the one before CPU time blocked in sync calls:
/// both are in Debian's default fonts (DejaVu), no colour-emoji font needed.
inline constexpr std::string_view kHintPrefix = "◷";
inline constexpr std::string_view kSyncGlyph = "‖";
/// hintLabel of lineFigures(line) (no context: a hint shows no share).
std::string hintLabel(const LineResult& line, Units units = Units::Auto, std::string_view prefix = kHintPrefix);

}  // namespace kl::results
