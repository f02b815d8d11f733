// Errors on a database a user's command opens are one line that names the file and the way out;
// a connection with attributeErrorsTo() reports its later query errors the same way.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/support/schema.h"
#include "core/support/sqlite.h"
#include "tests/support/test_support.h"

using namespace kl;

TEST_CASE("oneLineError: the file, one line, the way out; idempotent") {
  const std::filesystem::path db = "/ws/.kernlens/kernlens.db";
  auto damaged = sql::oneLineError(db, Error::io("database disk image is malformed\n  at page 7"));
  CHECK(damaged.code == Error::Code::Io);
  CHECK(damaged.message.find('\n') == std::string::npos);
  CHECK(damaged.message.rfind("/ws/.kernlens/kernlens.db: database disk image is malformed", 0) == 0);
  CHECK(damaged.message.find("; delete /ws/.kernlens/kernlens.db to start afresh") != std::string::npos);
  CHECK(sql::oneLineError(db, damaged).message == damaged.message);

  auto locked = sql::oneLineError(db, Error::io("database is locked"));
  CHECK(locked.message ==
        "/ws/.kernlens/kernlens.db: database is locked (another kernlens or sqlite3 holds it; "
        "waited 5 s): close it or try again");
  CHECK(sql::oneLineError(db, locked).message == locked.message);

  auto other = sql::oneLineError(db, Error::invalid("no such column: x"));
  CHECK(other.message == "/ws/.kernlens/kernlens.db: no such column: x");
  CHECK(sql::oneLineError(db, Error::io(std::string(1000, 'x'))).message.size() < 400);
}

TEST_CASE("openShared: a 0-byte file is recreated; a damaged table found later is one line with the path") {
  test::TempDir dir;
  auto path = dir.path() / "kernlens.db";
  static const char* kMigrations[] = {"CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (1), (2), (3);"};
  const sql::ComponentSchema schema{"test", "test schema", kMigrations, 1};
  { std::ofstream(path).flush(); }
  {
    auto db = sql::openShared(path, schema);
    REQUIRE(db);
    CHECK(db->exec("PRAGMA wal_checkpoint(TRUNCATE)"));
  }
  int64_t root = 0, pageSize = 0;
  {
    auto db = sql::Database::openReadWrite(path);
    REQUIRE(db);
    auto st =
        db->prepare("SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM sqlite_master WHERE name = 't'");
    REQUIRE(st);
    REQUIRE(*st->step());
    root = st->int64(0);
    pageSize = st->int64(1);
  }
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((root - 1) * pageSize);
    f.put('\x42');  // not a b-tree page type
  }
  auto db = sql::openShared(path, schema);
  REQUIRE(db);
  auto st = db->prepare("SELECT sum(x) FROM t");
  REQUIRE(st);
  auto r = st->step();
  REQUIRE(!r);
  CHECK(r.error().message.rfind(path.string() + ": database disk image is malformed", 0) == 0);
  CHECK(r.error().message.find("to start afresh") != std::string::npos);
  CHECK(r.error().message.find('\n') == std::string::npos);
}
