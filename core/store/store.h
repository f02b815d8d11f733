// The results store: `<workspace>/.kernlens/kernlens.db` (SQLite, WAL, busy timeout 5 s), shared
// with other components (the ncu catalogue's `ncu_*` tables).
//
// Versioning (docs/runs.md §store): PRAGMA user_version is the database LAYOUT version, owned
// here: 1 = "every component records its schema version in kl_schema(component, version)".
// This component's row is 'store'; its migrations are an ordered list, each applied in its own
// BEGIN IMMEDIATE transaction that re-reads the version first, so several processes opening a
// fresh database at once apply each migration exactly once. A database whose layout or store
// version is newer than this build knows is refused (Error::Unsupported).
//
// Writes: a run row is created when a run starts (status 'running') and finished with its final
// status; each round is written by writeRound() in ONE transaction (round, ranges, kernels,
// unmapped ops, per-line rows, file snapshots): a crash mid-write leaves no trace of the round.
// Several processes (server instances, CLI runs) may write the same database concurrently.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/results.h"
#include "core/support/cancel.h"
#include "core/support/result.h"
#include "core/support/schema.h"
#include "core/support/sqlite.h"

namespace kl::store {

/// The store schema version this build writes (kl_schema row 'store').
constexpr int kStoreSchemaVersion = 6;
/// PRAGMA user_version this build writes and understands (core/support/schema.h).
using sql::kDatabaseLayoutVersion;

/// The state of a run; a stored round is Ok, Failed or Cancelled.
enum class RunStatus : uint8_t { Running, Ok, Failed, Cancelled, Interrupted };
/// "running", "ok", "failed", "cancelled", "interrupted" (the status columns and the run view's spelling).
const char* runStatusName(RunStatus s);
/// The status runStatusName spells `name`; nullopt for any other text.
std::optional<RunStatus> runStatusFromName(std::string_view name);

/// Provenance and state of one run (one `kernlens profile`, one profileFunction).
struct RunInfo {
  int64_t id = 0;
  std::string key;              // run id: the directory name under .kernlens/runs/
  std::string command;          // the entry command as the user gave it
  std::string workspace;        // absolute workspace root
  std::string focusPath;        // workspace-relative file of the focus function
  std::string focusFunction;    // its qualname
  std::string backend;          // nsys | torch | emulate
  std::string launch;           // local | template | slurm (+ details, e.g. "slurm:srun -n2")
  std::string gpu;              // GPU name(s) from the profile; "" when none was captured
  std::string profilerVersion;  // "nsys 2022.4.2.1-df9881f", "kernlens-emulate 0.1.0 (emulated)"
  bool gitRepo = false;
  std::string gitCommit, gitBranch;
  bool gitDirty = false;
  RunStatus status = RunStatus::Running;
  std::string error;               // failure reason (one line)
  std::string logPath;             // where the profiler output went
  std::string runDir;              // absolute .kernlens/runs/<key>
  std::string startedAt, endedAt;  // ISO 8601 UTC
  int64_t wallMs = 0;
  bool emulated = false;
};

/// The text of a profiled file as it was read for the run.
struct FileSnapshot {
  std::string path;  // workspace-relative
  std::string text;
};

/// One round as written by writeRound().
struct RoundRecord {
  int index = 0;
  RunStatus status = RunStatus::Ok;  // Ok | Failed | Cancelled
  std::string error;
  int64_t wallMs = 0;
  std::vector<std::string> profiles;  // profile files read (absolute)
  std::string profilerVersion;
  std::string gpu;
  RoundResults results;
  std::vector<FileSnapshot> files;
};

struct RoundInfo {
  int64_t id = 0, runId = 0;
  int index = 0;
  RunStatus status = RunStatus::Ok;
  std::string error;
  int64_t wallMs = 0;
  std::vector<std::string> profiles;
  int64_t totalOps = 0, mappedOps = 0, totalGpuNs = 0;
  bool emulated = false;
};

/// The latest results for one file.
struct FileResults {
  RunInfo run;
  RoundInfo round;
  std::string snapshotId;                      // blob id of the file's text at profile time ("" when not stored)
  std::vector<attribution::LineResult> spans;  // of this file, sorted by (range.firstLine, range.lastLine desc)
};

/// GPU time per function of a file in its latest results.
struct FunctionTotal {
  std::string path, function;
  int64_t runId = 0;
  int roundIndex = 0;
  /// The function-body span's inclusive numbers when one was measured, else the sum of the
  /// exclusive numbers of the function's spans.
  int64_t gpuNs = 0, launches = 0;
  uint32_t spans = 0;
  bool fromBodyRange = false;
  bool emulated = false;
};

class Store {
 public:
  /// Opens (creating) <workspace>/.kernlens/kernlens.db and `.kernlens/.gitignore` ("*").
  static Result<Store> open(const std::filesystem::path& workspace);
  /// Opens (creating) the database at `dbPath` and migrates it.
  static Result<Store> openFile(const std::filesystem::path& dbPath);
  static std::filesystem::path dbPathFor(const std::filesystem::path& workspace);

