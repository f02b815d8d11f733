// RAII wrapper over the SQLite C API. Every failure is a Result error carrying SQLite's own
// message; nothing throws. One Database per thread (SQLite handles are not shared here).
//
//   auto db = kl::sql::Database::openReadOnlyImmutable(path);   // user's profile: no side files
//   auto st = db->prepare("SELECT start, \"end\" FROM T WHERE x = ?");
//   st->bind(1, int64_t{5});
//   while (true) { auto r = st->step(); if (!r) return r.error(); if (!*r) break; st->int64(0); }
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kl::sql {

class Statement;

/// One line for an error on the database file at `path`: control characters flattened, at most
/// ~300 characters, prefixed with the path, and with the way out — "delete FILE to start afresh"
/// when the file is damaged or not a database (the run folders next to it are kept), "another
/// kernlens or sqlite3 holds it" when it stayed locked past the busy timeout. Idempotent.
Error oneLineError(const std::filesystem::path& path, const Error& e);

class Database {
 public:
  Database() = default;
  ~Database();
  Database(Database&& o) noexcept;
  Database& operator=(Database&& o) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// Opens an existing file read-only through the `file:...?immutable=1` URI: SQLite takes no
  /// locks and writes no -wal/-shm/-journal files next to it. The file must not change while
  /// open. Fails (with a one-line reason) if it is missing or not an SQLite database.
  /// The connection has no mutex (SQLITE_OPEN_NOMUTEX): one thread at a time uses it.
  static Result<Database> openReadOnlyImmutable(const std::filesystem::path& path);
  /// Opens (creating if needed) our own store: WAL journal, busy_timeout 5 s, foreign keys on.
  static Result<Database> openReadWrite(const std::filesystem::path& path);
  /// A private in-memory database (tests, scratch).
  static Result<Database> openMemory();
  /// A read-only database over an in-memory image of an SQLite file (sqlite3_deserialize);
  /// used for decompressed .sqlite.gz files. `image` is copied into SQLite-owned memory.
  /// No mutex, like openReadOnlyImmutable.
  static Result<Database> openImage(std::string_view image);

  bool isOpen() const { return db_ != nullptr; }
  /// From now on every error of this connection and its statements is oneLineError(path, ...):
  /// for a file a user's command opens and a query on it can find damaged.
  void attributeErrorsTo(const std::filesystem::path& path);
  sqlite3* handle() const { return db_; }
  /// The most recent SQLite error message on this connection.
  std::string lastError() const;

  /// Runs one or more statements that return no rows of interest.
  Result<void> exec(std::string_view sql);
  Result<Statement> prepare(std::string_view sql) const;

  /// Schema probes (sqlite_master / PRAGMA table_info). Table names are matched exactly.
  bool tableExists(std::string_view table) const;
  /// Column names of `table` in declaration order; empty if the table does not exist.
  std::vector<std::string> columns(std::string_view table) const;
  /// All table names (type = 'table').
  std::vector<std::string> tables() const;

  int64_t lastInsertRowId() const;
  int64_t changes() const;

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  static Result<Database> openWith(const std::string& name, int flags, bool isUri);
  Error fail(Error e) const;
  sqlite3* db_ = nullptr;
  std::shared_ptr<const std::filesystem::path> errorPath_;  // attributeErrorsTo()
};

/// A prepared statement. Column accessors take a 0-based column index; bind takes SQLite's
/// 1-based parameter index. Text views stay valid until the next step()/reset()/destruction.
class Statement {
 public:
  Statement() = default;
  ~Statement();
  Statement(Statement&& o) noexcept;
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Result<void> bind(int index, int64_t v);
  Result<void> bind(int index, double v);
  /// The text is copied by SQLite (SQLITE_TRANSIENT).
  Result<void> bind(int index, std::string_view v);
  Result<void> bind(int index, const char* v) { return bind(index, std::string_view(v)); }
  Result<void> bind(int index, int v) { return bind(index, static_cast<int64_t>(v)); }
  Result<void> bindBlob(int index, std::string_view bytes);
  Result<void> bindNull(int index);
  /// Index of a named parameter (":name", "@name", "$name"); 0 if absent.
  int parameterIndex(std::string_view name) const;

  /// true: a row is available; false: done. Errors carry SQLite's message.
  Result<bool> step();
  /// Runs the statement to completion, ignoring rows.
  Result<void> run();
  Result<void> reset();
  void clearBindings();

  int columnCount() const;
  std::string columnName(int col) const;
  /// Column index by result-column name (exact, then ASCII case-insensitive).
  std::optional<int> columnIndex(std::string_view name) const;

  bool isNull(int col) const;
  /// The value is stored as an INTEGER (not NULL, REAL, TEXT or BLOB, which int64() turns into
  /// a number silently).
  bool isInteger(int col) const;
  int64_t int64(int col) const;
  /// The integer value of a column, or `ifNull` when it is NULL: one column access (prefer
  /// it to isNull() + int64() on large scans).
  int64_t int64Or(int col, int64_t ifNull) const;
  /// Storage class of a column value, as far as integer readers care.
  enum class Type : uint8_t { Null, Integer, Other };
  /// One column access: the column's storage class and, when INTEGER, its value in `out`
  /// (`out` untouched otherwise). Validating readers use it instead of isInteger() + int64().
  Type integer(int col, int64_t& out) const;
  double real(int col) const;
  /// Empty view for NULL.
  std::string_view text(int col) const;
  std::string_view blob(int col) const;
  std::optional<int64_t> optInt64(int col) const;
  std::optional<std::string_view> optText(int col) const;

  sqlite3_stmt* handle() const { return st_; }

 private:
  friend class Database;
  Statement(sqlite3_stmt* st, sqlite3* db, std::shared_ptr<const std::filesystem::path> errorPath)
      : st_(st), db_(db), errorPath_(std::move(errorPath)) {}
  Error fail(Error e) const;
  sqlite3_stmt* st_ = nullptr;
  sqlite3* db_ = nullptr;
  std::shared_ptr<const std::filesystem::path> errorPath_;
};

/// BEGIN on construction (through begin()); ROLLBACK in the destructor unless commit() ran.
class Transaction {
 public:
  /// `immediate` takes the write lock at once (BEGIN IMMEDIATE), avoiding upgrade deadlocks.
  static Result<Transaction> begin(Database& db, bool immediate = true);
  ~Transaction();
  Transaction(Transaction&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Result<void> commit();
  /// Explicit rollback; the destructor does the same silently.
  void rollback();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_ = nullptr;
};

/// Quotes an identifier for SQL text: "name" with embedded quotes doubled.
std::string quoteIdent(std::string_view name);

}  // namespace kl::sql
