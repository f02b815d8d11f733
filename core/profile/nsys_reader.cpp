// nsys SQLite export -> ProfileModel. Every SELECT names its columns; a column missing in
// this export's version reads as NULL; a missing table reads as empty (tables are lazy).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "core/profile/builder.h"
#include "core/profile/reader.h"
#include "core/support/gzip.h"
#include "core/support/sqlite.h"
#include "core/support/text.h"

namespace kl::profile {

namespace {

using sql::Database;
using sql::Statement;

/// How a selected column reads: absent from this export (always NULL), declared NOT NULL (read
/// without a NULL check), or nullable.
enum class ColKind : uint8_t { Missing, NotNull, Nullable };

/// "SELECT c1, c2, NULL, ... FROM table [where]": wanted columns that the table lacks read as
/// NULL, so result column i is always wanted[i]; `kinds` receives each result column's ColKind.
Result<Statement> selectColumns(const Database& db, std::string_view table,
                                std::initializer_list<std::string_view> wanted, std::vector<ColKind>& kinds,
                                std::string_view where = {}) {
  std::vector<std::pair<std::string, bool>> have;  // name, NOT NULL
  if (auto info = db.prepare("PRAGMA table_info(" + sql::quoteIdent(table) + ")")) {
    while (true) {
      auto r = info->step();
      if (!r || !*r) break;
      have.emplace_back(std::string(info->text(1)), info->int64Or(3, 0) != 0);
    }
  }
  std::string q = "SELECT ";
  bool first = true;
  kinds.clear();
  for (auto w : wanted) {
    if (!first) q += ", ";
    first = false;
    auto it = std::find_if(have.begin(), have.end(), [&](const auto& h) { return h.first == w; });
    if (it != have.end()) {
      q += sql::quoteIdent(w);
      kinds.push_back(it->second ? ColKind::NotNull : ColKind::Nullable);
    } else {
      q += "NULL";
      kinds.push_back(ColKind::Missing);
    }
  }
  q += " FROM ";
  q += sql::quoteIdent(table);
  if (!where.empty()) {
    q += " WHERE ";
    q += where;
  }
  return db.prepare(q);
}

bool hasColumn(const Database& db, std::string_view table, std::string_view col) {
  auto cols = db.columns(table);
  return std::find(cols.begin(), cols.end(), col) != cols.end();
}

using support::icontains;

/// Ids of strings a part reader interned into its own table (see NsysReader's part constructor)
/// carry this bit until the part is merged.
constexpr StrId kPartLocal = StrId{1} << 31;

class NsysReader {
 public:
  /// `file`: the export on disk, opened a second time so that NVTX_EVENTS is read on its own
  /// connection in a second thread; nullptr (an in-memory image) reads it after the rest.
  NsysReader(Database& db, std::string name, const ReadOptions& opts, const std::filesystem::path* file = nullptr)
      : db_(db), name_(std::move(name)), opts_(opts), file_(file), b_(m_) {}

  /// A part reader: reads one table on its own connection `db` into its own model, while the
  /// parent goes on with the others. It shares the parent's StringIds map (read only); strings
  /// it has to intern go to its own table with kPartLocal set, threads are its own, numbered in
  /// the order it meets them; the parent's adopt() turns both into the parent's ids exactly as
  /// a sequential read would have given them.
  NsysReader(Database& db, const NsysReader& parent, const std::atomic<bool>& stop)
      : db_(db),
        name_(parent.name_),
        opts_(parent.opts_),
        b_(m_),
        denseIds_(&parent.dense_),
        sparseIds_(&parent.sparse_),
        stop_(&stop),
        part_(true) {
    b_.threadNames = parent.b_.threadNames;
  }

