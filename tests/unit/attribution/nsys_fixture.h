// Synthetic nsys exports for cases no real file covers. The DDL is
// tests/data/fixtures/nsys-schema.sql (the real 2026.2 schema); rows are inserted by column
// name, ids are packed like real ones: (hw << 56) | (1 << 48) | (pid << 24) | tid.
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>

#include "core/profile/model.h"
#include "core/profile/reader.h"
#include "core/support/sqlite.h"
#include "tests/support/test_support.h"

namespace kl::test {

inline int64_t gtid(uint32_t pid, uint32_t tid, uint32_t hw = 0) {
  return kl::profile::GlobalId::make(hw, 1, pid, tid);
}
inline int64_t gpid(uint32_t pid, uint32_t hw = 0) { return kl::profile::GlobalId::make(hw, 1, pid, 0); }

class NsysFixture {
 public:
  /// `legacyMeta`: name the metadata table EXPORT_META_DATA (nsys <= 2023.2).
  explicit NsysFixture(std::filesystem::path path, std::string product = "2026.2.1.210", bool legacyMeta = false)
      : path_(std::move(path)) {
    auto db = kl::sql::Database::openReadWrite(path_);
    REQUIRE(db.ok());
    db_ = std::move(*db);
    ok(db_.exec("PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF"));
    ok(db_.exec(readFile(dataPath("fixtures/nsys-schema.sql"))));
    if (legacyMeta) ok(db_.exec("ALTER TABLE META_DATA_EXPORT RENAME TO EXPORT_META_DATA"));
    const char* meta = legacyMeta ? "EXPORT_META_DATA" : "META_DATA_EXPORT";
    exec(std::string("INSERT INTO ") + meta + "(name, value) VALUES ('EXPORT_PRODUCT_VERSION', '" + product +
         "'), ('EXPORT_SCHEMA_VERSION', '3.25.0')");
    ok(db_.exec("BEGIN"));
  }
  ~NsysFixture() { close(); }

  /// Commits and closes; the file is then ready for the reader.
  const std::filesystem::path& close() {
    if (db_.isOpen()) {
      (void)db_.exec("COMMIT");
      db_ = kl::sql::Database();
    }
    return path_;
  }

  void exec(const std::string& sql) { ok(db_.exec(sql)); }
  void dropTable(const std::string& t) { exec("DROP TABLE IF EXISTS " + t); }

  int64_t str(const std::string& s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    int64_t id = static_cast<int64_t>(ids_.size()) + 1;
    auto st = db_.prepare("INSERT INTO StringIds(id, value) VALUES (?, ?)");
    REQUIRE(st.ok());
    ok(st->bind(1, id));
    ok(st->bind(2, std::string_view(s)));
    ok(st->run());
    ids_[s] = id;
    return id;
  }

  void runtime(int64_t start, int64_t end, int64_t globalTid, int64_t corr, const std::string& name,
               int eventClass = 0) {
    auto st = db_.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(start, \"end\", eventClass, globalTid, correlationId, "
        "nameId, returnValue) VALUES (?, ?, ?, ?, ?, ?, 0)");
    REQUIRE(st.ok());
    bindAll(*st, start, end, int64_t{eventClass}, globalTid, corr, str(name));
    ok(st->run());
  }

  void kernel(int64_t start, int64_t end, int64_t globalPid, int64_t corr, const std::string& name, int device = 0,
              int stream = 7, std::optional<int64_t> graphId = {}, std::optional<int64_t> nodeId = {}) {
    auto st = db_.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(start, \"end\", deviceId, contextId, streamId, correlationId, "
        "globalPid, "
        "demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
        "staticSharedMemory, "
        "dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, tensorSizeMinusOneElements, graphId, "
        "graphNodeId) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, 32, 4, 2, 1, 128, 1, 1, 1024, 2048, 0, 0, 1, '[]', ?, ?)");
    REQUIRE(st.ok());
    bindAll(*st, start, end, int64_t{device}, int64_t{stream}, corr, globalPid, str(name + "(int)"), str(name));
    if (graphId)
      ok(st->bind(9, *graphId));
    else
      ok(st->bindNull(9));
    if (nodeId)
      ok(st->bind(10, *nodeId));
    else
      ok(st->bindNull(10));
    ok(st->run());
  }

