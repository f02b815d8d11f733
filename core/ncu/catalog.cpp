#include "core/ncu/catalog.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/ncu/family.h"
#include "core/ncu/metrics.h"
#include "core/ncu/roofline.h"
#include "core/profile/kernel_name.h"
#include "core/support/schema.h"

namespace kl::ncu {

using profile::informativeName;
using profile::normalizedKey;
namespace {

// Migration i (0-based) brings the ncu schema from version i to i + 1. Never edit a shipped
// entry; append a new one.
const char* const kMigrations[] = {
    // v1
    R"sql(
CREATE TABLE ncu_imports(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  content_hash TEXT NOT NULL UNIQUE,
  format TEXT NOT NULL,
  model TEXT,
  run_id TEXT,
  imported_at TEXT NOT NULL,
  launches INTEGER NOT NULL DEFAULT 0);
CREATE TABLE ncu_kernels(
  id INTEGER PRIMARY KEY,
  norm_key TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  base_name TEXT NOT NULL,
  family TEXT NOT NULL);
CREATE TABLE ncu_launches(
  id INTEGER PRIMARY KEY,
  launch_key TEXT NOT NULL UNIQUE,
  import_id INTEGER NOT NULL REFERENCES ncu_imports(id) ON DELETE CASCADE,
  kernel_id INTEGER NOT NULL REFERENCES ncu_kernels(id),
  ncu_id INTEGER,
  process_id INTEGER,
  device TEXT,
  cc TEXT,
  grid TEXT,
  block TEXT,
  invocations INTEGER NOT NULL DEFAULT 1,
  duration_ns REAL,
  total_ns REAL,
  sm_pct REAL, mem_pct REAL, dram_pct REAL, l2_pct REAL, l1_pct REAL,
  bound TEXT NOT NULL DEFAULT 'unknown',
  limiter TEXT, detail TEXT,
  flops_per_s REAL, bytes_per_s REAL, intensity REAL,
  peak_flops_per_s REAL, peak_bytes_per_s REAL,
  roofline_missing TEXT);
CREATE INDEX ncu_launches_kernel ON ncu_launches(kernel_id);
CREATE TABLE ncu_metrics(
  launch_id INTEGER NOT NULL REFERENCES ncu_launches(id) ON DELETE CASCADE,
  section TEXT NOT NULL,
  body TEXT NOT NULL,
  name TEXT NOT NULL,
  unit TEXT NOT NULL,
  raw_unit TEXT NOT NULL,
  value REAL,
  text TEXT NOT NULL,
  min_value REAL,
  max_value REAL,
  PRIMARY KEY(launch_id, section, body, name)) WITHOUT ROWID;
CREATE TABLE ncu_rules(
  launch_id INTEGER NOT NULL REFERENCES ncu_launches(id) ON DELETE CASCADE,
  section TEXT NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  description TEXT NOT NULL,
  speedup_type TEXT NOT NULL,
  speedup REAL,
  PRIMARY KEY(launch_id, section, name)) WITHOUT ROWID;
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kCatalogSchemaVersion);

Result<void> bindOpt(sql::Statement& st, int i, const std::optional<double>& v) {
  return v ? st.bind(i, *v) : st.bindNull(i);
}

std::string nowIso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<double> optReal(const sql::Statement& st, int c) {
  if (st.isNull(c)) return std::nullopt;
  return st.real(c);
}

std::string launchKey(const NcuReport& rep, const NcuLaunch& l, const std::string& norm, const ImportOptions& opt,
                      const std::string& hash, size_t index) {
  std::string g = l.grid ? formatDim3(*l.grid) : "", b = l.block ? formatDim3(*l.block) : "";
  std::string common = opt.runId + '\x1f' + opt.model + '\x1f';
  switch (rep.format) {
    case NcuFormat::NsysKernSum: return "nsys\x1f" + hash + '\x1f' + std::to_string(index);
    case NcuFormat::Summary:
      return "summary\x1f" + common + std::to_string(l.processId) + '\x1f' + norm + '\x1f' + g + '\x1f' + b + '\x1f' +
             l.device;
    default:
      return "launch\x1f" + common + std::to_string(l.processId) + '\x1f' + std::to_string(l.id) + '\x1f' + norm +
             '\x1f' + g + '\x1f' + b + '\x1f' + l.device + '\x1f' + l.kernelTime;
  }
}

}  // namespace

std::string contentHash(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx:%zu", static_cast<unsigned long long>(h), bytes.size());
  return buf;
}

std::filesystem::path defaultCatalogPath(const std::filesystem::path& root) {
  return root / ".kernlens" / "kernlens.db";
}

Result<int> Catalog::schemaVersion(const sql::Database& db) { return sql::componentVersion(db, "ncu"); }

Result<void> Catalog::migrate(sql::Database& db) {
  return sql::migrateComponent(db, {"ncu", "kernel catalogue schema", kMigrations, kCatalogSchemaVersion},
                               kCatalogSchemaVersion);
}

Result<Catalog> Catalog::open(const std::filesystem::path& dbPath) {
  auto db = sql::openShared(dbPath, {"ncu", "kernel catalogue schema", kMigrations, kCatalogSchemaVersion});
  if (!db) return db.error();
  return Catalog(std::move(*db));
}

Result<Catalog> Catalog::openMemory() {
  auto db = sql::Database::openMemory();
  if (!db) return db.error();
  KL_TRY(db->exec("PRAGMA foreign_keys = ON"));
  KL_TRY(migrate(*db));
  return Catalog(std::move(*db));
}

Result<ImportSummary> Catalog::importFiles(const std::vector<std::filesystem::path>& files, const ImportOptions& opt) {
  ImportSummary sum;
  std::vector<int64_t> kernelIds;
  auto tx = sql::Transaction::begin(db_);
  if (!tx) return tx.error();
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) return Error::io(f.string() + ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    ImportedFile out;
    out.path = f;
    KL_TRY(importOne(ss.str(), f.string(), opt, out, kernelIds));
    sum.files.push_back(std::move(out));
  }
  KL_TRY(tx->commit());
  auto rows = aggregate(&kernelIds);
  if (!rows) return rows.error();
  sum.kernels = std::move(*rows);
  return sum;
}

