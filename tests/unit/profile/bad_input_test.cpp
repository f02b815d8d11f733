// Bad input never crashes: each case yields a Result error with a one-line reason.
#include <doctest/doctest.h>

#include "core/profile/reader.h"
#include "core/support/sqlite.h"
#include "tests/unit/profile/profile_test_util.h"

using namespace kl::profile;
using kl::test::TempDir;

namespace {

std::string expectError(const std::filesystem::path& p) {
  auto m = readProfile(p);
  REQUIRE_FALSE(m.ok());
  const auto& msg = m.error().message;
  CHECK_FALSE(msg.empty());
  CHECK(msg.find('\n') == std::string::npos);
  CHECK(msg.find(p.filename().string()) != std::string::npos);
  return msg;
}

}  // namespace

TEST_CASE("bad input: empty, random, missing, directory without profiles") {
  TempDir dir;
  kl::test::writeFile(dir / "empty.sqlite", "");
  CHECK(expectError(dir / "empty.sqlite").find("empty") != std::string::npos);
  kl::test::writeFile(dir / "blank.json", "   \n ");
  CHECK(expectError(dir / "blank.json").find("empty") != std::string::npos);
  kl::test::writeFile(dir / "random.bin", std::string("\x01\x02\x03garbage\xff", 12));
  CHECK(expectError(dir / "random.bin").find("not an nsys") != std::string::npos);
  CHECK(!readProfile(dir / "missing.sqlite").ok());
  std::filesystem::create_directories(dir / "nothing");
  CHECK(!readProfile(dir / "nothing").ok());
}

TEST_CASE("bad input: truncated SQLite export and truncated gzip") {
  TempDir dir;
  auto bytes = kl::readMaybeGzipFile(kl::test::dataPath("real/nsys/mock.sqlite.gz"));
  REQUIRE(bytes.ok());
  // Header intact, most pages missing: SQLite reports a malformed image.
  kl::test::writeFile(dir / "cut.sqlite", bytes->substr(0, bytes->size() / 3));
  auto m = readProfile(dir / "cut.sqlite");
  if (!m.ok()) {
    CHECK(m.error().message.find("cut.sqlite") != std::string::npos);
  } else {
    // SQLite may still read the schema pages it has; then the tables it lacks read as empty.
    CHECK(m->gpuOps.size() <= 3);
  }
  kl::test::writeFile(dir / "tiny.sqlite", bytes->substr(0, 20));
  expectError(dir / "tiny.sqlite");
  auto gz = kl::test::readFile(kl::test::dataPath("real/nsys/mock.sqlite.gz"));
  kl::test::writeFile(dir / "cut.sqlite.gz", gz.substr(0, gz.size() / 2));
  CHECK(expectError(dir / "cut.sqlite.gz").find("truncated") != std::string::npos);
  auto jgz = kl::test::readFile(kl::test::dataPath("real/hta_a100_triton_tiny.json.gz"));
  kl::test::writeFile(dir / "cut.json.gz", jgz.substr(0, jgz.size() - 40));
  expectError(dir / "cut.json.gz");
}

TEST_CASE("bad input: an SQLite database that is not an nsys export") {
  TempDir dir;
  {
    auto db = kl::sql::Database::openReadWrite(dir / "other.sqlite");
    REQUIRE(db.ok());
    REQUIRE(db->exec("PRAGMA journal_mode=DELETE; CREATE TABLE t(x); INSERT INTO t VALUES (1);").ok());
  }
  CHECK(expectError(dir / "other.sqlite").find("not an nsys export") != std::string::npos);
  // Opening it read-only + immutable leaves no side files.
  auto before = std::distance(std::filesystem::directory_iterator(dir.path()), {});
  (void)readProfile(dir / "other.sqlite");
  auto after = std::distance(std::filesystem::directory_iterator(dir.path()), {});
  CHECK(before == after);
}

TEST_CASE("bad input: JSON that is not a trace, truncated JSON, malformed JSON") {
  TempDir dir;
  kl::test::writeFile(dir / "obj.json", R"({"a": 1, "b": [1, 2, {"c": null}]})");
  CHECK(expectError(dir / "obj.json").find("not a trace") != std::string::npos);
  kl::test::writeFile(dir / "nums.json", "[1, 2, 3]");
  CHECK(expectError(dir / "nums.json").find("not a trace") != std::string::npos);
  kl::test::writeFile(dir / "trunc.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1)");
  expectError(dir / "trunc.json");
  kl::test::writeFile(dir / "bad.json", R"({"traceEvents": [{"ph": "X",, "ts": 1}]})");
  expectError(dir / "bad.json");
  kl::test::writeFile(dir / "trail.json", R"({"traceEvents": []} x)");
  expectError(dir / "trail.json");
  kl::test::writeFile(dir / "deep.json", std::string(200000, '['));
  expectError(dir / "deep.json");
  kl::test::writeFile(dir / "badstr.json", "{\"traceEvents\": [{\"name\": \"\\q\"}]}");
  expectError(dir / "badstr.json");
}

TEST_CASE("good input: a minimal trace with an empty traceEvents array is an empty model") {
  TempDir dir;
  kl::test::writeFile(dir / "empty_trace.json", R"({"traceEvents": []})");
  auto m = readProfile(dir / "empty_trace.json");
  REQUIRE(m.ok());
  CHECK(m->gpuOps.empty());
  CHECK(m->meta.format == SourceFormat::Kineto);
}
