// `kernlens profile` multi-round, as one call for the CLI front end (cli/cmd_profile.cpp parses the
// flags and fills ProfileArgs; nothing here parses argv or writes JSON with a JSON library).
// Runs the loop with the runner's RoundRunner, records every round in .kernlens/kernlens.db, and
// prints text (annotated source) or the loop's JSON (planner/report.h) to `out`; progress goes to `err`
// (a bar when `progressBar`, one line per round otherwise).
#pragma once

#include <ostream>
#include <string>

#include "core/planner/loop.h"
#include "core/runner/round_runner.h"

namespace kl::planner {

struct ProfileArgs {
  runner::RunConfig run;          // workspace, entry, cwd, backend, launch, python, probe dir...
  std::string focus;              // "FILE::QUALNAME" ("" when not given)
  std::string lines;              // "FILE:A-B"
  std::string kernel;             // regex
  std::string strategy = "edits"; // edits | lines
  std::string harness = "off";    // off | auto | always
  std::string harnessFactory;     // "module:function"
  int rounds = 8;
  std::string format = "text";    // text | json
  bool progressBar = false;
  bool baseline = true;           // one uninstrumented run (wall-time overhead)
  bool discovery = true;          // one call-discovery run (follow the calls that ran)
  bool store = true;              // record rounds in .kernlens/kernlens.db
  double maxPushesPerLaunch = 4.0;
  double maxWallOverhead = 0.5;
};

/// What a front end hears while the loop runs (all optional; called on the running thread).
struct ProfileHooks {
  LoopCallbacks loop;               // per round (progress) and per decision (log)
  runner::ProgressFn progress;      // within a round (phases of the run)
  runner::OutputFn output;          // the profiled program's stdout/stderr lines
};

/// Runs the loop for `args` (its format/progressBar are ignored), recording rounds in the store
/// when args.store; the executors' store runs are finished (ok / cancelled / failed). Error::Invalid
/// = bad usage; other errors = the run could not start.
Result<LoopResult> runProfile(const ProfileArgs& args, const ProfileHooks& hooks,
                              const CancellationToken& cancel = {});

/// Exit status: 0 done (converged or not: the output says which), 1 the run failed (one line on
/// `err`), 2 bad usage (one line on `err`).
int profileCommand(const ProfileArgs& args, std::ostream& out, std::ostream& err,
                   const CancellationToken& cancel = {});

/// Builds the LoopConfig from ProfileArgs (validates the focus flags). Error::Invalid = usage.
Result<LoopConfig> loopConfigFrom(const ProfileArgs& args);

}  // namespace kl::planner