  Result<ProfileModel> run() {
    if (!db_.tableExists("StringIds")) return fail("SQLite database but not an nsys export (no StringIds table)");
    bool meta = db_.tableExists("META_DATA_EXPORT") || db_.tableExists("EXPORT_META_DATA");
    bool activity = db_.tableExists("CUPTI_ACTIVITY_KIND_KERNEL") || db_.tableExists("CUPTI_ACTIVITY_KIND_RUNTIME") ||
                    db_.tableExists("NVTX_EVENTS");
    if (!meta && !activity)
      return fail(
          "SQLite database but not an nsys export (no META_DATA_EXPORT/EXPORT_META_DATA "
          "and no activity tables)");
    m_.meta.format = SourceFormat::Nsys;
    m_.meta.files.push_back(name_);
    m_.meta.fileRanks.push_back(0);
    m_.meta.rankClockOffsetNs.push_back(0);
    m_.meta.rankClockMethod.push_back("none: single file");

    for (auto step : {&NsysReader::readMeta, &NsysReader::readStrings, &NsysReader::readNames, &NsysReader::readGpus}) {
      if (auto r = (this->*step)(); !r) return r.error();
      if (opts_.cancel.isCancelled()) return Error::cancelled();
    }
    // NVTX_EVENTS (as many rows as kernels in an annotated capture) is read by a part reader:
    // on a second connection in a second thread while this one reads the GPU and runtime
    // tables, or after them on this connection for an in-memory image.
    std::optional<Database> partDb;
    if (file_ && db_.tableExists("NVTX_EVENTS"))
      if (auto d = Database::openReadOnlyImmutable(*file_)) partDb.emplace(std::move(*d));
    std::atomic<bool> stop{false};
    NsysReader part(partDb ? *partDb : db_, *this, stop);
    Result<void> partResult;
    auto readPart = [&] {
      try {
        partResult = part.readNvtxSorted();
      } catch (const std::exception& e) {
        partResult = Error::invalid(name_ + ": cannot read NVTX_EVENTS: " + e.what());
      }
    };
    std::thread worker;
    if (partDb) worker = std::thread(readPart);
    auto joinPart = [&] {
      if (worker.joinable()) worker.join();
    };
    for (auto step : {&NsysReader::readKernels, &NsysReader::readMemcpy, &NsysReader::readMemset,
                      &NsysReader::readGraphTrace, &NsysReader::readApi}) {
      Result<void> r;
      try {
        r = (this->*step)();
      } catch (...) {
        stop = true;
        joinPart();
        throw;
      }
      if (r && opts_.cancel.isCancelled()) r = Error::cancelled();
      if (!r) {
        stop = true;
        joinPart();
        return r.error();
      }
    }
    if (worker.joinable())
      joinPart();
    else
      readPart();
    if (!partResult) return partResult.error();
    if (opts_.cancel.isCancelled()) return Error::cancelled();
    adopt(std::move(part));
    if (opts_.placement) addMissingGpus();  // without placement every op reads device -1
    if (unknownKernelNames_)
      m_.meta.warnings.push_back(std::to_string(unknownKernelNames_) +
                                 " kernels have a name id that is not in StringIds; shown as <unknown name #id>");
    finalizeModel(m_);
    return std::move(m_);
  }

 private:
  Error fail(const std::string& why) const { return Error::invalid(name_ + ": " + why); }
  Error sqlFail(std::string_view table, const Error& e) const {
    return Error::invalid(name_ + ": cannot read " + std::string(table) + ": " + e.message);
  }

  /// "SELECT ..." of `wanted` columns of `table` (see selectColumns); the column kinds are
  /// kept for each() and the accessors.
  Result<Statement> select(std::string_view table, std::initializer_list<std::string_view> wanted,
                           std::string_view where = {}) {
    return selectColumns(db_, table, wanted, kinds_, where);
  }

  /// Iterates all rows of `st` (the last select()), calling fn(st) per row; polls cancellation.
  template <typename Fn>
  Result<void> each(std::string_view table, Result<Statement>& st, Fn&& fn) {
    if (!st) return sqlFail(table, st.error());
    for (uint64_t n = 0;; ++n) {
      auto r = st->step();
      if (!r) return sqlFail(table, r.error());
      if (!*r) return {};
      fn(*st);
      if ((n & 0xFFFF) == 0xFFFF && (opts_.cancel.isCancelled() || (stop_ && stop_->load(std::memory_order_relaxed))))
        return Error::cancelled();
    }
  }