Result<ImportSummary> Catalog::importText(std::string_view text, const std::string& sourceName,
                                          const ImportOptions& opt) {
  ImportSummary sum;
  std::vector<int64_t> kernelIds;
  auto tx = sql::Transaction::begin(db_);
  if (!tx) return tx.error();
  ImportedFile out;
  out.path = sourceName;
  KL_TRY(importOne(text, sourceName, opt, out, kernelIds));
  sum.files.push_back(std::move(out));
  KL_TRY(tx->commit());
  auto rows = aggregate(&kernelIds);
  if (!rows) return rows.error();
  sum.kernels = std::move(*rows);
  return sum;
}

namespace {

/// When a file with this content hash was imported before: the kernels it holds into kernelIds and
/// its format (when it still parses) into out; returns true. False (nothing changed) otherwise.
Result<bool> reportKnownImport(sql::Database& db, std::string_view text, const std::string& sourceName,
                               const std::string& hash, ImportedFile& out, std::vector<int64_t>& kernelIds) {
  auto st = db.prepare("SELECT format FROM ncu_imports WHERE content_hash = ?");
  if (!st) return st.error();
  KL_TRY(st->bind(1, hash));
  auto r = st->step();
  if (!r) return r.error();
  if (!*r) return false;
  out.alreadyImported = true;
  // Still report the file's kernels.
  auto ks = db.prepare(
      "SELECT DISTINCT l.kernel_id FROM ncu_launches l JOIN ncu_imports i ON i.id = l.import_id "
      "WHERE i.content_hash = ?");
  if (!ks) return ks.error();
  KL_TRY(ks->bind(1, hash));
  while (true) {
    auto s = ks->step();
    if (!s) return s.error();
    if (!*s) break;
    kernelIds.push_back(ks->int64(0));
  }
  auto rep = parseNcuCsv(text, sourceName);
  if (rep) out.format = rep->format;
  return true;
}

/// The `ncu_imports` row of one parsed file; returns its id.
Result<int64_t> insertImport(sql::Database& db, const std::string& sourceName, const std::string& hash,
                             const NcuReport& rep, const ImportOptions& opt) {
  auto ins = db.prepare(
      "INSERT INTO ncu_imports(path, content_hash, format, model, run_id, imported_at, launches) "
      "VALUES(?,?,?,?,?,?,?)");
  if (!ins) return ins.error();
  KL_TRY(ins->bind(1, sourceName));
  KL_TRY(ins->bind(2, hash));
  KL_TRY(ins->bind(3, formatName(rep.format)));
  KL_TRY(opt.model.empty() ? ins->bindNull(4) : ins->bind(4, opt.model));
  KL_TRY(opt.runId.empty() ? ins->bindNull(5) : ins->bind(5, opt.runId));
  KL_TRY(ins->bind(6, nowIso()));
  KL_TRY(ins->bind(7, static_cast<int64_t>(rep.launches.size())));
  KL_TRY(ins->run());
  return db.lastInsertRowId();
}

/// The statements that import the launches of one file, prepared once per file.
class LaunchImporter {
 public:
  static Result<LaunchImporter> prepare(sql::Database& db) {
    LaunchImporter li(db);
    auto p = [&db](sql::Statement& into, const char* sql) -> Result<void> {
      auto st = db.prepare(sql);
      if (!st) return st.error();
      into = std::move(*st);
      return {};
    };
    KL_TRY(p(li.findKernel_, "SELECT id FROM ncu_kernels WHERE norm_key = ?"));
    KL_TRY(p(li.addKernel_, "INSERT INTO ncu_kernels(norm_key, name, base_name, family) VALUES(?,?,?,?)"));
    KL_TRY(p(li.findLaunch_, "SELECT id FROM ncu_launches WHERE launch_key = ?"));
    KL_TRY(p(li.addLaunch_,
             "INSERT INTO ncu_launches(launch_key, import_id, kernel_id, ncu_id, process_id, device, cc, "
             "grid, block, invocations) VALUES(?,?,?,?,?,?,?,?,?,?)"));
    KL_TRY(p(li.addMetric_,
             "INSERT OR IGNORE INTO ncu_metrics(launch_id, section, body, name, unit, raw_unit, value, "
             "text, min_value, max_value) VALUES(?,?,?,?,?,?,?,?,?,?)"));
    KL_TRY(p(li.addRule_,
             "INSERT OR IGNORE INTO ncu_rules(launch_id, section, name, type, description, speedup_type, "
             "speedup) VALUES(?,?,?,?,?,?,?)"));
    KL_TRY(p(li.loadMetrics_,
             "SELECT section, body, name, unit, raw_unit, value, text FROM ncu_metrics WHERE launch_id = ?"));
    KL_TRY(p(li.update_,
             "UPDATE ncu_launches SET duration_ns=?, total_ns=?, sm_pct=?, mem_pct=?, dram_pct=?, l2_pct=?, "
             "l1_pct=?, bound=?, limiter=?, detail=?, flops_per_s=?, bytes_per_s=?, intensity=?, "
             "peak_flops_per_s=?, peak_bytes_per_s=?, roofline_missing=? WHERE id=?"));
    return li;
  }

