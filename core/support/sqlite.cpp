#include "core/support/sqlite.h"

#include <sqlite3.h>

#include <chrono>
#include <cstring>
#include <initializer_list>
#include <thread>

#include "core/support/text.h"

namespace kl::sql {

namespace {

std::string errOf(sqlite3* db, int rc) {
  if (db) return sqlite3_errmsg(db);
  return sqlite3_errstr(rc);
}

/// Percent-encodes the characters that are special inside an SQLite URI path.
std::string uriPath(const std::filesystem::path& p) {
  std::string abs = p.lexically_normal().string();  // relative: to the process's directory, as given
  std::string out = "file:";
  static const char* hex = "0123456789ABCDEF";
  for (unsigned char c : abs) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

using support::iequals;

bool mentions(const std::string& m, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (m.find(w) != std::string::npos) return true;
  return false;
}

}  // namespace

Error oneLineError(const std::filesystem::path& path, const Error& e) {
  std::string m = e.message;
  for (char& c : m)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (m.size() > 300) m = m.substr(0, 300) + "...";
  const std::string where = path.string();
  if (m.rfind(where, 0) != 0) m = where + ": " + m;
  if (mentions(m, {"to start afresh", "waited 5 s", "check the permissions"})) return Error{e.code, m};
  // "already exists": a migration re-ran because the record of the applied ones is damaged.
  if (mentions(m, {"not a database", "malformed", "corrupt", "not an SQLite", "disk I/O error", "already exists"})) {
    std::error_code ec;
    auto runs = path.parent_path() / "runs";
    m += "; delete " + where + " to start afresh";
    if (std::filesystem::is_directory(runs, ec)) m += " (the run folders in " + runs.string() + " are kept)";
  } else if (mentions(m, {"database is locked", "database table is locked"})) {
    m += " (another kernlens or sqlite3 holds it; waited 5 s): close it or try again";
  } else if (mentions(m, {"readonly database", "unable to open database"})) {
    m += " (check the permissions of the file and its folder)";
  }
  return Error{e.code, m};
}

// ---- Database ------------------------------------------------------------------------------

Database::~Database() {
  if (db_) sqlite3_close_v2(db_);
}

Database::Database(Database&& o) noexcept : db_(o.db_), errorPath_(std::move(o.errorPath_)) { o.db_ = nullptr; }

Database& Database::operator=(Database&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close_v2(db_);
    db_ = o.db_;
    errorPath_ = std::move(o.errorPath_);
    o.db_ = nullptr;
  }
  return *this;
}

void Database::attributeErrorsTo(const std::filesystem::path& path) {
  errorPath_ = std::make_shared<const std::filesystem::path>(path);
}

Error Database::fail(Error e) const { return errorPath_ ? oneLineError(*errorPath_, e) : e; }
Error Statement::fail(Error e) const { return errorPath_ ? oneLineError(*errorPath_, e) : e; }

Result<Database> Database::openWith(const std::string& name, int flags, bool isUri) {
  sqlite3* db = nullptr;
  if (isUri) flags |= SQLITE_OPEN_URI;
  int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = errOf(db, rc);
    if (db) sqlite3_close_v2(db);
    return Error::io("cannot open database: " + msg);
  }
  sqlite3_extended_result_codes(db, 1);
  return Database(db);
}

Result<Database> Database::openReadOnlyImmutable(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return Error::notFound(path.string() + ": no such file");
  auto db = openWith(uriPath(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, true);
  if (!db) return Error::io(path.string() + ": " + db.error().message);
  // Opening is lazy: force SQLite to read the header so a non-database fails here.
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db->handle(), "SELECT count(*) FROM sqlite_master", -1, &st, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  std::string msg = (rc == SQLITE_ROW) ? "" : sqlite3_errmsg(db->handle());
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW) return Error::invalid(path.string() + ": damaged or not an SQLite database (" + msg + ")");
  return db;
}

