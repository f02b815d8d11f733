// The results store: migrations from every older version (and next to the ncu catalogue's
// tables), one transaction per round (failure injection and a real crash of a writer process),
// two processes writing concurrently, snapshot dedup, the editor queries, git provenance.
#include "core/store/store.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "core/store/git_info.h"
#include "tests/support/range_verdict.h"
#include "tests/support/test_support.h"

using namespace kl;
using namespace kl::store;

namespace {

RunInfo makeRun(const std::string& key, const std::string& fn = "f") {
  RunInfo r;
  r.key = key;
  r.command = "python train.py";
  r.workspace = "/ws";
  r.focusPath = "m.py";
  r.focusFunction = fn;
  r.backend = "emulate";
  r.launch = "local";
  return r;
}

RoundRecord makeRound(int index, int64_t scale = 1, const std::string& text = "def f():\n    a()\n    b()\n") {
  RoundRecord rec;
  rec.index = index;
  rec.wallMs = 10;
  rec.profiles = {"/ws/.kernlens/runs/x/round0/out/profile.sqlite"};
  rec.profilerVersion = "kernlens-emulate 0.1.0 (emulated)";
  rec.gpu = "NVIDIA H100 80GB HBM3 (emulated)";
  RoundResults& lr = rec.results;
  lr.emulated = true;
  lr.totalOps = 5;
  lr.mappedOps = 4;
  lr.totalGpuNs = 1000 * scale;
  auto kern = [](const char* op, const char* shortName, uint64_t launches, int64_t ns,
                 attribution::Pass pass = attribution::Pass::Forward) {
    attribution::KernelStat k;
    k.opName = k.fullName = op;
    k.name = shortName;
    k.launches = launches;
    k.totalNs = ns;
    k.pass = pass;
    return k;
  };
  attribution::LineResult body;  // lines: 0-based disk lines; range: 1-based lines of the name
  body.range.name = "kl:m.py:2-3";
  body.path = "m.py";
  body.range.firstLine = 2;
  body.line = 1;
  body.range.lastLine = 3;
  body.lastLine = 2;
  body.function = "f";
  body.body = true;
  body.range.leaf = false;
  body.invocations = 1;
  body.range.launches = 4;
  body.range.gpuNs = 900 * scale;
  attribution::LineResult a = body;
  a.range.name = "kl:m.py:2-2";
  a.range.lastLine = 2;
  a.lastLine = 1;
  a.body = false;
  a.range.leaf = true;
  a.range.depth = 1;
  a.range.parent = body.range.name;
  a.range.launches = 3;
  a.ops = 3;
  a.range.gpuNs = a.gpuNs = 700 * scale;
  a.range.distinctKernels = 2;
  a.range.minKernelsPerInvocation = a.range.maxKernelsPerInvocation = 2;
  a.range.distinctKernelSets = 1;
  a.range.kernelSets = {{"gemm", "relu"}};
  a.kernels = {kern("gemm<x>", "gemm", 2, 600 * scale),
               kern("relu", "relu", 1, 100 * scale, attribution::Pass::Backward)};  // launched by the backward pass
  a.backwardNs = 100 * scale;
  attribution::LineResult b = a;
  b.range.name = "kl:m.py:3-3";
  b.range.firstLine = b.range.lastLine = 3;
  b.line = b.lastLine = 2;
  b.range.launches = 1;
  b.ops = 1;
  b.range.gpuNs = b.gpuNs = 200 * scale;
  b.kernels = {kern("add", "add", 1, 200 * scale)};
  b.backwardNs = 0;
  b.range.kernelSets = {{"add"}};
  lr.spans = {body, a, b};
  lr.unmapped = {{"fill", profile::GpuOpKind::Kernel, attribution::UnmappedReason::OutsideRanges, 1, 100 * scale}};
  rec.files = {{"m.py", text}};
  return rec;
}

int64_t count(Store& s, const std::string& sql) {
  auto st = s.db().prepare(sql);
  REQUIRE(st.ok());
  auto r = st->step();
  REQUIRE(r.ok());
  REQUIRE(*r);
  return st->int64(0);
}

}  // namespace

