// loadFromStore: the latest stored results of a workspace (core/store, .kernlens/kernlens.db) as a
// ResultSet — what the server shows at start-up and after a profiling run.
//
// Per file: the spans of its latest round (Store::latestFileResults), each span's EXCLUSIVE
// kernels placed at its first line on disk (diskFirst, 1-based -> 0-based), the file's stored
// snapshot (so results follow edits), function totals recomputed from the snapshot's function
// spans; unmapped ops of the newest run's last round; previousFunctions from the previous ok run
// that focused on the same function (Store::previousRun). Per-launch min/max, grid/block and
// streams are not stored: those KernelStat fields stay 0 / empty.
#pragma once

#include <filesystem>
#include <optional>

#include "core/results/result_set.h"
#include "core/support/result.h"

namespace kl::results {

/// nullopt when the workspace has no database or no results (the database is never created
/// here). Errors: the database exists but cannot be read (one line).
Result<std::optional<ResultSet>> loadFromStore(const std::filesystem::path& workspace);

}  // namespace kl::results
