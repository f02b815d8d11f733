// `kernlens profile`: run one profiling round of a focus function (round 0: its body and each
// top-level statement wrapped in kl: ranges), store it in .kernlens/kernlens.db and print the
// function's source annotated with GPU time and kernels per line.
#include <unistd.h>

#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "core/nvtx/file_io.h"
#include "core/nvtx/naming.h"
#include "cli/focus_spec.h"
#include "core/planner/profile_request.h"
#include "core/planner/report.h"
#include "core/runner/round_runner.h"
#include "core/store/store.h"

namespace kl::cli {
namespace {

std::string fmtMs(int64_t ns) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(3) << static_cast<double>(ns) / 1e6 << " ms";
  return o.str();
}

std::vector<std::string> splitText(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(l);
  }
  return lines;
}

void printText(std::ostream& out, const runner::RunConfig& cfg, const runner::RecordedRound& rec) {
  const auto& r = *rec.round;
  const auto& lr = r.lines;
  if (lr.emulated)
    out << "EMULATED — kernels and durations are modelled on CPU PyTorch by kernlens-emulate (" << r.gpu
        << "), not measured on a GPU\n";
  out << cfg.focusPath << "::" << cfg.focusFunction << "  round " << r.index << "  run " << rec.run.key << "\n"
      << "backend " << rec.run.backend << " (" << r.profilerVersion << "), launch " << rec.run.launch
      << ", GPU: " << (r.gpu.empty() ? "none captured" : r.gpu) << "\n"
      << "GPU ops: " << lr.totalOps << " (" << fmtMs(lr.totalGpuNs) << "), mapped to lines: " << lr.mappedOps
      << ", kl: ranges recorded: " << lr.klRanges << "\n\n";
  // The focus function's lines, with the spans that start on each disk line.
  const store::FileSnapshot* snap = nullptr;
  for (const auto& f : r.files)
    if (f.path == cfg.focusPath) snap = &f;
  std::vector<const store::SpanResult*> spans;
  uint32_t first = UINT32_MAX, last = 0;
  for (const auto& s : lr.spans) {
    if (s.path != cfg.focusPath) continue;
    if (s.function != cfg.focusFunction && !s.functionBody) continue;
    spans.push_back(&s);
    first = std::min(first, s.diskFirst);
    last = std::max(last, s.diskLast);
  }
  if (snap && !spans.empty()) {
    auto lines = splitText(snap->text);
    // Include the def line(s) just above the body.
    uint32_t from = first;
    while (from > 1 && from - 1 <= lines.size() &&
           lines[from - 2].find("def ") == std::string::npos)
      --from;
    if (from > 1) --from;
    out << std::setw(12) << "GPU time" << std::setw(10) << "launches" << std::setw(9) << "kernels"
        << "  line\n";
    for (uint32_t ln = from; ln <= last && ln <= lines.size(); ++ln) {
      const store::SpanResult* here = nullptr;
      for (const auto* s : spans)
        if (s->diskFirst == ln && (!here || s->depth > here->depth)) here = s;
      const store::SpanResult* body = nullptr;
      for (const auto* s : spans)
        if (s->functionBody) body = s;
      const store::SpanResult* show = here;
      if (ln == from && body) show = body;  // the def line shows the function total
      if (show && !(ln != from && show == body && !show->leaf)) {
        bool incl = show == body || !show->leaf;
        int64_t ns = incl ? show->gpuNs : show->exclusiveGpuNs;
        int64_t n = incl ? show->launches : show->exclusiveLaunches;
        out << std::setw(12) << (show->invocations ? fmtMs(ns) : "not run") << std::setw(10) << n << std::setw(9)
            << show->distinctKernels;
      } else {
        out << std::setw(31) << "";
      }
      out << "  " << std::setw(4) << ln << " | " << lines[ln - 1] << "\n";
      if (here && here != body)
        for (const auto& k : here->kernels)
          out << std::setw(31) << "" << "         ↳ " << (k.backward() ? k.pass + ": " : "") << k.shortName << " ×"
              << k.launches << "  " << fmtMs(k.gpuNs) << "\n";
    }
  } else {
    out << "(no results for " << cfg.focusPath << "::" << cfg.focusFunction << ")\n";
  }
  if (!lr.unmapped.empty()) {
    int64_t n = 0, ns = 0;
    for (const auto& u : lr.unmapped) n += u.launches, ns += u.gpuNs;
    out << "\nnot mapped to a line: " << n << " ops (" << fmtMs(ns) << ")\n";
    size_t shown = 0;
    for (const auto& u : lr.unmapped) {
      if (shown++ == 8) {
        out << "  ...\n";
        break;
      }
      out << "  " << u.reason << ": " << u.name.substr(0, 80) << " ×" << u.launches << "  " << fmtMs(u.gpuNs) << "\n";
    }
  }
  for (const auto& n : r.notes) out << "note: " << n << "\n";
  out << "stored in " << (std::filesystem::path(cfg.workspace) / ".kernlens" / "kernlens.db").string()
      << " (run " << rec.run.id << "); logs: " << r.paths.roundDir.string() << "\n";
}