TEST_CASE("open: .kernlens/kernlens.db, .gitignore, WAL, versions") {
  test::TempDir ws;
  auto s = Store::open(ws.path());
  REQUIRE_MESSAGE(s.ok(), s.error().message);
  CHECK(std::filesystem::exists(ws / ".kernlens" / "kernlens.db"));
  CHECK(test::readFile(ws / ".kernlens" / ".gitignore") == "*\n");
  auto jm = s->db().prepare("PRAGMA journal_mode");
  REQUIRE(jm.ok());
  REQUIRE(*jm->step());
  CHECK(jm->text(0) == "wal");
  CHECK(count(*s, "PRAGMA user_version") == kDatabaseLayoutVersion);
  CHECK(*Store::schemaVersion(s->db()) == kStoreSchemaVersion);
  CHECK_FALSE(Store::open(ws / "missing").ok());
}

TEST_CASE("the row bindings are the schema's column lists, after migrating from any version") {
  // A fresh store and one migrated from each older version: the columns writeRound binds and spans()
  // / unmapped() read are the tables', by name and type, in order.
  for (int from = 0; from <= kStoreSchemaVersion; ++from) {
    CAPTURE(from);
    test::TempDir ws;
    {
      auto db = sql::Database::openReadWrite(ws / "k.db");
      REQUIRE(db.ok());
      REQUIRE(Store::migrate(*db, from).ok());
    }
    auto s = Store::openFile(ws / "k.db");
    REQUIRE_MESSAGE(s.ok(), s.error().message);
    auto match = Store::rowBindingsMatch(s->db());
    CHECK_MESSAGE(match.ok(), (match.ok() ? "" : match.error().message));
  }
  // A column the binding does not know, or one it lacks, is named.
  test::TempDir ws;
  auto s = Store::open(ws.path());
  REQUIRE(s.ok());
  REQUIRE(s->db().exec("ALTER TABLE ranges ADD COLUMN extra INTEGER").ok());
  auto extra = Store::rowBindingsMatch(s->db());
  REQUIRE_FALSE(extra.ok());
  CHECK(extra.error().message.find("'extra'") != std::string::npos);
  REQUIRE(s->db().exec("ALTER TABLE ranges DROP COLUMN extra").ok());
  REQUIRE(s->db().exec("DROP INDEX ranges_by_path").ok());
  REQUIRE(s->db().exec("DROP VIEW kernel_sources").ok());
  REQUIRE(s->db().exec("ALTER TABLE ranges DROP COLUMN suggest_focus").ok());
  auto missing = Store::rowBindingsMatch(s->db());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("'suggest_focus'") != std::string::npos);
  REQUIRE(s->db().exec("ALTER TABLE ranges ADD COLUMN suggest_focus TEXT NOT NULL DEFAULT ''").ok());
  REQUIRE(Store::rowBindingsMatch(s->db()).ok());
  REQUIRE(s->db().exec("ALTER TABLE range_kernels RENAME COLUMN short_name TO label").ok());
  auto renamed = Store::rowBindingsMatch(s->db());
  REQUIRE_FALSE(renamed.ok());
  CHECK(renamed.error().message.find("range_kernels: column 2 is 'label TEXT'") != std::string::npos);
}

