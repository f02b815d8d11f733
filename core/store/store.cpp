#include "core/store/store.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "core/store/git_info.h"
#include "core/store/row_binding.h"
#include "core/support/log.h"
#include "core/support/saturating.h"
#include "core/support/schema.h"

namespace kl::store {
namespace {

// Migration i (0-based) brings the store schema from version i to i + 1. Never edit a shipped
// entry; append a new one (and bump kStoreSchemaVersion).
const char* const kMigrations[] = {
    // v1: runs, rounds, per-range statistics, kernels per range, unmapped ops, per-line rows.
    R"sql(
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  run_key TEXT NOT NULL UNIQUE,
  command TEXT NOT NULL,
  workspace TEXT NOT NULL,
  focus_path TEXT,
  focus_function TEXT,
  backend TEXT NOT NULL,
  launch TEXT NOT NULL,
  gpu TEXT,
  profiler_version TEXT,
  git_repo INTEGER NOT NULL DEFAULT 0,
  git_commit TEXT,
  git_branch TEXT,
  git_dirty INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  error TEXT,
  log_path TEXT,
  run_dir TEXT,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  wall_ms INTEGER NOT NULL DEFAULT 0,
  emulated INTEGER NOT NULL DEFAULT 0);
CREATE TABLE rounds(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  status TEXT NOT NULL,
  error TEXT,
  wall_ms INTEGER NOT NULL DEFAULT 0,
  profiles TEXT NOT NULL DEFAULT '',
  profiler_version TEXT,
  gpu TEXT,
  total_ops INTEGER NOT NULL DEFAULT 0,
  mapped_ops INTEGER NOT NULL DEFAULT 0,
  total_gpu_ns INTEGER NOT NULL DEFAULT 0,
  kl_ranges INTEGER NOT NULL DEFAULT 0,
  emulated INTEGER NOT NULL DEFAULT 0,
  warnings TEXT NOT NULL DEFAULT '',
  UNIQUE(run_id, idx));
CREATE TABLE ranges(
  id INTEGER PRIMARY KEY,
  round_id INTEGER NOT NULL REFERENCES rounds(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  first_line INTEGER NOT NULL,
  last_line INTEGER NOT NULL,
  disk_first INTEGER NOT NULL,
  disk_last INTEGER NOT NULL,
  label TEXT NOT NULL DEFAULT '',
  function TEXT NOT NULL DEFAULT '',
  function_body INTEGER NOT NULL DEFAULT 0,
  parent_name TEXT NOT NULL DEFAULT '',
  depth INTEGER NOT NULL DEFAULT 0,
  leaf INTEGER NOT NULL DEFAULT 1,
  invocations INTEGER NOT NULL,
  launches INTEGER NOT NULL,
  gpu_ns INTEGER NOT NULL,
  distinct_kernels INTEGER NOT NULL,
  excl_launches INTEGER NOT NULL,
  excl_gpu_ns INTEGER NOT NULL,
  min_kernels_per_inv INTEGER NOT NULL,
  max_kernels_per_inv INTEGER NOT NULL,
  distinct_kernel_sets INTEGER NOT NULL,
  kernel_sets TEXT NOT NULL DEFAULT '');
CREATE TABLE range_kernels(
  range_id INTEGER NOT NULL REFERENCES ranges(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  short_name TEXT NOT NULL,
  kind TEXT NOT NULL,
  launches INTEGER NOT NULL,
  gpu_ns INTEGER NOT NULL);
CREATE TABLE unmapped_ops(
  round_id INTEGER NOT NULL REFERENCES rounds(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  reason TEXT NOT NULL,
  launches INTEGER NOT NULL,
  gpu_ns INTEGER NOT NULL);
CREATE TABLE line_stats(
  round_id INTEGER NOT NULL REFERENCES rounds(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  line INTEGER NOT NULL,
  range_id INTEGER NOT NULL REFERENCES ranges(id) ON DELETE CASCADE,
  launches INTEGER NOT NULL,
  gpu_ns INTEGER NOT NULL,
  kernels INTEGER NOT NULL);
)sql",
    // v2: snapshots of the profiled files, deduplicated by git blob id.
    R"sql(
CREATE TABLE snapshots(
  blob_id TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  text TEXT NOT NULL);
CREATE TABLE run_files(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  blob_id TEXT NOT NULL REFERENCES snapshots(blob_id),
  PRIMARY KEY(run_id, path));
)sql",
    // v3: lookup indexes for the editor queries and the kernel -> source view.
    R"sql(
CREATE INDEX ranges_by_path ON ranges(path, round_id);
CREATE INDEX ranges_by_round ON ranges(round_id);
CREATE INDEX range_kernels_by_range ON range_kernels(range_id);
CREATE INDEX range_kernels_by_name ON range_kernels(name);
CREATE INDEX runs_by_focus ON runs(focus_path, focus_function, id);
CREATE VIEW kernel_sources AS
  SELECT k.name AS kernel, k.short_name, k.kind, r.path, r.disk_first AS first_line,
         r.disk_last AS last_line, r.function, k.launches, k.gpu_ns, r.round_id, rd.run_id
  FROM range_kernels k JOIN ranges r ON r.id = k.range_id JOIN rounds rd ON rd.id = r.round_id;
)sql",
    // v4: the kernlens process that owns a running run (pid, its start time in clock ticks since
    // boot, host), so that a run left 'running' by a kernlens that died can be closed.
    R"sql(
ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
ALTER TABLE runs ADD COLUMN owner_start INTEGER;
ALTER TABLE runs ADD COLUMN owner_host TEXT;
CREATE INDEX runs_by_status ON runs(status);
)sql",
    // v5: backward work — the pass that launched each kernel of a range ("forward", "backward",
    // "recompute"; one row per (name, pass)) and the part of a range's exclusive time it was.
    R"sql(
ALTER TABLE ranges ADD COLUMN excl_backward_gpu_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE range_kernels ADD COLUMN pass TEXT NOT NULL DEFAULT 'forward';
)sql",
    // v6: the convergence loop's verdict on a range (Store::annotateRanges): why it is an atomic line
    // ('' when it is not, or for rounds stored before), a note, a function to focus on instead.
    R"sql(
ALTER TABLE ranges ADD COLUMN atomic_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE ranges ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE ranges ADD COLUMN suggest_focus TEXT NOT NULL DEFAULT '';
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kStoreSchemaVersion);

