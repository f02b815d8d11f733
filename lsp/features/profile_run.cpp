// kernlens.profileFunction / kernlens.refineHere / kernlens.cancel: profiling runs in the
// background. refineHere [{uri, range[, function]}] runs the same loop focused on the range's lines.
//
// kernlens.profileFunction arguments: [{"uri", "position"}] (the function containing the
// position) or [{"uri", "function": qualname}]. Answers at once with {"runKey", "function",
// "path", "backend"}; the run — the convergence loop (core/planner, the same as `kernlens profile`),
// every round stored in .kernlens/kernlens.db — goes on the pool with a cancellable work-done
// progress reported per round (window/workDoneProgress/create + $/progress begin/report/end);
// the editor results are reloaded from the store after each round (marked provisional until the
// run ends: ResultStore::setProvisional). The program's output goes to
// window/logMessage (Log) as it comes; a failure is a window/showMessage (Error) with the reason and
// the log path; success reloads the editor results from the store (ResultStore::reloadFromStore).
// One run at a time: a second request answers RequestFailed. kernlens.cancel (or cancelling the
// progress) kills the run's process group; answers {"cancelled": bool}.
//
// Settings (initializationOptions.kernlens / didChangeConfiguration): entry (required, e.g.
// "python train.py --steps 2"), backend (nsys|torch|emulate; default nsys when found, else
// emulate), launch (local|template|slurm), launchTemplate (for template), nsysPath, python
// (default: the interpreter the entry runs), timeoutSeconds (default 900, per round), gpu (emulate:
// h100|h200|a100), rounds (default 8), strategy (edits|lines), keepRuns (run folders kept in
// .kernlens/runs, default 20, 0 = all). The program's output reaches the editor rate-limited
// (a burst, then 20 lines/s, 5,000 lines at most, long lines cut, a count of the rest); all of it
// is in the run folder's logs (256 MiB per log at most).
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <mutex>

#include "core/planner/profile_request.h"
#include "core/results/from_store.h"
#include "core/runner/round_runner.h"
#include "core/store/store.h"
#include "core/support/note.h"
#include "lsp/features/feature_context.h"
#include "lsp/protocol/commands.h"
#include "lsp/server/server.h"

namespace kl::lsp {
namespace {

struct RunState {
  bool running = false;
  std::string runKey;
  CancellationSource source;
};

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

/// The program's output on its way to window/logMessage: a burst, then a steady rate, then
/// nothing but a count; long lines cut. The complete output stays in the run folder's logs.
/// Thread-safe (output comes from the pool thread running the round).
class OutputThrottle {
 public:
  static constexpr size_t kBurst = 200, kPerSecond = 20, kTotal = 5000, kLineBytes = 1000;
  OutputThrottle(Server& server, std::string runDir) : server_(server), runDir_(std::move(runDir)) {}

  void line(std::string_view stream, std::string_view text) {
    std::lock_guard lock(mu_);
    auto now = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    tokens_ = std::min<double>(kBurst, tokens_ + secs * kPerSecond);
    if (sent_ >= kTotal || tokens_ < 1) {
      ++dropped_;
      if (now - lastNote_ >= std::chrono::seconds(2)) noteLocked(now);
      return;
    }
    tokens_ -= 1;
    ++sent_;
    std::string msg(stream == "stderr" ? "[stderr] " : "");
    msg += text.substr(0, kLineBytes);
    if (text.size() > kLineBytes) msg += " [... " + std::to_string(text.size() - kLineBytes) + " bytes cut]";
    server_.logMessage(MessageType::Log, msg);
  }
  /// At the end of the run: how many lines were not shown.
  void finish() {
    std::lock_guard lock(mu_);
    noteLocked(std::chrono::steady_clock::now());
  }

 private:
  void noteLocked(std::chrono::steady_clock::time_point now) {
    lastNote_ = now;
    if (!dropped_) return;
    server_.logMessage(MessageType::Log, "kernlens: " + std::to_string(dropped_) +
                                             " more lines of program output not shown here (all of it: " + runDir_ +
                                             "/round*/stdout.log, stderr.log)");
    dropped_ = 0;
  }
  Server& server_;
  std::string runDir_;
  std::mutex mu_;
  double tokens_ = kBurst;
  size_t sent_ = 0, dropped_ = 0;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now(), lastNote_ = last_;
};

std::string newRunKey() {
  static int n = 0;
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buf) + "-lsp" + std::to_string(::getpid()) + "-" + std::to_string(n++);
}

}  // namespace

