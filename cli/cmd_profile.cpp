// `kernlens profile`: the flags become a typed planner::ProfileRequest; the convergence loop runs
// it (every round stored in .kernlens/kernlens.db) and the focus source annotated with GPU time and
// kernels per line (or the loop's JSON document) is printed. Exit statuses, the progress bar and
// the FILE::QUALNAME / FILE:A-B spellings belong here, not to core.
#include <unistd.h>

#include <iomanip>

#include "cli/cli.h"
#include "cli/focus_spec.h"
#include "cli/interrupt.h"
#include "cli/profile_args.h"
#include "cli/profile_text.h"
#include "core/planner/profile_request.h"
#include "core/planner/report.h"
#include "core/runner/round_runner.h"

namespace kl::cli {
namespace {

/// The flag a refused request field came from.
std::string flagFor(planner::RequestField f, const Args& args) {
  using F = planner::RequestField;
  switch (f) {
    case F::Workspace: return "--root";
    case F::Entry: return "--entry";
    case F::Cwd: return "--cwd";
    case F::File: return args.has("--lines") ? "--lines" : "--focus";
    case F::Function: return "--focus";
    case F::Lines: return "--lines";
    case F::KernelPattern: return "--kernel";
    case F::Harness: return "--harness";
    case F::HarnessFactory: return "--harness-factory";
    case F::Rounds: return "--rounds";
    case F::MaxPushesPerLaunch: return "--max-pushes-per-launch";
    case F::MaxWallOverhead: return "the wall-time overhead budget";
  }
  return "";
}

/// The typed request of `kernlens profile`'s flags (everything but --format); see cli/profile_args.h.
planner::ProfileRequest requestFromConfig(const Args& args, const runner::RunConfig& cfg,
                                          const std::optional<std::string>& focus) {
  planner::ProfileRequest req;
  req.run = cfg;
  std::error_code ec;
  if (!req.run.cwd.empty()) req.run.cwd = std::filesystem::absolute(req.run.cwd, ec).lexically_normal();
  if (focus && args.has("--lines"))
    throw UsageError("give one of --focus and --lines (--kernel may be combined with --focus)");
  if (!focus && !args.has("--lines") && !args.has("--kernel"))
    throw UsageError("one of --focus FILE::QUALNAME, --lines FILE:A-B or --kernel REGEX is required");
  if (focus) {
    auto f = parseFunctionSpec(*focus);
    if (!f) throw UsageError("--focus: " + f.error().message);
    req.file = resolveUserFile(cfg.workspace, f->file);
    req.function = f->qualName;
  } else if (auto lines = args.get("--lines")) {
    auto l = parseLinesSpec(*lines);
    if (!l) throw UsageError("--lines: " + l.error().message);
    req.file = resolveUserFile(cfg.workspace, l->file);
    req.lines = planner::FocusLines{l->first, l->last};
  }
  req.kernelPattern = args.getOr("--kernel", "");
  req.strategy =
      args.choice("--strategy", {"edits", "lines"}) == "lines" ? planner::Strategy::Lines : planner::Strategy::Edits;
  std::string harness = args.choice("--harness", {"off", "auto", "always"});
  req.harness = harness == "auto"     ? planner::HarnessMode::Auto
                : harness == "always" ? planner::HarnessMode::Always
                                      : planner::HarnessMode::Off;
  req.harnessFactory = args.getOr("--harness-factory", "");
  req.rounds = static_cast<int>(args.getInt("--rounds").value_or(8));
  req.baseline = !args.has("--no-baseline");
  req.discovery = !args.has("--no-discovery");
  req.store = !args.has("--no-store");
  if (auto m = args.getDouble("--max-pushes-per-launch")) req.maxPushesPerLaunch = *m;
  auto checked = planner::checkRequest(req);
  if (!checked.config) throw UsageError(flagFor(checked.error.field, args) + ": " + checked.error.message);
  return req;
}

/// The convergence loop from the flags: a typed request, progress on stderr (a bar on a
/// terminal, one line per round otherwise), the annotated source or the loop's JSON on stdout.
int runLoop(const Args& args, Context& ctx, const runner::RunConfig& cfg, const std::optional<std::string>& focus) {
  planner::ProfileRequest req = requestFromConfig(args, cfg, focus);
  auto checked = planner::checkRequest(req);
  bool json = args.format({Format::Text, Format::Json}) == Format::Json;

  bool bar = ::isatty(STDERR_FILENO);
  std::ostream& err = ctx.err;
  planner::ProfileHooks hooks;
  if (bar) {
    hooks.progress = [&err](const runner::RoundProgress& p) {
      int width = 24, filled = static_cast<int>(p.fraction * width + 0.5);
      err << "\r  [" << std::string(static_cast<size_t>(filled), '#')
          << std::string(static_cast<size_t>(width - filled), '.') << "] " << std::left << std::setw(30)
          << p.message.substr(0, 30) << std::right << std::flush;
    };
  }
  hooks.loop.onRound = [&err, bar](const planner::LoopProgress& p) {
    if (bar) err << "\r" << std::string(72, ' ') << "\r";
    err << "kernlens: " << p.message << "\n" << std::flush;
  };
  auto res = planner::runProfile(req, hooks, interruptToken());
  if (bar) err << "\r" << std::string(72, ' ') << "\r" << std::flush;
  if (int code = interruptedExit(err, "profile")) return code;
  if (!res) {  // the request was checked above: whatever fails now is the run's (exit 1)
    err << "kernlens profile: " << res.error().message << "\n";
    return 1;
  }
  if (json) {
    ctx.out << planner::renderJson(*res) << "\n";
  } else {
    planner::WorkspaceIndex index(checked.config->workspace, {checked.config->cwd});
    ctx.out << renderProfileText(*res, index);
  }
  return 0;
}

runner::RunConfig configFromArgs(const Args& args) {
  auto entry = args.get("--entry");
  if (!entry || entry->empty()) throw UsageError("--entry \"CMD\" is required (e.g. --entry \"python train.py\")");
  runner::RunConfig cfg;
  cfg.workspace = args.getOr("--root", ".");
  std::error_code ec;
  if (!std::filesystem::is_directory(cfg.workspace, ec))
    throw InputError("--root " + cfg.workspace.string() + ": not a directory");
  cfg.workspace = std::filesystem::absolute(cfg.workspace, ec).lexically_normal();
  cfg.entry = *entry;
  if (args.has("--cwd")) cfg.cwd = *args.get("--cwd");
  if (args.has("--nsys")) cfg.nsysPath = *args.get("--nsys");
  if (auto b = args.get("--backend"))
    cfg.backend = orFail(runner::parseBackend(*b));
  else
    cfg.backend = runner::defaultBackend(cfg.nsysPath);
  cfg.launch.kind = orFail(runner::parseLaunch(args.getOr("--launch", "local")));
  if (cfg.launch.kind == runner::LaunchKind::Template) {
    auto t = args.get("--template");
    if (!t) throw UsageError("--launch template needs --template 'CMD with {cmd}'");
    cfg.launch.templ = *t;
  } else if (args.has("--template")) {
    throw UsageError("--template is only for --launch template");
  }
  cfg.launch.slurm.mode = orFail(runner::parseSlurmMode(args.choice("--slurm-mode", {"srun", "sbatch"})));
  cfg.launch.slurm.ntasks = static_cast<int>(args.getInt("--ntasks").value_or(1));
  cfg.launch.slurm.nodes = static_cast<int>(args.getInt("--nodes").value_or(1));
  cfg.launch.slurm.partition = args.getOr("--partition", "");
  if (cfg.launch.slurm.ntasks < 1 || cfg.launch.slurm.nodes < 1) throw UsageError("--ntasks/--nodes must be >= 1");
  cfg.python = args.getOr("--python", "");
  cfg.gpu = args.choice("--gpu", {"h100", "h200", "a100"});
  if (auto pd = args.get("--probe-dir")) cfg.probeDir = std::filesystem::absolute(*pd, ec);
  auto timeout = args.getDouble("--timeout").value_or(900);
  if (timeout <= 0) throw UsageError("--timeout must be > 0 seconds");
  cfg.timeout = std::chrono::seconds(static_cast<long long>(timeout + 0.999));
  cfg.keepRuns = static_cast<int>(args.getInt("--keep-runs").value_or(20));
  if (cfg.keepRuns < 0) throw UsageError("--keep-runs must be >= 0");

  return cfg;
}

}  // namespace

planner::ProfileRequest profileRequestFromArgs(const Args& args) {
  return requestFromConfig(args, configFromArgs(args), args.get("--focus"));
}

namespace {

int run(const Args& args, Context& ctx) {
  args.expectPositional(0, 0);
  runner::RunConfig cfg = configFromArgs(args);
  auto focus = args.get("--focus");
  return runLoop(args, ctx, cfg, focus);
}

}  // namespace

std::vector<OptionSpec> profileCommandOptions() { return commands().at("profile").options; }

namespace {

Registrar reg{
    Command{"profile",
            "profile a function: run the entry under a profiler and map kernels to lines",
            "usage: kernlens profile --entry \"CMD\" (--focus FILE::QUALNAME | --lines FILE:A-B | --kernel RE)\n"
            "                        [--backend nsys|torch|emulate] [--strategy edits|lines] [--rounds N]\n"
            "                        [--launch local|template|slurm] [--template T] [--timeout S]\n"
            "                        [--format text|json] [--root DIR]\n"
            "\n"
            "Runs the convergence loop: the focus is wrapped in kl: NVTX ranges in an overlay (your files\n"
            "are never written), CMD runs under the backend with the kernlens probe, kernels are attributed\n"
            "to the innermost range on the launching thread, and ranges still holding several kernels are\n"
            "refined (into blocks and called workspace functions), round after round, until every kernel\n"
            "maps to one line or an atomic line, or --rounds N (default 8) is spent. Rounds are stored in\n"
            "<root>/.kernlens/kernlens.db; run files in <root>/.kernlens/runs/<run>/round<k>/.\n"
            "--rounds 1 runs one instrumented round (the function body and its top-level statements, and the\n"
            "workspace functions the discovery run saw beneath them; add --no-discovery for only the former).\n"
            "\n"
            "  --entry CMD          the command to run, e.g. \"python train.py --steps 2\" (run unchanged)\n"
            "  --focus F::Q         the function to profile (file relative to --root or absolute)\n"
            "  --backend B          nsys (default when nsys is found), torch, or emulate (modelled GPU\n"
            "                       kernels on CPU PyTorch; results are labelled EMULATED)\n"
            "  --launch L           local (default), template (--template with {cmd} {cwd} {out}),\n"
            "                       slurm (--slurm-mode srun|sbatch, --ntasks N, --nodes N, --partition P)\n"
            "  --timeout S          per-round limit in seconds (default 900); the process group is killed\n"
            "  --keep-runs N        run folders kept in <root>/.kernlens/runs (default 20; 0 = all)\n"
            "  --root DIR           workspace root (default .); --cwd DIR where CMD runs (default: root)\n"
            "  --python PATH        interpreter for the probe (default: the one the entry runs)\n"
            "  --nsys PATH          the nsys binary;  --gpu h100|h200|a100  the emulated GPU\n"
            "  --probe-dir DIR      the kernlens probe (default: next to the binary)\n"
            "  --format text|json   output format\n"
            "\n"
            "\n"
            "Loop options (docs/loop.md):\n"
            "  --lines FILE:A-B     focus on a region instead of --focus\n"
            "  --kernel REGEX       only refine ranges launching a matching kernel (with or without --focus)\n"
            "  --strategy edits|lines   edits (default): refine round after round; lines: one NVTX range per\n"
            "                       executed line of the focus functions, one round\n"
            "  --harness off|auto|always  generate a harness when the entry never reaches the focus function\n"
            "  --harness-factory M:F  builds the object for a method's harness\n"
            "  --max-pushes-per-launch X  per-range NVTX budget (default 4)\n"
            "  --no-baseline        skip the uninstrumented run (no wall-time overhead)\n"
            "  --no-discovery       skip the call-discovery run (follow only statically resolved calls)\n"
            "  --no-store           do not record rounds in .kernlens/kernlens.db\n"
            "  loop output: the focus source annotated per line (text) or the loop's JSON document (docs/loop.md).\n"
            "\n"
            "Ctrl-C, SIGTERM or SIGHUP stop the program (every process it started) and exit 128 + signal;\n"
            "the run is recorded as interrupted.\n"
            "exit status: 0 success, 1 the run failed (reason and log path on stderr), 2 bad usage.\n",
            {{"--entry"},
             {"--focus"},
             {"--backend"},
             {"--launch"},
             {"--template"},
             {"--rounds"},
             {"--timeout"},
             {"--format"},
             {"--root"},
             {"--cwd"},
             {"--python"},
             {"--nsys"},
             {"--gpu"},
             {"--probe-dir"},
             {"--slurm-mode"},
             {"--ntasks"},
             {"--nodes"},
             {"--partition"},
             {"--lines"},
             {"--kernel"},
             {"--strategy"},
             {"--harness"},
             {"--harness-factory"},
             {"--max-pushes-per-launch"},
             {"--no-baseline", false},
             {"--no-discovery", false},
             {"--keep-runs"},
             {"--no-store", false}},
            run}};

}  // namespace
}  // namespace kl::cli
