// buildFromProfile: what a profile already says about source lines, as a ResultSet.
//
// Two sources, picked from the profile's content:
//  - "kl-ranges": the profile has NVTX ranges / record_function annotations named
//    kl:<path>:<first>-<last>[:<label>] (kernlens' own, nvtx/naming.h). Every GPU op goes to
//    its innermost kl: range (attribution rules, DESIGN §5); the range's path is matched to a
//    workspace file (exact relative path, else by suffix) and its first line is the result line.
//  - "python-stacks": no kl: ranges but Kineto python_function frames. Every GPU op goes to the
//    innermost frame of its launch stack whose file is a workspace file (matched by suffix);
//    the frame's recorded line is the result line (PyTorch records a frame's FIRST line, so
//    this is usually the `def` line of the innermost workspace function; multi-line statements
//    are shown on their first line).
// GPU ops that reach no workspace line are counted in ResultSet::unmapped.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "core/profile/model.h"
#include "core/results/path_match.h"
#include "core/results/result_set.h"
#include "core/support/cancel.h"
#include "core/support/result.h"

namespace kl::results {

struct BuildOptions {
  /// Workspace files for path matching (workspace-relative).
  const PathMatcher* matcher = nullptr;
  /// The current text of a workspace file (open buffer or disk), stored as the snapshot and
  /// used for statement and function spans; nullopt when unreadable.
  std::function<std::optional<std::string>(const std::string& relPath)> textOf;
  std::string profilePath;  // for provenance
  CancellationToken cancel;
};

/// Whether the profile says anything about source lines: it has kl: ranges or Python frames.
bool mapsToSource(const profile::ProfileModel& model);

/// Error::Invalid ("<file>: no kl: ranges and no python_function stacks: nothing maps to
/// source lines") when the profile has neither source; Error::Cancelled when cancelled. The
/// model comes from the one profile loader (core/runner/profile_inputs.h).
Result<ResultSet> buildFromProfile(const profile::ProfileModel& model, const BuildOptions& opts);

}  // namespace kl::results