std::string joinLines(const std::vector<std::string>& v, char sep = '\n') {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += sep;
    out += v[i];
  }
  return out;
}

std::vector<std::string> splitLines(std::string_view s, char sep = '\n') {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    out.emplace_back(s.substr(start, p == std::string_view::npos ? s.npos : p - start));
    if (p == std::string_view::npos) break;
    start = p + 1;
  }
  return out;
}

// Kernel sets: sets separated by '\n', names within a set by '\x1f'.
std::string encodeSets(const std::vector<std::vector<std::string>>& sets) {
  std::vector<std::string> lines;
  for (const auto& s : sets) lines.push_back(joinLines(s, '\x1f'));
  return joinLines(lines);
}
std::vector<std::vector<std::string>> decodeSets(std::string_view s) {
  std::vector<std::vector<std::string>> out;
  for (const auto& l : splitLines(s)) out.push_back(splitLines(l, '\x1f'));
  return out;
}

using attribution::LineResult;
using St = sql::Statement;
using Row = LineResult;

/// The `ranges` table's columns after id and round_id: one stored line (LineResult and its
/// RangeInfo) per row, in the schema's order (Store::rangeColumnsMatch checks it against a store).
/// Lines are 0-based in a LineResult, 1-based on disk; a row without disk lines (0) reads the
/// original lines.
constexpr Column<Row> kRangeColumns[] = {
    {"name", "TEXT", [](St& st, int i, const Row& s) { return st.bind(i, std::string_view(s.range.name)); },
     [](const St& st, int c, Row& s) { s.range.name = st.text(c); }},
    {"path", "TEXT", [](St& st, int i, const Row& s) { return st.bind(i, std::string_view(s.path)); },
     [](const St& st, int c, Row& s) { s.path = st.text(c); }},
    {"first_line", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.range.firstLine}); },
     [](const St& st, int c, Row& s) { s.range.firstLine = static_cast<uint32_t>(st.int64(c)); }},
    {"last_line", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.range.lastLine}); },
     [](const St& st, int c, Row& s) { s.range.lastLine = static_cast<uint32_t>(st.int64(c)); }},
    {"disk_first", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.line} + 1); },
     [](const St& st, int c, Row& s) {
       auto disk = static_cast<uint32_t>(st.int64(c));
       s.line = (disk ? disk : s.range.firstLine) - 1;
     }},
    {"disk_last", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.lastLine} + 1); },
     [](const St& st, int c, Row& s) {
       auto disk = static_cast<uint32_t>(st.int64(c));
       s.lastLine = (disk ? disk : s.range.lastLine) - 1;
     }},
    {"label", "TEXT", [](St& st, int i, const Row& s) { return st.bind(i, std::string_view(s.label)); },
     [](const St& st, int c, Row& s) { s.label = st.text(c); }},
    {"function", "TEXT", [](St& st, int i, const Row& s) { return st.bind(i, std::string_view(s.function)); },
     [](const St& st, int c, Row& s) { s.function = st.text(c); }},
    {"function_body", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.body}); },
     [](const St& st, int c, Row& s) { s.body = st.int64(c) != 0; }},
    {"parent_name", "TEXT", [](St& st, int i, const Row& s) { return st.bind(i, std::string_view(s.range.parent)); },
     [](const St& st, int c, Row& s) { s.range.parent = st.text(c); }},
    {"depth", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.range.depth}); },
     [](const St& st, int c, Row& s) { s.range.depth = static_cast<int32_t>(st.int64(c)); }},
    {"leaf", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.range.leaf}); },
     [](const St& st, int c, Row& s) { s.range.leaf = st.int64(c) != 0; }},
    {"invocations", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.invocations}); },
     [](const St& st, int c, Row& s) { s.invocations = static_cast<uint32_t>(st.int64(c)); }},
    {"launches", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, s.range.launches); },
     [](const St& st, int c, Row& s) { s.range.launches = st.int64(c); }},
    {"gpu_ns", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, s.range.gpuNs); },
     [](const St& st, int c, Row& s) { s.range.gpuNs = st.int64(c); }},
    {"distinct_kernels", "INTEGER",
     [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.range.distinctKernels}); },
     [](const St& st, int c, Row& s) { s.range.distinctKernels = static_cast<uint32_t>(st.int64(c)); }},
    {"excl_launches", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, static_cast<int64_t>(s.ops)); },
     [](const St& st, int c, Row& s) { s.ops = static_cast<uint64_t>(st.int64(c)); }},
    {"excl_gpu_ns", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, s.gpuNs); },
     [](const St& st, int c, Row& s) { s.gpuNs = st.int64(c); }},
    {"min_kernels_per_inv", "INTEGER",
     [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.range.minKernelsPerInvocation}); },
     [](const St& st, int c, Row& s) { s.range.minKernelsPerInvocation = static_cast<uint32_t>(st.int64(c)); }},
    {"max_kernels_per_inv", "INTEGER",
     [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.range.maxKernelsPerInvocation}); },
     [](const St& st, int c, Row& s) { s.range.maxKernelsPerInvocation = static_cast<uint32_t>(st.int64(c)); }},
    {"distinct_kernel_sets", "INTEGER",
     [](St& st, int i, const Row& s) { return st.bind(i, int64_t{s.range.distinctKernelSets}); },
     [](const St& st, int c, Row& s) { s.range.distinctKernelSets = static_cast<uint32_t>(st.int64(c)); }},
    {"kernel_sets", "TEXT",
     [](St& st, int i, const Row& s) { return st.bind(i, std::string_view(encodeSets(s.range.kernelSets))); },
     [](const St& st, int c, Row& s) { s.range.kernelSets = decodeSets(st.text(c)); }},
    {"excl_backward_gpu_ns", "INTEGER", [](St& st, int i, const Row& s) { return st.bind(i, s.backwardNs); },
     [](const St& st, int c, Row& s) { s.backwardNs = st.int64(c); }},
    {"atomic_reason", "TEXT",
     [](St& st, int i, const Row& s) {
       return st.bind(i, std::string_view(attribution::atomicReasonName(s.atomicReason)));
     },
     [](const St& st, int c, Row& s) {
       s.atomicReason = attribution::atomicReasonFromName(st.text(c)).value_or(attribution::AtomicReason::None);
     }},
    {"note", "TEXT", [](St& st, int i, const Row& s) { return st.bind(i, std::string_view(s.note)); },
     [](const St& st, int c, Row& s) { s.note = st.text(c); }},
    {"suggest_focus", "TEXT", [](St& st, int i, const Row& s) { return st.bind(i, std::string_view(s.suggestFocus)); },
     [](const St& st, int c, Row& s) { s.suggestFocus = st.text(c); }},
};
constexpr std::span<const Column<Row>> kRanges{kRangeColumns};