TEST_CASE("migrations from every older version keep the data") {
  for (int from = 0; from < kStoreSchemaVersion; ++from) {
    CAPTURE(from);
    test::TempDir ws;
    auto path = ws / "k.db";
    {
      auto db = sql::Database::openReadWrite(path);
      REQUIRE(db.ok());
      // The ncu catalogue got there first (its own component row and table).
      REQUIRE(db->exec("CREATE TABLE kl_schema(component TEXT PRIMARY KEY, version INTEGER NOT NULL);"
                       "INSERT INTO kl_schema VALUES('ncu', 1); CREATE TABLE ncu_imports(id INTEGER PRIMARY KEY);"
                       "INSERT INTO ncu_imports VALUES(7);")
                  .ok());
      REQUIRE(Store::migrate(*db, from).ok());
      CHECK(*Store::schemaVersion(*db) == from);
      if (from >= 1)
        REQUIRE(db->exec("INSERT INTO runs(run_key, command, workspace, focus_path, focus_function, backend, launch, "
                         "status, started_at) VALUES('old', 'python a.py', '/ws', 'm.py', 'f', 'nsys', 'local', 'ok', "
                         "'2026-01-01T00:00:00Z')")
                    .ok());
    }
    auto s = Store::openFile(path);
    REQUIRE_MESSAGE(s.ok(), s.error().message);
    CHECK(*Store::schemaVersion(s->db()) == kStoreSchemaVersion);
    CHECK(count(*s, "SELECT version FROM kl_schema WHERE component = 'ncu'") == 1);
    CHECK(count(*s, "SELECT id FROM ncu_imports") == 7);
    if (from >= 1) {
      auto prev = s->previousRun("m.py", "f");
      REQUIRE(prev.ok());
      REQUIRE(prev->has_value());
      CHECK((*prev)->key == "old");
    }
    // The newest schema is fully usable.
    auto run = makeRun("new");
    REQUIRE(s->beginRun(run).ok());
    REQUIRE(s->writeRound(run.id, makeRound(0)).ok());
    CHECK(count(*s, "SELECT count(*) FROM kernel_sources") == 3);
  }
}

TEST_CASE("a database from a newer kernlens is refused") {
  test::TempDir ws;
  auto path = ws / "k.db";
  {
    auto s = Store::openFile(path);
    REQUIRE(s.ok());
    REQUIRE(s->db().exec("UPDATE kl_schema SET version = 99 WHERE component = 'store'").ok());
  }
  auto s = Store::openFile(path);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == Error::Code::Unsupported);
  CHECK(s.error().message.find("upgrade kernlens") != std::string::npos);
  {
    auto db = sql::Database::openReadWrite(ws / "l.db");
    REQUIRE(db.ok());
    REQUIRE(db->exec("PRAGMA user_version = 5").ok());
  }
  CHECK(Store::openFile(ws / "l.db").error().message.find("layout v5") != std::string::npos);
}

TEST_CASE("a run's status is stored as its text and read back") {
  const std::pair<RunStatus, const char*> spelled[] = {{RunStatus::Running, "running"},
                                                       {RunStatus::Ok, "ok"},
                                                       {RunStatus::Failed, "failed"},
                                                       {RunStatus::Cancelled, "cancelled"},
                                                       {RunStatus::Interrupted, "interrupted"}};
  test::TempDir ws;
  auto s = Store::open(ws.path());
  REQUIRE(s.ok());
  for (const auto& [status, text] : spelled) {
    CHECK(runStatusFromName(text) == status);
    auto r = makeRun(text);
    REQUIRE(s->beginRun(r).ok());
    r.status = status;
    REQUIRE(s->finishRun(r).ok());
    CHECK(count(*s, "SELECT count(*) FROM runs WHERE run_key = '" + std::string(text) + "' AND status = '" + text +
                        "'") == 1);
    CHECK((*s->run(r.id))->status == status);
  }
  auto r = makeRun("rounds");
  REQUIRE(s->beginRun(r).ok());
  auto round = makeRound(0);
  round.status = RunStatus::Cancelled;
  REQUIRE(s->writeRound(r.id, round).ok());
  CHECK(count(*s, "SELECT count(*) FROM rounds WHERE status = 'cancelled'") == 1);
  CHECK((*s->rounds(r.id))[0].status == RunStatus::Cancelled);
  // A status this build does not know reads as failed.
  REQUIRE(s->db().exec("UPDATE runs SET status = 'paused' WHERE id = " + std::to_string(r.id)).ok());
  CHECK_FALSE(runStatusFromName("paused").has_value());
  CHECK((*s->run(r.id))->status == RunStatus::Failed);
}

