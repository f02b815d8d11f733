#include "core/planner/profile_request.h"

#include <optional>

#include "core/nvtx/naming.h"
#include "core/store/store.h"

namespace kl::planner {

namespace fs = std::filesystem;

const char* requestFieldName(RequestField f) {
  switch (f) {
    case RequestField::Workspace: return "workspace";
    case RequestField::Entry: return "entry";
    case RequestField::Cwd: return "cwd";
    case RequestField::File: return "file";
    case RequestField::Function: return "function";
    case RequestField::Lines: return "lines";
    case RequestField::KernelPattern: return "kernel_pattern";
    case RequestField::Harness: return "harness";
    case RequestField::HarnessFactory: return "harness_factory";
    case RequestField::Rounds: return "rounds";
    case RequestField::MaxPushesPerLaunch: return "max_pushes_per_launch";
    case RequestField::MaxWallOverhead: return "max_wall_overhead";
  }
  return "";
}

namespace {

CheckedRequest refuse(RequestField f, std::string message) { return {std::nullopt, {f, std::move(message)}}; }

}  // namespace

CheckedRequest checkRequest(const ProfileRequest& req) {
  LoopConfig c;
  std::error_code ec;
  if (req.run.workspace.empty() || !req.run.workspace.is_absolute())
    return refuse(RequestField::Workspace, "must be an absolute directory path");
  if (!fs::is_directory(req.run.workspace, ec))
    return refuse(RequestField::Workspace, req.run.workspace.string() + ": not a directory");
  c.workspace = req.run.workspace.lexically_normal();
  if (!req.run.cwd.empty() && !req.run.cwd.is_absolute())
    return refuse(RequestField::Cwd, "must be an absolute directory path (or empty: the workspace)");
  c.cwd = req.run.cwd.empty() ? c.workspace : req.run.cwd.lexically_normal();
  if (req.run.entry.empty()) return refuse(RequestField::Entry, "the command that runs the program is missing");
  c.entry = req.run.entry;

  if (!req.function.empty() && req.lines) return refuse(RequestField::Lines, "give a function or lines, not both");
  if (req.lines && !req.kernelPattern.empty())
    return refuse(RequestField::KernelPattern, "combines with a function, not with lines");
  if ((!req.function.empty() || req.lines) && req.file.empty())
    return refuse(RequestField::File, "a function or lines need the file they are in");
  if (req.file.empty() && req.kernelPattern.empty())
    return refuse(RequestField::Function, "a function, lines of a file or a kernel pattern is needed");
  if (!req.file.empty() && req.function.empty() && !req.lines)
    return refuse(RequestField::Function, "a function or lines of " + req.file.string() + " are needed");
  if (!req.file.empty()) {
    fs::path abs = req.file.is_absolute() ? req.file : c.workspace / req.file;
    if (!fs::is_regular_file(abs, ec)) return refuse(RequestField::File, req.file.string() + ": no such file");
    auto rel = nvtx::relativeToWorkspace(c.workspace, abs);
    if (!rel)
      return refuse(RequestField::File, req.file.string() + ": not inside the workspace " + c.workspace.string());
    c.focus.path = *rel;
  }
  if (req.lines) {
    if (req.lines->first == 0 || req.lines->last < req.lines->first)
      return refuse(RequestField::Lines, "need 1 <= first <= last, got " + std::to_string(req.lines->first) + "-" +
                                             std::to_string(req.lines->last));
    c.focus.kind = FocusKind::Lines;
    c.focus.firstLine = req.lines->first;
    c.focus.lastLine = req.lines->last;
  } else if (!req.function.empty()) {
    c.focus.kind = FocusKind::Function;
    c.focus.qualName = req.function;
  }
  if (!req.kernelPattern.empty()) {
    if (auto re = compileKernelPattern(req.kernelPattern); !re)
      return refuse(RequestField::KernelPattern, re.error().message);
    c.focus.kind = FocusKind::Kernel;
    c.focus.kernelPattern = req.kernelPattern;
  }
  c.strategy = req.strategy;
  c.harness = req.harness;
  if (c.harness != HarnessMode::Off && (c.focus.kind != FocusKind::Function || c.focus.qualName.empty()))
    return refuse(RequestField::Harness, "a harness is generated for a focus function only");
  c.harnessFactory = req.harnessFactory;
  if (req.rounds < 1 || req.rounds > 64) return refuse(RequestField::Rounds, "must be between 1 and 64");
  c.maxRounds = req.rounds;
  c.measureBaseline = req.baseline;
  c.discoverCalls = req.discovery;
  if (!(req.maxPushesPerLaunch > 0)) return refuse(RequestField::MaxPushesPerLaunch, "must be > 0");
  c.policy.maxPushesPerLaunch = req.maxPushesPerLaunch;
  if (!(req.maxWallOverhead >= 0)) return refuse(RequestField::MaxWallOverhead, "must be >= 0");
  c.policy.maxWallOverhead = req.maxWallOverhead;
  return {std::move(c), {}};
}

Result<LoopResult> runProfile(const ProfileRequest& req, const ProfileHooks& hooks, const CancellationToken& cancel) {
  auto checked = checkRequest(req);
  if (!checked.config)
    return Error::invalid(std::string(requestFieldName(checked.error.field)) + ": " + checked.error.message);
  const LoopConfig& cfg = *checked.config;
  std::optional<store::Store> st;
  if (req.store) {
    auto s = store::Store::open(cfg.workspace);
    if (!s) return Error::io("store: " + s.error().message);
    st.emplace(std::move(*s));
  }
  std::vector<std::shared_ptr<RunnerExecutor>> executors;
  ExecutorFactory make = [&](const std::string& entry) -> Result<std::shared_ptr<RoundExecutor>> {
    runner::RunConfig rc = req.run;
    rc.workspace = cfg.workspace;
    rc.cwd = cfg.cwd;
    rc.entry = entry;
    rc.focusPath = cfg.focus.path;
    rc.focusFunction = cfg.focus.qualName;
    if (!executors.empty()) rc.runKey.clear();
    auto ex = RunnerExecutor::create(rc, st ? &*st : nullptr);
    if (!ex) return ex.error();
    std::shared_ptr<RunnerExecutor> sp(std::move(*ex));
    sp->progress = hooks.progress;
    sp->output = hooks.output;
    executors.push_back(sp);
    return std::shared_ptr<RoundExecutor>(sp);
  };
  auto res = runLoop(cfg, make, hooks.loop, cancel);
  for (auto& e : executors)
    e->finish(res && res->stopReason == StopReason::Cancelled ? store::cancelledStatus(cancel)
              : res                                           ? store::RunStatus::Ok
                                                              : store::RunStatus::Failed,
              res ? "" : res.error().message);
  return res;
}

}  // namespace kl::planner
