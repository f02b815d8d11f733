// "Drill into this kernel": the exact Nsight Compute command that profiles only the kernels
// launched inside one NVTX push/pop range (a kernlens `kl:` range), how to export its result as
// CSV, and running both when `ncu` is installed.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/ncu/catalog.h"
#include "core/support/cancel.h"
#include "core/support/result.h"

namespace kl::ncu {

/// The minimal section set: bound classification (SpeedOfLight, MemoryWorkloadAnalysis,
/// ComputeWorkloadAnalysis), occupancy and waves (Occupancy, LaunchStats) and the roofline
/// inputs (SpeedOfLight_RooflineChart).
const std::vector<std::string>& drillSections();

struct DrillRequest {
  std::string entry;                               // the user's command line, e.g. "python train.py --steps 3"
  std::string range;                               // NVTX range name, e.g. "kl:model.py:10-20:forward"
  std::string domain;                              // NVTX domain; "" = the default domain
  std::string reportBase = ".kernlens/ncu/drill";  // -o <base> (ncu appends .ncu-rep)
  std::string ncu = "ncu";                         // the ncu executable
  /// false: `--kernel-id :::1` (the first launch of every kernel in the range);
  /// true: `-c <launchCount>` (the first N launches in the range, whatever the kernel).
  bool useLaunchCount = false;
  int launchCount = 1;
  /// Per command (profiling run, export); the process group is stopped when it is exceeded.
  std::chrono::seconds timeout{3600};
};

/// `--nvtx-include` argument for a push/pop range: `[domain@]range/` (trailing '/' = push/pop;
/// '@', '/' and '\' inside names escaped with '\').
std::string nvtxIncludeExpression(const std::string& range, const std::string& domain);

/// argv of the profiling run, without the entry command.
std::vector<std::string> drillProfileArgs(const DrillRequest& r);
/// argv of the CSV export: ncu --import <base>.ncu-rep --csv --page details --print-units base.
std::vector<std::string> drillExportArgs(const DrillRequest& r);

/// The full profiling command line: the quoted ncu argv followed by the entry command verbatim
/// (it is a shell command line already).
std::string drillProfileCommand(const DrillRequest& r);
std::string drillExportCommand(const DrillRequest& r);

struct DrillOutcome {
  std::string profileCommand, exportCommand;
  std::filesystem::path csvPath;
  ImportSummary imported;
};

/// Runs both commands (through /bin/sh, in `workdir`, via runner::runProcess: own process group,
/// r.timeout, `cancel`), saves the CSV next to the report (<base>.details.csv; ncu's stderr in
/// <base>.log) and imports it into `catalog`. Errors: ncu not on PATH ("ncu not found on PATH;
/// ..."), a failing or timed-out command (how it ended, the log path), Error::Cancelled, an
/// export with no data.
Result<DrillOutcome> runDrill(const DrillRequest& r, const std::filesystem::path& workdir, Catalog& catalog,
                              const ImportOptions& opt, const CancellationToken& cancel = {});

}  // namespace kl::ncu