TEST_CASE("runs, rounds and the editor queries") {
  test::TempDir ws;
  auto s = Store::open(ws.path());
  REQUIRE(s.ok());
  auto r1 = makeRun("r1");
  REQUIRE(s->beginRun(r1).ok());
  CHECK(r1.id > 0);
  REQUIRE(s->writeRound(r1.id, makeRound(0)).ok());
  r1.status = RunStatus::Ok;
  r1.gpu = "NVIDIA H100 80GB HBM3 (emulated)";
  r1.emulated = true;
  REQUIRE(s->finishRun(r1).ok());
  CHECK(s->writeRound(r1.id, makeRound(0)).error().message.find("cannot add round 0") != std::string::npos);
  CHECK_FALSE(s->writeRound(12345, makeRound(0)).ok());
  auto dup = makeRun("r1");
  CHECK_FALSE(s->beginRun(dup).ok());

  auto r2 = makeRun("r2");
  REQUIRE(s->beginRun(r2).ok());
  REQUIRE(s->writeRound(r2.id, makeRound(0, 2)).ok());
  REQUIRE(s->writeRound(r2.id, makeRound(1, 3)).ok());
  r2.status = RunStatus::Ok;
  REQUIRE(s->finishRun(r2).ok());

  auto run = s->run(r1.id);
  REQUIRE(run.ok());
  REQUIRE(run->has_value());
  CHECK((*run)->status == RunStatus::Ok);
  CHECK((*run)->gpu == "NVIDIA H100 80GB HBM3 (emulated)");
  CHECK((*run)->emulated);
  CHECK(!(*run)->endedAt.empty());

  auto latest = s->latestFileResults("m.py");
  REQUIRE(latest.ok());
  REQUIRE(latest->has_value());
  const auto& fr = **latest;
  CHECK(fr.run.key == "r2");
  CHECK(fr.round.index == 1);
  CHECK(fr.round.emulated);
  REQUIRE(fr.spans.size() == 3);
  CHECK(fr.spans[0].range.name == "kl:m.py:2-3");
  CHECK(fr.spans[1].kernels.size() == 2);
  CHECK(fr.spans[1].kernels[0].totalNs == 1800);
  CHECK(fr.spans[1].range.kernelSets == std::vector<std::vector<std::string>>{{"gemm", "relu"}});
  CHECK(fr.spans[1].range.parent == "kl:m.py:2-3");
  CHECK(fr.spans[1].kernels[0].pass == attribution::Pass::Forward);
  CHECK(fr.spans[1].kernels[1].pass == attribution::Pass::Backward);
  CHECK(fr.spans[1].backwardNs == 300);
  CHECK(fr.spans[2].kernels[0].pass == attribution::Pass::Forward);
  CHECK(fr.spans[2].backwardNs == 0);
  CHECK_FALSE(fr.snapshotId.empty());
  auto snap = s->snapshot(fr.snapshotId);
  REQUIRE(snap.ok());
  CHECK(**snap == "def f():\n    a()\n    b()\n");
  CHECK_FALSE(s->latestFileResults("other.py")->has_value());

  auto totals = s->functionTotals("m.py");
  REQUIRE(totals.ok());
  REQUIRE(totals->size() == 1);
  CHECK((*totals)[0].function == "f");
  CHECK((*totals)[0].fromBodyRange);
  CHECK((*totals)[0].gpuNs == 2700);
  CHECK((*totals)[0].launches == 4);

  auto prev = s->previousRun("m.py", "f", r2.id);
  REQUIRE(prev.ok());
  REQUIRE(prev->has_value());
  CHECK((*prev)->key == "r1");
  CHECK_FALSE(s->previousRun("m.py", "f", r1.id)->has_value());
  CHECK_FALSE(s->previousRun("m.py", "g")->has_value());

  auto rounds = s->rounds(r2.id);
  REQUIRE(rounds.ok());
  REQUIRE(rounds->size() == 2);
  auto un = s->unmapped((*rounds)[0].id);
  REQUIRE(un.ok());
  REQUIRE(un->size() == 1);
  CHECK(attribution::unmappedReasonName((*un)[0].reason) == "outside_kl_ranges");
  CHECK(count(*s, "SELECT count(*) FROM line_stats") == 9);
  CHECK(s->runs(10)->size() == 2);
  CHECK(s->runs(10)->front().key == "r2");
}

