// Profile readers: nsys SQLite export (.sqlite / .sqlite.gz) and Kineto / PyTorch-profiler JSON
// (.json / .json.gz) -> ProfileModel. The format is detected from the content, never the
// extension. Bad input (empty, truncated, not SQLite, SQLite but not an nsys export, JSON but
// not a trace) yields a Result error with a one-line reason naming the file; never a crash.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "core/profile/model.h"
#include "core/support/cancel.h"
#include "core/support/result.h"

namespace kl::profile {

enum class InputFormat { Unknown, NsysSqlite, KinetoJson };

/// Sniffs the (decompressed) first bytes: "SQLite format 3\0" or a JSON object.
Result<InputFormat> detectFormat(const std::filesystem::path& path);

struct ReadOptions {
  CancellationToken cancel;
  /// Several files: shift every rank onto rank 0's clock (see alignRankClocks).
  bool alignRanks = true;
  /// nsys: read the per-kernel detail columns (mangled name, grid, block, registers, shared
  /// memory, graph node) into ProfileModel::kernels. Off for analyses that need only the
  /// kernel's name and times (then every kernel op has detail == kNone and shortName(op) is
  /// its name); it saves about half of the reading time and memory of kernels. Several files
  /// (ranks) are always read with details (clock alignment matches kernels by short name).
  bool kernelDetails = true;
  /// nsys: read where GPU ops ran (GpuOp::deviceId, streamId, contextId) and the names of API
  /// calls (ApiCall::name; its role and level are classified from it either way). Off for
  /// analyses that read neither (tree without --gpu): those columns stay unstored (the row
  /// defaults: device -1, stream 0, empty call names). Several files are always read with them.
  bool placement = true;
};

/// Reads one file of either format.
Result<ProfileModel> readProfile(const std::filesystem::path& path, const ReadOptions& opts = {});

/// Reads several files as the ranks of one run and merges them into one model. A directory
/// argument expands to its *.sqlite[.gz] / *.json[.gz] files in name order. The rank of a
/// file is the trace's distributedInfo.rank when present (and unique), else its position.
Result<ProfileModel> readProfiles(const std::vector<std::filesystem::path>& paths, const ReadOptions& opts = {});

/// nsys SQLite export on disk (plain or gzip). A plain file is opened read-only + immutable
/// (no side files); a gzip file is decompressed into memory (sqlite3_deserialize).
Result<ProfileModel> readNsysSqlite(const std::filesystem::path& path, const ReadOptions& opts = {});
/// nsys SQLite export from an in-memory image (plain or gzip). `name` is used in messages.
Result<ProfileModel> readNsysSqliteImage(std::string_view bytes, std::string_view name = "<memory>",
                                         const ReadOptions& opts = {});

/// Kineto / PyTorch-profiler JSON on disk (plain or gzip), parsed in a streaming fashion.
Result<ProfileModel> readKinetoJson(const std::filesystem::path& path, const ReadOptions& opts = {});
/// Kineto JSON from memory (plain or gzip). `name` is used in messages.
Result<ProfileModel> readKinetoJsonText(std::string_view text, std::string_view name = "<memory>",
                                        const ReadOptions& opts = {});

/// Appends `rank`'s model to `into` (interning strings, remapping indices, setting rank on
/// every row). Rows keep their own clocks; call alignRankClocks afterwards.
void appendRank(ProfileModel& into, ProfileModel&& part, int32_t rank);

/// Clock alignment across ranks. For every rank r != reference (the lowest rank), match NCCL
/// collective kernels (name contains "nccl", case-insensitive) by (short name, occurrence
/// index in start order) against the reference rank; offset(r) = median over matches of
/// (ref.end - r.end), since a collective completes at (nearly) the same instant on every
/// participant. Ranks without matches keep offset 0 (method "none: ..."). Applies the offsets
/// to every time of that rank, re-sorts, and records them in meta.rankClockOffsetNs/Method.
void alignRankClocks(ProfileModel& model);

/// Re-establishes the model invariants after rows were appended or shifted: sorts rows by
/// (start, end desc), remaps cross-references (PyFrame::parent) and recomputes the span.
void finalizeModel(ProfileModel& model);

}  // namespace kl::profile