  /// The interned string of a StringIds id column; false when NULL or not a known id.
  bool lookupSid(const Statement& st, int col, StrId& out) const {
    auto id = opt(st, col);
    if (!id) return false;
    if (*id >= 0 && static_cast<uint64_t>(*id) < denseIds_->size()) {
      out = (*denseIds_)[static_cast<size_t>(*id)];
      return out != kNone;
    }
    auto it = sparseIds_->find(*id);
    if (it == sparseIds_->end()) return false;
    out = it->second;
    return true;
  }
  StrId sid(const Statement& st, int col) const {
    StrId s = kEmptyStr;
    return lookupSid(st, col, s) ? s : kEmptyStr;
  }
  /// A string given as a StringIds id (column idCol) or, failing that, as text (textCol).
  StrId sidOrText(const Statement& st, int idCol, int textCol) {
    StrId s = kEmptyStr;
    if (lookupSid(st, idCol, s)) return s;
    auto text = st.text(textCol);
    if (text.empty()) return kEmptyStr;
    return part_ ? kPartLocal | m_.strings.intern(text) : m_.strings.intern(text);
  }
  /// Column `col` of the current row, `dflt` when NULL: one SQLite call, none for a missing column.
  int64_t i64(const Statement& st, int col, int64_t dflt = 0) const {
    switch (kinds_[static_cast<size_t>(col)]) {
      case ColKind::Missing: return dflt;
      case ColKind::NotNull: return st.int64(col);
      case ColKind::Nullable: break;
    }
    return st.int64Or(col, dflt);
  }
  std::optional<int64_t> opt(const Statement& st, int col) const {
    switch (kinds_[static_cast<size_t>(col)]) {
      case ColKind::Missing: return std::nullopt;
      case ColKind::NotNull: return st.int64(col);
      case ColKind::Nullable: break;
    }
    return st.optInt64(col);
  }
  /// Upper bound of a table's row count (max rowid; exact without deletions), for reserve().
  size_t rowsHint(std::string_view table) const {
    auto st = db_.prepare("SELECT max(rowid) FROM " + sql::quoteIdent(table));
    if (!st) return 0;
    auto r = st->step();
    if (!r || !*r) return 0;
    return static_cast<size_t>(std::clamp<int64_t>(st->int64Or(0, 0), 0, int64_t{1} << 32));
  }

  Result<void> readMeta() {
    const char* table = db_.tableExists("META_DATA_EXPORT")   ? "META_DATA_EXPORT"
                        : db_.tableExists("EXPORT_META_DATA") ? "EXPORT_META_DATA"
                                                              : nullptr;
    if (!table) {
      m_.meta.warnings.push_back("no META_DATA_EXPORT / EXPORT_META_DATA table: version unknown");
      return {};
    }
    auto st = select(table, {"name", "value"});
    std::string productName;
    auto r = each(table, st, [&](Statement& s) {
      auto k = s.text(0);
      if (k == "EXPORT_PRODUCT_VERSION")
        m_.meta.toolVersion = std::string(s.text(1));
      else if (k == "EXPORT_SCHEMA_VERSION")
        m_.meta.schemaVersion = std::string(s.text(1));
      else if (k == "EXPORT_PRODUCT_NAME")
        productName = std::string(s.text(1));
    });
    if (!r) return r;
    m_.meta.emulated = icontains(m_.meta.toolVersion, "emulated") || icontains(productName, "emulated");
    return {};
  }

  Result<void> readStrings() {
    auto st = db_.prepare("SELECT id, value FROM StringIds");
    std::vector<std::pair<int64_t, StrId>> all;
    int64_t maxId = -1;
    auto r = each("StringIds", st, [&](Statement& s) {
      int64_t id = s.int64(0);
      all.emplace_back(id, m_.strings.intern(s.text(1)));
      maxId = std::max(maxId, id);
    });
    if (!r) return r;
    if (maxId >= 0 && static_cast<uint64_t>(maxId) < 4 * all.size() + (1u << 20)) {
      dense_.assign(static_cast<size_t>(maxId) + 1, kNone);
      for (auto [id, s] : all)
        if (id >= 0) dense_[static_cast<size_t>(id)] = s;
    } else {
      for (auto [id, s] : all) sparse_[id] = s;
    }
    return {};
  }