  void memcpy(int64_t start, int64_t end, int64_t globalPid, int64_t corr, int64_t bytes, int copyKind) {
    auto st = db_.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY(start, \"end\", deviceId, contextId, streamId, "
        "correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?, ?, 0, 1, 7, ?, ?, ?, ?, 0, 2)");
    REQUIRE(st.ok());
    bindAll(*st, start, end, corr, globalPid, bytes, int64_t{copyKind});
    ok(st->run());
  }

  void graphTrace(int64_t start, int64_t end, int64_t globalPid, int64_t corr, int64_t graphId) {
    auto st = db_.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE(start, \"end\", deviceId, contextId, streamId, "
        "correlationId, globalPid, graphId, graphExecId) VALUES (?, ?, 0, 1, 7, ?, ?, ?, 1)");
    REQUIRE(st.ok());
    bindAll(*st, start, end, corr, globalPid, graphId);
    ok(st->run());
  }

  struct Nvtx {
    int eventType = 59;
    int64_t start = 0;
    std::optional<int64_t> end;
    int64_t globalTid = 0;
    std::optional<std::string> text;    // plain text
    std::optional<std::string> textId;  // registered string (StringIds)
    int64_t domainId = 0;
    std::optional<int64_t> endGlobalTid;
    int64_t category = 0;
  };
  void nvtx(const Nvtx& n) {
    auto st = db_.prepare(
        "INSERT INTO NVTX_EVENTS(start, \"end\", eventType, globalTid, endGlobalTid, text, textId, "
        "domainId, category) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    REQUIRE(st.ok());
    ok(st->bind(1, n.start));
    if (n.end)
      ok(st->bind(2, *n.end));
    else
      ok(st->bindNull(2));
    ok(st->bind(3, int64_t{n.eventType}));
    ok(st->bind(4, n.globalTid));
    if (n.endGlobalTid)
      ok(st->bind(5, *n.endGlobalTid));
    else
      ok(st->bindNull(5));
    if (n.text)
      ok(st->bind(6, std::string_view(*n.text)));
    else
      ok(st->bindNull(6));
    if (n.textId)
      ok(st->bind(7, str(*n.textId)));
    else
      ok(st->bindNull(7));
    ok(st->bind(8, n.domainId));
    ok(st->bind(9, n.category));
    ok(st->run());
  }
  /// Push/pop range with plain text.
  void range(int64_t start, int64_t end, int64_t globalTid, const std::string& text, int type = 59) {
    Nvtx n;
    n.eventType = type;
    n.start = start;
    n.end = end;
    n.globalTid = globalTid;
    n.text = text;
    nvtx(n);
  }

 private:
  static void ok(const kl::Result<void>& r) { REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message)); }
  template <typename... A>
  static void bindAll(kl::sql::Statement& st, A... a) {
    int i = 1;
    (ok(st.bind(i++, static_cast<int64_t>(a))), ...);
  }

  std::filesystem::path path_;
  kl::sql::Database db_;
  std::map<std::string, int64_t> ids_;
};

/// Closes the fixture and reads it back; fails the test when the reader does.
inline kl::profile::ProfileModel readFixture(NsysFixture& f) {
  auto m = kl::profile::readNsysSqlite(f.close());
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().message));
  return std::move(*m);
}

/// Index of the op with this (short) kernel name; fails the test if absent or ambiguous.
inline uint32_t opNamed(const kl::profile::ProfileModel& m, std::string_view name) {
  uint32_t found = kl::profile::kNone;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i)
    if (m.shortName(m.gpuOps[i]) == name) {
      REQUIRE_MESSAGE(found == kl::profile::kNone, "duplicate op " << name);
      found = i;
    }
  REQUIRE_MESSAGE(found != kl::profile::kNone, "no op " << name);
  return found;
}

}  // namespace kl::test
