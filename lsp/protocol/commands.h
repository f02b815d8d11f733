// The arguments and results of kernlens's workspace/executeCommand commands (the editor
// extensions send these; see docs/editor-features.md). Bound with Server::command<Arg>, which
// reads arguments[0]: a wrong type answers InvalidParams naming the JSON path
// ("arguments[0].range.start.line: expected an unsigned 32-bit integer").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lsp/protocol/protocol.h"

namespace kl::lsp {

/// Commands without arguments (kernlens.cancel, kernlens.clearResults, kernlens.clearRegions):
/// whatever arguments are sent are ignored.
struct NoArguments {};
bool fromJson(const json& j, NoArguments& out, JPath path);

/// kernlens.profileFunction [{uri, position}] (the function containing the position) or
/// [{uri, function}] (a qualified name).
struct ProfileFunctionArgs {
  std::string uri;
  std::optional<Position> position;
  std::string function;  // empty: the function at `position`
};
bool fromJson(const json& j, ProfileFunctionArgs& out, JPath path);
json toJson(const ProfileFunctionArgs& a);

/// kernlens.refineHere [{uri, range[, function]}]: the loop focused on the lines of `range`.
struct RefineHereArgs {
  std::string uri;
  Range range;
  std::string function;  // for titles; may be empty
};
bool fromJson(const json& j, RefineHereArgs& out, JPath path);
json toJson(const RefineHereArgs& a);

/// kernlens.keepAnnotations [] or [{uri}]: keep the run's ranges in every file, or in `uri`.
struct KeepAnnotationsArgs {
  std::optional<std::string> uri;
};
bool fromJson(const json& j, KeepAnnotationsArgs& out, JPath path);

/// kernlens.exportRun [{format}]: "html" (default) or "perfetto".
struct ExportRunArgs {
  std::string format = "html";
};
bool fromJson(const json& j, ExportRunArgs& out, JPath path);

/// The client's answer to workspace/applyEdit.
struct ApplyEditResult {
  bool applied = false;
};
bool fromJson(const json& j, ApplyEditResult& out, JPath path);

/// The answer of profileFunction / refineHere: the run started.
struct RunStarted {
  std::string runKey;
  std::string function;
  std::string path;   // workspace-relative
  std::string lines;  // "A-B" (1-based) for refineHere, else empty
  std::string backend;
};
json toJson(const RunStarted& r);

/// kernlens.cancel's answer: whether a run was going.
struct CancelResult {
  bool cancelled = false;
};
json toJson(const CancelResult& r);

/// kernlens.loadProfile [path] or [{path}]: an nsys SQLite export, a Kineto JSON trace (gzip
/// allowed) or an Nsight Compute CSV; relative to the workspace root.
struct LoadProfileArgs {
  std::string path;
};
bool fromJson(const json& j, LoadProfileArgs& out, JPath path);

/// kernlens.loadRegions [{path, tags?, uri?, capacity?, allowOverflow?}] (CUTE regions).
struct LoadRegionsArgs {
  std::string path;                 // the buffer (.bin|.npy)
  std::optional<std::string> tags;  // a tag file
  std::optional<std::string> uri;   // the kernel's document (tag names from its TAG_ constants)
  std::optional<int64_t> capacity;  // events per unit for a raw .bin
  bool allowOverflow = false;
};
bool fromJson(const json& j, LoadRegionsArgs& out, JPath path);

}  // namespace kl::lsp