nlohmann::json toJson(const runner::RunConfig& cfg, const runner::RecordedRound& rec) {
  const auto& r = *rec.round;
  nlohmann::json spans = nlohmann::json::array();
  for (const auto& s : r.lines.spans) {
    nlohmann::json ks = nlohmann::json::array();
    for (const auto& k : s.kernels)
      ks.push_back({{"name", k.name}, {"short_name", k.shortName}, {"kind", k.kind}, {"backward", k.backward()},
                    {"pass", k.pass}, {"launches", k.launches}, {"gpu_ns", k.gpuNs}});
    spans.push_back({{"range", s.rangeName}, {"path", s.path}, {"first_line", s.firstLine},
                     {"last_line", s.lastLine}, {"disk_first", s.diskFirst}, {"disk_last", s.diskLast},
                     {"function", s.function}, {"function_body", s.functionBody}, {"leaf", s.leaf},
                     {"depth", s.depth}, {"invocations", s.invocations}, {"launches", s.launches},
                     {"gpu_ns", s.gpuNs}, {"exclusive_launches", s.exclusiveLaunches},
                     {"exclusive_gpu_ns", s.exclusiveGpuNs}, {"backward_gpu_ns", s.exclusiveBackwardGpuNs},
                     {"distinct_kernels", s.distinctKernels},
                     {"min_kernels_per_invocation", s.minKernelsPerInvocation},
                     {"max_kernels_per_invocation", s.maxKernelsPerInvocation},
                     {"distinct_kernel_sets", s.distinctKernelSets}, {"kernels", ks}});
  }
  nlohmann::json un = nlohmann::json::array();
  for (const auto& u : r.lines.unmapped)
    un.push_back({{"name", u.name}, {"kind", u.kind}, {"reason", u.reason}, {"launches", u.launches},
                  {"gpu_ns", u.gpuNs}});
  return {{"run", {{"id", rec.run.id}, {"key", rec.run.key}, {"backend", rec.run.backend},
                   {"launch", rec.run.launch}, {"git_commit", rec.run.gitCommit}, {"git_dirty", rec.run.gitDirty},
                   {"status", rec.run.status}}},
          {"focus", {{"path", cfg.focusPath}, {"function", cfg.focusFunction}}},
          {"round", r.index},
          {"emulated", r.lines.emulated},
          {"profiler_version", r.profilerVersion},
          {"gpu", r.gpu},
          {"profiles", [&] {
             nlohmann::json a = nlohmann::json::array();
             for (const auto& p : r.profiles) a.push_back(p.string());
             return a;
           }()},
          {"total_ops", r.lines.totalOps},
          {"total_gpu_ns", r.lines.totalGpuNs},
          {"mapped_ops", r.lines.mappedOps},
          {"kl_ranges", r.lines.klRanges},
          {"spans", spans},
          {"unmapped", un},
          {"notes", r.notes},
          {"log_dir", r.paths.roundDir.string()}};
}

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

