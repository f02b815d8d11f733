// Versioned schemas in the shared .kernlens/kernlens.db. Several components (the run store, the
// kernel catalogue, ...) own tables in one file: PRAGMA user_version is the layout version of the
// file as a whole (kDatabaseLayoutVersion), and each component keeps its own schema version in
// kl_schema(component, version), migrated by its own ordered list of SQL scripts.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/support/result.h"
#include "core/support/sqlite.h"

namespace kl::sql {

/// PRAGMA user_version this build writes and understands.
constexpr int kDatabaseLayoutVersion = 1;

struct ComponentSchema {
  std::string_view component;     // kl_schema row, e.g. "store"
  std::string_view description;   // for messages, e.g. "kernlens.db store schema"
  const char* const* migrations;  // migrations[i] takes the schema from version i to i + 1
  int latest;                     // number of migrations = the version this build writes
};

/// The component's schema version (0 = none yet).
Result<int> componentVersion(const Database& db, std::string_view component);

/// Brings the component to `target` (<= latest), one migration per IMMEDIATE transaction that
/// re-reads the versions under the write lock, so concurrent openers apply each step once.
/// Refuses (Error::Unsupported) a file whose layout or component version is newer than this build.
Result<void> migrateComponent(Database& db, const ComponentSchema& schema, int target);

/// Opens the shared database file at `path` for one component and migrates it to
/// `schema.latest`: creates its folder; a 0-byte file (truncated) is recreated with a warning in
/// the log. Every error then and later on this connection is one line (oneLineError()).
Result<Database> openShared(const std::filesystem::path& path, const ComponentSchema& schema);

}  // namespace kl::sql