  /// The id of the kernel whose normalised name is `norm` (added on first sight).
  Result<int64_t> kernel(const NcuLaunch& l, const std::string& norm) {
    KL_TRY(findKernel_.reset());
    KL_TRY(findKernel_.bind(1, norm));
    auto fk = findKernel_.step();
    if (!fk) return fk.error();
    if (*fk) return findKernel_.int64(0);
    KL_TRY(addKernel_.reset());
    KL_TRY(addKernel_.bind(1, norm));
    KL_TRY(addKernel_.bind(2, l.kernelName));
    KL_TRY(addKernel_.bind(3, informativeName(l.kernelName)));
    KL_TRY(addKernel_.bind(4, kernelFamily(l.kernelName)));
    KL_TRY(addKernel_.run());
    return db_->lastInsertRowId();
  }

  /// The id of the launch with this key: new (counted in out.launchesAdded), or the same launch
  /// imported from another file (counted in out.launchesMerged).
  Result<int64_t> launch(const NcuLaunch& l, const std::string& key, int64_t importId, int64_t kernelId,
                         ImportedFile& out) {
    KL_TRY(findLaunch_.reset());
    KL_TRY(findLaunch_.bind(1, key));
    auto fl = findLaunch_.step();
    if (!fl) return fl.error();
    if (*fl) {
      ++out.launchesMerged;
      return findLaunch_.int64(0);
    }
    KL_TRY(addLaunch_.reset());
    KL_TRY(addLaunch_.bind(1, key));
    KL_TRY(addLaunch_.bind(2, importId));
    KL_TRY(addLaunch_.bind(3, kernelId));
    KL_TRY(l.id >= 0 ? addLaunch_.bind(4, l.id) : addLaunch_.bindNull(4));
    KL_TRY(addLaunch_.bind(5, l.processId));
    KL_TRY(addLaunch_.bind(6, l.device));
    KL_TRY(addLaunch_.bind(7, l.cc));
    KL_TRY(l.grid ? addLaunch_.bind(8, formatDim3(*l.grid)) : addLaunch_.bindNull(8));
    KL_TRY(l.block ? addLaunch_.bind(9, formatDim3(*l.block)) : addLaunch_.bindNull(9));
    KL_TRY(addLaunch_.bind(10, l.invocations));
    KL_TRY(addLaunch_.run());
    ++out.launchesAdded;
    return db_->lastInsertRowId();
  }