/// The convergence loop from the flags: a typed request, progress on stderr (a bar on a
/// terminal, one line per round otherwise), the annotated source or the loop's JSON on stdout.
int runLoop(const Args& args, Context& ctx, const runner::RunConfig& cfg, const std::optional<std::string>& focus) {
  planner::ProfileRequest req;
  req.run = cfg;
  std::error_code ec;
  if (!req.run.cwd.empty()) req.run.cwd = std::filesystem::absolute(req.run.cwd, ec).lexically_normal();
  if (focus && args.has("--lines")) throw UsageError("give one of --focus and --lines (--kernel may be combined with --focus)");
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
  req.strategy = args.choice("--strategy", {"edits", "lines"}) == "lines" ? planner::Strategy::Lines : planner::Strategy::Edits;
  std::string harness = args.choice("--harness", {"off", "auto", "always"});
  req.harness = harness == "auto" ? planner::HarnessMode::Auto
              : harness == "always" ? planner::HarnessMode::Always : planner::HarnessMode::Off;
  req.harnessFactory = args.getOr("--harness-factory", "");
  req.rounds = static_cast<int>(args.getInt("--rounds").value_or(8));
  req.baseline = !args.has("--no-baseline");
  req.discovery = !args.has("--no-discovery");
  req.store = !args.has("--no-store");
  if (auto m = args.getDouble("--max-pushes-per-launch")) req.maxPushesPerLaunch = *m;
  auto checked = planner::checkRequest(req);
  if (!checked.config) throw UsageError(flagFor(checked.error.field, args) + ": " + checked.error.message);
  bool json = args.choice("--format", {"text", "json"}) == "json";

  bool bar = ::isatty(STDERR_FILENO);
  std::ostream& err = ctx.err;
  planner::ProfileHooks hooks;
  if (bar) {
    hooks.progress = [&err](const runner::RoundProgress& p) {
      int width = 24, filled = static_cast<int>(p.fraction * width + 0.5);
      err << "\r  [" << std::string(static_cast<size_t>(filled), '#') << std::string(static_cast<size_t>(width - filled), '.')
          << "] " << std::left << std::setw(30) << p.message.substr(0, 30) << std::right << std::flush;
    };
  }
  hooks.loop.onRound = [&err, bar](const planner::LoopProgress& p) {
    if (bar) err << "\r" << std::string(72, ' ') << "\r";
    err << "kernlens: " << p.message << "\n" << std::flush;
  };
  auto res = planner::runProfile(req, hooks, interruptToken());
  if (bar) err << "\r" << std::string(72, ' ') << "\r" << std::flush;
  if (int code = interruptedExit(err, "profile")) return code;
  if (!res) {
    err << "kernlens profile: " << res.error().message << "\n";
    return res.error().code == Error::Code::Invalid ? 2 : 1;
  }
  if (json) {
    ctx.out << planner::renderJson(*res) << "\n";
  } else {
    planner::WorkspaceIndex index(checked.config->workspace, {checked.config->cwd});
    ctx.out << planner::renderText(*res, index);
  }
  return 0;
}

