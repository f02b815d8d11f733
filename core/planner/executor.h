// RoundExecutor: how the loop runs one round (instrument + profile + read) and records what it
// decided on. The loop tabulates each round's profile ONCE (attribution::tabulateRanges) and hands
// that same table back through record(). The production implementation (RunnerExecutor) is the
// runner's RoundRunner, optionally recording every round in the store; tests substitute a
// scripted one (tests/unit/planner/scripted_executor.h).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/attribution/line_result.h"
#include "core/attribution/range_table.h"
#include "core/nvtx/overlay.h"
#include "core/profile/model.h"
#include "core/runner/round_runner.h"
#include "core/store/store.h"
#include "core/support/cancel.h"
#include "core/support/result.h"

namespace kl::planner {

/// RoundRequest::index of the discovery pass (uninstrumented, with call discovery).
inline constexpr int kDiscoveryRound = -2;

struct RoundRequest {
  int index = 0;                      // -1: the uninstrumented baseline run; kDiscoveryRound
  std::vector<nvtx::FilePlan> files;  // empty: no overlay
  /// Line strategy: the probe's line-range spec (core/planner/line_strategy.h) for this run.
  std::optional<std::filesystem::path> lineSpec;
  /// Call discovery (RoundOutcome::callsFile); only for runs whose timings are not reported.
  bool discoverCalls = false;
  /// emit_nvtx's autograd sequence ranges (runner::RoundPaths::autogradRanges): off in the
  /// baseline run and when call discovery saw no backward pass.
  bool autogradRanges = true;
};

struct RoundOutcome {
  std::shared_ptr<const profile::ProfileModel> model;
  nvtx::Overlay overlay;
  int64_t wallMs = 0;
  bool emulated = false;
  std::string roundDir;                         // where its files are ("" when none)
  std::vector<Note> notes;                      // the runner's (no GPU kernels captured, emulator guesses, ...)
  std::filesystem::path callsFile;              // call discovery output ("" when none)
  std::vector<std::filesystem::path> profiles;  // the profile files read (one per rank)
  std::string profilerVersion;                  // "nsys 2022.4.2...", the emulator's version
  std::string gpu;                              // GPU names in the profile ("" when none was captured)
};

class RoundExecutor {
 public:
  virtual ~RoundExecutor() = default;
  virtual Result<RoundOutcome> run(const RoundRequest& req, const CancellationToken& cancel) = 0;
  /// The table the loop computed from the last run()'s model (instrumented rounds only, in order).
  virtual Result<void> record(const RoundRequest& req, const attribution::RangeTable& table,
                              const CancellationToken& cancel) = 0;
  /// What the loop concluded about the ranges of the recorded round `round`, once it has decided:
  /// its lines (LoopResult::lines), each with its verdict (atomic with its reason, note, focus
  /// suggestion) and the range that measured it (range.name). Called at most once per loop.
  virtual Result<void> annotate(int round, const std::vector<attribution::LineResult>& lines) = 0;
  virtual std::string backendName() const = 0;
  /// The run directory (for generated files such as the harness); "" when none.
  virtual std::filesystem::path runDir() const = 0;
};

/// Over runner::RoundRunner. With a store, begins a run (provenance) on the first round, writes
/// every instrumented round in one transaction and finishes the run in finish().
class RunnerExecutor : public RoundExecutor {
 public:
  static Result<std::unique_ptr<RunnerExecutor>> create(runner::RunConfig cfg, store::Store* store = nullptr);
  ~RunnerExecutor() override;
  Result<RoundOutcome> run(const RoundRequest& req, const CancellationToken& cancel) override;
  /// Converts the table for the store (disk lines, functions) and writes the round.
  Result<void> record(const RoundRequest& req, const attribution::RangeTable& table,
                      const CancellationToken& cancel) override;
  /// Writes the lines' verdicts onto the round's stored ranges (Store::annotateRanges); no-op
  /// without a store.
  Result<void> annotate(int round, const std::vector<attribution::LineResult>& lines) override;
  std::string backendName() const override;
  std::filesystem::path runDir() const override;
  /// Finishes the store's run row (status Ok / Failed / Cancelled / Interrupted); idempotent.
  void finish(store::RunStatus status, const std::string& error = "");
  /// Forwarded to RoundRunner::run.
  runner::ProgressFn progress;
  runner::OutputFn output;

 private:
  RunnerExecutor(runner::RoundRunner rr, store::Store* store) : rr_(std::move(rr)), store_(store) {}
  runner::RoundRunner rr_;
  store::Store* store_ = nullptr;
  std::optional<store::RunInfo> run_;
  std::optional<runner::RoundResult> pending_;  // the last run(), until record()
  std::map<int, int64_t> roundIds_;             // round index -> the store's round id
  bool finished_ = false;
};

}  // namespace kl::planner