TEST_CASE("snapshots are deduplicated by content") {
  test::TempDir ws;
  auto s = Store::open(ws.path());
  REQUIRE(s.ok());
  for (int i = 0; i < 3; ++i) {
    auto r = makeRun("s" + std::to_string(i));
    REQUIRE(s->beginRun(r).ok());
    REQUIRE(s->writeRound(r.id, makeRound(0, 1, i == 2 ? "changed\n" : "same\n")).ok());
  }
  CHECK(count(*s, "SELECT count(*) FROM snapshots") == 2);
  CHECK(count(*s, "SELECT count(*) FROM run_files") == 3);
  CHECK(blobId("same\n") == blobId("same\n"));
  CHECK(blobId("") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");  // git's empty blob
}

TEST_CASE("a failure mid-write leaves no part of the round") {
  test::TempDir ws;
  auto s = Store::open(ws.path());
  REQUIRE(s.ok());
  auto r = makeRun("f1");
  REQUIRE(s->beginRun(r).ok());
  for (const char* stage : {"round", "span", "snapshot", "commit"}) {
    CAPTURE(stage);
    int hits = 0;
    s->setFailpoint([&, stage](std::string_view st) -> Result<void> {
      if (st == stage && ++hits == 2 - (std::string_view(stage) != "span")) return Error::io("injected");
      return {};
    });
    auto w = s->writeRound(r.id, makeRound(0));
    REQUIRE_FALSE(w.ok());
    CHECK(count(*s, "SELECT count(*) FROM rounds") == 0);
    CHECK(count(*s, "SELECT count(*) FROM ranges") == 0);
    CHECK(count(*s, "SELECT count(*) FROM range_kernels") == 0);
    CHECK(count(*s, "SELECT count(*) FROM snapshots") == 0);
  }
  s->setFailpoint({});
  REQUIRE(s->writeRound(r.id, makeRound(0)).ok());
  CHECK(count(*s, "SELECT count(*) FROM ranges") == 3);
}

TEST_CASE("a writer process that crashes mid-round leaves a consistent database") {
  test::TempDir ws;
  int64_t runId = 0;
  {
    auto s = Store::open(ws.path());
    REQUIRE(s.ok());
    auto r = makeRun("crash");
    REQUIRE(s->beginRun(r).ok());
    runId = r.id;
    REQUIRE(s->writeRound(runId, makeRound(0)).ok());
  }
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto s = Store::open(ws.path());
    if (!s) ::_exit(10);
    s->setFailpoint([](std::string_view st) -> Result<void> {
      if (st == "snapshot") ::_exit(42);  // dies holding the write transaction
      return {};
    });
    (void)s->writeRound(runId, makeRound(1));
    ::_exit(11);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 42);
  auto s = Store::open(ws.path());
  REQUIRE(s.ok());
  CHECK(count(*s, "SELECT count(*) FROM rounds") == 1);
  CHECK(count(*s, "SELECT count(*) FROM ranges") == 3);
  auto ic = s->db().prepare("PRAGMA integrity_check");
  REQUIRE(ic.ok());
  REQUIRE(*ic->step());
  CHECK(ic->text(0) == "ok");
  // The lock died with the process: writing works at once.
  REQUIRE(s->writeRound(runId, makeRound(1)).ok());
}

TEST_CASE("two processes writing concurrently") {
  test::TempDir ws;
  constexpr int kRounds = 25;
  std::vector<pid_t> kids;
  for (int k = 0; k < 2; ++k) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // Both open (and migrate) a fresh database at the same time, then interleave writes.
      auto s = Store::open(ws.path());
      if (!s) ::_exit(20);
      auto r = makeRun("proc" + std::to_string(k));
      if (!s->beginRun(r)) ::_exit(21);
      for (int i = 0; i < kRounds; ++i)
        if (!s->writeRound(r.id, makeRound(i, i + 1, "text " + std::to_string(k) + "\n"))) ::_exit(22);
      r.status = RunStatus::Ok;
      if (!s->finishRun(r)) ::_exit(23);
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  auto s = Store::open(ws.path());
  REQUIRE(s.ok());
  CHECK(count(*s, "SELECT count(*) FROM runs WHERE status = 'ok'") == 2);
  CHECK(count(*s, "SELECT count(*) FROM rounds") == 2 * kRounds);
  CHECK(count(*s, "SELECT count(*) FROM ranges") == 2 * kRounds * 3);
  CHECK(count(*s, "SELECT count(*) FROM kl_schema WHERE component = 'store'") == 1);
  auto ic = s->db().prepare("PRAGMA integrity_check");
  REQUIRE(ic.ok());
  REQUIRE(*ic->step());
  CHECK(ic->text(0) == "ok");
}

