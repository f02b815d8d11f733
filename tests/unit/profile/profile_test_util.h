// Helpers for profile/attribution tests: decompress a stored real export to a temp file and
// run independent SQL on it (the expected numbers never come from our reader).
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "core/support/gzip.h"
#include "core/support/sqlite.h"
#include "tests/support/test_support.h"

namespace kl::test {

/// tests/data/real/<rel> (a .gz) decompressed into `dir`; returns the plain file's path.
inline std::filesystem::path plainCopy(const std::string& rel, const TempDir& dir) {
  auto bytes = kl::readMaybeGzipFile(dataPath("real/" + rel));
  REQUIRE_MESSAGE(bytes.ok(), rel);
  auto name = std::filesystem::path(rel).filename().string();
  if (name.size() > 3 && name.substr(name.size() - 3) == ".gz") name.resize(name.size() - 3);
  auto out = dir / name;
  writeFile(out, *bytes);
  return out;
}

/// A read-write connection to a scratch copy (tests may add TEMP indexes).
inline kl::sql::Database openScratch(const std::filesystem::path& p) {
  auto db = kl::sql::Database::openReadWrite(p);
  REQUIRE_MESSAGE(db.ok(), (db.ok() ? "" : db.error().message));
  REQUIRE(db->exec("PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF").ok());
  return std::move(*db);
}

inline int64_t sqlInt(const kl::sql::Database& db, const std::string& q) {
  auto st = db.prepare(q);
  REQUIRE_MESSAGE(st.ok(), q << " : " << (st.ok() ? "" : st.error().message));
  auto r = st->step();
  REQUIRE(r.ok());
  REQUIRE(*r);
  return st->int64(0);
}

}  // namespace kl::test