  Result<void> readNames() {
    if (db_.tableExists("PROCESSES")) {
      auto st = select("PROCESSES", {"globalPid", "pid", "name"});
      auto r = each("PROCESSES", st, [&](Statement& s) {
        if (auto gp = opt(s, 0); gp && !s.isNull(2)) b_.processNames[*gp] = m_.strings.intern(s.text(2));
      });
      if (!r) return r;
    }
    if (db_.tableExists("ThreadNames")) {
      auto st = select("ThreadNames", {"globalTid", "nameId"});
      auto r = each("ThreadNames", st, [&](Statement& s) {
        if (auto gt = opt(s, 0)) b_.threadNames[*gt] = sid(s, 1);
      });
      if (!r) return r;
    }
    return {};
  }

  Result<void> readGpus() {
    if (!db_.tableExists("TARGET_INFO_GPU")) return {};
    auto st = select("TARGET_INFO_GPU", {"id", "name", "smCount", "totalMemory", "computeMajor", "computeMinor",
                                         "clockRate", "busLocation", "uuid"});
    return each("TARGET_INFO_GPU", st, [&](Statement& s) {
      Gpu g;
      g.deviceId = static_cast<int32_t>(i64(s, 0, -1));
      for (const auto& have : m_.gpus)
        if (have.deviceId == g.deviceId) return;  // one row per device (vmId duplicates)
      g.name = m_.strings.intern(s.text(1));
      g.smCount = static_cast<int32_t>(i64(s, 2));
      g.memoryBytes = i64(s, 3);
      g.computeMajor = static_cast<int32_t>(i64(s, 4));
      g.computeMinor = static_cast<int32_t>(i64(s, 5));
      g.clockRateHz = i64(s, 6);
      g.busLocation = m_.strings.intern(s.text(7));
      g.uuid = m_.strings.intern(s.text(8));
      m_.gpus.push_back(g);
    });
  }

  void addMissingGpus() {
    std::vector<int32_t> seen;
    for (const auto& op : m_.gpuOps)
      if (seen.empty() || seen.back() != op.deviceId) seen.push_back(op.deviceId);
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (int32_t d : seen) {
      bool known = std::any_of(m_.gpus.begin(), m_.gpus.end(), [&](const Gpu& g) { return g.deviceId == d; });
      if (!known) {
        Gpu g;
        g.deviceId = d;
        m_.gpus.push_back(g);
      }
    }
    std::sort(m_.gpus.begin(), m_.gpus.end(), [](const Gpu& a, const Gpu& b) { return a.deviceId < b.deviceId; });
  }

  /// Columns `col` (start) and `col + 1` (end; NULL = start, reported in `*endNull`) of a row
  /// as a validated interval; false (the row is skipped and counted) when not usable. One
  /// SQLite column access per value.
  bool interval(const Statement& s, int col, const char* table, int64_t& start, int64_t& end,
                int64_t maxLen = kMaxIntervalNs, bool* endNull = nullptr) {
    const char* why = nullptr;
    if (s.integer(col, start) != Statement::Type::Integer) {
      why = "a start that is not an integer";
    } else {
      auto te = s.integer(col + 1, end);
      if (te == Statement::Type::Null) end = start;
      if (endNull) *endNull = te == Statement::Type::Null;
      why = te == Statement::Type::Other ? "an end that is not an integer" : badInterval(start, end, maxLen);
    }
    if (why) m_.meta.skippedRows.add(table, why);
    return !why;
  }

  /// Common GPU-row columns: start, end, deviceId, contextId, streamId, correlationId, globalPid.
  /// False (row skipped and counted) when its times are corrupt.
  bool fillCommon(GpuOp& op, const Statement& s, const char* table) {
    if (!interval(s, 0, table, op.start, op.end)) return false;
    if (opts_.placement) {
      op.deviceId = static_cast<int32_t>(i64(s, 2, -1));
      op.contextId = static_cast<uint32_t>(i64(s, 3));
      op.streamId = static_cast<uint32_t>(i64(s, 4));
    }
    op.correlationId = i64(s, 5, -1);
    op.process = b_.process(i64(s, 6));
    return true;
  }

