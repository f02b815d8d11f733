// Row binding: a table's columns named once, each with its SQL type and how a row's value is bound
// to an INSERT and read back from a SELECT. The column list of the INSERT, its placeholders, its
// binds, the SELECT's column list and its reads are all generated from that one list, so a column
// cannot be bound at one position and read at another. The schema itself is the migrations'
// (shipped migrations never change): a store's table is checked against the list by
// `schemaMatches`, so the list and the schema cannot drift apart either.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/support/result.h"
#include "core/support/sqlite.h"

namespace kl::store {

/// One column of a table whose rows are `Row`s: its name and declared SQL type (as the migrations
/// declare it), how a row's value is bound to parameter `index` (1-based) and how a row is filled
/// from result column `col` (0-based). Reads run in list order, so a read may use the fields that
/// columns before it filled in.
template <typename Row>
struct Column {
  std::string_view name;
  std::string_view type;  // "TEXT" or "INTEGER"
  Result<void> (*bind)(sql::Statement& st, int index, const Row& row);
  void (*read)(const sql::Statement& st, int col, Row& row);
};

/// "a, b, c": the columns' names, for an INSERT's or a SELECT's column list.
template <typename Row>
std::string columnNames(std::span<const Column<Row>> cols) {
  std::string out;
  for (const auto& c : cols) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

/// "?,?,?": one placeholder per column, for an INSERT's VALUES.
template <typename Row>
std::string placeholders(std::span<const Column<Row>> cols) {
  std::string out;
  for (size_t i = 0; i < cols.size(); ++i) out += i ? ",?" : "?";
  return out;
}

/// Binds every column of `row`, the first to parameter `first` (1-based), the rest after it.
template <typename Row>
Result<void> bindRow(std::span<const Column<Row>> cols, sql::Statement& st, int first, const Row& row) {
  for (size_t i = 0; i < cols.size(); ++i) KL_TRY(cols[i].bind(st, first + static_cast<int>(i), row));
  return {};
}

/// Fills `row` from the result columns from `first` (0-based) on, one per column, in list order.
template <typename Row>
void readRow(std::span<const Column<Row>> cols, const sql::Statement& st, int first, Row& row) {
  for (size_t i = 0; i < cols.size(); ++i) cols[i].read(st, first + static_cast<int>(i), row);
}

/// Whether `table`'s columns from position `skip` on (0-based, as PRAGMA table_info lists them) are
/// exactly `cols`, by name and declared type, in order; an error names the first difference.
template <typename Row>
Result<void> schemaMatches(const sql::Database& db, std::string_view table, size_t skip,
                           std::span<const Column<Row>> cols) {
  auto st = db.prepare("SELECT name, type FROM pragma_table_info(?) ORDER BY cid");
  if (!st) return st.error();
  KL_TRY(st->bind(1, table));
  size_t i = 0;
  for (;; ++i) {
    auto r = st->step();
    if (!r) return r.error();
    if (!*r) break;
    if (i < skip) continue;
    const size_t c = i - skip;
    if (c >= cols.size())
      return Error::internal(std::string(table) + ": column '" + std::string(st->text(0)) +
                             "' is not in its row binding");
    if (st->text(0) != cols[c].name || st->text(1) != cols[c].type)
      return Error::internal(std::string(table) + ": column " + std::to_string(i) + " is '" + std::string(st->text(0)) +
                             " " + std::string(st->text(1)) + "', its row binding says '" + std::string(cols[c].name) +
                             " " + std::string(cols[c].type) + "'");
  }
  if (i < skip + cols.size())
    return Error::internal(std::string(table) + ": no column '" + std::string(cols[i < skip ? 0 : i - skip].name) +
                           "' of its row binding");
  return {};
}

}  // namespace kl::store
