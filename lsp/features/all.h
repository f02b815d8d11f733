// The feature list: registerAllFeatures(server) binds every LSP feature (one file each in
// lsp/features/<feature>.cpp) to a server. The CLI, the transcript tests and the fuzzer call it.
#pragma once

namespace kl::lsp {
class Server;
/// Registers every feature's methods, commands, capabilities and hooks. Call once, before the
/// server reads its first message.
void registerAllFeatures(Server& server);
}  // namespace kl::lsp
