// The convergence loop (DESIGN.md §2): plan -> instrument -> run -> attribute -> decide, round after
// round, until every attributed kernel launch lies in a leaf range with at most one launch per
// invocation or in an atomic line; or the round budget is spent; or the token is cancelled. The
// result always says which, and why.
//
//   LoopConfig cfg; cfg.workspace = ...; cfg.entry = "python train.py"; cfg.focus = ...;
//   auto exec = RunnerExecutor::create(runConfig, &store);        // or any RoundExecutor
//   auto res = runLoop(cfg, [&](const std::string& entry) { ... executor for entry ... }, cb, cancel);
//
// Strategies: `Edits` (the default) instruments statements and refines breadth-first; `Lines`
// runs once with one NVTX range per executed line of the focus functions (and the workspace
// functions statically reachable from them), opened by the probe (line_strategy.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/attribution/line_result.h"
#include "core/planner/decide.h"
#include "core/planner/executor.h"
#include "core/planner/plan.h"
#include "core/support/cancel.h"
#include "core/support/note.h"
#include "core/support/result.h"

namespace kl::planner {

enum class FocusKind { Function, Lines, Kernel };
enum class Strategy { Edits, Lines };
enum class HarnessMode { Off, Auto, Always };

struct Focus {
  FocusKind kind = FocusKind::Function;
  std::string path;        // workspace-relative (Function / Lines; Kernel: optional start function)
  std::string qualName;    // Function (and optionally Kernel)
  uint32_t firstLine = 0;  // Lines: 1-based inclusive
  uint32_t lastLine = 0;
  std::string kernelPattern;  // Kernel
};

struct LoopConfig {
  std::filesystem::path workspace;  // absolute root
  std::filesystem::path cwd;        // where the entry runs (default: workspace)
  std::string entry;                // the user's command line
  Focus focus;
  Strategy strategy = Strategy::Edits;
  int maxRounds = 8;  // edit strategy: instrumented rounds at most
  Policy policy;
  bool measureBaseline = true;  // one uninstrumented run for the wall-time overhead
  HarnessMode harness = HarnessMode::Off;
  std::string harnessFactory;  // "module:function" building the object (settings)
  int lineDepth = 8;           // line strategy: call depth of reachable functions traced
  /// Edit strategy: one uninstrumented discovery pass first (its timings are not reported) that
  /// records which workspace functions ran from which line; the loop then follows the calls that
  /// actually ran and places ranges several levels deep at once (observed_calls.h).
  bool discoverCalls = true;
};

/// The loop's lines are the one LineResult of kernlens (core/attribution/line_result.h): one
/// source location and what it launched (exclusive: not inside a finer managed range), with the
/// loop's verdict (atomic + reason, note). Lines are 0-based in the planner's model of the file.
using attribution::LineResult;

/// Why the loop stopped.
enum class StopReason { Converged, RoundBudget, Cancelled, Failed };
/// "converged" | "round_budget" | "cancelled" | "failed" (the JSON spelling).
const char* stopReasonName(StopReason r);

struct RoundLog {
  int index = 0;
  size_t ranges = 0;     // ranges wrapped in the round
  int64_t pushes = 0;    // kl: range invocations
  int64_t launches = 0;  // GPU ops
  int64_t wallMs = 0;
  int refined = 0, resolved = 0, atomic = 0, idle = 0, refused = 0;
  std::vector<Note> notes;            // the runner's notes on the round, then the loop's
  std::string dir;                    // the round's folder ("" when none)
  std::vector<std::string> profiles;  // the profile files read
  std::string profilerVersion, gpu;   // as the profile says ("" when unknown / none captured)
};

struct LoopResult {
  bool converged = false;
  StopReason stopReason = StopReason::RoundBudget;
  std::string why;  // one sentence: what made it stop
  int rounds = 0;   // instrumented rounds run
  std::string backend;
  bool emulated = false;
  Strategy strategy = Strategy::Edits;
  std::vector<LineResult> lines;                     // sorted by (path, line)
  std::vector<attribution::UnmappedEntry> unmapped;  // by GPU time, descending
  std::vector<RoundLog> roundLog;
  std::vector<std::string> refusals;  // ranges refused for the budget, with the reason
  /// Widening, harness, unplaced ranges, ...; the runner's notes once each, with their rounds.
  std::vector<Note> notes;
  int64_t baselineWallMs = -1;   // -1: not measured
  int64_t discoveryWallMs = -1;  // -1: no discovery pass
  size_t observedFunctions = 0;  // workspace code objects the discovery pass saw run
  int64_t lastWallMs = 0;
  size_t rangesInserted = 0;                       // distinct ranges wrapped over all rounds
  double pushesPerLaunch = 0;                      // of the last round
  std::string focusPath, focusFunction;            // what the text view shows
  uint32_t focusFirstLine = 0, focusLastLine = 0;  // 1-based, 0 = whole file / function
  std::string entry;                               // the entry actually run (the harness when generated)
};

struct LoopProgress {
  int round = 0;  // 0-based; -1 for the baseline run
  int maxRounds = 0;
  size_t ranges = 0;
  /// What runs: "round 2/8", "baseline", "discovery", "line strategy" (prefixes the runner's
  /// phase reports of that run: "round 2/8 · running (3 s)").
  std::string stage;
  std::string message;  // "round 2/8: 14 ranges"
};

struct LoopCallbacks {
  std::function<void(const LoopProgress&)> onRound;  // before each run
  /// After a round's results are recorded (RoundExecutor::record): a front end may read them
  /// from the store and show them while the loop goes on. Called on the loop's thread.
  std::function<void(int round)> onRecorded;
  std::function<void(std::string_view)> log;  // decisions, one line each
};

/// Makes the executor for an entry command (the harness switches entries).
using ExecutorFactory = std::function<Result<std::shared_ptr<RoundExecutor>>(const std::string& entry)>;

/// Runs the loop. Errors only for bad configuration (unknown focus, bad regex, no entry) or a first
/// round that cannot run at all; a later failure or a cancel ends the loop with the results so far
/// (StopReason::Failed / Cancelled).
Result<LoopResult> runLoop(const LoopConfig& cfg, const ExecutorFactory& makeExecutor, const LoopCallbacks& cb = {},
                           const CancellationToken& cancel = {});

/// The workspace-relative Python script (or `-m` module file) an entry command runs; nullopt when
/// it is not a Python file in the workspace.
std::optional<std::string> entryScript(const std::string& entry, const std::filesystem::path& cwd,
                                       WorkspaceIndex& index);

}  // namespace kl::planner