/// A refused request in the editor's words: the setting or the part of the request at fault.
std::string refusal(const planner::RequestError& e, const std::string& rel) {
  using F = planner::RequestField;
  std::string what;
  switch (e.field) {
    case F::Workspace: what = "the workspace folder"; break;
    case F::Entry: what = "the `kernlens.entry` setting"; break;
    case F::Rounds: what = "the `kernlens.rounds` setting"; break;
    case F::File: what = rel; break;
    case F::Function: what = "the function"; break;
    case F::Lines: what = "the selected lines"; break;
    default: what = planner::requestFieldName(e.field); break;
  }
  return "kernlens: " + what + ": " + e.message;
}

namespace {

/// The request a run makes of the settings (for `rel::function`, or `lines` of `rel`), or the
/// refusal in the editor's words (Error::message).
Result<planner::ProfileRequest> requestFromSettings(const Settings& s, const std::filesystem::path& root,
                                                    const std::string& rel, const std::string& function,
                                                    const std::optional<planner::FocusLines>& lines) {
  planner::ProfileRequest req;
  runner::RunConfig& cfg = req.run;
  cfg.workspace = root;
  cfg.entry = s.get<std::string>("entry", "");
  if (cfg.entry.empty())
    return Error::invalid(
        "kernlens: set the `kernlens.entry` setting to the command that runs your code "
        "(e.g. \"python train.py --steps 2\")");
  std::string nsysPath = s.get<std::string>("nsysPath", "");
  if (!nsysPath.empty()) cfg.nsysPath = nsysPath;
  std::string backend = s.get<std::string>("backend", "");
  if (backend.empty())
    cfg.backend = runner::defaultBackend(cfg.nsysPath);
  else if (auto b = runner::parseBackend(backend))
    cfg.backend = *b;
  else
    return Error::invalid("kernlens.backend: " + b.error().message);
  auto launch = runner::parseLaunch(s.get<std::string>("launch", "local"));
  if (!launch) return Error::invalid("kernlens.launch: " + launch.error().message);
  cfg.launch.kind = *launch;
  cfg.launch.templ = s.get<std::string>("launchTemplate", "");
  cfg.python = s.get<std::string>("python", "");
  cfg.gpu = s.get<std::string>("gpu", "h100");
  cfg.timeout = std::chrono::seconds(static_cast<long long>(s.get<double>("timeoutSeconds", 900)));
  cfg.focusPath = rel;
  cfg.focusFunction = function;
  cfg.runKey = newRunKey();
  cfg.keepRuns = static_cast<int>(std::max(0.0, s.get<double>("keepRuns", 20)));
  req.file = rel;
  if (lines)
    req.lines = lines;  // the lines' own statements (a function's lines: its body)
  else
    req.function = function;
  req.rounds = std::max(1, static_cast<int>(s.get<double>("rounds", 8)));
  std::string strategy = s.get<std::string>("strategy", "edits");
  if (strategy == "lines")
    req.strategy = planner::Strategy::Lines;
  else if (strategy != "edits")
    return Error::invalid("kernlens.strategy must be edits or lines, got '" + strategy + "'");
  auto checked = planner::checkRequest(req);
  if (!checked.config) return Error::invalid(refusal(checked.error, rel));
  return req;
}

using RunOutcome = std::shared_ptr<Result<planner::LoopResult>>;

/// The loop on the pool: its rounds and phases reported on `progress`, each recorded round
/// installed as it comes, the program's output through `throttle`.
RunOutcome runOnPool(Server& server, const planner::ProfileRequest& req, const std::shared_ptr<Progress>& progress,
                     const std::shared_ptr<FeatureContext>& ctx, const std::shared_ptr<OutputThrottle>& throttle,
                     const std::shared_ptr<std::string>& failureLog, const CancellationToken& token) {
  planner::ProfileHooks hooks;
  // The run's stage ("round 2/8", "baseline", "discovery": LoopProgress::stage) prefixes the
  // phase reports of that stage ("round 2/8 · running (3 s)"). Both hooks run on this pool thread.
  auto stage = std::make_shared<std::string>();
  hooks.loop.onRound = [progress, stage, failureLog, max = req.rounds](const planner::LoopProgress& p) {
    std::optional<unsigned> pct;  // the discovery and baseline runs keep the last percentage
    if (p.round >= 0) pct = std::min(99u, static_cast<unsigned>(100 * p.round / std::max(1, max)));
    *stage = p.stage;
    failureLog->clear();
    progress->report(p.message, pct);
  };
  // Each round becomes visible as soon as it is stored, while the loop goes on (the next
  // round, or the baseline run after the first): read it here, on the run's own pool thread
  // (the pool may have no other thread free), install it on the server's loop.
  hooks.loop.onRecorded = [&server, ctx, root = req.run.workspace](int) {
    auto loaded = std::make_shared<Result<std::optional<results::ResultSet>>>(results::loadFromStore(root));
    server.post([ctx, loaded] { ctx->results->installStored(std::move(*loaded)); });
  };
  hooks.progress = [progress, stage, failureLog](const runner::RoundProgress& p) {  // phases within a stage
    if (p.stage == runner::RoundProgress::Stage::Failed) {
      *failureLog = p.log;  // read on the main loop once the run has ended
      return;
    }
    progress->report(stage->empty() ? p.message : *stage + " · " + p.message, std::nullopt);
  };
  hooks.loop.log = [&server](std::string_view line) {
    server.logMessage(MessageType::Log, "kernlens: " + std::string(line));
  };
  hooks.output = [throttle](std::string_view stream, std::string_view line) { throttle->line(stream, line); };
  auto res = std::make_shared<Result<planner::LoopResult>>(planner::runProfile(req, hooks, token));
  throttle->finish();
  return res;
}

/// On the main loop when the run ends: the results reloaded, the outcome told (log, messages,
/// the progress's end). `failureLog`: the failed program's log ("" when none failed).
void reportOutcome(Server& server, FeatureContext& ctx, Progress& progress, const runner::RunConfig& cfg,
                   const Result<planner::LoopResult>& out, const std::string& failureLog) {
  auto failed = [&](const std::string& message) {
    std::string msg = "kernlens: profiling " + cfg.focusFunction + " failed: " + firstLine(message);
    if (!failureLog.empty())
      msg += " (log: " + failureLog + ")";
    else
      msg += " (run dir: " + (cfg.workspace / ".kernlens" / "runs").string() + ")";
    server.logMessage(MessageType::Error, message);
    server.showMessage(MessageType::Error, msg);  // before the progress ends
    progress.end("failed");
  };
  if (!out.ok()) return failed(out.error().message);
  const auto& res = *out;
  ctx.results->setLastOutcome({cfg.runKey, planner::stopReasonName(res.stopReason), res.why, res.rounds});
  ctx.results->reloadFromStore();
  if (res.stopReason == planner::StopReason::Cancelled) {
    progress.end("cancelled");
    server.logMessage(MessageType::Info,
                      "kernlens: run " + cfg.runKey + " cancelled after " + std::to_string(res.rounds) + " round(s)");
    return;
  }
  if (res.stopReason == planner::StopReason::Failed) return failed(rewordForTest(res.why));
  std::string summary = "kernlens: " + cfg.focusFunction + ": " + planner::stopReasonName(res.stopReason) + " after " +
                        std::to_string(res.rounds) + " round(s), " + std::to_string(res.lines.size()) +
                        " lines mapped" + (res.emulated ? " (EMULATED)" : "") + " — " + rewordForTest(res.why);
  server.logMessage(MessageType::Info, summary);
  // What the user should act on: a focus that launched nothing, and atomic lines the loop
  // could not follow (the reason names the function; library lines are final answers).
  for (const auto& n : res.notes)
    if (n.kind == NoteKind::FocusLaunchedNothing)
      server.showMessage(MessageType::Warning, "kernlens: " + renderNote(n));
  for (const auto& l : res.lines)
    if (l.atomic && l.atomicReason != attribution::AtomicReason::None &&
        l.atomicReason != attribution::AtomicReason::Library)
      server.logMessage(MessageType::Info, "kernlens: " + l.path + ":" + std::to_string(l.line + 1) + " ATOMIC (" +
                                               attribution::atomicReasonName(l.atomicReason) +
                                               "): " + rewordForTest(l.noteWithFocus()));
  // The notification is short: the details are in the log and the run view.
  progress.end(std::string(planner::stopReasonName(res.stopReason)) + ": " + std::to_string(res.lines.size()) +
               " lines in " + std::to_string(res.rounds) + (res.rounds == 1 ? " round" : " rounds") +
               (res.emulated ? " (EMULATED)" : "") + " · Show run for details");
}

}  // namespace

