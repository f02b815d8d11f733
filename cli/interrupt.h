// Interrupts of a CLI command that runs a program (SIGINT from Ctrl-C, SIGTERM, SIGHUP): the
// first signal cancels the returned token, carrying the signal, so the runner forwards it to the
// program's processes and stops them (SIGKILL after the grace period) and the run is recorded as
// interrupted; a second signal exits at once (the runner's supervisor still stops every process
// of the program when this process ends, however it ends).
#pragma once

#include <ostream>
#include <string_view>

#include "core/support/cancel.h"

namespace kl::cli {

/// Installs the handlers (once) and returns the token they cancel.
CancellationToken interruptToken();
/// The signal that interrupted this process, 0 when none.
int interruptSignal();
/// When a signal interrupted this process: prints "kernlens CMD: interrupted by SIGINT; the
/// program was stopped" and returns the exit status 128 + signal; else returns 0.
int interruptedExit(std::ostream& err, std::string_view command);

}  // namespace kl::cli