  /// l's metrics and rule results under launch `launchId` (ones it already has are kept).
  Result<void> addMetricsAndRules(int64_t launchId, const NcuLaunch& l) {
    for (const Metric& m : l.metrics) {
      KL_TRY(addMetric_.reset());
      KL_TRY(addMetric_.bind(1, launchId));
      KL_TRY(addMetric_.bind(2, m.section));
      KL_TRY(addMetric_.bind(3, m.bodyLabel));
      KL_TRY(addMetric_.bind(4, m.name));
      KL_TRY(addMetric_.bind(5, m.unit));
      KL_TRY(addMetric_.bind(6, m.rawUnit));
      KL_TRY(bindOpt(addMetric_, 7, m.value));
      KL_TRY(addMetric_.bind(8, m.text));
      KL_TRY(bindOpt(addMetric_, 9, m.minimum));
      KL_TRY(bindOpt(addMetric_, 10, m.maximum));
      KL_TRY(addMetric_.run());
    }
    for (const RuleResult& r : l.rules) {
      KL_TRY(addRule_.reset());
      KL_TRY(addRule_.bind(1, launchId));
      KL_TRY(addRule_.bind(2, r.section));
      KL_TRY(addRule_.bind(3, r.name));
      KL_TRY(addRule_.bind(4, r.type));
      KL_TRY(addRule_.bind(5, r.description));
      KL_TRY(addRule_.bind(6, r.speedupType));
      KL_TRY(bindOpt(addRule_, 7, r.speedup));
      KL_TRY(addRule_.run());
    }
    return {};
  }

  /// Recomputes launch `launchId`'s derived columns (duration, utilisations, bound, roofline) from
  /// every metric it now has; `invocations` scales its duration to a total when nsys gave none.
  Result<void> updateDerived(int64_t launchId, int64_t invocations) {
    NcuLaunch merged;
    KL_TRY(loadMetrics_.reset());
    KL_TRY(loadMetrics_.bind(1, launchId));
    while (true) {
      auto s = loadMetrics_.step();
      if (!s) return s.error();
      if (!*s) break;
      Metric m;
      m.section = std::string(loadMetrics_.text(0));
      m.bodyLabel = std::string(loadMetrics_.text(1));
      m.name = std::string(loadMetrics_.text(2));
      m.unit = std::string(loadMetrics_.text(3));
      m.rawUnit = std::string(loadMetrics_.text(4));
      m.value = optReal(loadMetrics_, 5);
      m.text = std::string(loadMetrics_.text(6));
      merged.metrics.push_back(std::move(m));
    }
    KernelMetrics km = extractMetrics(merged);
    Classification c = classify(km);
    RooflinePoint rp = rooflinePoint(merged);
    std::optional<double> total;
    if (auto t = metricValue(merged, {"Total Time"}, "nsys"))
      total = t;
    else if (km.durationNs)
      total = *km.durationNs * static_cast<double>(invocations);
    KL_TRY(update_.reset());
    KL_TRY(bindOpt(update_, 1, km.durationNs));
    KL_TRY(bindOpt(update_, 2, total));
    KL_TRY(bindOpt(update_, 3, km.smPct));
    KL_TRY(bindOpt(update_, 4, km.memPct));
    KL_TRY(bindOpt(update_, 5, km.dramPct));
    KL_TRY(bindOpt(update_, 6, km.l2Pct));
    KL_TRY(bindOpt(update_, 7, km.l1Pct));
    KL_TRY(update_.bind(8, boundName(c.bound)));
    KL_TRY(update_.bind(9, memoryLevelName(c.limiter)));
    KL_TRY(update_.bind(10, c.bound == Bound::Unknown ? c.missing : c.detail));
    std::optional<double> fl2, bps, ai;
    if (rp.ok) {
      fl2 = rp.flopsPerSec;
      bps = rp.bytesPerSec;
      ai = rp.intensity;
    }
    KL_TRY(bindOpt(update_, 11, fl2));
    KL_TRY(bindOpt(update_, 12, bps));
    KL_TRY(bindOpt(update_, 13, ai));
    KL_TRY(bindOpt(update_, 14, rp.peakFlopsPerSec));
    KL_TRY(bindOpt(update_, 15, rp.peakBytesPerSec));
    KL_TRY(update_.bind(16, rp.missingText()));
    KL_TRY(update_.bind(17, launchId));
    return update_.run();
  }