using attribution::KernelStat;
/// The `range_kernels` table's columns after range_id: one kernel of a stored line per row. Read
/// back, the full name is the op name, and a row without a short name shows the op name.
constexpr Column<KernelStat> kRangeKernelColumns[] = {
    {"name", "TEXT", [](St& st, int i, const KernelStat& k) { return st.bind(i, std::string_view(k.opName)); },
     [](const St& st, int c, KernelStat& k) {
       k.opName = st.text(c);
       k.fullName = k.opName;
     }},
    {"short_name", "TEXT", [](St& st, int i, const KernelStat& k) { return st.bind(i, std::string_view(k.name)); },
     [](const St& st, int c, KernelStat& k) {
       k.name = st.text(c);
       if (k.name.empty()) k.name = k.opName;
     }},
    {"kind", "TEXT",
     [](St& st, int i, const KernelStat& k) { return st.bind(i, std::string_view(profile::gpuOpKindName(k.kind))); },
     [](const St& st, int c, KernelStat& k) {
       k.kind = profile::gpuOpKindFromName(st.text(c)).value_or(profile::GpuOpKind::Kernel);
     }},
    {"launches", "INTEGER",
     [](St& st, int i, const KernelStat& k) { return st.bind(i, static_cast<int64_t>(k.launches)); },
     [](const St& st, int c, KernelStat& k) { k.launches = static_cast<uint64_t>(st.int64(c)); }},
    {"gpu_ns", "INTEGER", [](St& st, int i, const KernelStat& k) { return st.bind(i, k.totalNs); },
     [](const St& st, int c, KernelStat& k) { k.totalNs = st.int64(c); }},
    {"pass", "TEXT",
     [](St& st, int i, const KernelStat& k) { return st.bind(i, std::string_view(attribution::passName(k.pass))); },
     [](const St& st, int c, KernelStat& k) {
       k.pass = attribution::passFromName(st.text(c)).value_or(attribution::Pass::Forward);
     }},
};
constexpr std::span<const Column<KernelStat>> kRangeKernels{kRangeKernelColumns};

using attribution::UnmappedEntry;
/// The `unmapped_ops` table's columns after round_id: one group of GPU ops no stored line owns.
constexpr Column<UnmappedEntry> kUnmappedColumns[] = {
    {"name", "TEXT", [](St& st, int i, const UnmappedEntry& u) { return st.bind(i, std::string_view(u.name)); },
     [](const St& st, int c, UnmappedEntry& u) { u.name = st.text(c); }},
    {"kind", "TEXT",
     [](St& st, int i, const UnmappedEntry& u) { return st.bind(i, std::string_view(profile::gpuOpKindName(u.kind))); },
     [](const St& st, int c, UnmappedEntry& u) {
       u.kind = profile::gpuOpKindFromName(st.text(c)).value_or(profile::GpuOpKind::Kernel);
     }},
    {"reason", "TEXT",
     [](St& st, int i, const UnmappedEntry& u) { return st.bind(i, attribution::unmappedReasonName(u.reason)); },
     [](const St& st, int c, UnmappedEntry& u) {
       u.reason = attribution::unmappedReasonFromName(st.text(c)).value_or(attribution::UnmappedReason::OutsideRanges);
     }},
    {"launches", "INTEGER", [](St& st, int i, const UnmappedEntry& u) { return st.bind(i, u.launches); },
     [](const St& st, int c, UnmappedEntry& u) { u.launches = st.int64(c); }},
    {"gpu_ns", "INTEGER", [](St& st, int i, const UnmappedEntry& u) { return st.bind(i, u.gpuNs); },
     [](const St& st, int c, UnmappedEntry& u) { u.gpuNs = st.int64(c); }},
};
constexpr std::span<const Column<UnmappedEntry>> kUnmapped{kUnmappedColumns};