TEST_CASE("git provenance through libgit2") {
  test::TempDir ws;
  std::string q = "cd '" + ws.path().string() + "' && ";
  // Outside any repository (as git itself sees it: TMPDIR may lie inside a checkout) there is none.
  if (std::system((q + "git rev-parse --git-dir >/dev/null 2>&1").c_str()) != 0) {
    auto none = gitInfo(ws.path());
    CHECK_FALSE(none.isRepo);
    CHECK(none.commit.empty());
  }
  REQUIRE(
      std::system((q + "git init -q -b main . && git -c user.email=t@t -c user.name=t commit -q --allow-empty -m init")
                      .c_str()) == 0);
  auto clean = gitInfo(ws.path());
  CHECK(clean.isRepo);
  CHECK(clean.commit.size() == 40);
  CHECK(clean.branch == "main");
  CHECK_FALSE(clean.dirty);
  test::writeFile(ws / "untracked.py", "x = 1\n");
  CHECK_FALSE(gitInfo(ws.path()).dirty);  // untracked files do not count
  REQUIRE(std::system((q + "git add untracked.py").c_str()) == 0);
  auto staged = gitInfo(ws / ".");
  CHECK(staged.dirty);
  std::filesystem::create_directories(ws / "sub");
  CHECK(gitInfo(ws / "sub").commit == clean.commit);  // found from a subdirectory
}

TEST_CASE("runs left running by a kernlens that died are closed as interrupted by the next open") {
  test::TempDir ws;
  int64_t mine = 0, dead = 0, reused = 0, remote = 0;
  {
    auto s = Store::open(ws.path());
    REQUIRE(s.ok());
    auto a = makeRun("mine"), b = makeRun("dead"), c = makeRun("reused"), d = makeRun("remote");
    REQUIRE(s->beginRun(a).ok());
    REQUIRE(s->beginRun(b).ok());
    REQUIRE(s->beginRun(c).ok());
    REQUIRE(s->beginRun(d).ok());
    mine = a.id, dead = b.id, reused = c.id, remote = d.id;
    CHECK(count(*s, "SELECT count(*) FROM runs WHERE owner_pid = " + std::to_string(::getpid())) == 4);
    // A dead owner: the pid of a child that has exited and been reaped.
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int st = 0;
    ::waitpid(child, &st, 0);
    REQUIRE(s->db()
                .exec("UPDATE runs SET owner_pid = " + std::to_string(child) + " WHERE id = " + std::to_string(dead))
                .ok());
    // A live pid with another start time: the pid was reused by an unrelated process.
    REQUIRE(s->db().exec("UPDATE runs SET owner_start = 1 WHERE id = " + std::to_string(reused)).ok());
    // Another machine's run cannot be judged from here.
    REQUIRE(s->db()
                .exec("UPDATE runs SET owner_pid = 1, owner_host = 'elsewhere' WHERE id = " + std::to_string(remote))
                .ok());
  }
  auto s = Store::open(ws.path());  // what the next CLI run or server start does
  REQUIRE(s.ok());
  auto status = [&](int64_t id) { return (*s->run(id))->status; };
  CHECK(status(mine) == RunStatus::Running);  // this process is alive
  CHECK(status(dead) == RunStatus::Interrupted);
  CHECK(status(reused) == RunStatus::Interrupted);
  CHECK(status(remote) == RunStatus::Running);
  CHECK((*s->run(dead))->error.find("ended while the run was running") != std::string::npos);
  CHECK(*s->closeStaleRuns() == 0);  // idempotent
}