  Result<void> readKernels() {
    const char* t = "CUPTI_ACTIVITY_KIND_KERNEL";
    if (!db_.tableExists(t)) return {};
    bool hasDemangled = hasColumn(db_, t, "demangledName");
    const bool detail = opts_.kernelDetails;
    // Without details only the columns naming the op are read (and graphId, a GpuOp field).
    auto st = detail ? select(t, {"start",
                                  "end",
                                  "deviceId",
                                  "contextId",
                                  "streamId",
                                  "correlationId",
                                  "globalPid",
                                  hasDemangled ? "demangledName" : "name",
                                  "shortName",
                                  "graphId",
                                  "mangledName",
                                  "gridX",
                                  "gridY",
                                  "gridZ",
                                  "blockX",
                                  "blockY",
                                  "blockZ",
                                  "registersPerThread",
                                  "staticSharedMemory",
                                  "dynamicSharedMemory",
                                  "graphNodeId"})
                     : select(t, {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                  hasDemangled ? "demangledName" : "name", "shortName", "graphId"});
    size_t hint = rowsHint(t);
    m_.gpuOps.reserve(m_.gpuOps.size() + hint);
    if (detail) m_.kernels.reserve(m_.kernels.size() + hint);
    return each(t, st, [&](Statement& s) {
      GpuOp op;
      if (!fillCommon(op, s, t)) return;
      op.kind = GpuOpKind::Kernel;
      StrId demangled = sid(s, 7), shortName = sid(s, 8);
      op.graphId = i64(s, 9, -1);
      op.name = demangled != kEmptyStr ? demangled : shortName;
      if (op.name == kEmptyStr) {
        // The name ids resolve to nothing (StringIds row missing): say so, never an empty name.
        int nameCol = !s.isNull(7) ? 7 : !s.isNull(8) ? 8 : -1;
        std::string shown =
            nameCol >= 0 ? "<unknown name #" + std::to_string(s.int64(nameCol)) + ">" : "<unknown name>";
        op.name = shortName = demangled = m_.strings.intern(shown);
        ++unknownKernelNames_;
      }
      if (detail) {
        KernelDetail k;
        k.demangledName = demangled;
        k.shortName = shortName;
        k.mangledName = sid(s, 10);
        for (int i = 0; i < 3; ++i) {
          k.grid[i] = static_cast<int32_t>(i64(s, 11 + i));
          k.block[i] = static_cast<int32_t>(i64(s, 14 + i));
        }
        k.registersPerThread = static_cast<int32_t>(i64(s, 17));
        k.staticSharedMemory = static_cast<int32_t>(i64(s, 18));
        k.dynamicSharedMemory = static_cast<int32_t>(i64(s, 19));
        k.graphNodeId = i64(s, 20, -1);
        op.detail = static_cast<uint32_t>(m_.kernels.size());
        m_.kernels.push_back(k);
      }
      m_.gpuOps.push_back(op);
    });
  }

  Result<void> readMemcpy() {
    const char* t = "CUPTI_ACTIVITY_KIND_MEMCPY";
    if (!db_.tableExists(t)) return {};
    auto st = select(t, {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "bytes",
                         "copyKind", "srcKind", "dstKind"});
    StrId names[14];
    for (uint8_t k = 0; k < 14; ++k) names[k] = m_.strings.intern("[CUDA memcpy " + std::string(copyKindName(k)) + "]");
    return each(t, st, [&](Statement& s) {
      GpuOp op;
      if (!fillCommon(op, s, t)) return;
      op.kind = GpuOpKind::Memcpy;
      MemcpyDetail d;
      d.bytes = i64(s, 7);
      int64_t ck = i64(s, 8);
      d.copyKind = static_cast<uint8_t>(ck >= 0 && ck < 14 ? ck : 0);
      d.srcKind = static_cast<uint8_t>(std::clamp<int64_t>(i64(s, 9, 255), 0, 255));
      d.dstKind = static_cast<uint8_t>(std::clamp<int64_t>(i64(s, 10, 255), 0, 255));
      op.name = names[d.copyKind];
      op.detail = static_cast<uint32_t>(m_.memcpys.size());
      m_.memcpys.push_back(d);
      m_.gpuOps.push_back(op);
    });
  }

