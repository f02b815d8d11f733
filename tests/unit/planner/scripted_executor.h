// A scripted RoundExecutor and the loop-case format the loop unit tests are written in
// (tests/data/loop/*.loop; no Python, no profiler: each round's profile is synthesised).
//
// The executor instruments the requested ranges exactly as the runner does (nvtx::instrumentFile
// on the workspace files) and then "runs" a TRACE: a list of steps, each a call stack of source
// lines (outermost first) and the kernels that step launches. A step's open ranges are, per stack
// depth, the placed ranges of that frame's file whose original lines cover the frame's line. A
// range stays open from one step to the next while it covers the frame at its depth and every
// outer frame is unchanged (so a function called twice gives two invocations); every repetition
// of the trace closes everything. One thread, one process, one launch call per kernel.
//
// Case file (one case per file; '#' starts a comment; blank lines ignored):
//   file m.py                 the file's text follows, each line indented by two spaces
//     def f(x): ...
//   entry python main.py      the entry command (default "python main.py")
//   focus m.py::f | lines m.py:3-5 | kernel REGEX [m.py::f]
//   rounds N                  round budget (default 8)
//   strategy edits|lines      harness off|auto|always      budget PUSHES_PER_LAUNCH
//   wall BASELINE_MS ROUND_MS the wall times the executor reports (default 100 100)
//   discovery on|off          the call-discovery pass (default off: the loop resolves calls
//                             statically); the discovery run writes the `calls` block, if any
//   calls                     the discovery pass's calls file follows, indented, fields separated
//                             by spaces (written with tabs; core/planner/observed_calls.h)
//   baseline on|off           the uninstrumented baseline run (default on)
//   eager PUSHES              the push budget for ranges placed ahead (Policy::maxEagerPushes)
//   trace [xN] [harness]      steps follow, indented: FRAME[>FRAME...] KERNELS
//                             FRAME = file:line (1-based); KERNELS = k1,k2 | alternatives per
//                             repetition a,b|c (repetition i uses alternative i % n) | "-" none;
//                             a kernel may carry its duration: gemm@250 (default 10 ns).
//                             "harness": the trace of the generated harness entry.
//   fail ROUND MESSAGE        the run of instrumented round ROUND (0-based) fails
//   cancel ROUND              the loop is cancelled while round ROUND runs
//   cancel start              the loop is cancelled before it starts
//   expect stop converged|round_budget|cancelled|failed
//   expect rounds N
//   expect runs N             run() calls in all (discovery and baseline included)
//   expect atomic FILE:A REASON [TEXT]  the line is atomic for REASON (as atomicReasonName spells
//                             it), its note contains TEXT
//   expect line FILE:A[-B] [atomic] KERNEL,KERNEL...   (the lines are checked exactly: every
//                             result line must be expected, with its kernel names)
//   expect variants FILE:A N   the line launched N distinct kernel sets (dynamic dispatch)
//   expect refusal TEXT       a refusal (budget) containing TEXT, e.g. "m.py:2-3"
//   expect unmapped NAME REASON
//   expect note TEXT          a note containing TEXT
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/planner/executor.h"
#include "core/planner/loop.h"
#include "core/support/cancel.h"

namespace kl::test {

struct TraceStep {
  std::vector<std::pair<std::string, uint32_t>> frames;                    // (file, 1-based line), outermost first
  std::vector<std::vector<std::pair<std::string, int64_t>>> alternatives;  // (kernel, ns) per alternative
};

struct Trace {
  int repeat = 1;
  std::vector<TraceStep> steps;
};

struct ExpectedLine {
  std::string file;
  uint32_t line = 0, endLine = 0;
  bool atomic = false;
  std::vector<std::string> kernels;  // sorted
};

struct LoopCase {
  std::string name;
  std::map<std::string, std::string> files;
  std::string entry = "python main.py";
  std::vector<std::string> focus;  // the words after `focus`
  int rounds = 8;
  planner::Strategy strategy = planner::Strategy::Edits;
  planner::HarnessMode harness = planner::HarnessMode::Off;
  std::optional<double> pushesPerLaunch;
  int64_t baselineMs = 100, roundMs = 100;
  bool discovery = false;
  bool baseline = true;
  std::optional<std::string> calls;  // the discovery pass's calls file
  std::optional<uint64_t> eagerPushes;
  bool cancelAtStart = false;
  Trace trace;
  std::optional<Trace> harnessTrace;
  std::map<int, std::string> failures;  // round -> message
  std::optional<int> cancelRound;
  // Expectations.
  std::optional<std::string> stop;
  std::optional<int> expectRounds;
  std::optional<int> expectRuns;
  struct ExpectedAtomic {
    std::string where;  // FILE:A
    attribution::AtomicReason reason = attribution::AtomicReason::None;
    std::string noteText;
  };
  std::vector<ExpectedAtomic> atomicReasons;
  std::optional<std::vector<ExpectedLine>> lines;
  std::vector<std::pair<std::string, std::string>> unmapped;
  std::vector<std::string> notes;
  std::vector<std::string> refusals;
  std::vector<std::pair<std::string, size_t>> variants;  // ("file:line", count)
};

/// Parses a case; Error::Invalid names the line.
Result<LoopCase> parseLoopCase(const std::string& text, const std::string& name);

/// What a scripted run did (for assertions beyond the result).
struct ScriptLog {
  int runs = 0;                                   // run() calls, baseline included
  std::vector<attribution::RangeTable> recorded;  // record() tables, in order
  std::vector<std::string> entries;               // entries executors were made for
  std::vector<std::string> events;   // "run I" (run() of round index I, -1 the baseline), "recorded I" (onRecorded)
  std::vector<int> annotatedRounds;  // annotate() calls: the round index
  std::vector<attribution::LineResult> annotated;  // ... and the lines it was given
};

class ScriptedExecutor : public planner::RoundExecutor {
 public:
  ScriptedExecutor(const LoopCase& c, const Trace& trace, std::filesystem::path workspace, std::filesystem::path runDir,
                   ScriptLog& log, CancellationSource* cancel)
      : case_(c),
        trace_(trace),
        workspace_(std::move(workspace)),
        runDir_(std::move(runDir)),
        log_(log),
        cancel_(cancel) {}
  Result<planner::RoundOutcome> run(const planner::RoundRequest& req, const CancellationToken& cancel) override;
  Result<void> record(const planner::RoundRequest& req, const attribution::RangeTable& table,
                      const CancellationToken& cancel) override;
  Result<void> annotate(int round, const std::vector<attribution::LineResult>& lines) override;
  std::string backendName() const override { return "scripted"; }
  std::filesystem::path runDir() const override { return runDir_; }

 private:
  const LoopCase& case_;
  const Trace& trace_;
  std::filesystem::path workspace_, runDir_;
  ScriptLog& log_;
  CancellationSource* cancel_;
};

/// Writes the case's files into `workspace` and runs the loop over scripted executors.
Result<planner::LoopResult> runLoopCase(const LoopCase& c, const std::filesystem::path& workspace, ScriptLog& log);

}  // namespace kl::test
