// Option handling shared by the profile-analysis subcommands (info, summary, tree, search,
// gaps, overlap, nccl, iters, memcpy, launch, threads, diff, diagnose, export, report):
//   --format text|json (|csv where tabular)   output format (default text)
//   --gpu N                                   only GPU ops on device N (every rank)
//   --trim START END  (or --trim START:END)   only rows starting in [START, END), in ns
//                                             relative to the first event of the profile;
//                                             values may carry a unit: 150us, 2.5ms, 1s
//   FILE...                                   one profile, or several files / a directory =
//                                             the ranks of one run
// Loading reads the model, then runs attribution (needed by most analyses).
#pragma once

#include <iostream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "core/analysis/view.h"
#include "core/attribution/attribution.h"
#include "core/profile/model.h"
#include "core/profile/reader.h"
#include "core/support/json_writer.h"

namespace kl::cli {

/// A loaded profile with its attribution. Heap-held so Views can point into it.
struct LoadedProfile {
  profile::ProfileModel model;
  attribution::Attribution attr;
  std::string label;  // file name(s) for titles

  /// The profile and its attribution seen through `scope` (the View points into this object).
  analysis::View view(const analysis::Scope& scope) const { return analysis::View(model, scope, &attr); }
};

/// --format, --gpu, --trim (+ `extra`).
std::vector<OptionSpec> profileOptions(std::vector<OptionSpec> extra = {});
/// The help lines describing the common options (append to a command's usage).
std::string commonOptionsHelp(bool csv);

struct CommonArgs {
  Format format = Format::Text;
  analysis::Scope scope;
  std::vector<std::string> files;  // positionals left after --trim's END was taken
};

/// Parses the common options; `formats` lists the allowed ones (first = default).
/// UsageError on bad values (e.g. --trim END <= START, --gpu not an integer).
CommonArgs parseCommon(const Args& args, const std::vector<Format>& formats);

/// A duration cell of an analysis table: integer nanoseconds in CSV (exact, machine-readable),
/// a human duration (formatDuration, core/support/format.h) in text.
std::string durationCell(int64_t ns, bool csv);

/// Parses "1500", "150us", "2.5ms", "1s", "20ns" into ns. UsageError otherwise.
int64_t parseDurationNs(const std::string& s, const std::string& what);

/// Reads the files as one profile (several, or a folder: the ranks of one run) through the core
/// loader (core/runner/profile_inputs.h) with this process's environment (KERNLENS_NSYS,
/// XDG_CACHE_HOME or HOME) and working directory: every Nsight Systems report (.nsys-rep /
/// .qdrep, also inside a folder) replaced by its SQLite export, made once and cached; says on
/// `err` which export is made or reused. InputError (one line) on bad input, or when nsys is
/// missing or fails.
profile::ProfileModel readModel(const std::vector<std::string>& files, std::ostream& err,
                                const profile::ReadOptions& ro = {});

/// What a command reads of a profile beyond the ops, calls and ranges (default: everything).
struct LoadNeeds {
  bool kernelDetails = true;  // ProfileModel::kernels (grid, block, registers, short names)
  bool placement = true;      // GPU ops' device/stream/context, API call names (ReadOptions::placement)
  bool rangeStats = true;     // Attribution::ranges() / names()
};

/// Reads the files (one profile, or several = ranks) and attributes; InputError on bad input.
/// Nsight Systems reports are exported first (readModel, notes on `err`); reader warnings
/// and the count of rows skipped for corrupt numbers go to `err` too. `needs`: what the command
/// reads beyond ops, calls and ranges.
std::unique_ptr<LoadedProfile> loadProfile(const std::vector<std::string>& files, std::ostream& err,
                                           LoadNeeds needs = {});

/// Writes aligned text tables (core/support/text_table.h, the one renderer): header row, then
/// rows; columns listed in `right` are right-aligned. Cells longer than `maxWidth` are cut with "…".
void printTable(std::ostream& out, const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right,
                size_t maxWidth = 80);
/// RFC 4180 CSV of the same shape (CRLF line ends).
void printCsv(std::ostream& out, const std::vector<std::string>& header,
              const std::vector<std::vector<std::string>>& rows);

/// One line saying the profile is emulated (printed by every text output when it is).
void noteEmulated(std::ostream& out, const profile::ProfileModel& m);

/// Opens -o FILE for writing (InputError if it cannot), or returns the context's stdout.
class OutputTarget {
 public:
  OutputTarget(const std::optional<std::string>& path, std::ostream& fallback);
  std::ostream& stream() { return *os_; }
  /// Flushes and checks the stream; InputError on a write failure.
  void finish();

 private:
  std::unique_ptr<std::ostream> file_;
  std::ostream* os_;
  std::string path_;
};

/// Prints an analysis result as indented JSON (its writeJson(w, result, extra...)) and a
/// newline; returns exit status 0.
template <typename R, typename... Extra>
int printJson(std::ostream& out, const R& result, const Extra&... extra) {
  json::Writer w(out, 2);
  writeJson(w, result, extra...);  // found by ADL in kl::analysis
  out << "\n";
  return 0;
}

}  // namespace kl::cli
