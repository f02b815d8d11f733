// Nsight Systems reports (.nsys-rep, and .qdrep before 2021.4) as profile input: the installed
// `nsys export --type sqlite` turns a report into the SQLite export the readers understand, ONCE;
// the export is cached and reused while the report is unchanged.
//
// Cache contract:
//  - The export of REPORT lives in the first cache directory that can be written, as
//    `<dir>/<key>.sqlite`, next to `<dir>/<key>.sqlite.stamp` holding the report's size and
//    modification time (ns). `key` is the report's file name when the directory is the
//    report's own `.kernlens/nsys-export/`, else the file name prefixed with a hash of the
//    report's absolute path (shared cache directories hold reports of many folders).
//  - A cached export is reused only when its stamp matches the report's current size and
//    mtime; otherwise it is re-exported. The export is written under a temporary name and
//    renamed into place, so a crash or a concurrent reader never sees half a file.
//  - Errors are one line: nsys missing (with the install hint), nsys failing on the report
//    (its version and its last error line, with the hint that a report newer than the installed
//    nsys needs a newer nsys), timeout, cancellation, no writable cache directory.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/result.h"

namespace kl::runner {

/// True when `path` is an Nsight Systems report: its content starts with the report magic
/// ("NVIDIA Tegra Profiler Report"), or (unreadable content) its name ends in .nsys-rep/.qdrep.
bool isNsysReport(const std::filesystem::path& path);

struct ReportExportOptions {
  std::optional<std::string> nsys;  // nsys executable (path or name); default: findNsys()
  /// Candidate cache directories, tried in order (created when missing). Empty = the report's
  /// own `.kernlens/nsys-export/` only.
  std::vector<std::filesystem::path> cacheDirs;
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  CancellationToken cancel;
};

struct ReportExport {
  std::filesystem::path sqlite;  // the export to read
  bool reused = false;           // true: a cached export matched the report's stamp
  std::string nsysVersion;       // the nsys that exported it ("" when reused)
};

/// The report's default cache directory: `<report's folder>/.kernlens/nsys-export`.
std::filesystem::path defaultReportCacheDir(const std::filesystem::path& report);

/// Exports `report` into the cache (or finds the cached export); see the contract above.
Result<ReportExport> exportNsysReport(const std::filesystem::path& report, const ReportExportOptions& opts = {});

}  // namespace kl::runner