  /// Brings the store tables of `db` to `target` (tests pass an older target to build old
  /// databases). Idempotent and safe against concurrent openers.
  static Result<void> migrate(sql::Database& db, int target = kStoreSchemaVersion);
  /// The store schema version recorded in `db` (0 when none).
  static Result<int> schemaVersion(const sql::Database& db);
  /// Whether db's `ranges`, `range_kernels` and `unmapped_ops` tables have, after their ids, exactly
  /// the columns writeRound binds and spans() / unmapped() read (one list per table,
  /// core/store/row_binding.h), by name and type, in order; the error names the first difference.
  static Result<void> rowBindingsMatch(const sql::Database& db);

  /// Inserts a run (status as given, normally 'running'); sets info.id and returns it. The run
  /// records its owner (this process's pid, start time and host) for closeStaleRuns().
  Result<int64_t> beginRun(RunInfo& info);
  /// Sets the final status, error, end time, wall time, and (when non-empty) GPU/profiler fields.
  Result<void> finishRun(const RunInfo& info);
  /// Closes, as 'interrupted', every 'running' run of this host whose owning kernlens process
  /// no longer exists (killed, crashed, or the machine rebooted); returns how many. open() and
  /// openFile() call it, so the next CLI run or server start cleans up.
  Result<int> closeStaleRuns();
  /// Writes one round in one transaction. Error::Invalid when the run does not exist or the
  /// round index was already written.
  Result<int64_t> writeRound(int64_t runId, const RoundRecord& round);
  /// Writes the convergence loop's verdict of each line (atomicReason, note, suggestFocus) onto
  /// the range of round `roundId` that measured it (matched by range.name; lines of no range or of
  /// a name the round does not hold are ignored), in one transaction. Error::Invalid when the
  /// round does not exist.
  Result<void> annotateRanges(int64_t roundId, const std::vector<attribution::LineResult>& lines);

  // ---- queries (what the editor needs) ----
  Result<std::optional<RunInfo>> run(int64_t runId) const;
  /// Most recent first.
  Result<std::vector<RunInfo>> runs(int limit = 50) const;
  Result<std::vector<RoundInfo>> rounds(int64_t runId) const;
  /// Spans of one round (all files), sorted by (path, range.firstLine, range.lastLine desc).
  Result<std::vector<attribution::LineResult>> spans(int64_t roundId) const;
  Result<std::vector<attribution::UnmappedEntry>> unmapped(int64_t roundId) const;
  /// The latest round (newest run first, then highest round index) that holds spans of `path`;
  /// nullopt when the file was never profiled.
  Result<std::optional<FileResults>> latestFileResults(std::string_view path) const;
  /// Per function of `path`, from latestFileResults(path). Sorted by GPU time, descending.
  Result<std::vector<FunctionTotal>> functionTotals(std::string_view path) const;
  /// The newest run before `beforeRunId` (0 = any) that focused on the same function and
  /// finished with status ok.
  Result<std::optional<RunInfo>> previousRun(std::string_view path, std::string_view function,
                                             int64_t beforeRunId = 0) const;
  /// A stored file text by blob id.
  Result<std::optional<std::string>> snapshot(std::string_view blobId) const;
  /// The blob id of `path` as profiled in `runId` ("" when not stored).
  Result<std::string> snapshotIdFor(int64_t runId, std::string_view path) const;

  sql::Database& db() { return db_; }

  /// Test hook: called at each stage of writeRound ("round", "span", "snapshot", "commit"); an
  /// error return aborts the write (the transaction rolls back). May also _exit() to simulate
  /// a crash.
  void setFailpoint(std::function<Result<void>(std::string_view stage)> fp) { failpoint_ = std::move(fp); }

 private:
  explicit Store(sql::Database db) : db_(std::move(db)) {}
  sql::Database db_;
  std::function<Result<void>(std::string_view)> failpoint_;
};

/// The final status of a run stopped through `cancel`: Interrupted when a signal stopped it
/// (the CLI's Ctrl-C, SIGTERM, SIGHUP), else Cancelled (the editor, a timeout of the loop).
inline RunStatus cancelledStatus(const CancellationToken& cancel) {
  return cancel.signal() ? RunStatus::Interrupted : RunStatus::Cancelled;
}

/// ISO 8601 UTC now ("2026-11-21T12:34:56Z").
std::string isoNow();

}  // namespace kl::store
