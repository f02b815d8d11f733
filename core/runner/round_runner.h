// RoundRunner: one profiling round = instrument (overlay) -> run the entry under a backend and a
// launch wrapper -> read the profile(s) -> per-line results. A convergence loop drives it round
// after round with the same runner (same run directory, same backend):
//
//   auto rr = RoundRunner::create(cfg);                 // detects the backend, makes the run dir
//   store.beginRun(info = rr->runInfo());
//   RoundPlan plan{.index = 0, .files = {...}};        // what to wrap (the planner decides)
//   auto res = rr->run(plan, cancel, onProgress, onOutput);    // round 0
//   store.writeRound(info.id, res->record());
//   ... next plan from res->lines (planner), rr->run(next, ...), ...
//
// Layout on disk: <workspace>/.kernlens/runs/<run key>/round<k>/{overlay/, out/, stdout.log,
// stderr.log, export.log}. Errors (one line + context): the program failed (exit code and the
// last lines of its stderr, the log path), timed out, produced no or an empty profile, the
// profiler is missing; Error::Cancelled when the token fires (the process group is killed).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/attribution/range_table.h"
#include "core/nvtx/overlay.h"
#include "core/profile/model.h"
#include "core/runner/backend.h"
#include "core/runner/launch.h"
#include "core/runner/process.h"
#include "core/store/results.h"
#include "core/store/store.h"
#include "core/support/cancel.h"
#include "core/support/note.h"
#include "core/support/result.h"

namespace kl::runner {

struct RunConfig {
  std::filesystem::path workspace;  // root: an absolute path (relative is refused)
  std::string entry;                // "python train.py --steps 2" (shell-like words, no expansion)
  std::filesystem::path cwd;        // where the entry runs; default: workspace; relative: to it
  BackendKind backend = BackendKind::Emulate;
  LaunchOptions launch;
  /// The probe's interpreter: "" = the one the entry runs (entryInterpreter: `python3 …` through
  /// PATH, `.venv/bin/python …`, a python #! script); else a name or path (--python, setting python).
  std::string python;
  std::filesystem::path probeDir;  // default: findProbeDir()
  std::optional<std::string> nsysPath;
  std::string gpu = "h100";              // emulate GPU model
  std::chrono::seconds timeout{900};     // per round
  std::string focusPath, focusFunction;  // provenance (and the store's "same function" queries)
  std::string runKey;                    // default: generated "<UTC time>-<pid>-<n>"
  /// Run folders kept under .kernlens/runs: when a run starts, the oldest beyond this many are
  /// deleted (never one touched within timeout + 60 s: it may belong to a live run); 0 = all.
  int keepRuns = 20;
};

/// Deletes the oldest folders of `runsDir` (by modification time) so that at most `keep` remain,
/// sparing any modified within `spare`; returns how many were deleted.
int pruneRunDirs(const std::filesystem::path& runsDir, int keep, std::chrono::seconds spare);

/// What to instrument in one round.
struct RoundPlan {
  int index = 0;
  std::vector<nvtx::FilePlan> files;
  /// Line strategy: the spec of the functions whose executed lines the probe wraps in ranges
  /// (core/planner/line_strategy.h); passed as `--line-ranges`.
  std::filesystem::path lineRanges;
  /// Call discovery: the probe records which workspace functions ran and from which line
  /// (kernlens_probe/call_discovery.py) into RoundResult::callsFile. Slows the program down: ask
  /// for it only in a run whose timings are not reported.
  bool discoverCalls = false;
  /// RoundPaths::autogradRanges for this round.
  bool autogradRanges = true;
};

struct RoundProgress {
  /// Failed: the program failed or timed out (reported once, just before run() returns the error).
  enum class Stage { Instrumenting, Running, Collecting, Reading, Attributing, Done, Failed };
  Stage stage = Stage::Instrumenting;
  double fraction = 0;  // 0..1 over the whole round (running is estimated from elapsed time)
  std::string message;  // "running (12 s)"
  /// Failed: the log that tells why (the program's stderr, or its Slurm job's output), for a
  /// front end to point at; the error's message names it too, but is never parsed for it.
  std::string log;
};
const char* stageName(RoundProgress::Stage s);
using ProgressFn = std::function<void(const RoundProgress&)>;
/// Output lines of the profiled program ("stdout"/"stderr", line), as they come.
using OutputFn = std::function<void(std::string_view stream, std::string_view line)>;

struct RoundResult {
  int index = 0;
  RoundPaths paths;
  nvtx::Overlay overlay;
  std::vector<std::filesystem::path> profiles;
  std::shared_ptr<const profile::ProfileModel> model;
  /// The store's per-line results: empty until attach() gives the round's RangeTable.
  store::RoundResults lines;
  ProcessResult process;
  std::string profilerVersion;  // from the profile when it says (nsys export), else the backend's
  std::string gpu;              // GPU names in the profile ("" when none was captured)
  bool emulated = false;
  int64_t wallMs = 0;
  std::vector<store::FileSnapshot> files;  // disk texts of the instrumented files
  /// e.g. "no GPU kernels were captured ...", "no kl: range was recorded ..." (instrumented code
  /// that never ran), the emulator's unmodelled ops.
  std::vector<Note> notes;
  std::filesystem::path callsFile;  // call discovery output ("" when not asked for or not written)
  std::filesystem::path workspace;  // the run's workspace root (files a range names)
  /// Converts the round's RangeTable (tabulated ONCE per round, by whoever decides on it) into
  /// `lines`, with the overlay's disk lines and functions. Fails only when cancelled.
  Result<void> attach(const attribution::RangeTable& table, const CancellationToken& cancel = {});
  /// The round as the store writes it.
  store::RoundRecord record() const;
};

class RoundRunner {
 public:
  /// Validates the config (entry parses, workspace exists), finds the probe, detects the backend
  /// (nsys version) and creates the run directory.
  static Result<RoundRunner> create(RunConfig cfg);

  const RunConfig& config() const { return cfg_; }
  const std::string& runKey() const { return cfg_.runKey; }
  const std::filesystem::path& runDir() const { return runDir_; }
  const Backend& backend() const { return *backend_; }
  /// Provenance for Store::beginRun (git via libgit2; status 'running').
  store::RunInfo runInfo() const;

  /// Runs one round: instrument, run, read the profile(s). Attribution is the caller's (once,
  /// then RoundResult::attach). Thread-compatible: one round at a time per runner.
  Result<RoundResult> run(const RoundPlan& plan, const CancellationToken& cancel = {}, const ProgressFn& progress = {},
                          const OutputFn& output = {});

 private:
  RoundRunner() = default;
  // The steps of run().
  Result<void> instrument(const RoundPlan& plan, RoundResult& res) const;
  Result<void> runProgram(RoundResult& res, const CancellationToken& cancel, const ProgressFn& progress,
                          const OutputFn& output) const;
  Result<void> readProfiles(RoundResult& res, const CancellationToken& cancel, const ProgressFn& progress) const;
  void addNotes(RoundResult& res) const;
  RunConfig cfg_;
  std::vector<std::string> entryArgv_;
  std::filesystem::path runDir_;
  std::shared_ptr<Backend> backend_;
};

}  // namespace kl::runner
