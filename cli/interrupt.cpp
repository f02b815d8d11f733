#include "cli/interrupt.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace kl::cli {
namespace {

CancellationSource& source() {
  static CancellationSource s;
  return s;
}
std::atomic<int> gSignal{0};

void onSignal(int sig) {
  int expected = 0;
  if (!gSignal.compare_exchange_strong(expected, sig)) ::_exit(128 + sig);  // the second one
  source().cancel(sig);
}

}  // namespace

CancellationToken interruptToken() {
  static std::once_flag once;
  std::call_once(once, [] {
    (void)source();
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &sa, nullptr);
  });
  return source().token();
}

int interruptSignal() { return gSignal.load(); }

int interruptedExit(std::ostream& err, std::string_view command) {
  int sig = interruptSignal();
  if (!sig) return 0;
  const char* name = sigabbrev_np(sig);
  err << "kernlens " << command << ": interrupted by SIG" << (name ? name : "?") << "; the program was stopped\n";
  return 128 + sig;
}

}  // namespace kl::cli
