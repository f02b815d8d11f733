// Launch wrappers: how the profiled command (built by a Backend) is started. Composable with any
// backend. The command's words may contain the token {rank} (kRankToken) in output paths; each
// wrapper replaces it: local/template with "" (one rank), slurm with ".rank$SLURM_PROCID" expanded
// by the shell on each task, so every rank writes its own output.
//
//  - local:    the command itself, in `cwd`.
//  - template: /bin/sh -c <expandTemplate(T, {cmd}, {cwd}, {out})> for ssh/Modal-style runs. The
//              command must leave its outputs under {out} (a shared file system, or the template
//              copies them back, e.g. `ssh h 'cd {cwd} && {cmd}' && rsync -a h:{out}/ {out}/`).
//  - slurm:    `srun --ntasks=N --nodes=M --kill-on-bad-exit=1 --label --chdir=cwd ... /bin/sh -c
//              '<cmd>'`, or (mode sbatch) a job script `exec srun ... /bin/sh -c '<cmd>'`
//              submitted with `sbatch --wait --parsable`; the job id is the first line of stdout
//              (scancelJobOf() cancels it when the run is cancelled or times out).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/runner/process.h"
#include "core/support/result.h"

namespace kl::runner {

inline constexpr std::string_view kRankToken = "{rank}";

enum class LaunchKind { Local, Template, Slurm };
const char* launchName(LaunchKind k);  // "local" | "template" | "slurm"
Result<LaunchKind> parseLaunch(std::string_view s);

/// srun: one task per rank in the foreground; sbatch: a batch job (`sbatch --wait`) whose script
/// runs srun.
enum class SlurmMode { Srun, Sbatch };
const char* slurmModeName(SlurmMode m);  // "srun" | "sbatch"
Result<SlurmMode> parseSlurmMode(std::string_view s);

struct SlurmOptions {
  SlurmMode mode = SlurmMode::Srun;
  int ntasks = 1;
  int nodes = 1;
  std::string partition;               // "" = the cluster default
  std::vector<std::string> extraArgs;  // passed to srun/sbatch before the command
};

struct LaunchOptions {
  LaunchKind kind = LaunchKind::Local;
  std::string templ;  // LaunchKind::Template
  SlurmOptions slurm;
};

/// A short description for provenance: "local", "template:<T>", "slurm:srun -n2".
std::string describeLaunch(const LaunchOptions& o);

/// Replaces kRankToken in every word with `replacement`.
std::vector<std::string> substituteRank(std::vector<std::string> argv, std::string_view replacement);

/// The ProcessSpec (argv, cwd) that launches `command` with the wrapper. `roundDir` receives
/// wrapper files (the sbatch job script, per-job Slurm output). Logs/timeouts are the caller's.
Result<ProcessSpec> wrapCommand(const LaunchOptions& o, const std::vector<std::string>& command,
                                const std::filesystem::path& cwd, const std::filesystem::path& outDir,
                                const std::filesystem::path& roundDir);

/// For sbatch launches: the job id printed by `sbatch --parsable` in `stdoutLog` (nullopt when
/// none yet), and `scancel <id>` (best effort, 10 s limit).
std::optional<std::string> slurmJobId(const std::filesystem::path& stdoutLog);
void scancelJob(const std::string& jobId);

}  // namespace kl::runner