/// Whether `query` (one `?` bound to `id`) returns a row.
Result<bool> hasRow(const sql::Database& db, const char* query, int64_t id) {
  auto st = db.prepare(query);
  if (!st) return st.error();
  KL_TRY(st->bind(1, id));
  auto r = st->step();
  if (!r) return r.error();
  return *r;
}

Result<void> bindText(sql::Statement& st, int i, const std::string& v) {
  return v.empty() ? st.bindNull(i) : st.bind(i, std::string_view(v));
}

const char* kRunColumns =
    "id, run_key, command, workspace, focus_path, focus_function, backend, launch, gpu, "
    "profiler_version, git_repo, git_commit, git_branch, git_dirty, status, error, log_path, run_dir, "
    "started_at, ended_at, wall_ms, emulated";

RunInfo readRun(const sql::Statement& st) {
  RunInfo r;
  r.id = st.int64(0);
  r.key = st.text(1);
  r.command = st.text(2);
  r.workspace = st.text(3);
  r.focusPath = st.text(4);
  r.focusFunction = st.text(5);
  r.backend = st.text(6);
  r.launch = st.text(7);
  r.gpu = st.text(8);
  r.profilerVersion = st.text(9);
  r.gitRepo = st.int64(10) != 0;
  r.gitCommit = st.text(11);
  r.gitBranch = st.text(12);
  r.gitDirty = st.int64(13) != 0;
  // A status this build does not know (none is written by it) reads as failed.
  r.status = runStatusFromName(st.text(14)).value_or(RunStatus::Failed);
  r.error = st.text(15);
  r.logPath = st.text(16);
  r.runDir = st.text(17);
  r.startedAt = st.text(18);
  r.endedAt = st.text(19);
  r.wallMs = st.int64(20);
  r.emulated = st.int64(21) != 0;
  return r;
}

const char* kRoundColumns =
    "id, run_id, idx, status, error, wall_ms, profiles, total_ops, mapped_ops, total_gpu_ns, emulated";

RoundInfo readRound(const sql::Statement& st) {
  RoundInfo r;
  r.id = st.int64(0);
  r.runId = st.int64(1);
  r.index = static_cast<int>(st.int64(2));
  r.status = runStatusFromName(st.text(3)).value_or(RunStatus::Failed);
  r.error = st.text(4);
  r.wallMs = st.int64(5);
  r.profiles = splitLines(st.text(6));
  r.totalOps = st.int64(7);
  r.mappedOps = st.int64(8);
  r.totalGpuNs = st.int64(9);
  r.emulated = st.int64(10) != 0;
  return r;
}

/// A process's start time (field 22 of /proc/PID/stat, clock ticks since boot); nullopt when
/// there is no such process (or it is a zombie).
std::optional<int64_t> processStartTime(int64_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(f, s)) return std::nullopt;
  auto close = s.rfind(')');
  if (close == std::string::npos || close + 2 >= s.size()) return std::nullopt;
  if (s[close + 2] == 'Z' || s[close + 2] == 'X') return std::nullopt;
  std::istringstream rest(s.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i)  // fields 3.. follow the comm
    if (!(rest >> field)) return std::nullopt;
  try {
    return std::stoll(field);
  } catch (...) {
    return std::nullopt;
  }
}

std::string hostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace

const char* runStatusName(RunStatus s) {
  switch (s) {
    case RunStatus::Running: return "running";
    case RunStatus::Ok: return "ok";
    case RunStatus::Failed: return "failed";
    case RunStatus::Cancelled: return "cancelled";
    case RunStatus::Interrupted: return "interrupted";
  }
  return "failed";
}

std::optional<RunStatus> runStatusFromName(std::string_view name) {
  for (RunStatus s :
       {RunStatus::Running, RunStatus::Ok, RunStatus::Failed, RunStatus::Cancelled, RunStatus::Interrupted})
    if (name == runStatusName(s)) return s;
  return std::nullopt;
}

std::string isoNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::filesystem::path Store::dbPathFor(const std::filesystem::path& workspace) {
  return workspace / ".kernlens" / "kernlens.db";
}

Result<int> Store::schemaVersion(const sql::Database& db) { return sql::componentVersion(db, "store"); }

Result<void> Store::migrate(sql::Database& db, int target) {
  return sql::migrateComponent(db, {"store", "kernlens.db store schema", kMigrations, kStoreSchemaVersion}, target);
}

Result<Store> Store::openFile(const std::filesystem::path& dbPath) {
  auto db = sql::openShared(dbPath, {"store", "kernlens.db store schema", kMigrations, kStoreSchemaVersion});
  if (!db) return db.error();
  Store store(std::move(*db));
  (void)store.closeStaleRuns();  // best effort: a busy database only delays the clean-up
  return store;
}

Result<int> Store::closeStaleRuns() {
  auto st = db_.prepare("SELECT id, owner_pid, owner_start, owner_host FROM runs WHERE status = 'running'");
  if (!st) return st.error();
  std::string host = hostName();
  std::vector<std::pair<int64_t, int64_t>> stale;  // run id, owner pid
  while (true) {
    auto r = st->step();
    if (!r) return r.error();
    if (!*r) break;
    int64_t id = st->int64(0), pid = st->int64(1), start = st->int64(2);
    std::string owner(st->text(3));
    if (!owner.empty() && owner != host) continue;  // another machine's run: cannot tell
    auto now = pid > 0 ? processStartTime(pid) : std::nullopt;
    if (now && *now == start) continue;  // its kernlens is still running
    stale.emplace_back(id, pid);
  }
  st = sql::Statement();
  int closed = 0;
  for (auto [id, pid] : stale) {
    auto up = db_.prepare(
        "UPDATE runs SET status = 'interrupted', error = ?, ended_at = ? WHERE id = ? AND status = 'running'");
    if (!up) return up.error();
    std::string why = pid > 0 ? "kernlens (pid " + std::to_string(pid) + ") ended while the run was running"
                              : "the kernlens that ran it ended while the run was running";
    KL_TRY(up->bind(1, std::string_view(why)));
    KL_TRY(up->bind(2, std::string_view(isoNow())));
    KL_TRY(up->bind(3, id));
    KL_TRY(up->run());
    closed += db_.changes() == 1;
  }
  return closed;
}

