#include "core/planner/cli_entry.h"

#include <iomanip>
#include <optional>

#include "core/planner/report.h"
#include "core/store/store.h"

namespace kl::planner {

namespace fs = std::filesystem;

Result<LoopConfig> loopConfigFrom(const ProfileArgs& a) {
  LoopConfig c;
  std::error_code ec;
  c.workspace = fs::absolute(a.run.workspace, ec).lexically_normal();
  c.cwd = a.run.cwd.empty() ? c.workspace : fs::absolute(a.run.cwd, ec).lexically_normal();
  c.entry = a.run.entry;
  fs::path here = fs::current_path(ec);
  int given = !a.focus.empty() + !a.lines.empty();
  if (given > 1) return Error::invalid("give one of --focus and --lines (--kernel may be combined with --focus)");
  if (given == 0 && a.kernel.empty()) return Error::invalid("one of --focus FILE::QUALNAME, --lines FILE:A-B or --kernel REGEX is required");
  if (!a.focus.empty()) {
    auto f = parseFocusFunction(a.focus, c.workspace, here);
    if (!f) return f.error();
    c.focus = *f;
  } else if (!a.lines.empty()) {
    auto f = parseFocusLines(a.lines, c.workspace, here);
    if (!f) return f.error();
    c.focus = *f;
  }
  if (!a.kernel.empty()) {
    if (!a.lines.empty()) return Error::invalid("--kernel combines with --focus, not with --lines");
    c.focus.kind = FocusKind::Kernel;
    c.focus.kernelPattern = a.kernel;
  }
  if (a.strategy == "edits") c.strategy = Strategy::Edits;
  else if (a.strategy == "lines") c.strategy = Strategy::Lines;
  else return Error::invalid("--strategy must be edits or lines, got '" + a.strategy + "'");
  if (a.harness == "off") c.harness = HarnessMode::Off;
  else if (a.harness == "auto") c.harness = HarnessMode::Auto;
  else if (a.harness == "always") c.harness = HarnessMode::Always;
  else return Error::invalid("--harness must be off, auto or always, got '" + a.harness + "'");
  if (c.harness != HarnessMode::Off && c.focus.kind != FocusKind::Function)
    return Error::invalid("--harness needs --focus FILE::QUALNAME");
  c.harnessFactory = a.harnessFactory;
  if (a.rounds < 1 || a.rounds > 64) return Error::invalid("--rounds must be between 1 and 64");
  c.maxRounds = a.rounds;
  c.measureBaseline = a.baseline;
  c.discoverCalls = a.discovery;
  if (a.maxPushesPerLaunch <= 0) return Error::invalid("--max-pushes-per-launch must be > 0");
  c.policy.maxPushesPerLaunch = a.maxPushesPerLaunch;
  c.policy.maxWallOverhead = a.maxWallOverhead;
  return c;
}

Result<LoopResult> runProfile(const ProfileArgs& args, const ProfileHooks& hooks, const CancellationToken& cancel) {
  auto cfg = loopConfigFrom(args);
  if (!cfg) return cfg.error();
  std::optional<store::Store> st;
  if (args.store) {
    auto s = store::Store::open(cfg->workspace);
    if (!s) return Error::io("store: " + s.error().message);
    st.emplace(std::move(*s));
  }
  std::vector<std::shared_ptr<RunnerExecutor>> executors;
  ExecutorFactory make = [&](const std::string& entry) -> Result<std::shared_ptr<RoundExecutor>> {
    runner::RunConfig rc = args.run;
    rc.workspace = cfg->workspace;
    rc.cwd = cfg->cwd;
    rc.entry = entry;
    rc.focusPath = cfg->focus.path;
    rc.focusFunction = cfg->focus.qualName;
    if (!executors.empty()) rc.runKey.clear();
    auto ex = RunnerExecutor::create(rc, st ? &*st : nullptr);
    if (!ex) return ex.error();
    std::shared_ptr<RunnerExecutor> sp(std::move(*ex));
    sp->progress = hooks.progress;
    sp->output = hooks.output;
    executors.push_back(sp);
    return std::shared_ptr<RoundExecutor>(sp);
  };
  auto res = runLoop(*cfg, make, hooks.loop, cancel);
  for (auto& e : executors) e->finish(res && res->stopReason == StopReason::Cancelled ? store::cancelledStatus(cancel) : res ? "ok" : "failed",
                                      res ? "" : res.error().message);
  return res;
}

int profileCommand(const ProfileArgs& args, std::ostream& out, std::ostream& err, const CancellationToken& cancel) {
  if (args.format != "text" && args.format != "json") {
    err << "kernlens profile: --format must be text or json\n";
    return 2;
  }
  ProfileHooks hooks;
  if (args.progressBar) {
    hooks.progress = [&err](const runner::RoundProgress& p) {
      int width = 24, filled = static_cast<int>(p.fraction * width + 0.5);
      err << "\r  [" << std::string(static_cast<size_t>(filled), '#') << std::string(static_cast<size_t>(width - filled), '.')
          << "] " << std::left << std::setw(30) << p.message.substr(0, 30) << std::right << std::flush;
    };
  }
  hooks.loop.onRound = [&](const LoopProgress& p) {
    if (args.progressBar) err << "\r" << std::string(72, ' ') << "\r";
    err << "kernlens: " << p.message << "\n" << std::flush;
  };
  auto res = runProfile(args, hooks, cancel);
  if (args.progressBar) err << "\r" << std::string(72, ' ') << "\r" << std::flush;
  if (!res) {
    err << "kernlens profile: " << res.error().message << "\n";
    return res.error().code == Error::Code::Invalid ? 2 : 1;
  }
  if (args.format == "json") {
    out << renderJson(*res) << "\n";
  } else {
    auto cfg = loopConfigFrom(args);  // succeeded in runProfile
    WorkspaceIndex index(cfg->workspace, {cfg->cwd});
    out << renderText(*res, index);
  }
  return 0;
}

}  // namespace kl::planner