 private:
  explicit LaunchImporter(sql::Database& db) : db_(&db) {}
  sql::Database* db_;
  sql::Statement findKernel_, addKernel_, findLaunch_, addLaunch_, addMetric_, addRule_, loadMetrics_, update_;
};

}  // namespace

Result<void> Catalog::importOne(std::string_view text, const std::string& sourceName, const ImportOptions& opt,
                                ImportedFile& out, std::vector<int64_t>& kernelIds) {
  const std::string hash = contentHash(text);
  auto known = reportKnownImport(db_, text, sourceName, hash, out, kernelIds);
  if (!known) return known.error();
  if (*known) return {};
  auto rep = parseNcuCsv(text, sourceName);
  if (!rep) return rep.error();
  out.format = rep->format;
  out.diagnostics = rep->diagnostics;
  auto importId = insertImport(db_, sourceName, hash, *rep, opt);
  if (!importId) return importId.error();
  auto importer = LaunchImporter::prepare(db_);
  if (!importer) return importer.error();
  for (size_t idx = 0; idx < rep->launches.size(); ++idx) {
    const NcuLaunch& l = rep->launches[idx];
    const std::string norm = normalizedKey(l.kernelName);
    auto kernelId = importer->kernel(l, norm);
    if (!kernelId) return kernelId.error();
    if (std::find(kernelIds.begin(), kernelIds.end(), *kernelId) == kernelIds.end()) kernelIds.push_back(*kernelId);
    // Launch: new, or merged into the same launch imported from another file.
    auto launchId = importer->launch(l, launchKey(*rep, l, norm, opt, hash, idx), *importId, *kernelId, out);
    if (!launchId) return launchId.error();
    KL_TRY(importer->addMetricsAndRules(*launchId, l));
    // Recompute the derived columns from every metric the launch now has.
    KL_TRY(importer->updateDerived(*launchId, l.invocations));
  }
  return {};
}

