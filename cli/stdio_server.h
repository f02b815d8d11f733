// Serving a JSON-RPC server on stdin/stdout: what `kernlens lsp` and `kernlens mcp` share — the
// log options, SIGPIPE ignored, the stdio transport, the main loop, and the exit watchdog
// (defined in cli/cmd_lsp.cpp).
#pragma once

#include <functional>
#include <vector>

#include "cli/cli.h"
#include "lsp/server/server.h"
#include "lsp/transport/framing.h"

namespace kl::cli {

/// --log-file PATH, --log-level LEVEL, --threads N (+ `extra`).
std::vector<OptionSpec> serveOptions(std::vector<OptionSpec> extra = {});

/// Runs a server over stdio until end of input (or LSP's `exit`), with `registerAll` binding its
/// methods; returns the exit status. `options.threads` comes from --threads.
int serveStdio(const Args& args, lsp::ServerOptions options, lsp::Framing framing,
               const std::function<void(lsp::Server&)>& registerAll);

}  // namespace kl::cli