int run(const Args& args, Context& ctx) {
  args.expectPositional(0, 0);
  auto entry = args.get("--entry");
  if (!entry || entry->empty()) throw UsageError("--entry \"CMD\" is required (e.g. --entry \"python train.py\")");
  // The convergence loop (core/planner, docs/loop.md) by default; `--rounds 1` runs round 0 only
  // (the runner's single round, with its own output), unless a loop-only flag asks for the loop.
  bool loop = args.getInt("--rounds").value_or(8) != 1;
  for (const char* o : {"--lines", "--kernel", "--strategy", "--harness", "--harness-factory", "--no-baseline",
                        "--no-discovery", "--no-store", "--max-pushes-per-launch"})
    loop = loop || args.has(o);
  auto focus = args.get("--focus");
  if (!focus && !loop) throw UsageError("--focus FILE::QUALNAME is required");
  size_t sep = focus ? focus->find("::") : 0;
  if (focus && (sep == std::string::npos || sep == 0 || sep + 2 >= focus->size()))
    throw UsageError("--focus needs FILE::QUALNAME, got '" + *focus + "'");
  std::string format = args.choice("--format", {"text", "json"});

  runner::RunConfig cfg;
  cfg.workspace = args.getOr("--root", ".");
  std::error_code ec;
  if (!std::filesystem::is_directory(cfg.workspace, ec))
    throw InputError("--root " + cfg.workspace.string() + ": not a directory");
  cfg.workspace = std::filesystem::absolute(cfg.workspace, ec).lexically_normal();
  std::string file = focus ? focus->substr(0, sep) : std::string();
  cfg.focusFunction = focus ? focus->substr(sep + 2) : std::string();
  std::filesystem::path fp = file;
  // A relative FILE is relative to --root when it exists there, else to the current directory.
  if (fp.is_relative()) fp = std::filesystem::exists(cfg.workspace / fp, ec) ? cfg.workspace / fp : std::filesystem::absolute(fp, ec);
  if (focus) cfg.focusPath = orFail(nvtx::relativeToWorkspace(cfg.workspace, fp));
  cfg.entry = *entry;
  if (args.has("--cwd")) cfg.cwd = *args.get("--cwd");
  if (args.has("--nsys")) cfg.nsysPath = *args.get("--nsys");
  if (auto b = args.get("--backend")) cfg.backend = orFail(runner::parseBackend(*b));
  else cfg.backend = runner::defaultBackend(cfg.nsysPath);
  cfg.launch.kind = orFail(runner::parseLaunch(args.getOr("--launch", "local")));
  if (cfg.launch.kind == runner::LaunchKind::Template) {
    auto t = args.get("--template");
    if (!t) throw UsageError("--launch template needs --template 'CMD with {cmd}'");
    cfg.launch.templ = *t;
  } else if (args.has("--template")) {
    throw UsageError("--template is only for --launch template");
  }
  cfg.launch.slurm.mode = args.choice("--slurm-mode", {"srun", "sbatch"});
  cfg.launch.slurm.ntasks = static_cast<int>(args.getInt("--ntasks").value_or(1));
  cfg.launch.slurm.nodes = static_cast<int>(args.getInt("--nodes").value_or(1));
  cfg.launch.slurm.partition = args.getOr("--partition", "");
  if (cfg.launch.slurm.ntasks < 1 || cfg.launch.slurm.nodes < 1) throw UsageError("--ntasks/--nodes must be >= 1");
  cfg.python = args.getOr("--python", "/usr/bin/python3");
  cfg.gpu = args.choice("--gpu", {"h100", "h200", "a100"});
  if (auto pd = args.get("--probe-dir")) cfg.probeDir = *pd;
  auto timeout = args.getDouble("--timeout").value_or(900);
  if (timeout <= 0) throw UsageError("--timeout must be > 0 seconds");
  cfg.timeout = std::chrono::seconds(static_cast<long long>(timeout + 0.999));
  cfg.keepRuns = static_cast<int>(args.getInt("--keep-runs").value_or(20));
  if (cfg.keepRuns < 0) throw UsageError("--keep-runs must be >= 0");

  if (loop) return runLoop(args, ctx, cfg, focus);
  auto plan = orFail(runner::initialPlan(cfg.workspace, cfg.focusPath, cfg.focusFunction));
  auto rr = orFail(runner::RoundRunner::create(cfg));
  auto store = orFail(store::Store::open(cfg.workspace));

  bool tty = ::isatty(STDOUT_FILENO) && ::isatty(STDERR_FILENO);
  runner::ProgressFn progress;
  if (tty) {
    progress = [&](const runner::RoundProgress& p) {
      int width = 30, filled = static_cast<int>(p.fraction * width + 0.5);
      ctx.err << "\r[" << std::string(static_cast<size_t>(filled), '#')
              << std::string(static_cast<size_t>(width - filled), '.') << "] " << std::setw(3)
              << static_cast<int>(p.fraction * 100) << "% " << std::left << std::setw(28) << p.message
              << std::right << std::flush;
      if (p.stage == runner::RoundProgress::Stage::Done) ctx.err << "\r" << std::string(70, ' ') << "\r" << std::flush;
    };
  }
  auto rec = runner::runAndRecord(rr, store, plan, interruptToken(), progress);
  if (tty) ctx.err << "\r" << std::string(70, ' ') << "\r" << std::flush;
  if (int code = interruptedExit(ctx.err, "profile")) return code;
  if (!rec) throw InputError("profile failed: " + rec.error().message);
  if (format == "json") ctx.out << toJson(rr.config(), *rec).dump(1) << "\n";
  else printText(ctx.out, rr.config(), *rec);
  return 0;
}

Registrar reg{Command{
    "profile", "profile a function: run the entry under a profiler and map kernels to lines",
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
    "--rounds 1 runs only round 0 (the function body and its top-level statements).\n"
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
    "  --python PATH        interpreter for the probe (default /usr/bin/python3)\n"
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
    {{"--entry"}, {"--focus"}, {"--backend"}, {"--launch"}, {"--template"}, {"--rounds"}, {"--timeout"},
     {"--format"}, {"--root"}, {"--cwd"}, {"--python"}, {"--nsys"}, {"--gpu"}, {"--probe-dir"},
     {"--slurm-mode"}, {"--ntasks"}, {"--nodes"}, {"--partition"}, {"--lines"}, {"--kernel"}, {"--strategy"},
     {"--harness"}, {"--harness-factory"}, {"--max-pushes-per-launch"}, {"--no-baseline", false},
     {"--no-discovery", false}, {"--keep-runs"}, {"--no-store", false}},
    run}};

}  // namespace
}  // namespace kl::cli