TEST_CASE("the loop's verdicts on a round's ranges, and ranges stored before there were any") {
  test::TempDir ws;
  auto path = ws / "k.db";
  const int64_t oldRound = 1;  // the only round of the old database
  {
    // A database as a kernlens of schema v5 left it: one round with one range, no verdict columns.
    auto db = sql::Database::openReadWrite(path);
    REQUIRE(db.ok());
    REQUIRE(Store::migrate(*db, 5).ok());
    REQUIRE(db->exec("INSERT INTO runs(run_key, command, workspace, backend, launch, status, started_at) "
                     "VALUES('old', 'python a.py', '/ws', 'emulate', 'local', 'ok', '2026-01-01T00:00:00Z');"
                     "INSERT INTO rounds(run_id, idx, status) VALUES(1, 0, 'ok');"
                     "INSERT INTO ranges(round_id, name, path, first_line, last_line, disk_first, disk_last, "
                     "invocations, launches, gpu_ns, distinct_kernels, excl_launches, excl_gpu_ns, "
                     "min_kernels_per_inv, max_kernels_per_inv, distinct_kernel_sets) "
                     "VALUES(1, 'kl:m.py:2-2', 'm.py', 2, 2, 2, 2, 1, 3, 700, 2, 3, 700, 2, 2, 1);")
                .ok());
  }
  auto s = Store::openFile(path);
  REQUIRE_MESSAGE(s.ok(), s.error().message);
  auto old = s->spans(oldRound);
  REQUIRE(old.ok());
  REQUIRE(old->size() == 1);
  CHECK((*old)[0].gpuNs == 700);
  CHECK((*old)[0].atomicReason == attribution::AtomicReason::None);
  CHECK((*old)[0].note.empty());
  CHECK((*old)[0].suggestFocus.empty());

  auto run = makeRun("new");
  REQUIRE(s->beginRun(run).ok());
  auto rid = s->writeRound(run.id, makeRound(0));
  REQUIRE(rid.ok());
  using attribution::AtomicReason;
  std::vector<attribution::LineResult> verdicts = {
      test::rangeVerdict("kl:m.py:2-2", AtomicReason::Unfollowed,
                         "m.py::g ran beneath it but could not be wrapped (no def line)", "m.py::g"),
      test::rangeVerdict("kl:m.py:3-3", AtomicReason::None, "launches no kernel matching --kernel"),
      test::rangeVerdict("kl:m.py:9-9", AtomicReason::Library, "not a range of this round: ignored"),
      test::rangeVerdict("", AtomicReason::Budget, "a line of no range: ignored")};
  REQUIRE(s->annotateRanges(*rid, verdicts).ok());
  auto spans = s->spans(*rid);
  REQUIRE(spans.ok());
  REQUIRE(spans->size() == 3);
  CHECK((*spans)[0].range.name == "kl:m.py:2-3");
  CHECK((*spans)[0].atomicReason == AtomicReason::None);
  CHECK((*spans)[0].note.empty());
  CHECK((*spans)[1].atomicReason == AtomicReason::Unfollowed);
  CHECK((*spans)[1].note == verdicts[0].note);
  CHECK((*spans)[1].suggestFocus == "m.py::g");
  CHECK((*spans)[2].atomicReason == AtomicReason::None);
  CHECK((*spans)[2].note == "launches no kernel matching --kernel");
  CHECK(count(*s, "SELECT count(*) FROM ranges WHERE atomic_reason = 'library'") == 0);
  CHECK(count(*s, "SELECT count(*) FROM ranges WHERE atomic_reason = 'budget'") == 0);
  // The column holds the reason's text.
  CHECK(count(*s, "SELECT count(*) FROM ranges WHERE atomic_reason = 'unfollowed' AND name = 'kl:m.py:2-2'") == 1);
  // Verdicts are per round: the old round is untouched; an unknown round is an error.
  CHECK(s->spans(oldRound)->front().atomicReason == AtomicReason::None);
  // A reason this kernlens does not know (a newer one wrote it) reads as none; the note stays.
  REQUIRE(s->db().exec("UPDATE ranges SET atomic_reason = 'from_a_newer_kernlens' WHERE name = 'kl:m.py:2-2'").ok());
  auto newer = s->spans(*rid);
  REQUIRE(newer.ok());
  CHECK((*newer)[1].atomicReason == AtomicReason::None);
  CHECK((*newer)[1].note == verdicts[0].note);
  auto bad = s->annotateRanges(123456, verdicts);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("no round with id 123456") != std::string::npos);
}