/// Starts the convergence loop in the background for `rel::function`, or for `lines` of `rel`
/// when given; replies at once (see the header comment).
void startRun(Server& server, const std::shared_ptr<FeatureContext>& ctx, const std::shared_ptr<RunState>& state,
              Reply<json> reply, const std::string& rel, const std::string& function,
              std::optional<planner::FocusLines> lines) {
  // 1. The request, from the settings.
  auto made = requestFromSettings(server.settings(), server.workspace().root(), rel, function, lines);
  if (!made) return reply.error(ErrorCode::RequestFailed, made.error().message);
  planner::ProfileRequest req = std::move(*made);
  const runner::RunConfig& cfg = req.run;

  // 2. Reply at once: the run's key, a cancellable progress.
  state->running = true;
  ctx->results->setProvisional(true);
  state->runKey = cfg.runKey;
  state->source = CancellationSource();
  CancellationSource src = state->source;
  std::string lineText = lines ? std::to_string(lines->first) + "-" + std::to_string(lines->last) : "";
  std::string what = lines ? rel + ":" + lineText : function;
  auto progress = server.beginProgress(
      "kernlens: profiling " + what,
      {.cancellable = true, .onCancel = [src]() mutable { src.cancel(); }, .message = "starting", .percentage = 0u});
  json requestId = reply.id();
  server.cancelAfterReply(requestId, [src]() mutable { src.cancel(); });  // $/cancelRequest
  reply(toJson(RunStarted{cfg.runKey, function, rel, lineText, runner::backendName(cfg.backend)}));
  server.logMessage(MessageType::Info, "kernlens: profiling " + (lines ? what : rel + "::" + function) + " with `" +
                                           cfg.entry + "` (backend " + runner::backendName(cfg.backend) + ", run " +
                                           cfg.runKey + ")");

  // 3. The loop on the pool; its outcome back on the main loop.
  auto throttle =
      std::make_shared<OutputThrottle>(server, (cfg.workspace / ".kernlens" / "runs" / cfg.runKey).string());
  auto failureLog = std::make_shared<std::string>();
  server.background<RunOutcome>(
      "kernlens.profileFunction", src.token(),
      [&server, req, progress, ctx, throttle, failureLog](const CancellationToken& token) {
        return runOnPool(server, req, progress, ctx, throttle, failureLog, token);
      },
      [&server, ctx, state, progress, cfg = req.run, requestId, failureLog](RunOutcome out) {
        state->running = false;
        server.forgetCancel(requestId);
        ctx->results->setProvisional(false);
        reportOutcome(server, *ctx, *progress, cfg, *out, *failureLog);
      });
}

