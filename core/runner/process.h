// Process control for profiling runs. kernlens forks a small supervisor (async-signal-safe code
// only) that starts its own session, becomes a child subreaper (PR_SET_CHILD_SUBREAPER) and forks
// the program (PR_SET_PDEATHSIG = SIGKILL). Nothing the program starts can outlive the run:
//  - timeout, cancellation (a cancel carrying a signal forwards it first) and a leader that exits
//    leaving processes behind: the supervisor stops ALL its descendants, also those that called
//    setsid or double-forked (SIGTERM, then SIGKILL after the grace period);
//  - kernlens itself dies (even SIGKILL): the supervisor sees its control pipe close and does the
//    same; if the supervisor is killed, the kernel kills the program.
// stdout/stderr go through pipes the supervisor drains into log files (capped); output lines are
// streamed to a callback while the program runs (the server sends them to the editor) by
// tailing those files; a chatty program never blocks.
//
// Thread-safety: runProcess may be called from any thread; the fork path only calls
// async-signal-safe functions (everything is prepared before fork()).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/result.h"

namespace kl::runner {

struct ProcessSpec {
  /// argv[0] is resolved through PATH (when it has no '/') before the fork.
  std::vector<std::string> argv;
  std::filesystem::path cwd;  // empty = inherit
  /// Variables set (or overridden) in the child's environment, on top of this process's.
  std::vector<std::pair<std::string, std::string>> env;
  /// Variables removed from the child's environment.
  std::vector<std::string> unsetEnv;
  /// Log files (appended; created when missing). Empty = /dev/null. The program writes into
  /// pipes that kernlens' supervisor drains into the files (it never blocks on them).
  std::filesystem::path stdoutPath, stderrPath;
  /// Per log file: output beyond this many bytes is discarded (a note marks the cut); 0 = none.
  uint64_t maxLogBytes = uint64_t{256} << 20;
  /// 0 = no timeout.
  std::chrono::milliseconds timeout{0};
  /// Between SIGTERM and SIGKILL when the group is stopped.
  std::chrono::milliseconds killGrace{2000};
  /// Called on the calling thread with each complete line appended to the logs while the child
  /// runs (and the rest at the end). `stream` is "stdout" or "stderr".
  std::function<void(std::string_view stream, std::string_view line)> onOutput;
  /// Called every poll tick (~20 ms) while the child runs; elapsed time since start.
  std::function<void(std::chrono::milliseconds elapsed)> onTick;
};

struct ProcessResult {
  int pid = 0;
  int exitCode = -1;  // the leader's exit status; -1 when killed by a signal
  int signal = 0;     // the signal that ended the leader, 0 if it exited
  bool timedOut = false;
  bool cancelled = false;
  /// Processes of the group that were still alive after the leader ended and were stopped.
  bool killedLeftovers = false;
  std::chrono::milliseconds wall{0};
  std::chrono::milliseconds timeoutLimit{0};  // the spec's timeout (for messages)
  bool ok() const { return exitCode == 0 && !timedOut && !cancelled; }
};

/// Runs the process to completion (or until timeout / cancellation, which stop the group and
/// are reported in the result, not as an error). Errors: the executable cannot be found or
/// executed (Error::NotFound / Error::Io with the reason), the log files cannot be opened.
Result<ProcessResult> runProcess(const ProcessSpec& spec, const CancellationToken& cancel = {});

/// Resolves `name` through PATH (or checks it when it contains '/'): the executable's path.
std::optional<std::filesystem::path> findExecutable(std::string_view name);

/// The last `maxLines` non-empty lines of a text file ("" when it cannot be read).
std::string tailLines(const std::filesystem::path& path, size_t maxLines);

/// Sends `sig` to every process whose command line (arguments joined by spaces) satisfies
/// `match` (used to stop the nsys agent that a hung `nsys profile` leaves behind, outside its
/// process group). Returns the number of processes signalled. Never signals this process.
int signalProcessesMatching(const std::function<bool(std::string_view cmdline)>& match, int sig);

/// "exit code 3", "killed by signal 9 (SIGKILL)", "timed out after 5.00 s", "cancelled".
std::string describe(const ProcessResult& r);

}  // namespace kl::runner
