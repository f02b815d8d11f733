// The kernel catalogue: Nsight Compute (and nsys kernel-summary) imports across runs and models,
// stored in our tables of `.kernlens/kernlens.db` (names prefixed `ncu_`).
//
// Schema versioning contract (see docs/ncu.md): PRAGMA user_version belongs to the database as a
// whole (core/store); every component that owns tables records its own version in
// `kl_schema(component TEXT PRIMARY KEY, version INTEGER)`. ncu's migrations are an ordered list;
// opening applies the missing ones, each in its own transaction, and refuses a database whose
// ncu version is newer than this build knows.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/ncu/classify.h"
#include "core/ncu/report.h"
#include "core/support/result.h"
#include "core/support/sqlite.h"

namespace kl::ncu {

/// The ncu schema version this build writes.
constexpr int kCatalogSchemaVersion = 1;

struct ImportOptions {
  std::string model;  // --model: which model/workload this profile belongs to ("" = none)
  std::string runId;  // --run: which run ("" = none)
};

/// One kernel aggregated over the launches the catalogue holds for it.
struct KernelRow {
  std::string name;      // first name seen (as printed by the tool that reported it)
  std::string baseName;  // informativeName(): Kernel2<X> -> X
  std::string family;
  Bound bound = Bound::Unknown;         // most common class over profiled launches (weighted)
  std::optional<double> smPct, memPct;  // invocation-weighted means over profiled launches
  int64_t launches = 0;                 // sum of invocations (ncu launches, summary Invocations, nsys Instances)
  int64_t profiled = 0;                 // launches that carry ncu counters
  std::optional<double> totalNs, meanNs;
  std::vector<std::string> models, runs;
  // From the most recent profiled launch of the class above.
  MemoryLevel limiter = MemoryLevel::Unknown;
  std::string detail;
  std::optional<double> intensity, flopsPerSec, bytesPerSec, peakFlopsPerSec, peakBytesPerSec;
  std::string rooflineMissing;
};

/// A group for `kernels --by family|model|bound`.
struct GroupRow {
  std::string key;
  int64_t kernels = 0, launches = 0;
  std::optional<double> totalNs;
  int64_t byBound[5] = {0, 0, 0, 0, 0};  // kernels per Bound, indexed by the enum value
  std::vector<std::string> top;          // up to 3 kernel base names, most launches first
};

enum class GroupBy { Family, Model, Bound };

struct ImportedFile {
  std::filesystem::path path;
  NcuFormat format = NcuFormat::Details;
  bool alreadyImported = false;  // same content hash seen before: nothing was added
  int64_t launchesAdded = 0;     // new launches
  int64_t launchesMerged = 0;    // metrics merged into a launch imported from another file
  std::vector<std::string> diagnostics;
};

struct ImportSummary {
  std::vector<ImportedFile> files;
  /// The kernels touched by this import, aggregated over the whole catalogue.
  std::vector<KernelRow> kernels;
};

/// Non-cryptographic 64-bit content hash (FNV-1a) + size, hex: the re-import key.
std::string contentHash(std::string_view bytes);

class Catalog {
 public:
  /// Opens (creating the file and its directory) and migrates.
  static Result<Catalog> open(const std::filesystem::path& dbPath);
  static Result<Catalog> openMemory();
  /// Applies the ncu migrations to an already open database (for a store that owns the handle).
  static Result<void> migrate(sql::Database& db);
  static Result<int> schemaVersion(const sql::Database& db);

  /// Imports files (any supported layout). A file whose content hash is already in the catalogue
  /// is skipped; launches already present (same process, ncu ID, kernel, grid, block, run, model)
  /// get the new file's metrics merged rather than counted again. All-or-nothing per call.
  Result<ImportSummary> importFiles(const std::vector<std::filesystem::path>& files, const ImportOptions& opt);
  /// Imports parsed text (tests, drill).
  Result<ImportSummary> importText(std::string_view text, const std::string& sourceName, const ImportOptions& opt);

  /// Every kernel, most popular first (models desc, launches desc, total time desc).
  Result<std::vector<KernelRow>> kernels() const;
  Result<std::vector<GroupRow>> groups(GroupBy by) const;

  sql::Database& db() { return db_; }

 private:
  explicit Catalog(sql::Database db) : db_(std::move(db)) {}
  Result<void> importOne(std::string_view text, const std::string& sourceName, const ImportOptions& opt,
                         ImportedFile& out, std::vector<int64_t>& kernelIds);
  Result<std::vector<KernelRow>> aggregate(const std::vector<int64_t>* onlyKernels) const;
  sql::Database db_;
};

/// The default catalogue path for a workspace root: <root>/.kernlens/kernlens.db.
std::filesystem::path defaultCatalogPath(const std::filesystem::path& root);

}  // namespace kl::ncu
