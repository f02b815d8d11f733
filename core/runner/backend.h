// Profiling backends: what command runs the entry under which profiler, and how the raw outputs
// become profile files the readers accept. All three run the entry through the probe
// (docs/probe.md): `env PYTHONPATH=<probe dir>[:$PYTHONPATH] <python> -m kernlens_probe --backend
// B --overlay O --workspace W --status S [--out P] [--gpu G] -- <entry argv>`.
//
//  - nsys:    `nsys profile <flags for the detected version> -o <out>/round<k>{rank} env ... probe`
//             then, per report, `nsys export --type sqlite ...` -> <out>/round<k>[.rankN].sqlite.
//  - torch:   the probe records with torch.profiler -> <out>/profile{rank}.json (Kineto).
//  - emulate: the probe emulates GPU kernels on CPU PyTorch -> <out>/profile{rank}.sqlite
//             (nsys schema, marked emulated).
// `{rank}` is the launch wrappers' per-rank token (launch.h). Child processes of the entry write
// their own files next to the main one (OUT.pid<P>.<ext> / OUT.rank<R>.<ext>); collect() gathers
// every profile file of the output directory, so all ranks/processes are ingested as one run.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/runner/nsys.h"
#include "core/runner/process.h"
#include "core/support/cancel.h"
#include "core/support/result.h"

namespace kl::runner {

enum class BackendKind { Nsys, Torch, Emulate };
const char* backendName(BackendKind k);  // "nsys" | "torch" | "emulate"
Result<BackendKind> parseBackend(std::string_view s);

/// Where one round's files go.
struct RoundPaths {
  int index = 0;
  std::filesystem::path roundDir;    // .kernlens/runs/<run>/round<k>
  std::filesystem::path overlayDir;  // roundDir/overlay ("" = no overlay)
  std::filesystem::path outDir;      // roundDir/out: profiler outputs
  std::filesystem::path lineRanges;  // the probe's --line-ranges spec ("" = none)
  std::filesystem::path callsFile;   // the probe's --discover-calls output ("" = no discovery)
  /// emit_nvtx's autograd sequence ranges in this run (probe --autograd-nvtx, nsys
  /// --pytorch=autograd-nvtx): they link backward kernels to forward lines, at one NVTX range
  /// per ATen op (docs/loop.md "Cost of the sequence ranges").
  bool autogradRanges = true;
  std::filesystem::path stdoutLog, stderrLog;
};

struct ProbeOptions {
  std::string python = "python3";   // resolved by RoundRunner (entryInterpreter)
  std::filesystem::path probeDir;   // holds kernlens_probe/ and sitecustomize.py
  std::filesystem::path workspace;  // absolute
  std::string gpu = "h100";         // emulate: h100 | h200 | a100
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  /// "nsys 2022.4.2.1-df9881f", "torch.profiler via kernlens_probe", "kernlens-emulate".
  virtual std::string profilerVersion() const = 0;
  /// The command for one rank (words may contain {rank}).
  virtual std::vector<std::string> command(const RoundPaths& paths, const std::vector<std::string>& entry) const = 0;
  /// After the command finished: the profile files to read (nsys: exports each report).
  /// Errors: no output at all, an empty output, a failed export (with the log's last lines).
  virtual Result<std::vector<std::filesystem::path>> collect(const RoundPaths& paths,
                                                             const CancellationToken& cancel) const = 0;
  /// Called when the run was stopped (timeout/cancel): clean up helpers outside the process
  /// group (nsys' agent). `leaderPid` is the launched process.
  virtual void afterKill(int leaderPid) const { (void)leaderPid; }

 protected:
  /// `env PYTHONPATH=... python -m kernlens_probe --backend <backendName(b)> ... -- entry`.
  static std::vector<std::string> probeCommand(const ProbeOptions& p, BackendKind backend, const RoundPaths& paths,
                                               const std::optional<std::string>& out,
                                               const std::vector<std::string>& entry);
};

struct BackendOptions {
  ProbeOptions probe;
  std::optional<std::string> nsysPath;  // nsys backend: a path or name (default: detect)
};

/// Creates a backend; nsys is detected here (Error::NotFound with an install hint when missing).
Result<std::unique_ptr<Backend>> makeBackend(BackendKind kind, const BackendOptions& opts);

/// The default backend: nsys when it is found, else emulate.
BackendKind defaultBackend(const std::optional<std::string>& nsysPath = {});

/// The probe's --status JSON (docs/probe.md §1), the fields the runner uses.
struct ProbeStatus {
  bool found = false;
  int64_t exitCode = -1;
  std::string probeError, entryError, exportError;  // "" when null
  std::string nvtxProvider;                         // "torch", "ctypes:...", "noop", ""
  int64_t kernels = -1;                             // summary.kernels (-1 unknown)
  /// summary.unmodelled_ops: ATen ops the emulator has no model for ("aten::x", count).
  std::vector<std::pair<std::string, int64_t>> unmodelledOps;
  /// notes: where the probe fell back (a file left un-overlaid, ...), one line each.
  std::vector<std::string> notes;
};
/// Reads a status file; found == false when it is missing or unreadable.
ProbeStatus readProbeStatus(const std::filesystem::path& path);

/// The probe directory: $KERNLENS_PROBE_DIR, else the first of <dir of the running binary>/share/
/// kernlens/probe (the build tree) and <dir of the running binary>/../share/kernlens/probe (an
/// install: <prefix>/bin/kernlens) that holds kernlens_probe/, else nullopt. Never the source tree.
std::optional<std::filesystem::path> findProbeDir();

}  // namespace kl::runner