void registerProfileRun(Server& server, std::shared_ptr<FeatureContext> ctx) {
  auto state = std::make_shared<RunState>();

  server.command<ProfileFunctionArgs>(
      "kernlens.profileFunction", [&server, ctx, state](const ProfileFunctionArgs& t, Reply<json> reply) {
        if (state->running)
          return reply.error(ErrorCode::RequestFailed, "a profiling run is already going (" + state->runKey +
                                                           "); cancel it with kernlens.cancel");
        if (!server.workspace().hasRoot())
          return reply.error(ErrorCode::RequestFailed, "kernlens.profileFunction: open a workspace folder first");
        auto rel = server.workspace().relativePath(t.uri);
        if (!rel)
          return reply.error(ErrorCode::InvalidParams,
                             "kernlens.profileFunction: " + t.uri + " is not a file of the workspace");
        std::string function = t.function;
        if (function.empty()) {  // then the position is there (ProfileFunctionArgs)
          DocumentPtr doc = server.documents().get(t.uri);
          if (!doc || !doc->source())
            return reply.error(ErrorCode::InvalidParams, "kernlens.profileFunction: " + t.uri + " is not open");
          const auto& m = doc->source()->model();
          int32_t fi = m.functionAt(doc->offsetAt(*t.position));
          if (fi == python::kNone)
            return reply.error(ErrorCode::RequestFailed, "kernlens.profileFunction: no function at that position");
          function = m.functions[static_cast<size_t>(fi)].qualName;
        }
        startRun(server, ctx, state, std::move(reply), *rel, function, std::nullopt);
      });

  // kernlens.refineHere [{uri, range[, function]}]: the loop focused on the lines of `range`
  // (the ⟳ Refine lens sends the function's lines; an editor command sends the selection).
  server.command<RefineHereArgs>("kernlens.refineHere", [&server, ctx, state](const RefineHereArgs& a,
                                                                              Reply<json> reply) {
    if (state->running)
      return reply.error(ErrorCode::RequestFailed,
                         "a profiling run is already going (" + state->runKey + "); cancel it with kernlens.cancel");
    if (!server.workspace().hasRoot())
      return reply.error(ErrorCode::RequestFailed, "kernlens.refineHere: open a workspace folder first");
    auto rel = server.workspace().relativePath(a.uri);
    if (!rel)
      return reply.error(ErrorCode::InvalidParams, "kernlens.refineHere: " + a.uri + " is not a file of the workspace");
    uint32_t first = a.range.start.line, last = a.range.end.line;
    if (last > first && a.range.end.character == 0) --last;  // a selection ending at column 0
    startRun(server, ctx, state, std::move(reply), *rel, a.function, planner::FocusLines{first + 1, last + 1});
  });

  server.command<NoArguments>("kernlens.cancel", [state](const NoArguments&, Reply<json> reply) {
    bool was = state->running;
    if (was) state->source.cancel();
    reply(toJson(CancelResult{was}));
  });

  // shutdown, exit and end of input stop a running profile (its process group is killed).
  server.onCancelAll([state] {
    if (state->running) state->source.cancel();
  });
}

}  // namespace kl::lsp