  Result<void> readMemset() {
    const char* t = "CUPTI_ACTIVITY_KIND_MEMSET";
    if (!db_.tableExists(t)) return {};
    auto st = select(t, {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "bytes",
                         "value", "memKind"});
    StrId name = m_.strings.intern("[CUDA memset]");
    return each(t, st, [&](Statement& s) {
      GpuOp op;
      if (!fillCommon(op, s, t)) return;
      op.kind = GpuOpKind::Memset;
      MemsetDetail d;
      d.bytes = i64(s, 7);
      d.value = static_cast<int32_t>(i64(s, 8));
      d.memKind = static_cast<uint8_t>(std::clamp<int64_t>(i64(s, 9, 255), 0, 255));
      op.name = name;
      op.detail = static_cast<uint32_t>(m_.memsets.size());
      m_.memsets.push_back(d);
      m_.gpuOps.push_back(op);
    });
  }

  Result<void> readGraphTrace() {
    const char* t = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
    if (!db_.tableExists(t)) return {};
    auto st = select(t, {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "graphId"});
    return each(t, st, [&](Statement& s) {
      GpuOp op;
      if (!fillCommon(op, s, t)) return;
      op.kind = GpuOpKind::Graph;
      op.graphId = i64(s, 7, -1);
      op.name = m_.strings.intern("[CUDA graph " + std::to_string(op.graphId) + "]");
      m_.gpuOps.push_back(op);
    });
  }

  Result<void> readApi() {
    const char* t = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if (!db_.tableExists(t)) return {};
    auto st = select(t, {"start", "end", "eventClass", "globalTid", "correlationId", "nameId", "name"});
    std::unordered_map<StrId, ApiRole> roles;
    m_.apiCalls.reserve(m_.apiCalls.size() + rowsHint(t));
    return each(t, st, [&](Statement& s) {
      ApiCall c;
      if (!interval(s, 0, t, c.start, c.end)) return;
      c.thread = b_.thread(i64(s, 3));
      c.correlationId = i64(s, 4, -1);
      const StrId name = sidOrText(s, 5, 6);
      if (opts_.placement) c.name = name;
      auto nm = m_.str(name);
      int64_t cls = i64(s, 2, -1);
      c.level = (cls == 1 || (cls != 0 && nm.substr(0, 2) == "cu" && nm.substr(0, 4) != "cuda")) ? ApiLevel::Driver
                                                                                                 : ApiLevel::Runtime;
      auto [it, fresh] = roles.try_emplace(name, ApiRole::Other);
      if (fresh) it->second = classifyApi(nm);
      c.role = it->second;
      m_.apiCalls.push_back(c);
    });
  }

