#include "core/planner/executor.h"

namespace kl::planner {

Result<std::unique_ptr<RunnerExecutor>> RunnerExecutor::create(runner::RunConfig cfg, store::Store* store) {
  auto rr = runner::RoundRunner::create(std::move(cfg));
  if (!rr) return rr.error();
  return std::unique_ptr<RunnerExecutor>(new RunnerExecutor(std::move(*rr), store));
}

RunnerExecutor::~RunnerExecutor() {
  if (run_ && !finished_) finish(store::RunStatus::Failed, "the loop ended without finishing its run");
}

std::string RunnerExecutor::backendName() const { return runner::backendName(rr_.backend().kind()); }

std::filesystem::path RunnerExecutor::runDir() const { return rr_.runDir(); }

void RunnerExecutor::finish(store::RunStatus status, const std::string& error) {
  if (!run_ || finished_ || !store_) return;
  run_->status = status;
  run_->error = error;
  (void)store_->finishRun(*run_);
  finished_ = true;
}

Result<RoundOutcome> RunnerExecutor::run(const RoundRequest& req, const CancellationToken& cancel) {
  // The store's run row exists from the first run on (the baseline included), so a run that
  // fails or is cancelled before its first instrumented round is still recorded with its status.
  if (store_ && !run_) {
    run_ = rr_.runInfo();
    auto id = store_->beginRun(*run_);
    if (!id) {
      run_.reset();
      return Error::io("store: " + id.error().message);
    }
  }
  runner::RoundPlan plan;
  // The baseline and the discovery pass get their own directories.
  plan.index = req.index == kDiscoveryRound ? 998 : req.index < 0 ? 999 : req.index;
  plan.files = req.files;
  if (req.lineSpec) plan.lineRanges = *req.lineSpec;
  plan.discoverCalls = req.discoverCalls;
  plan.autogradRanges = req.autogradRanges;
  auto res = rr_.run(plan, cancel, progress, output);
  if (!res) return res.error();
  RoundOutcome out;
  out.model = res->model;
  out.overlay = res->overlay;
  out.wallMs = res->wallMs;
  out.emulated = res->emulated;
  out.roundDir = res->paths.roundDir.string();
  out.notes = res->notes;
  out.callsFile = res->callsFile;
  out.profiles = res->profiles;
  out.profilerVersion = res->profilerVersion;
  out.gpu = res->gpu;
  pending_.reset();
  if (req.index >= 0) {
    res->model.reset();  // the loop holds it; the store needs only the table
    pending_ = std::move(*res);
  }
  return out;
}

Result<void> RunnerExecutor::record(const RoundRequest& req, const attribution::RangeTable& table,
                                    const CancellationToken& cancel) {
  if (!pending_ || pending_->index != req.index) return Error::internal("record() without a matching run()");
  if (auto a = pending_->attach(table, cancel); !a) return a.error();
  if (store_) {
    auto rid = store_->writeRound(run_->id, pending_->record());
    if (!rid) return Error::io("store: " + rid.error().message);
    roundIds_[req.index] = *rid;
    run_->gpu = pending_->gpu;
    run_->profilerVersion = pending_->profilerVersion;
    run_->emulated = pending_->emulated;
  }
  pending_.reset();
  return {};
}

Result<void> RunnerExecutor::annotate(int round, const std::vector<attribution::LineResult>& lines) {
  if (!store_) return {};
  auto it = roundIds_.find(round);
  if (it == roundIds_.end()) return Error::internal("annotate() of a round that was not recorded");
  if (auto r = store_->annotateRanges(it->second, lines); !r) return Error::io("store: " + r.error().message);
  return {};
}

}  // namespace kl::planner