Result<std::vector<KernelRow>> Catalog::aggregate(const std::vector<int64_t>* only) const {
  auto st = db_.prepare(
      "SELECT k.id, k.name, k.base_name, k.family, l.invocations, l.duration_ns, l.total_ns, "
      "l.sm_pct, l.mem_pct, l.bound, l.limiter, l.detail, l.intensity, l.flops_per_s, "
      "l.bytes_per_s, l.peak_flops_per_s, l.peak_bytes_per_s, l.roofline_missing, i.model, "
      "i.run_id FROM ncu_launches l JOIN ncu_kernels k ON k.id = l.kernel_id "
      "JOIN ncu_imports i ON i.id = l.import_id ORDER BY k.id, l.id");
  if (!st) return st.error();
  struct Acc {
    KernelRow row;
    double smW = 0, memW = 0, smSum = 0, memSum = 0, durW = 0, durSum = 0;
    double boundW[5] = {0, 0, 0, 0, 0};
    std::map<int, std::pair<MemoryLevel, std::string>> lastDetail;  // bound -> (limiter, detail)
    std::set<std::string> models, runs;
  };
  std::map<int64_t, Acc> acc;
  std::vector<int64_t> order;
  while (true) {
    auto s = st->step();
    if (!s) return s.error();
    if (!*s) break;
    int64_t kid = st->int64(0);
    if (only && std::find(only->begin(), only->end(), kid) == only->end()) continue;
    auto [it, fresh] = acc.try_emplace(kid);
    Acc& a = it->second;
    if (fresh) {
      order.push_back(kid);
      a.row.name = std::string(st->text(1));
      a.row.baseName = std::string(st->text(2));
      a.row.family = std::string(st->text(3));
    }
    double inv = static_cast<double>(std::max<int64_t>(1, st->int64(4)));
    a.row.launches += st->int64(4);
    auto dur = optReal(*st, 5), total = optReal(*st, 6), sm = optReal(*st, 7), mem = optReal(*st, 8);
    if (total) a.row.totalNs = a.row.totalNs.value_or(0) + *total;
    if (dur) {
      a.durW += inv;
      a.durSum += *dur * inv;
    }
    if (sm || mem) a.row.profiled += st->int64(4);
    if (sm) {
      a.smW += inv;
      a.smSum += *sm * inv;
    }
    if (mem) {
      a.memW += inv;
      a.memSum += *mem * inv;
    }
    Bound b = parseBound(st->text(9)).value_or(Bound::Unknown);
    if (b != Bound::Unknown) {
      a.boundW[static_cast<int>(b)] += inv;
      a.lastDetail[static_cast<int>(b)] = {parseMemoryLevel(st->text(10)).value_or(MemoryLevel::Unknown),
                                           std::string(st->text(11))};
    }
    if (auto ai = optReal(*st, 12)) {
      a.row.intensity = ai;
      a.row.flopsPerSec = optReal(*st, 13);
      a.row.bytesPerSec = optReal(*st, 14);
      a.row.peakFlopsPerSec = optReal(*st, 15);
      a.row.peakBytesPerSec = optReal(*st, 16);
      a.row.rooflineMissing = std::string(st->text(17));
    } else if (!a.row.intensity && !st->text(17).empty()) {
      a.row.rooflineMissing = std::string(st->text(17));
    }
    if (!st->isNull(18)) a.models.insert(std::string(st->text(18)));
    if (!st->isNull(19)) a.runs.insert(std::string(st->text(19)));
  }
  std::vector<KernelRow> rows;
  for (int64_t kid : order) {
    Acc& a = acc[kid];
    if (a.smW > 0) a.row.smPct = a.smSum / a.smW;
    if (a.memW > 0) a.row.memPct = a.memSum / a.memW;
    if (a.durW > 0) a.row.meanNs = a.durSum / a.durW;
    int best = -1;
    for (int i = 0; i < 4; ++i)
      if (a.boundW[i] > 0 && (best < 0 || a.boundW[i] > a.boundW[best])) best = i;
    if (best >= 0) {
      a.row.bound = static_cast<Bound>(best);
      a.row.limiter = a.lastDetail[best].first;
      a.row.detail = a.lastDetail[best].second;
    }
    a.row.models.assign(a.models.begin(), a.models.end());
    a.row.runs.assign(a.runs.begin(), a.runs.end());
    rows.push_back(std::move(a.row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const KernelRow& x, const KernelRow& y) {
    if (x.models.size() != y.models.size()) return x.models.size() > y.models.size();
    if (x.launches != y.launches) return x.launches > y.launches;
    double tx = x.totalNs.value_or(0), ty = y.totalNs.value_or(0);
    if (tx != ty) return tx > ty;
    return x.name < y.name;
  });
  return rows;
}

Result<std::vector<KernelRow>> Catalog::kernels() const { return aggregate(nullptr); }

Result<std::vector<GroupRow>> Catalog::groups(GroupBy by) const {
  auto rows = aggregate(nullptr);
  if (!rows) return rows.error();
  std::map<std::string, GroupRow> groups;
  std::map<std::string, std::vector<std::pair<int64_t, std::string>>> tops;
  for (const KernelRow& k : *rows) {
    std::vector<std::string> keys;
    if (by == GroupBy::Family)
      keys = {k.family};
    else if (by == GroupBy::Bound)
      keys = {std::string(boundName(k.bound))};
    else
      keys = k.models.empty() ? std::vector<std::string>{"(no model)"} : k.models;
    for (const auto& key : keys) {
      GroupRow& g = groups[key];
      g.key = key;
      ++g.kernels;
      g.launches += k.launches;
      if (k.totalNs) g.totalNs = g.totalNs.value_or(0) + *k.totalNs;
      ++g.byBound[static_cast<int>(k.bound)];
      tops[key].push_back({k.launches, k.baseName});
    }
  }
  std::vector<GroupRow> out;
  for (auto& [key, g] : groups) {
    auto& t = tops[key];
    std::stable_sort(t.begin(), t.end(), [](auto& a, auto& b) { return a.first > b.first; });
    for (size_t i = 0; i < t.size() && g.top.size() < 3; ++i)
      if (std::find(g.top.begin(), g.top.end(), t[i].second) == g.top.end()) g.top.push_back(t[i].second);
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const GroupRow& a, const GroupRow& b) {
    if (a.launches != b.launches) return a.launches > b.launches;
    return a.key < b.key;
  });
  return out;
}

}  // namespace kl::ncu
