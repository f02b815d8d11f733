// textDocument/publishDiagnostics for open documents with results (source "kernlens";
// severities Information (3) and Hint (4) only, never errors or warnings):
//   Hint, on a range:  "range covers N distinct kernels — refine"   (code "refine") when a result
//                       spans several statements / a compound statement and holds N > 1 kernels
//   Information, line 0: "K kernels unmapped (T, S % of GPU time): a, b, …"   (code "unmapped")
//   Information, line 0: "results are from an older version of this file …" (code "stale")
// Published at once after every results change, and after edits settle: a document change
// only marks the document; a main-loop deadline (Scheduler::Deadline) publishes the marked
// documents kSettle after the last change, or kMaxWait after the first unpublished one while
// typing goes on. So a keystroke never pays for diagnostics (nor for the exact remap from the
// snapshot, ResultStore::settle, done just before publishing). An empty list clears.
#include <chrono>
#include <set>

#include "core/results/format.h"
#include "lsp/features/feature_context.h"
#include "lsp/server/scheduler.h"
#include "lsp/server/server.h"

namespace kl::lsp {

namespace {

constexpr auto kInformation = DiagnosticSeverity::Information;
/// Quiet time after the last edit before diagnostics are published.
constexpr std::chrono::milliseconds kSettle{200};
/// Longest a changed document waits while edits keep coming.
constexpr std::chrono::milliseconds kMaxWait{1000};
constexpr auto kHint = DiagnosticSeverity::Hint;

Diagnostic diagnostic(const Range& r, DiagnosticSeverity severity, const std::string& code, std::string message) {
  return {r, severity, code, "kernlens", std::move(message)};
}

void publish(Server& server, ResultStore& store, const DocumentPtr& doc) {
  if (!doc) return;
  std::vector<Diagnostic> diags;
  const auto* dr = store.forDocument(doc);
  if (dr && dr->hasResults && store.results()) {
    const auto& rs = *store.results();
    Range top = doc->lineRange(0, 0);
    for (const auto& l : dr->file.file.lines)
      if (l.refinable && l.distinctKernels() > 1)
        diags.push_back(diagnostic(doc->lineRange(l.line, l.line), kHint, "refine",
                                   "range covers " + std::to_string(l.distinctKernels()) +
                                       " distinct kernels — refine to split them by line"));
    if (rs.unmapped.distinctKernels > 0) {
      std::string msg =
          std::to_string(rs.unmapped.distinctKernels) + (rs.unmapped.distinctKernels == 1 ? " kernel" : " kernels") +
          " unmapped (" + formatDuration(rs.unmapped.gpuNs) +
          (rs.totalGpuNs > 0
               ? ", " + formatShare(static_cast<double>(rs.unmapped.gpuNs) / static_cast<double>(rs.totalGpuNs)) +
                     " of GPU time"
               : std::string()) +
          ") — launched outside every profiled range";
      for (size_t i = 0; i < rs.unmapped.topKernels.size() && i < 3; ++i)
        msg += (i ? ", " : ": ") + rs.unmapped.topKernels[i];
      diags.push_back(diagnostic(top, kInformation, "unmapped", msg));
    }
    if (dr->file.stale)
      diags.push_back(
          diagnostic(top, kInformation, "stale",
                     "results are from an older version of this file" +
                         (dr->file.dropped ? " (" + std::to_string(dr->file.dropped) + " dropped on changed lines)"
                                           : std::string()) +
                         " — profile again to update"));
  }
  server.notify("textDocument/publishDiagnostics",
                toJson(PublishDiagnosticsParams{doc->uri(), doc->version(), std::move(diags)}));
}

}  // namespace

void registerDiagnostics(Server& server, std::shared_ptr<FeatureContext> ctx) {
  // Remember which documents got diagnostics so that clearing results clears them too.
  auto published = std::make_shared<std::set<std::string>>();
  // Weak: publishDoc is also one of the store's own change hooks (a strong capture would be a
  // cycle).
  std::weak_ptr<ResultStore> weakStore = ctx->results;
  auto publishDoc = [&server, weakStore, published](const DocumentPtr& doc) {
    auto store = weakStore.lock();
    if (!store) return;
    const auto* dr = store->forDocument(doc);
    bool has = dr && dr->hasResults && store->results();
    if (!has && !published->count(doc->uri())) return;  // nothing to say, nothing to clear
    publish(server, *store, doc);
    if (has)
      published->insert(doc->uri());
    else
      published->erase(doc->uri());
  };
  // Documents changed since their last publication, and when the first of those changes came.
  struct Pending {
    std::set<std::string> uris;
    std::chrono::steady_clock::time_point since;
  };
  auto pending = std::make_shared<Pending>();
  std::shared_ptr<Scheduler::Deadline> deadline = server.scheduler().deadline();
  auto flush = [&server, weakStore, pending, publishDoc] {
    auto uris = std::exchange(pending->uris, {});
    for (const auto& uri : uris) {
      auto doc = server.documents().get(uri);
      if (!doc) continue;
      if (auto store = weakStore.lock()) store->settle(doc);
      publishDoc(doc);
    }
  };
  ctx->results->onChange([&server, publishDoc, pending, deadline] {
    pending->uris.clear();  // published now, with the new results
    deadline->cancel();
    for (const auto& d : server.documents().all()) publishDoc(d);
  });
  server.onDocumentChanged([pending, deadline, flush](const DocumentPtr& doc) {
    auto now = std::chrono::steady_clock::now();
    if (pending->uris.empty()) pending->since = now;
    pending->uris.insert(doc->uri());
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - pending->since);
    deadline->arm(std::max(std::chrono::milliseconds(0), std::min(kSettle, kMaxWait - waited)), flush);
  });
  server.onDocumentClosed([published, pending](const std::string& uri) {
    published->erase(uri);
    pending->uris.erase(uri);
  });
}

}  // namespace kl::lsp