Result<Database> Database::openReadWrite(const std::filesystem::path& path) {
  auto db = openWith(uriPath(path), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, true);
  if (!db) return Error::io(path.string() + ": " + db.error().message);
  sqlite3_busy_timeout(db->handle(), 5000);
  // Switching a fresh file to WAL can fail with SQLITE_BUSY without consulting the busy handler
  // when another process is creating the same database (lock upgrade deadlock avoidance):
  // retry for a few seconds before giving up.
  Result<void> r = Error::io("not attempted");
  for (int attempt = 0; attempt < 100; ++attempt) {
    r = db->exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;");
    if (r.ok() || sqlite3_errcode(db->handle()) != SQLITE_BUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10 + 5 * (attempt % 10)));
  }
  if (!r) return Error::io(path.string() + ": " + r.error().message);
  return db;
}

Result<Database> Database::openMemory() {
  return openWith(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, false);
}

Result<Database> Database::openImage(std::string_view image) {
  auto db = openWith(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, false);
  if (!db) return db;
  auto* buf = static_cast<unsigned char*>(sqlite3_malloc64(image.size() ? image.size() : 1));
  if (!buf) return Error::io("out of memory for database image");
  if (!image.empty()) std::memcpy(buf, image.data(), image.size());
  int rc = sqlite3_deserialize(db->handle(), "main", buf, static_cast<sqlite3_int64>(image.size()),
                               static_cast<sqlite3_int64>(image.size()),
                               SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) return Error::invalid("not an SQLite database image: " + db->lastError());
  sqlite3_stmt* st = nullptr;
  rc = sqlite3_prepare_v2(db->handle(), "SELECT count(*) FROM sqlite_master", -1, &st, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  std::string msg = (rc == SQLITE_ROW) ? "" : sqlite3_errmsg(db->handle());
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW) return Error::invalid("damaged or not an SQLite database (" + msg + ")");
  return db;
}

std::string Database::lastError() const { return db_ ? sqlite3_errmsg(db_) : "database not open"; }

Result<void> Database::exec(std::string_view sql) {
  if (!db_) return Error::internal("database not open");
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : errOf(db_, rc);
    sqlite3_free(err);
    return fail(Error::io(msg));
  }
  return {};
}

Result<Statement> Database::prepare(std::string_view sql) const {
  if (!db_) return Error::internal("database not open");
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &st, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    return fail(Error::invalid(errOf(db_, rc)));
  }
  if (!st) return Error::invalid("empty SQL statement");
  return Statement(st, db_, errorPath_);
}

bool Database::tableExists(std::string_view table) const {
  auto st = prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
  if (!st || !st->bind(1, table)) return false;
  auto r = st->step();
  return r && *r;
}

std::vector<std::string> Database::columns(std::string_view table) const {
  std::vector<std::string> out;
  auto st = prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid");
  if (!st || !st->bind(1, table)) return out;
  while (true) {
    auto r = st->step();
    if (!r || !*r) break;
    out.emplace_back(st->text(0));
  }
  return out;
}

std::vector<std::string> Database::tables() const {
  std::vector<std::string> out;
  auto st = prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  if (!st) return out;
  while (true) {
    auto r = st->step();
    if (!r || !*r) break;
    out.emplace_back(st->text(0));
  }
  return out;
}

int64_t Database::lastInsertRowId() const { return db_ ? sqlite3_last_insert_rowid(db_) : 0; }
int64_t Database::changes() const { return db_ ? sqlite3_changes64(db_) : 0; }

// ---- Statement -----------------------------------------------------------------------------

Statement::~Statement() {
  if (st_) sqlite3_finalize(st_);
}

Statement::Statement(Statement&& o) noexcept : st_(o.st_), db_(o.db_), errorPath_(std::move(o.errorPath_)) {
  o.st_ = nullptr;
  o.db_ = nullptr;
}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    if (st_) sqlite3_finalize(st_);
    st_ = o.st_;
    db_ = o.db_;
    errorPath_ = std::move(o.errorPath_);
    o.st_ = nullptr;
    o.db_ = nullptr;
  }
  return *this;
}

#define KL_SQL_BIND(call)                                               \
  do {                                                                  \
    int rc_ = (call);                                                   \
    if (rc_ != SQLITE_OK) return fail(Error::invalid(errOf(db_, rc_))); \
    return {};                                                          \
  } while (0)

