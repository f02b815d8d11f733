#include "core/runner/launch.h"

#include <sys/stat.h>

#include <fstream>

#include "core/runner/command.h"

namespace kl::runner {

const char* launchName(LaunchKind k) {
  switch (k) {
    case LaunchKind::Local: return "local";
    case LaunchKind::Template: return "template";
    case LaunchKind::Slurm: return "slurm";
  }
  return "local";
}

Result<LaunchKind> parseLaunch(std::string_view s) {
  if (s == "local") return LaunchKind::Local;
  if (s == "template") return LaunchKind::Template;
  if (s == "slurm") return LaunchKind::Slurm;
  return Error::invalid("unknown launch '" + std::string(s) + "' (use local, template or slurm)");
}

const char* slurmModeName(SlurmMode m) { return m == SlurmMode::Sbatch ? "sbatch" : "srun"; }

Result<SlurmMode> parseSlurmMode(std::string_view s) {
  if (s == "srun") return SlurmMode::Srun;
  if (s == "sbatch") return SlurmMode::Sbatch;
  return Error::invalid("unknown slurm mode '" + std::string(s) + "' (use srun or sbatch)");
}

std::string describeLaunch(const LaunchOptions& o) {
  switch (o.kind) {
    case LaunchKind::Local: return "local";
    case LaunchKind::Template: return "template:" + o.templ;
    case LaunchKind::Slurm:
      return "slurm:" + std::string(slurmModeName(o.slurm.mode)) + " -n" + std::to_string(o.slurm.ntasks) +
             (o.slurm.nodes > 1 ? " -N" + std::to_string(o.slurm.nodes) : "");
  }
  return "local";
}

std::vector<std::string> substituteRank(std::vector<std::string> argv, std::string_view replacement) {
  for (auto& w : argv) {
    for (size_t p; (p = w.find(kRankToken)) != std::string::npos;) w.replace(p, kRankToken.size(), replacement);
  }
  return argv;
}

namespace {
/// The command as one /bin/sh line in which {rank} becomes ".rank$SLURM_PROCID" (expanded by the
/// task's shell). shellQuote single-quotes any word holding '{', so the token sits inside '...':
/// close the quote, expand in double quotes, reopen.
std::string slurmShellLine(const std::vector<std::string>& command) {
  std::string line = shellJoin(command);
  const std::string repl = "'.rank\"$SLURM_PROCID\"'";
  for (size_t p; (p = line.find(kRankToken)) != std::string::npos;) line.replace(p, kRankToken.size(), repl);
  return "exec " + line;
}

std::vector<std::string> srunArgs(const SlurmOptions& s, const std::filesystem::path& cwd) {
  std::vector<std::string> a = {"srun",
                                "--ntasks=" + std::to_string(s.ntasks),
                                "--nodes=" + std::to_string(s.nodes),
                                "--kill-on-bad-exit=1",
                                "--label",
                                "--job-name=kernlens",
                                "--chdir=" + cwd.string()};
  if (!s.partition.empty()) a.push_back("--partition=" + s.partition);
  return a;
}
}  // namespace

Result<ProcessSpec> wrapCommand(const LaunchOptions& o, const std::vector<std::string>& command,
                                const std::filesystem::path& cwd, const std::filesystem::path& outDir,
                                const std::filesystem::path& roundDir) {
  if (command.empty()) return Error::invalid("launch: empty command");
  ProcessSpec spec;
  spec.cwd = cwd;
  switch (o.kind) {
    case LaunchKind::Local: spec.argv = substituteRank(command, ""); return spec;
    case LaunchKind::Template: {
      if (o.templ.empty()) return Error::invalid("the template launch needs a command template ('ssh host ... {cmd}')");
      auto line = expandTemplate(o.templ, {{"cmd", shellJoin(substituteRank(command, ""))},
                                           {"cwd", shellQuote(cwd.string())},
                                           {"out", shellQuote(outDir.string())}});
      if (!line) return line.error();
      spec.argv = {"/bin/sh", "-c", *line};
      return spec;
    }
    case LaunchKind::Slurm: {
      const SlurmOptions& s = o.slurm;
      if (s.ntasks < 1 || s.nodes < 1) return Error::invalid("slurm: ntasks and nodes must be >= 1");
      std::string line = slurmShellLine(command);
      if (s.mode == SlurmMode::Srun) {
        spec.argv = srunArgs(s, cwd);
        spec.argv.insert(spec.argv.end(), s.extraArgs.begin(), s.extraArgs.end());
        spec.argv.insert(spec.argv.end(), {"/bin/sh", "-c", line});
        return spec;
      }
      auto script = roundDir / "job.sh";
      std::ofstream f(script, std::ios::trunc);
      f << "#!/bin/sh\n# kernlens profiling job: one task per rank, each writes its own output\n";
      auto srun = srunArgs(s, cwd);
      srun.insert(srun.end(), {"/bin/sh", "-c", line});
      f << "exec " << shellJoin(srun) << "\n";
      f.close();
      if (!f) return Error::io(script.string() + ": cannot write the job script");
      ::chmod(script.c_str(), 0755);
      spec.argv = {"sbatch",
                   "--wait",
                   "--parsable",
                   "--job-name=kernlens",
                   "--ntasks=" + std::to_string(s.ntasks),
                   "--nodes=" + std::to_string(s.nodes),
                   "--chdir=" + cwd.string(),
                   "--output=" + (roundDir / "slurm-%j.out").string()};
      if (!s.partition.empty()) spec.argv.push_back("--partition=" + s.partition);
      spec.argv.insert(spec.argv.end(), s.extraArgs.begin(), s.extraArgs.end());
      spec.argv.push_back(script.string());
      return spec;
    }
  }
  return Error::invalid("launch: unknown kind");
}

std::optional<std::string> slurmJobId(const std::filesystem::path& stdoutLog) {
  std::ifstream in(stdoutLog);
  std::string line;
  while (std::getline(in, line)) {
    // --parsable: "<jobid>" or "<jobid>;<cluster>"
    std::string id = line.substr(0, line.find(';'));
    if (!id.empty() && id.find_first_not_of("0123456789") == std::string::npos) return id;
  }
  return std::nullopt;
}

void scancelJob(const std::string& jobId) {
  ProcessSpec spec;
  spec.argv = {"scancel", jobId};
  spec.timeout = std::chrono::seconds(10);
  (void)runProcess(spec);
}

}  // namespace kl::runner