  Result<void> readNvtx() {
    const char* t = "NVTX_EVENTS";
    if (!db_.tableExists(t)) return {};
    // One pass: ranges and marks (34, 59, 60, 70, 71) are stored with their raw domain and
    // category ids; domain names (75), category names (33) and thread names (39) are collected
    // on the way and applied afterwards. Keys are per process (PID bits only, as NVIDIA's
    // reports mask with 0x0000FFFFFF000000).
    std::map<std::pair<uint32_t, int64_t>, std::pair<int64_t, StrId>> domains;  // -> (start, name)
    std::map<std::tuple<uint32_t, int64_t, int64_t>, StrId> categories;
    const size_t rangesBefore = m_.ranges.size();
    auto st =
        select(t, {"start", "end", "eventType", "globalTid", "endGlobalTid", "text", "textId", "domainId", "category"},
               "eventType IN (33, 34, 39, 59, 60, 70, 71, 75)");
    m_.ranges.reserve(m_.ranges.size() + rowsHint(t));
    auto r = each(t, st, [&](Statement& s) {
      int64_t type = i64(s, 2);
      int64_t gtid = i64(s, 3);
      if (type == 33 || type == 39 || type == 75) {
        StrId text = sidOrText(s, 6, 5);
        uint32_t pid = GlobalId::pid(gtid);
        if (type == 75) {
          auto key = std::make_pair(pid, i64(s, 7));
          auto it = domains.find(key);
          if (it == domains.end() || i64(s, 0) < it->second.first) domains[key] = {i64(s, 0), text};
        } else if (type == 33) {
          categories[{pid, i64(s, 7), i64(s, 8)}] = text;
        } else {
          if (!b_.threadNames.count(gtid) || b_.threadNames[gtid] == kEmptyStr) b_.threadNames[gtid] = text;
        }
        return;
      }
      Range g;
      g.kind = type == 34                   ? RangeKind::NvtxMark
               : (type == 60 || type == 71) ? RangeKind::NvtxStartEnd
                                            : RangeKind::NvtxPushPop;
      bool endNull = false;
      if (!interval(s, 0, t, g.start, g.end, kMaxTimestampNs, &endNull)) return;
      if (g.kind == RangeKind::NvtxMark) {
        g.end = g.start;
      } else if (endNull) {
        g.open = anyOpen_ = true;
        g.end = g.start;  // set to the span end in finalizeModel
      }
      g.thread = b_.thread(gtid);
      if (auto et = opt(s, 4); et && *et != gtid) g.endThread = b_.thread(*et);
      g.text = sidOrText(s, 6, 5);
      g.domainId = static_cast<int32_t>(i64(s, 7));
      g.categoryId = static_cast<int32_t>(i64(s, 8));
      m_.ranges.push_back(g);
    });
    if (!r) return r;
    // Domain and category names.
    std::map<std::pair<uint32_t, int64_t>, bool> unnamed;
    if (m_.ranges.stored<&Range::domainId>() || m_.ranges.stored<&Range::categoryId>()) {
      for (size_t i = rangesBefore; i < m_.ranges.size(); ++i) {
        int64_t dom = m_.ranges.get<&Range::domainId>(i), cat = m_.ranges.get<&Range::categoryId>(i);
        if (dom == 0 && cat == 0) continue;
        uint32_t pid = m_.processes[m_.threads[m_.ranges.get<&Range::thread>(i)].process].pid;
        if (dom != 0) {
          auto it = domains.find({pid, dom});
          if (it != domains.end())
            m_.ranges.put<&Range::domain>(i, it->second.second);
          else
            unnamed[{pid, dom}] = true;
        }
        if (cat != 0) {
          auto it = categories.find({pid, dom, cat});
          if (it != categories.end()) m_.ranges.put<&Range::category>(i, it->second);
        }
      }
    }
    for (const auto& [key, _] : unnamed)
      m_.meta.warnings.push_back("NVTX domain " + std::to_string(key.second) + " of pid " + std::to_string(key.first) +
                                 " has no name row (eventType 75); left unnamed");
    return {};
  }

  /// The part reader's work: NVTX_EVENTS, sorted by time here when no range is open (an open
  /// range's end is the span's end, known only once every table is read).
  Result<void> readNvtxSorted() {
    if (auto r = readNvtx(); !r) return r;
    if (!anyOpen_) detail::sortByTime(m_.ranges);
    return {};
  }

