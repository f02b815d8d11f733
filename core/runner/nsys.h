// Nsight Systems: finding the CLI, reading its version and the options it accepts, and building
// the `nsys profile` / `nsys export` command lines for that version (detected, never assumed).
//
// Differences handled (see docs/runs.md §nsys):
//  - the report extension: `.qdrep` before 2021.4, `.nsys-rep` from 2021.4 on;
//  - `--cuda-graph-trace=node` (kernels of CUDA graphs as individual rows, which attribution
//    needs; newer versions default to whole-graph rows) only when `nsys profile --help` lists
//    the option;
//  - export: `nsys export --type sqlite --force-overwrite=true --output X.sqlite REP` (same
//    spelling in 2022.4 and current versions; tables are created lazily, missing = empty).
// Always: --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none (the defaults hang 2022.4 on a
// GPU-less machine, reference/nsys-on-cpu.md §7) --force-overwrite=true -o <base>.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/result.h"

namespace kl::runner {

struct NsysVersion {
  int year = 0, minor = 0, patch = 0, build = 0;  // 2022.4.2.1
  std::string text;                               // "2022.4.2.1-df9881f"
  friend auto operator<=>(const NsysVersion& a, const NsysVersion& b) {
    if (auto c = a.year <=> b.year; c != 0) return c;
    if (auto c = a.minor <=> b.minor; c != 0) return c;
    if (auto c = a.patch <=> b.patch; c != 0) return c;
    return a.build <=> b.build;
  }
  friend bool operator==(const NsysVersion& a, const NsysVersion& b) {
    return a.year == b.year && a.minor == b.minor && a.patch == b.patch && a.build == b.build;
  }
};

/// Parses `nsys --version` output ("NVIDIA Nsight Systems version 2022.4.2.1-df9881f").
Result<NsysVersion> parseNsysVersion(std::string_view versionOutput);

/// What the installed nsys supports.
struct NsysCaps {
  std::filesystem::path exe;
  NsysVersion version;
  std::string reportExtension = ".nsys-rep";
  bool cudaGraphTrace = false;  // `--cuda-graph-trace=` listed by `nsys profile --help`
  /// `--pytorch=autograd-nvtx` listed by `nsys profile --help`: nsys itself writes emit_nvtx's
  /// sequence ranges (else the probe enters torch.autograd.profiler.emit_nvtx()).
  bool pytorchAutogradNvtx = false;
  bool exportSqlite = true;  // `nsys export --help` lists the sqlite type
};

/// Capabilities from the version and the two help texts (pure; unit-tested on real help texts).
NsysCaps nsysCapsFrom(const NsysVersion& v, std::string_view profileHelp, std::string_view exportHelp);

/// Finds nsys: `configured` (a path or a name) when given, else `nsys` on PATH, else Debian's
/// /usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys. nullopt when none exists.
std::optional<std::filesystem::path> findNsys(const std::optional<std::string>& configured = {});

/// Runs `nsys --version`, `nsys profile --help`, `nsys export --help` (10 s limit each).
/// Error::NotFound with an install hint when nsys is missing.
Result<NsysCaps> detectNsys(const std::optional<std::string>& configured = {});

/// `nsys profile ... -o <outBase>` (outBase without extension; may contain shell text such as
/// ${SLURM_PROCID} when the caller runs it through a shell). The program argv follows.
std::vector<std::string> nsysProfileArgs(const NsysCaps& caps, const std::string& outBase);

/// `nsys export ...` turning `report` into `sqlite`.
std::vector<std::string> nsysExportArgs(const NsysCaps& caps, const std::filesystem::path& report,
                                        const std::filesystem::path& sqlite);

}  // namespace kl::runner
