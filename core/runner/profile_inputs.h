// The one profile loader of kernlens: the paths a user names (files, folders of ranks, Nsight
// Systems reports) turned into the files the readers read, and read as one profile. Both front
// ends load through it (the CLI's analyses and `map`, the editor's kernlens.loadProfile).
//
//  - An Nsight Systems report (.nsys-rep / .qdrep, also inside a folder) is replaced by its
//    SQLite export, made once with nsys and cached (nsys_report.h): the report's own
//    `.kernlens/nsys-export/` first, then the shared cache directories.
//  - In a folder, a report whose same-stem .sqlite export lies next to it is skipped (that export
//    is read with the folder); a folder without reports passes through (the readers expand it).
//  - Other paths pass through unchanged.
//
// Core reads neither the environment nor the working directory: the front end passes the base
// that relative paths are resolved against and what the environment says (`fromEnvironment`
// reads the variables through the lookup the front end gives).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/profile/model.h"
#include "core/profile/reader.h"
#include "core/runner/nsys_report.h"
#include "core/support/cancel.h"
#include "core/support/result.h"

namespace kl::runner {

struct ExportedReport {
  std::filesystem::path report;  // as resolved against the base
  ReportExport exported;
};

struct ProfileInputOptions {
  /// Relative paths are resolved against this (the front end's working directory, or the
  /// workspace root); empty: they are used as they are.
  std::filesystem::path base;
  std::optional<std::string> nsys;  // the nsys that exports reports (default: findNsys())
  /// Shared cache directories for report exports, tried after the report's own folder's.
  std::vector<std::filesystem::path> sharedCacheDirs;
  CancellationToken cancel;
  /// Told of each report as it is exported or found exported (a front end says so).
  std::function<void(const ExportedReport&)> onExport;

  /// What the environment says, looked up through `env` (the front end's getenv): KERNLENS_NSYS
  /// (the nsys), XDG_CACHE_HOME/kernlens/nsys-export or else ~/.cache/kernlens/nsys-export (a
  /// shared cache directory).
  static ProfileInputOptions fromEnvironment(const std::function<const char*(const char*)>& env);
};

struct ProfileInputs {
  std::vector<std::filesystem::path> files;  // what the readers read, in the order given
  std::vector<ExportedReport> exports;       // the reports replaced on the way
};

/// Resolves `given` (see the header comment). One-line errors: nsys missing or failing, no
/// writable cache directory; Error::Cancelled when cancelled.
Result<ProfileInputs> resolveProfileInputs(const std::vector<std::filesystem::path>& given,
                                           const ProfileInputOptions& opts);

/// Reads resolved inputs: one file as a profile, several files or a folder as the ranks of one
/// run (profile::readProfiles). The files are opened as they are spelled (messages name them so):
/// a relative one only comes from a front end whose working directory is the base.
Result<profile::ProfileModel> readProfileInputs(const ProfileInputs& inputs, const profile::ReadOptions& ro);

/// resolveProfileInputs then readProfileInputs (its cancel token is the read's too).
Result<profile::ProfileModel> loadProfileModel(const std::vector<std::filesystem::path>& given,
                                               const ProfileInputOptions& opts, profile::ReadOptions ro = {});

}  // namespace kl::runner
