// What a front end asks the convergence loop for, as values: `kernlens profile` (cli/cmd_profile.cpp
// turns its flags into a ProfileRequest) and the editor's profile commands
// (lsp/features/profile_run.cpp) build one; nothing here parses a command line or a "FILE::NAME"
// string, prints, or reads the working directory: a relative path is relative to the workspace.
//
//   ProfileRequest req;
//   req.run.workspace = root; req.run.entry = "python train.py";
//   req.file = "model.py"; req.function = "Net.forward";
//   auto checked = checkRequest(req);           // the field at fault, or the loop's configuration
//   if (!checked.config) report(checked.error.field, checked.error.message);
//   auto res = runProfile(req, hooks, cancel);  // every round recorded in .kernlens/kernlens.db
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "core/planner/loop.h"
#include "core/runner/round_runner.h"

namespace kl::planner {

/// 1-based inclusive lines of a file.
struct FocusLines {
  uint32_t first = 0;
  uint32_t last = 0;
};

struct ProfileRequest {
  /// workspace (absolute), entry, cwd (absolute; empty = the workspace), backend, launch, python,
  /// probe dir, timeout, run key. focusPath/focusFunction are filled by runProfile from the focus.
  runner::RunConfig run;
  /// The focus: a function of `file`, or `lines` of `file`, and/or a kernel pattern.
  std::filesystem::path file;       // absolute, or relative to run.workspace; empty = none
  std::string function;             // qualified name in `file` ("Net.forward"); empty = none
  std::optional<FocusLines> lines;  // instead of `function`: these lines of `file`
  std::string kernelPattern;        // ECMAScript regex; only ranges launching a match are refined
  Strategy strategy = Strategy::Edits;
  HarnessMode harness = HarnessMode::Off;
  std::string harnessFactory;       // "module:function" building the object a method needs
  int rounds = 8;                   // instrumented rounds at most, 1..64
  bool baseline = true;             // one uninstrumented run (wall-time overhead)
  bool discovery = true;            // one call-discovery run (follow the calls that ran)
  bool store = true;                // record rounds in <workspace>/.kernlens/kernlens.db
  double maxPushesPerLaunch = 4.0;  // > 0
  double maxWallOverhead = 0.5;     // >= 0
};

/// The request field a refusal is about; front ends name it in their own terms (a flag, a setting,
/// the editor's selection).
enum class RequestField {
  Workspace,
  Entry,
  Cwd,
  File,
  Function,
  Lines,
  KernelPattern,
  Harness,
  HarnessFactory,
  Rounds,
  MaxPushesPerLaunch,
  MaxWallOverhead
};
/// "workspace", "entry", "cwd", "file", "function", "lines", "kernel_pattern", "harness",
/// "harness_factory", "rounds", "max_pushes_per_launch", "max_wall_overhead".
const char* requestFieldName(RequestField f);

/// Why a request was refused: the field and a reason that names no front end's spelling
/// ("must be between 1 and 64", "model.py: no such file in the workspace").
struct RequestError {
  RequestField field = RequestField::Entry;
  std::string message;
};

struct CheckedRequest {
  std::optional<LoopConfig> config;  // the loop's configuration when the request is accepted
  RequestError error;                // else why not
};

/// Validates `req` (no run, no store) and builds the loop's configuration: the focus file must be
/// a regular file inside the workspace (made workspace-relative), a function or lines need a file,
/// lines are not combined with a function or a kernel pattern, a harness needs a function.
CheckedRequest checkRequest(const ProfileRequest& req);

/// What a front end hears while the loop runs (all optional; called on the running thread).
struct ProfileHooks {
  LoopCallbacks loop;           // per round (progress) and per decision (log)
  runner::ProgressFn progress;  // within a round (phases of the run)
  runner::OutputFn output;      // the profiled program's stdout/stderr lines
};

/// Runs the loop for `req`, recording rounds in the store when req.store; the executors' store
/// runs are finished (ok / cancelled / failed). A refused request is Error::Invalid
/// "<field name>: <reason>" (front ends call checkRequest first to word it themselves); other
/// errors: the run could not start.
Result<LoopResult> runProfile(const ProfileRequest& req, const ProfileHooks& hooks,
                              const CancellationToken& cancel = {});

}  // namespace kl::planner
