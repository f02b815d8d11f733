#include "core/support/schema.h"

#include "core/support/log.h"

namespace kl::sql {

Result<int> componentVersion(const Database& db, std::string_view component) {
  if (!db.tableExists("kl_schema")) return 0;
  auto st = db.prepare("SELECT version FROM kl_schema WHERE component = ?");
  if (!st) return st.error();
  KL_TRY(st->bind(1, component));
  auto r = st->step();
  if (!r) return r.error();
  return *r ? static_cast<int>(st->int64(0)) : 0;
}

Result<void> migrateComponent(Database& db, const ComponentSchema& schema, int target) {
  if (target < 0 || target > schema.latest)
    return Error::invalid(std::string(schema.description) + ": bad migration target");
  for (;;) {
    auto tx = Transaction::begin(db, /*immediate=*/true);
    if (!tx) return tx.error();
    int64_t layout = 0;
    {
      auto uv = db.prepare("PRAGMA user_version");
      if (!uv) return uv.error();
      auto has = uv->step();
      if (!has) return has.error();
      if (*has) layout = uv->int64(0);
    }
    if (layout > kDatabaseLayoutVersion)
      return Error::unsupported("kernlens.db layout v" + std::to_string(layout) +
                                " is newer than this kernlens understands (v" + std::to_string(kDatabaseLayoutVersion) +
                                "); upgrade kernlens");
    KL_TRY(db.exec("CREATE TABLE IF NOT EXISTS kl_schema(component TEXT PRIMARY KEY, version INTEGER NOT NULL)"));
    if (layout < kDatabaseLayoutVersion)
      KL_TRY(db.exec("PRAGMA user_version = " + std::to_string(kDatabaseLayoutVersion)));
    auto v = componentVersion(db, schema.component);
    if (!v) return v.error();
    if (*v > schema.latest)
      return Error::unsupported(std::string(schema.description) + " v" + std::to_string(*v) +
                                " is newer than this kernlens understands (v" + std::to_string(schema.latest) +
                                "); upgrade kernlens");
    if (*v >= target) return tx->commit();
    KL_TRY(db.exec(schema.migrations[*v]));
    {
      auto st = db.prepare(
          "INSERT INTO kl_schema(component, version) VALUES(?, ?) "
          "ON CONFLICT(component) DO UPDATE SET version = excluded.version");
      if (!st) return st.error();
      KL_TRY(st->bind(1, schema.component));
      KL_TRY(st->bind(2, int64_t{*v + 1}));
      KL_TRY(st->run());
    }
    KL_TRY(tx->commit());
  }
}

Result<Database> openShared(const std::filesystem::path& path, const ComponentSchema& schema) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return Error::io(path.parent_path().string() + ": cannot create directory: " + ec.message());
  if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0 && !ec) {
    std::string kept = (path.parent_path() / "runs").string();
    kl::log::warn(path.string() +
                  " was empty (0 bytes; truncated?): a new database is created there; "
                  "earlier results are lost" +
                  (std::filesystem::is_directory(kept, ec) ? " (the run folders in " + kept + " are kept)" : ""));
  }
  auto db = Database::openReadWrite(path);
  if (!db) return oneLineError(path, db.error());
  db->attributeErrorsTo(path);
  if (auto m = migrateComponent(*db, schema, schema.latest); !m) return oneLineError(path, m.error());
  return db;
}

}  // namespace kl::sql