Result<void> Statement::bind(int index, int64_t v) { KL_SQL_BIND(sqlite3_bind_int64(st_, index, v)); }
Result<void> Statement::bind(int index, double v) { KL_SQL_BIND(sqlite3_bind_double(st_, index, v)); }
Result<void> Statement::bind(int index, std::string_view v) {
  KL_SQL_BIND(sqlite3_bind_text64(st_, index, v.data() ? v.data() : "", v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}
Result<void> Statement::bindBlob(int index, std::string_view v) {
  KL_SQL_BIND(sqlite3_bind_blob64(st_, index, v.data() ? v.data() : "", v.size(), SQLITE_TRANSIENT));
}
Result<void> Statement::bindNull(int index) { KL_SQL_BIND(sqlite3_bind_null(st_, index)); }
#undef KL_SQL_BIND

int Statement::parameterIndex(std::string_view name) const {
  std::string n(name);
  return sqlite3_bind_parameter_index(st_, n.c_str());
}

Result<bool> Statement::step() {
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return fail(Error::io(errOf(db_, rc)));
}

Result<void> Statement::run() {
  while (true) {
    auto r = step();
    if (!r) return r.error();
    if (!*r) return {};
  }
}

Result<void> Statement::reset() {
  int rc = sqlite3_reset(st_);
  if (rc != SQLITE_OK) return fail(Error::io(errOf(db_, rc)));
  return {};
}

void Statement::clearBindings() { sqlite3_clear_bindings(st_); }

int Statement::columnCount() const { return sqlite3_column_count(st_); }

std::string Statement::columnName(int col) const {
  const char* n = sqlite3_column_name(st_, col);
  return n ? n : "";
}

std::optional<int> Statement::columnIndex(std::string_view name) const {
  int n = columnCount();
  for (int i = 0; i < n; ++i)
    if (columnName(i) == name) return i;
  for (int i = 0; i < n; ++i)
    if (iequals(columnName(i), name)) return i;
  return std::nullopt;
}

bool Statement::isNull(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }
bool Statement::isInteger(int col) const { return sqlite3_column_type(st_, col) == SQLITE_INTEGER; }
int64_t Statement::int64(int col) const { return sqlite3_column_int64(st_, col); }
int64_t Statement::int64Or(int col, int64_t ifNull) const {
  sqlite3_value* v = sqlite3_column_value(st_, col);
  return sqlite3_value_type(v) == SQLITE_NULL ? ifNull : sqlite3_value_int64(v);
}
Statement::Type Statement::integer(int col, int64_t& out) const {
  sqlite3_value* v = sqlite3_column_value(st_, col);
  switch (sqlite3_value_type(v)) {
    case SQLITE_NULL: return Type::Null;
    case SQLITE_INTEGER: out = sqlite3_value_int64(v); return Type::Integer;
    default: return Type::Other;
  }
}
double Statement::real(int col) const { return sqlite3_column_double(st_, col); }

std::string_view Statement::text(int col) const {
  const unsigned char* p = sqlite3_column_text(st_, col);
  if (!p) return {};
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(st_, col))};
}

std::string_view Statement::blob(int col) const {
  const void* p = sqlite3_column_blob(st_, col);
  if (!p) return {};
  return {static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(st_, col))};
}

std::optional<int64_t> Statement::optInt64(int col) const {
  sqlite3_value* v = sqlite3_column_value(st_, col);
  if (sqlite3_value_type(v) == SQLITE_NULL) return std::nullopt;
  return sqlite3_value_int64(v);
}

std::optional<std::string_view> Statement::optText(int col) const {
  if (isNull(col)) return std::nullopt;
  return text(col);
}

// ---- Transaction ---------------------------------------------------------------------------

Result<Transaction> Transaction::begin(Database& db, bool immediate) {
  if (auto r = db.exec(immediate ? "BEGIN IMMEDIATE" : "BEGIN"); !r) return r.error();
  return Transaction(&db);
}

Transaction::~Transaction() { rollback(); }

Result<void> Transaction::commit() {
  if (!db_) return Error::internal("transaction already finished");
  auto r = db_->exec("COMMIT");
  if (!r) return r;  // still active: the destructor rolls back
  db_ = nullptr;
  return {};
}

void Transaction::rollback() {
  if (!db_) return;
  (void)db_->exec("ROLLBACK");
  db_ = nullptr;
}

std::string quoteIdent(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace kl::sql
