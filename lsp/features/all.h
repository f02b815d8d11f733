// The feature list: registerAllFeatures(server) binds every LSP feature (one file each in
// lsp/features/<feature>.cpp) to a server. The CLI, the transcript tests and the fuzzer call it.
#pragma once

#include <memory>

namespace kl::lsp {
class Server;
struct FeatureContext;

/// Registers every feature's methods, commands, capabilities and hooks. Call once, before the
/// server reads its first message.
void registerAllFeatures(Server& server);

/// kernlens/benchHints, the benchmark's bare round trip (lsp/features/bench_baseline.cpp): not a
/// feature; only `kernlens lsp --bench-baseline` registers it.
void registerBenchBaseline(Server& server);

// Each feature's registration, defined in its own file (one line each; keep sorted). Editor
// features share one FeatureContext (lsp/features/feature_context.h).
void registerCodeActions(Server&);
void registerCodeLens(Server&, std::shared_ptr<FeatureContext>);
void registerDiagnostics(Server&, std::shared_ptr<FeatureContext>);
void registerHover(Server&, std::shared_ptr<FeatureContext>);
void registerInlayHints(Server&, std::shared_ptr<FeatureContext>);
void registerKeepAnnotations(Server&, std::shared_ptr<FeatureContext>);
void registerLoadProfile(Server&, std::shared_ptr<FeatureContext>);
void registerProfileRun(Server&, std::shared_ptr<FeatureContext>);
void registerRunView(Server&, std::shared_ptr<FeatureContext>);
}  // namespace kl::lsp
