// `kernlens lsp`: the language server, LSP 3.17 over stdin/stdout; and serveStdio, what it shares
// with `kernlens mcp` (cli/stdio_server.h).
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

#include "cli/cli.h"
#include "cli/stdio_server.h"
#include "core/support/log.h"
#include "lsp/features/all.h"
#include "lsp/server/server.h"
#include "lsp/transport/stdio_transport.h"

namespace kl::cli {
namespace {

constexpr const char* kUsage =
    "usage: kernlens lsp [--log-file PATH] [--log-level debug|info|warn|error] [--threads N]\n"
    "\n"
    "Runs the kernlens language server: LSP 3.17 over stdin/stdout (Content-Length framing).\n"
    "Editors start it themselves; see docs/lsp.md and the editor setup guide.\n"
    "\n"
    "options:\n"
    "  --log-file PATH    append the server log to PATH instead of stderr\n"
    "  --log-level LEVEL  minimum level logged (default: info)\n"
    "  --threads N        background threads (default: cores - 1, at least 1);\n"
    "                     0 runs background work on the main loop, deterministically\n"
    "  --stdio            accepted and ignored (stdio is the only transport; many clients pass it)\n"
    "  --bench-baseline   also answer kernlens/benchHints, the bare round trip that\n"
    "                     tests/bench/lsp_bench.py measures the server against\n"
    "\n"
    "exit status: 0 after shutdown + exit, 1 when the client exits without shutdown or\n"
    "closes the input, 2 on bad usage.\n";

}  // namespace

std::vector<OptionSpec> serveOptions(std::vector<OptionSpec> extra) {
  std::vector<OptionSpec> o = {{"--log-file"}, {"--log-level"}, {"--threads"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

int serveStdio(const Args& args, lsp::ServerOptions options, lsp::Framing framing,
               const std::function<void(lsp::Server&)>& registerAll) {
  std::string level = args.choice("--log-level", {"info", "debug", "warn", "error"});
  unsigned hw = std::thread::hardware_concurrency();
  long long threads = args.getInt("--threads").value_or(hw > 1 ? hw - 1 : 1);
  if (threads < 0 || threads > 256) throw UsageError("--threads must be between 0 and 256");

  if (auto path = args.get("--log-file")) {
    auto file = std::make_shared<std::ofstream>(*path, std::ios::app);
    if (!*file) throw InputError("cannot open log file " + *path);
    kl::log::setSink([file](kl::log::Level l, std::string_view m) {  // called under log's lock
      *file << "[" << kl::log::levelName(l) << "] " << m << std::endl;
    });
  }
  kl::log::setMinLevel(level == "debug"   ? kl::log::Level::Debug
                       : level == "warn"  ? kl::log::Level::Warn
                       : level == "error" ? kl::log::Level::Error
                                          : kl::log::Level::Info);
  // A client that goes away must not kill us mid-write; the failed write is logged instead.
  std::signal(SIGPIPE, SIG_IGN);

  lsp::StdioTransport transport(STDIN_FILENO, stdout, {}, framing);
  options.threads = static_cast<unsigned>(threads);
  lsp::Server server(transport, options);
  registerAll(server);
  int rc = server.run();
  // `exit` or end of input: running work was cancelled and normally ends at once (a profiled
  // program gets SIGTERM). Should it not within 1.5 s, leave anyway: the runner's supervisor
  // stops the program when this process ends, and the next start closes its run as interrupted.
  std::thread([rc] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    kl::log::warn("server: background work did not stop within 1.5 s of exit; leaving");
    std::_Exit(rc);
  }).detach();
  return rc;
}

namespace {

int run(const Args& args, Context& ctx) {
  args.expectPositional(0, 0);
  (void)ctx;  // stdout belongs to the protocol from here on
  return serveStdio(args, lsp::ServerOptions{}, lsp::Framing::ContentLength, [&args](lsp::Server& server) {
    lsp::registerAllFeatures(server);
    if (args.has("--bench-baseline")) lsp::registerBenchBaseline(server);
  });
}

Registrar reg{Command{"lsp", "run the language server (LSP 3.17 over stdio)", kUsage,
                      serveOptions({{"--stdio", false}, {"--bench-baseline", false}}), run,
                      /*rawOutput=*/true}};

}  // namespace
}  // namespace kl::cli