  /// Takes the part's ranges, threads, strings and findings, giving them the ids a sequential
  /// read would have: the part's strings are interned here in the order the part first met
  /// them, its threads created in the order it first met them, and only then their names
  /// (NVTX eventType 39 rows included) applied.
  void adopt(NsysReader&& part) {
    const auto& ps = part.m_.strings;
    std::vector<StrId> smap(ps.size());
    for (StrId i = 0; i < ps.size(); ++i) smap[i] = m_.strings.intern(ps.str(i));
    auto str = [&](StrId s) { return s & kPartLocal ? smap[s & ~kPartLocal] : s; };

    b_.threadNames = std::move(part.b_.threadNames);
    for (auto& [_, name] : b_.threadNames) name = str(name);
    const size_t threadsBefore = m_.threads.size();
    std::vector<uint32_t> tmap(part.m_.threads.size());
    bool sameThreads = true;
    for (uint32_t i = 0; i < tmap.size(); ++i) {
      tmap[i] = b_.thread(part.m_.threads[i].globalTid);
      sameThreads = sameThreads && tmap[i] == i;
    }
    // Threads first seen in NVTX_EVENTS get the names of eventType 39 rows (wherever they were).
    for (size_t i = threadsBefore; i < m_.threads.size(); ++i)
      if (auto n = b_.threadNames.find(m_.threads[i].globalTid); n != b_.threadNames.end())
        m_.threads[i].name = n->second;

    auto& ranges = part.m_.ranges;
    if (!sameThreads) {
      auto thread = [&](uint32_t t) { return t == kNone ? kNone : tmap[t]; };
      ranges.mapColumn<&Range::thread>(thread);
      ranges.mapColumn<&Range::endThread>(thread);
    }
    if (ps.size() > 1) {
      ranges.mapColumn<&Range::text>(str);
      ranges.mapColumn<&Range::domain>(str);
      ranges.mapColumn<&Range::category>(str);
    }
    // Only NVTX_EVENTS holds ranges in an nsys export.
    m_.ranges = std::move(ranges);
    for (auto& w : part.m_.meta.warnings) m_.meta.warnings.push_back(std::move(w));
    m_.meta.skippedRows.merge(part.m_.meta.skippedRows);
  }

  Database& db_;
  std::string name_;
  const ReadOptions& opts_;
  const std::filesystem::path* file_ = nullptr;
  ProfileModel m_;
  detail::ModelBuilder b_;
  std::vector<StrId> dense_;
  std::unordered_map<int64_t, StrId> sparse_;
  const std::vector<StrId>* denseIds_ = &dense_;  // the StringIds map in use: ours or the parent's
  const std::unordered_map<int64_t, StrId>* sparseIds_ = &sparse_;
  const std::atomic<bool>* stop_ = nullptr;  // a part reader: the parent gave up
  bool part_ = false;
  bool anyOpen_ = false;  // some NVTX range never ended (its end is set in finalizeModel)
  uint64_t unknownKernelNames_ = 0;
  std::vector<ColKind> kinds_;  // of the current select()
};

}  // namespace

Result<ProfileModel> readNsysSqliteImage(std::string_view bytes, std::string_view name, const ReadOptions& opts) {
  std::string plain;
  if (isGzipMagic(bytes)) {
    auto g = gunzip(bytes);
    if (!g) return Error::invalid(std::string(name) + ": " + g.error().message);
    plain = std::move(*g);
    bytes = plain;
  }
  if (bytes.substr(0, 16) != std::string_view("SQLite format 3\0", 16))
    return Error::invalid(std::string(name) + ": not an SQLite database");
  auto db = Database::openImage(bytes);
  if (!db) return Error::invalid(std::string(name) + ": " + db.error().message);
  NsysReader reader(*db, std::string(name), opts);
  return reader.run();
}

Result<ProfileModel> readNsysSqlite(const std::filesystem::path& path, const ReadOptions& opts) {
  auto src = openMaybeGzip(path);
  if (!src) return src.error();
  char head[16] = {};
  size_t got = 0;
  while (got < sizeof head) {
    auto n = (*src)->read(head + got, sizeof head - got);
    if (!n) return Error::invalid(n.error().message);
    if (*n == 0) break;
    got += *n;
  }
  if (got == 0) return Error::invalid(path.string() + ": empty file");
  if (std::string_view(head, got) != std::string_view("SQLite format 3\0", 16))
    return Error::invalid(path.string() + ": not an SQLite database");

  std::string probe(2, '\0');
  {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return Error::notFound(path.string() + ": cannot open");
    size_t n = std::fread(probe.data(), 1, 2, f);
    std::fclose(f);
    probe.resize(n);
  }
  if (isGzipMagic(probe)) {
    auto bytes = readMaybeGzipFile(path);
    if (!bytes) return bytes.error();
    return readNsysSqliteImage(*bytes, path.string(), opts);
  }
  auto db = Database::openReadOnlyImmutable(path);
  if (!db) return db.error();
  NsysReader reader(*db, path.string(), opts, &path);
  return reader.run();
}

}  // namespace kl::profile
