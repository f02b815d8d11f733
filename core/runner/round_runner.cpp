#include "core/runner/round_runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <ctime>
#include <fstream>
#include <set>

#include "core/nvtx/file_io.h"
#include "core/nvtx/naming.h"
#include "core/profile/reader.h"
#include "core/python/source_file.h"
#include "core/runner/command.h"
#include "core/runner/interpreter.h"
#include "core/runner/line_results.h"
#include "core/runner/overlay_dir.h"
#include "core/runner/profile_inputs.h"
#include "core/store/git_info.h"

namespace kl::runner {
namespace {

std::string generateRunKey() {
  static std::atomic<int> counter{0};
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buf) + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

}  // namespace

const char* stageName(RoundProgress::Stage s) {
  switch (s) {
    case RoundProgress::Stage::Instrumenting: return "instrumenting";
    case RoundProgress::Stage::Running: return "running";
    case RoundProgress::Stage::Collecting: return "collecting";
    case RoundProgress::Stage::Reading: return "reading";
    case RoundProgress::Stage::Attributing: return "attributing";
    case RoundProgress::Stage::Done: return "done";
    case RoundProgress::Stage::Failed: return "failed";
  }
  return "";
}

Result<void> RoundResult::attach(const attribution::RangeTable& table, const CancellationToken& cancel) {
  LineResultOptions lo;
  lo.overlay = &overlay;
  lo.workspace = workspace;
  lo.cancel = cancel;
  auto converted = lineResults(table, lo);
  if (!converted) return converted.error();
  lines = std::move(*converted);
  return {};
}

store::RoundRecord RoundResult::record() const {
  store::RoundRecord r;
  r.index = index;
  r.status = store::RunStatus::Ok;
  r.wallMs = wallMs;
  for (const auto& p : profiles) r.profiles.push_back(p.string());
  r.profilerVersion = profilerVersion;
  r.gpu = gpu;
  r.results = lines;
  for (const auto& n : notes) r.results.warnings.push_back(renderNote(n));
  r.files = files;
  return r;
}

Result<RoundRunner> RoundRunner::create(RunConfig cfg) {
  std::error_code ec;
  if (cfg.workspace.empty()) return Error::invalid("no workspace");
  if (!cfg.workspace.is_absolute())
    return Error::invalid("the workspace must be an absolute path, got " + cfg.workspace.string());
  cfg.workspace = cfg.workspace.lexically_normal();
  if (!cfg.workspace.empty() && cfg.workspace.filename().empty()) cfg.workspace = cfg.workspace.parent_path();
  if (!std::filesystem::is_directory(cfg.workspace, ec))
    return Error::notFound(cfg.workspace.string() + ": workspace is not a directory");
  if (cfg.cwd.empty()) cfg.cwd = cfg.workspace;
  if (cfg.cwd.is_relative()) cfg.cwd = cfg.workspace / cfg.cwd;  // relative to the workspace
  cfg.cwd = cfg.cwd.lexically_normal();
  RoundRunner rr;
  auto argv = splitCommandLine(cfg.entry);
  if (!argv) return Error::invalid("entry command: " + argv.error().message);
  rr.entryArgv_ = std::move(*argv);
  if (cfg.probeDir.empty()) {
    if (auto p = findProbeDir()) cfg.probeDir = *p;
  }
  auto python = entryInterpreter(rr.entryArgv_, cfg.cwd, cfg.python);
  if (!python) return python.error();
  BackendOptions bo;
  bo.probe.python = python->string();
  bo.probe.probeDir = cfg.probeDir;
  bo.probe.workspace = cfg.workspace;
  bo.probe.gpu = cfg.gpu;
  bo.nsysPath = cfg.nsysPath;
  auto be = makeBackend(cfg.backend, bo);
  if (!be) return be.error();
  rr.backend_ = std::shared_ptr<Backend>(std::move(*be));
  if (cfg.runKey.empty()) cfg.runKey = generateRunKey();
  if (cfg.runKey.find('/') != std::string::npos || cfg.runKey == "." || cfg.runKey == "..")
    return Error::invalid("bad run key '" + cfg.runKey + "'");
  rr.runDir_ = cfg.workspace / ".kernlens" / "runs" / cfg.runKey;
  if (cfg.keepRuns > 0)
    pruneRunDirs(rr.runDir_.parent_path(), cfg.keepRuns - 1, cfg.timeout + std::chrono::seconds(60));
  std::filesystem::create_directories(rr.runDir_, ec);
  if (ec) return Error::io(rr.runDir_.string() + ": cannot create: " + ec.message());
  auto gi = cfg.workspace / ".kernlens" / ".gitignore";
  if (!std::filesystem::exists(gi, ec)) (void)nvtx::writeFileAtomically(gi, "*\n");
  rr.cfg_ = std::move(cfg);
  return rr;
}

store::RunInfo RoundRunner::runInfo() const {
  store::RunInfo info;
  info.key = cfg_.runKey;
  info.command = cfg_.entry;
  info.workspace = cfg_.workspace.string();
  info.focusPath = cfg_.focusPath;
  info.focusFunction = cfg_.focusFunction;
  info.backend = backendName(backend_->kind());
  info.launch = describeLaunch(cfg_.launch);
  info.profilerVersion = backend_->profilerVersion();
  info.emulated = backend_->kind() == BackendKind::Emulate;
  auto g = store::gitInfo(cfg_.workspace);
  info.gitRepo = g.isRepo;
  info.gitCommit = g.commit;
  info.gitBranch = g.branch;
  info.gitDirty = g.dirty;
  info.runDir = runDir_.string();
  info.logPath = (runDir_ / "round0" / "stderr.log").string();
  info.status = store::RunStatus::Running;
  return info;
}

namespace {

void report(const ProgressFn& progress, RoundProgress::Stage s, double f, std::string msg) {
  if (progress) progress(RoundProgress{s, f, std::move(msg)});
}

/// The program failed: one line (and context) naming the log that tells more, which a last
/// progress report (Stage::Failed) carries as data.
Error failedWithLog(const std::string& what, const std::filesystem::path& log, const ProgressFn& progress) {
  if (progress) progress(RoundProgress{RoundProgress::Stage::Failed, 1.0, "failed", log.string()});
  return Error::io(what + "\n(log: " + log.string() + ")");
}

}  // namespace

Result<RoundResult> RoundRunner::run(const RoundPlan& plan, const CancellationToken& cancel, const ProgressFn& progress,
                                     const OutputFn& output) {
  auto t0 = std::chrono::steady_clock::now();
  RoundResult res;
  res.index = plan.index;
  res.workspace = cfg_.workspace;
  RoundPaths& p = res.paths;
  p.index = plan.index;
  p.roundDir = runDir_ / ("round" + std::to_string(plan.index));
  std::error_code ec;
  std::filesystem::remove_all(p.roundDir, ec);
  p.outDir = p.roundDir / "out";
  std::filesystem::create_directories(p.outDir, ec);
  if (ec) return Error::io(p.outDir.string() + ": cannot create: " + ec.message());
  p.lineRanges = plan.lineRanges;
  if (plan.discoverCalls) p.callsFile = p.outDir / "calls.tsv";
  p.autogradRanges = plan.autogradRanges;
  p.stdoutLog = p.roundDir / "stdout.log";
  p.stderrLog = p.roundDir / "stderr.log";

  // 1. Instrument: the overlay (the user's files are only read).
  report(progress, RoundProgress::Stage::Instrumenting, 0.02, "instrumenting");
  if (auto i = instrument(plan, res); !i) return i.error();
  if (cancel.isCancelled()) return Error::cancelled();

  // 2. Run under the backend and the launch wrapper.
  if (auto r = runProgram(res, cancel, progress, output); !r) return r.error();

  // 3. Collect the profile files (nsys: export), read them as the ranks of one run.
  if (auto r = readProfiles(res, cancel, progress); !r) return r.error();

  // 4. What the round has to tell beside its profile.
  addNotes(res);
  res.wallMs = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  report(progress, RoundProgress::Stage::Done, 1.0, "done");
  return res;
}

Result<void> RoundRunner::instrument(const RoundPlan& plan, RoundResult& res) const {
  for (const auto& fp : plan.files) {
    auto path = nvtx::resolveInWorkspace(cfg_.workspace, fp.relPath);
    if (!path) return path.error();
    auto text = nvtx::readWholeFile(*path);
    if (!text) return text.error();
    auto of = nvtx::instrumentFile(fp.relPath, *text, fp.ranges);
    if (!of) return Error{of.error().code, fp.relPath + ": " + of.error().message};
    for (const auto& s : of->skipped)
      res.notes.push_back({NoteKind::NotWrapped, fp.relPath, "not wrapped: " + fp.relPath + ": " + s.reason});
    res.files.push_back({fp.relPath, std::move(*text)});
    res.overlay.files.emplace(fp.relPath, std::move(*of));
  }
  if (!res.overlay.files.empty()) {
    res.paths.overlayDir = res.paths.roundDir / "overlay";
    if (auto w = writeOverlayDir(res.overlay, cfg_.workspace, res.paths.overlayDir); !w) return w.error();
  }
  return {};
}

Result<void> RoundRunner::runProgram(RoundResult& res, const CancellationToken& cancel, const ProgressFn& progress,
                                     const OutputFn& output) const {
  const RoundPaths& p = res.paths;
  auto command = backend_->command(p, entryArgv_);
  auto spec = wrapCommand(cfg_.launch, command, cfg_.cwd, p.outDir, p.roundDir);
  if (!spec) return spec.error();
  spec->stdoutPath = p.stdoutLog;
  spec->stderrPath = p.stderrLog;
  spec->timeout = std::chrono::duration_cast<std::chrono::milliseconds>(cfg_.timeout);
  if (output) spec->onOutput = output;
  int lastSecond = -1;
  spec->onTick = [&](std::chrono::milliseconds elapsed) {
    int sec = static_cast<int>(elapsed.count() / 1000);
    if (sec == lastSecond) return;
    lastSecond = sec;
    double f = 0.05 + 0.75 * (1.0 - std::exp(-static_cast<double>(elapsed.count()) / 20000.0));
    report(progress, RoundProgress::Stage::Running, f, "running (" + std::to_string(sec) + " s)");
  };
  {
    std::string line = shellJoin(spec->argv);
    std::ofstream(p.roundDir / "command.txt") << line << "\n";
  }
  report(progress, RoundProgress::Stage::Running, 0.05, "running");
  auto pr = runProcess(*spec, cancel);
  if (!pr) {
    if (pr.error().code == Error::Code::NotFound && cfg_.launch.kind == LaunchKind::Slurm)
      return Error::notFound(pr.error().message + " (the Slurm launch needs the Slurm client tools: srun, sbatch)");
    return pr.error();
  }
  res.process = *pr;
  std::error_code ec;
  if (!std::filesystem::is_directory(p.roundDir, ec))
    return Error::io("the run folder " + p.roundDir.string() +
                     " was deleted while the program ran (by the program?); its profile is lost");
  bool sbatch = cfg_.launch.kind == LaunchKind::Slurm && cfg_.launch.slurm.mode == SlurmMode::Sbatch;
  if (pr->cancelled || pr->timedOut) {
    backend_->afterKill(pr->pid);
    if (sbatch)
      if (auto id = slurmJobId(p.stdoutLog)) scancelJob(*id);
    if (pr->cancelled) return Error::cancelled();
    return failedWithLog("the program " + describe(*pr) + " (round " + std::to_string(res.index) +
                             "; raise the timeout if it needs longer)",
                         p.stderrLog, progress);
  }
  if (pr->ok()) return {};
  std::filesystem::path log = p.stderrLog;
  std::string tail = tailLines(p.stderrLog, 8);
  if (sbatch) {
    if (auto id = slurmJobId(p.stdoutLog)) {
      auto jobOut = p.roundDir / ("slurm-" + *id + ".out");
      if (std::filesystem::exists(jobOut, ec)) {
        log = jobOut;
        tail = tailLines(jobOut, 8);
      }
    }
  }
  ProbeStatus st = readProbeStatus(p.outDir / "status.json");
  // The probe refused before the program ran (unsupported interpreter, bad entry): its one
  // line says it all, the log tail would only repeat it.
  if (!st.probeError.empty() && st.entryError.empty())
    return failedWithLog("the probe could not run the program: " + st.probeError, log, progress);
  std::string why = !st.probeError.empty() ? " — probe: " + st.probeError : "";
  return failedWithLog("the program failed (" + describe(*pr) + ")" + why + (tail.empty() ? "" : ":\n" + tail), log,
                       progress);
}

Result<void> RoundRunner::readProfiles(RoundResult& res, const CancellationToken& cancel,
                                       const ProgressFn& progress) const {
  report(progress, RoundProgress::Stage::Collecting, 0.82, "collecting profiles");
  auto profiles = backend_->collect(res.paths, cancel);
  if (!profiles) return profiles.error();
  res.profiles = *profiles;
  report(progress, RoundProgress::Stage::Reading, 0.88,
         "reading " + std::to_string(res.profiles.size()) + " profile(s)");
  profile::ReadOptions ro;
  ro.cancel = cancel;
  auto model = readProfileInputs(ProfileInputs{res.profiles, {}}, ro);  // the one loader: one file, or the ranks
  if (!model) return model.error();
  auto shared = std::make_shared<const profile::ProfileModel>(std::move(*model));
  res.model = shared;

  res.emulated = shared->meta.emulated;
  std::set<std::string> gpus;
  for (const auto& g : shared->gpus)
    if (!shared->str(g.name).empty()) gpus.insert(std::string(shared->str(g.name)));
  for (const auto& g : gpus) res.gpu += (res.gpu.empty() ? "" : ", ") + g;
  const std::string& tv = shared->meta.toolVersion;
  if (backend_->kind() == BackendKind::Nsys)
    res.profilerVersion = "nsys " + (tv.empty() ? backend_->profilerVersion() : tv);
  else if (backend_->kind() == BackendKind::Emulate && !tv.empty())
    res.profilerVersion = tv;
  else
    res.profilerVersion = backend_->profilerVersion();
  return {};
}

void RoundRunner::addNotes(RoundResult& res) const {
  const profile::ProfileModel& m = *res.model;
  const RoundPaths& p = res.paths;
  if (m.gpuOps.empty())
    res.notes.push_back({NoteKind::NoGpuWork, "",
                         backend_->kind() == BackendKind::Emulate
                             ? "the emulator recorded no GPU work (the program never ran a torch op?)"
                             : "no GPU kernels were captured (no GPU on this machine, or the program launched none); "
                               "only NVTX ranges were recorded"});
  ProbeStatus st = readProbeStatus(p.outDir / "status.json");
  if (!st.unmodelledOps.empty()) {
    int64_t total = 0;
    std::string list;
    for (const auto& [op, n] : st.unmodelledOps) {
      total += n;
      list += (list.empty() ? "" : ", ") + op + " x" + std::to_string(n);
    }
    res.notes.push_back({NoteKind::EmulatorGuesses, "",
                         "emulator: " + std::to_string(total) +
                             " launches of ops it does not model, emitted as a "
                             "generic elementwise kernel (their kernels and times are guesses): " +
                             list});
  }
  for (const auto& n : st.notes) res.notes.push_back({NoteKind::ProbeFallback, "", "probe: " + n});
  const bool anyLineRange = std::any_of(m.ranges.begin(), m.ranges.end(),
                                        [&](const profile::Range& r) { return nvtx::isManagedName(m.str(r.text)); });
  // A note must be true of this run's profile. Only nsys depends on the NVTX provider: the
  // emulator and the torch backend record the ranges from the probe's own listeners whatever
  // the provider is, so a no-op provider loses nothing there.
  if (st.found && st.nvtxProvider == "noop" && backend_->kind() == BackendKind::Nsys && !anyLineRange)
    res.notes.push_back(
        {NoteKind::NvtxNoop, "",
         "NVTX was a no-op in the program (no torch NVTX and no libnvToolsExt.so.1): nsys saw none of its ranges"});
  else if (!res.overlay.files.empty() && !anyLineRange)
    res.notes.push_back({NoteKind::NoManagedRange, "",
                         "no kl: range was recorded: the instrumented code did not run (is the focus function "
                         "called by the entry?)"});
  std::error_code ec;
  if (!p.callsFile.empty()) {
    if (std::filesystem::is_regular_file(p.callsFile, ec))
      res.callsFile = p.callsFile;
    else
      res.notes.push_back(
          {NoteKind::DiscoveryWroteNothing, "", "call discovery wrote nothing (" + p.callsFile.string() + ")"});
  }
}

int pruneRunDirs(const std::filesystem::path& runsDir, int keep, std::chrono::seconds spare) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> dirs;
  for (fs::directory_iterator it(runsDir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec) && !it->is_symlink(ec)) dirs.emplace_back(it->last_write_time(ec), it->path());
  if (dirs.size() <= static_cast<size_t>(std::max(keep, 0))) return 0;
  std::sort(dirs.begin(), dirs.end());  // oldest first
  auto now = fs::file_time_type::clock::now();
  int removed = 0;
  size_t excess = dirs.size() - static_cast<size_t>(std::max(keep, 0));
  for (size_t i = 0; i < excess; ++i) {
    if (now - dirs[i].first < spare) break;  // newer ones too
    fs::remove_all(dirs[i].second, ec);
    removed += !ec;
  }
  return removed;
}

}  // namespace kl::runner