Result<Store> Store::open(const std::filesystem::path& workspace) {
  std::error_code ec;
  if (!std::filesystem::is_directory(workspace, ec))
    return Error::notFound(workspace.string() + ": workspace is not a directory");
  auto dir = workspace / ".kernlens";
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error::io(dir.string() + ": cannot create directory: " + ec.message());
  auto gi = dir / ".gitignore";
  if (!std::filesystem::exists(gi, ec)) {
    std::ofstream(gi) << "*\n";
  }
  return openFile(dbPathFor(workspace));
}

Result<int64_t> Store::beginRun(RunInfo& info) {
  if (info.key.empty()) return Error::invalid("store: a run needs a key");
  if (info.startedAt.empty()) info.startedAt = isoNow();
  auto tx = sql::Transaction::begin(db_);
  if (!tx) return tx.error();
  auto st = db_.prepare(
      "INSERT INTO runs(run_key, command, workspace, focus_path, focus_function, backend, launch, gpu, "
      "profiler_version, git_repo, git_commit, git_branch, git_dirty, status, error, log_path, run_dir, "
      "started_at, ended_at, wall_ms, emulated) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!st) return st.error();
  KL_TRY(st->bind(1, std::string_view(info.key)));
  KL_TRY(st->bind(2, std::string_view(info.command)));
  KL_TRY(st->bind(3, std::string_view(info.workspace)));
  KL_TRY(bindText(*st, 4, info.focusPath));
  KL_TRY(bindText(*st, 5, info.focusFunction));
  KL_TRY(st->bind(6, std::string_view(info.backend)));
  KL_TRY(st->bind(7, std::string_view(info.launch)));
  KL_TRY(bindText(*st, 8, info.gpu));
  KL_TRY(bindText(*st, 9, info.profilerVersion));
  KL_TRY(st->bind(10, int64_t{info.gitRepo}));
  KL_TRY(bindText(*st, 11, info.gitCommit));
  KL_TRY(bindText(*st, 12, info.gitBranch));
  KL_TRY(st->bind(13, int64_t{info.gitDirty}));
  KL_TRY(st->bind(14, std::string_view(runStatusName(info.status))));
  KL_TRY(bindText(*st, 15, info.error));
  KL_TRY(bindText(*st, 16, info.logPath));
  KL_TRY(bindText(*st, 17, info.runDir));
  KL_TRY(st->bind(18, std::string_view(info.startedAt)));
  KL_TRY(bindText(*st, 19, info.endedAt));
  KL_TRY(st->bind(20, info.wallMs));
  KL_TRY(st->bind(21, int64_t{info.emulated}));
  auto r = st->run();
  if (!r) return Error::invalid("store: cannot add run '" + info.key + "': " + r.error().message);
  info.id = db_.lastInsertRowId();
  st = sql::Statement();
  auto owner = db_.prepare("UPDATE runs SET owner_pid = ?, owner_start = ?, owner_host = ? WHERE id = ?");
  if (!owner) return owner.error();
  int64_t self = ::getpid();
  KL_TRY(owner->bind(1, self));
  KL_TRY(owner->bind(2, processStartTime(self).value_or(0)));
  KL_TRY(owner->bind(3, std::string_view(hostName())));
  KL_TRY(owner->bind(4, info.id));
  KL_TRY(owner->run());
  owner = sql::Statement();
  KL_TRY(tx->commit());
  return info.id;
}

Result<void> Store::finishRun(const RunInfo& info) {
  auto tx = sql::Transaction::begin(db_);
  if (!tx) return tx.error();
  auto st = db_.prepare(
      "UPDATE runs SET status = ?, error = ?, ended_at = ?, wall_ms = ?, "
      "gpu = COALESCE(?, gpu), profiler_version = COALESCE(?, profiler_version), "
      "emulated = MAX(emulated, ?) WHERE id = ?");
  if (!st) return st.error();
  KL_TRY(st->bind(1, std::string_view(runStatusName(info.status))));
  KL_TRY(bindText(*st, 2, info.error));
  KL_TRY(st->bind(3, std::string_view(info.endedAt.empty() ? isoNow() : info.endedAt)));
  KL_TRY(st->bind(4, info.wallMs));
  KL_TRY(bindText(*st, 5, info.gpu));
  KL_TRY(bindText(*st, 6, info.profilerVersion));
  KL_TRY(st->bind(7, int64_t{info.emulated}));
  KL_TRY(st->bind(8, info.id));
  KL_TRY(st->run());
  if (db_.changes() != 1) return Error::notFound("store: no run with id " + std::to_string(info.id));
  st = sql::Statement();
  return tx->commit();
}

namespace {
using Failpoint = std::function<Result<void>(std::string_view stage)>;

/// The `rounds` row of round `rec` of run `runId`; returns its id.
Result<int64_t> insertRound(sql::Database& db, int64_t runId, const RoundRecord& rec) {
  const RoundResults& lr = rec.results;
  auto st = db.prepare(
      "INSERT INTO rounds(run_id, idx, status, error, wall_ms, profiles, profiler_version, gpu, total_ops, "
      "mapped_ops, total_gpu_ns, kl_ranges, emulated, warnings) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!st) return st.error();
  KL_TRY(st->bind(1, runId));
  KL_TRY(st->bind(2, int64_t{rec.index}));
  KL_TRY(st->bind(3, std::string_view(runStatusName(rec.status))));
  KL_TRY(bindText(*st, 4, rec.error));
  KL_TRY(st->bind(5, rec.wallMs));
  KL_TRY(st->bind(6, std::string_view(joinLines(rec.profiles))));
  KL_TRY(bindText(*st, 7, rec.profilerVersion));
  KL_TRY(bindText(*st, 8, rec.gpu));
  KL_TRY(st->bind(9, lr.totalOps));
  KL_TRY(st->bind(10, lr.mappedOps));
  KL_TRY(st->bind(11, lr.totalGpuNs));
  KL_TRY(st->bind(12, lr.klRanges));
  KL_TRY(st->bind(13, int64_t{lr.emulated}));
  KL_TRY(st->bind(14, std::string_view(joinLines(lr.warnings))));
  if (auto r = st->run(); !r)
    return Error::invalid("store: cannot add round " + std::to_string(rec.index) + " of run " + std::to_string(runId) +
                          ": " + r.error().message);
  return db.lastInsertRowId();
}

/// Per stored line of round `roundId`: its `ranges` row (through its row binding), its kernels'
/// `range_kernels` rows and its per-line `line_stats` row; the failpoint's "span" stage after each.
Result<void> insertSpans(sql::Database& db, int64_t roundId, const std::vector<LineResult>& spans,
                         const Failpoint& fail) {
  auto rs =
      db.prepare("INSERT INTO ranges(round_id, " + columnNames(kRanges) + ") VALUES(?," + placeholders(kRanges) + ")");
  if (!rs) return rs.error();
  auto ks = db.prepare("INSERT INTO range_kernels(range_id, " + columnNames(kRangeKernels) + ") VALUES(?," +
                       placeholders(kRangeKernels) + ")");
  if (!ks) return ks.error();
  auto ls = db.prepare(
      "INSERT INTO line_stats(round_id, path, line, range_id, launches, gpu_ns, kernels) VALUES(?,?,?,?,?,?,?)");
  if (!ls) return ls.error();
  for (const auto& s : spans) {
    KL_TRY(rs->reset());
    rs->clearBindings();
    KL_TRY(rs->bind(1, roundId));
    KL_TRY(bindRow(kRanges, *rs, 2, s));
    KL_TRY(rs->run());
    int64_t rangeId = db.lastInsertRowId();
    for (const auto& k : s.kernels) {
      KL_TRY(ks->reset());
      KL_TRY(ks->bind(1, rangeId));
      KL_TRY(bindRow(kRangeKernels, *ks, 2, k));
      KL_TRY(ks->run());
    }
    // Per-line row: the statement(s) starting at this disk line, exclusive numbers.
    KL_TRY(ls->reset());
    KL_TRY(ls->bind(1, roundId));
    KL_TRY(ls->bind(2, std::string_view(s.path)));
    KL_TRY(ls->bind(3, int64_t{s.line} + 1));
    KL_TRY(ls->bind(4, rangeId));
    KL_TRY(ls->bind(5, static_cast<int64_t>(s.ops)));
    KL_TRY(ls->bind(6, s.gpuNs));
    KL_TRY(ls->bind(7, static_cast<int64_t>(s.kernels.size())));
    KL_TRY(ls->run());
    KL_TRY(fail("span"));
  }
  return {};
}

/// The `unmapped_ops` rows of round `roundId`.
Result<void> insertUnmapped(sql::Database& db, int64_t roundId, const std::vector<attribution::UnmappedEntry>& ops) {
  auto us = db.prepare("INSERT INTO unmapped_ops(round_id, " + columnNames(kUnmapped) + ") VALUES(?," +
                       placeholders(kUnmapped) + ")");
  if (!us) return us.error();
  for (const auto& u : ops) {
    KL_TRY(us->reset());
    KL_TRY(us->bind(1, roundId));
    KL_TRY(bindRow(kUnmapped, *us, 2, u));
    KL_TRY(us->run());
  }
  return {};
}

/// Each profiled file's text as a snapshot (one per blob id) and run `runId`'s `run_files` row for
/// its path (the latest round's blob wins); the failpoint's "snapshot" stage after each.
Result<void> insertSnapshots(sql::Database& db, int64_t runId, const std::vector<FileSnapshot>& files,
                             const Failpoint& fail) {
  auto sn = db.prepare("INSERT INTO snapshots(blob_id, size, text) VALUES(?,?,?) ON CONFLICT(blob_id) DO NOTHING");
  if (!sn) return sn.error();
  auto rf = db.prepare(
      "INSERT INTO run_files(run_id, path, blob_id) VALUES(?,?,?) "
      "ON CONFLICT(run_id, path) DO UPDATE SET blob_id = excluded.blob_id");
  if (!rf) return rf.error();
  for (const auto& f : files) {
    std::string id = blobId(f.text);
    KL_TRY(sn->reset());
    KL_TRY(sn->bind(1, std::string_view(id)));
    KL_TRY(sn->bind(2, static_cast<int64_t>(f.text.size())));
    KL_TRY(sn->bind(3, std::string_view(f.text)));
    KL_TRY(sn->run());
    KL_TRY(rf->reset());
    KL_TRY(rf->bind(1, runId));
    KL_TRY(rf->bind(2, std::string_view(f.path)));
    KL_TRY(rf->bind(3, std::string_view(id)));
    KL_TRY(rf->run());
    KL_TRY(fail("snapshot"));
  }
  return {};
}
}  // namespace

Result<void> Store::rowBindingsMatch(const sql::Database& db) {
  KL_TRY(schemaMatches(db, "ranges", /*skip id, round_id*/ 2, kRanges));
  KL_TRY(schemaMatches(db, "range_kernels", /*skip range_id*/ 1, kRangeKernels));
  return schemaMatches(db, "unmapped_ops", /*skip round_id*/ 1, kUnmapped);
}

Result<int64_t> Store::writeRound(int64_t runId, const RoundRecord& rec) {
  const Failpoint fail = [this](std::string_view stage) -> Result<void> {
    return failpoint_ ? failpoint_(stage) : Result<void>();
  };
  auto tx = sql::Transaction::begin(db_, /*immediate=*/true);
  if (!tx) return tx.error();
  {
    auto has = hasRow(db_, "SELECT 1 FROM runs WHERE id = ?", runId);
    if (!has) return has.error();
    if (!*has) return Error::invalid("store: no run with id " + std::to_string(runId));
  }
  auto roundId = insertRound(db_, runId, rec);
  if (!roundId) return roundId.error();
  KL_TRY(fail("round"));
  KL_TRY(insertSpans(db_, *roundId, rec.results.spans, fail));
  KL_TRY(insertUnmapped(db_, *roundId, rec.results.unmapped));
  KL_TRY(insertSnapshots(db_, runId, rec.files, fail));
  if (rec.results.emulated) {
    auto em = db_.prepare("UPDATE runs SET emulated = 1 WHERE id = ?");
    if (!em) return em.error();
    KL_TRY(em->bind(1, runId));
    KL_TRY(em->run());
  }
  KL_TRY(fail("commit"));
  // Statements must be finalised before COMMIT would matter only for pending reads; all ran.
  KL_TRY(tx->commit());
  return *roundId;
}

Result<void> Store::annotateRanges(int64_t roundId, const std::vector<attribution::LineResult>& lines) {
  auto tx = sql::Transaction::begin(db_, /*immediate=*/true);
  if (!tx) return tx.error();
  {
    auto has = hasRow(db_, "SELECT 1 FROM rounds WHERE id = ?", roundId);
    if (!has) return has.error();
    if (!*has) return Error::invalid("store: no round with id " + std::to_string(roundId));
  }
  auto up =
      db_.prepare("UPDATE ranges SET atomic_reason = ?, note = ?, suggest_focus = ? WHERE round_id = ? AND name = ?");
  if (!up) return up.error();
  for (const auto& l : lines) {
    if (l.range.name.empty()) continue;
    KL_TRY(up->reset());
    KL_TRY(up->bind(1, std::string_view(attribution::atomicReasonName(l.atomicReason))));
    KL_TRY(up->bind(2, std::string_view(l.note)));
    KL_TRY(up->bind(3, std::string_view(l.suggestFocus)));
    KL_TRY(up->bind(4, roundId));
    KL_TRY(up->bind(5, std::string_view(l.range.name)));
    KL_TRY(up->run());
  }
  KL_TRY(tx->commit());
  return {};
}

Result<std::optional<RunInfo>> Store::run(int64_t runId) const {
  auto st = db_.prepare(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?");
  if (!st) return st.error();
  KL_TRY(st->bind(1, runId));
  auto r = st->step();
  if (!r) return r.error();
  if (!*r) return std::optional<RunInfo>();
  return std::optional<RunInfo>(readRun(*st));
}

Result<std::vector<RunInfo>> Store::runs(int limit) const {
  auto st = db_.prepare(std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id DESC LIMIT ?");
  if (!st) return st.error();
  KL_TRY(st->bind(1, int64_t{limit}));
  std::vector<RunInfo> out;
  while (true) {
    auto r = st->step();
    if (!r) return r.error();
    if (!*r) break;
    out.push_back(readRun(*st));
  }
  return out;
}

Result<std::vector<RoundInfo>> Store::rounds(int64_t runId) const {
  auto st = db_.prepare(std::string("SELECT ") + kRoundColumns + " FROM rounds WHERE run_id = ? ORDER BY idx");
  if (!st) return st.error();
  KL_TRY(st->bind(1, runId));
  std::vector<RoundInfo> out;
  while (true) {
    auto r = st->step();
    if (!r) return r.error();
    if (!*r) break;
    out.push_back(readRound(*st));
  }
  return out;
}

namespace {
Result<std::vector<attribution::LineResult>> readSpans(const sql::Database& db, int64_t roundId,
                                                       std::string_view path) {
  std::string q = "SELECT id, " + columnNames(kRanges) + " FROM ranges WHERE round_id = ?";
  if (!path.empty()) q += " AND path = ?";
  q += " ORDER BY path, first_line, last_line DESC, id";
  auto st = db.prepare(q);
  if (!st) return st.error();
  KL_TRY(st->bind(1, roundId));
  if (!path.empty()) KL_TRY(st->bind(2, path));
  auto ks = db.prepare("SELECT " + columnNames(kRangeKernels) +
                       " FROM range_kernels WHERE range_id = ? ORDER BY gpu_ns DESC, name, pass");
  if (!ks) return ks.error();
  std::vector<attribution::LineResult> out;
  while (true) {
    auto r = st->step();
    if (!r) return r.error();
    if (!*r) break;
    attribution::LineResult s;
    int64_t id = st->int64(0);
    readRow(kRanges, *st, 1, s);
    KL_TRY(ks->reset());
    KL_TRY(ks->bind(1, id));
    while (true) {
      auto k = ks->step();
      if (!k) return k.error();
      if (!*k) break;
      attribution::KernelStat kst;
      readRow(kRangeKernels, *ks, 0, kst);
      s.kernels.push_back(std::move(kst));
    }
    out.push_back(std::move(s));
  }
  return out;
}
}  // namespace

Result<std::vector<attribution::LineResult>> Store::spans(int64_t roundId) const { return readSpans(db_, roundId, ""); }

Result<std::vector<attribution::UnmappedEntry>> Store::unmapped(int64_t roundId) const {
  auto st = db_.prepare("SELECT " + columnNames(kUnmapped) +
                        " FROM unmapped_ops WHERE round_id = ? ORDER BY gpu_ns DESC, name");
  if (!st) return st.error();
  KL_TRY(st->bind(1, roundId));
  std::vector<attribution::UnmappedEntry> out;
  while (true) {
    auto r = st->step();
    if (!r) return r.error();
    if (!*r) break;
    attribution::UnmappedEntry u;
    readRow(kUnmapped, *st, 0, u);
    out.push_back(std::move(u));
  }
  return out;
}

Result<std::optional<FileResults>> Store::latestFileResults(std::string_view path) const {
  auto st = db_.prepare(
      "SELECT rd.id FROM rounds rd JOIN runs ru ON ru.id = rd.run_id "
      "WHERE rd.status = 'ok' AND EXISTS(SELECT 1 FROM ranges r WHERE r.round_id = rd.id AND r.path = ?) "
      "ORDER BY ru.id DESC, rd.idx DESC LIMIT 1");
  if (!st) return st.error();
  KL_TRY(st->bind(1, path));
  auto r = st->step();
  if (!r) return r.error();
  if (!*r) return std::optional<FileResults>();
  int64_t roundId = st->int64(0);
  auto rq = db_.prepare(std::string("SELECT ") + kRoundColumns + " FROM rounds WHERE id = ?");
  if (!rq) return rq.error();
  KL_TRY(rq->bind(1, roundId));
  auto rr = rq->step();
  if (!rr) return rr.error();
  FileResults fr;
  fr.round = readRound(*rq);
  auto run = this->run(fr.round.runId);
  if (!run) return run.error();
  if (*run) fr.run = **run;
  auto spans = readSpans(db_, roundId, path);
  if (!spans) return spans.error();
  fr.spans = std::move(*spans);
  auto sid = snapshotIdFor(fr.round.runId, path);
  if (!sid) return sid.error();
  fr.snapshotId = *sid;
  return std::optional<FileResults>(std::move(fr));
}

Result<std::vector<FunctionTotal>> Store::functionTotals(std::string_view path) const {
  auto fr = latestFileResults(path);
  if (!fr) return fr.error();
  std::vector<FunctionTotal> out;
  if (!*fr) return out;
  std::map<std::string, FunctionTotal> by;
  for (const auto& s : (*fr)->spans) {
    if (s.function.empty()) continue;
    auto& t = by[s.function];
    t.path = s.path;
    t.function = s.function;
    t.runId = (*fr)->run.id;
    t.roundIndex = (*fr)->round.index;
    t.emulated = (*fr)->round.emulated || (*fr)->run.emulated;
    ++t.spans;
    if (s.body) {
      t.fromBodyRange = true;
      t.gpuNs = s.range.gpuNs;
      t.launches = s.range.launches;
    } else if (!t.fromBodyRange) {
      addTo(t.gpuNs, s.gpuNs);
      t.launches += static_cast<int64_t>(s.ops);
    }
  }
  for (auto& [k, v] : by) out.push_back(std::move(v));
  std::sort(out.begin(), out.end(), [](const FunctionTotal& a, const FunctionTotal& b) {
    return a.gpuNs != b.gpuNs ? a.gpuNs > b.gpuNs : a.function < b.function;
  });
  return out;
}

Result<std::optional<RunInfo>> Store::previousRun(std::string_view path, std::string_view function,
                                                  int64_t beforeRunId) const {
  auto st = db_.prepare(std::string("SELECT ") + kRunColumns +
                        " FROM runs WHERE focus_path = ? AND focus_function = ? AND status = 'ok' "
                        "AND (? = 0 OR id < ?) ORDER BY id DESC LIMIT 1");
  if (!st) return st.error();
  KL_TRY(st->bind(1, path));
  KL_TRY(st->bind(2, function));
  KL_TRY(st->bind(3, beforeRunId));
  KL_TRY(st->bind(4, beforeRunId));
  auto r = st->step();
  if (!r) return r.error();
  if (!*r) return std::optional<RunInfo>();
  return std::optional<RunInfo>(readRun(*st));
}

Result<std::optional<std::string>> Store::snapshot(std::string_view id) const {
  auto st = db_.prepare("SELECT text FROM snapshots WHERE blob_id = ?");
  if (!st) return st.error();
  KL_TRY(st->bind(1, id));
  auto r = st->step();
  if (!r) return r.error();
  if (!*r) return std::optional<std::string>();
  return std::optional<std::string>(std::string(st->text(0)));
}

Result<std::string> Store::snapshotIdFor(int64_t runId, std::string_view path) const {
  auto st = db_.prepare("SELECT blob_id FROM run_files WHERE run_id = ? AND path = ?");
  if (!st) return st.error();
  KL_TRY(st->bind(1, runId));
  KL_TRY(st->bind(2, path));
  auto r = st->step();
  if (!r) return r.error();
  return *r ? std::string(st->text(0)) : std::string();
}

}  // namespace kl::store
