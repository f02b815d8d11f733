// kernlens.loadProfile: show what an existing profile already says about the workspace.
//
// arguments: [path] or [{"path": path}] — an nsys SQLite export or a Kineto JSON trace (gzip
// allowed), a folder of ranks, or an Nsight Systems report (.nsys-rep/.qdrep: exported once with
// nsys — the `kernlens.nsysPath` setting, else KERNLENS_NSYS, else the installed one — and cached
// like the CLI's exports); loaded by the core loader the CLI uses (core/runner/profile_inputs.h);
// a relative path is resolved against the workspace root. Read and attributed on the
// pool (core/results/from_profile.h), then installed in the ResultStore (hints, lenses,
// diagnostics refresh). Result: {"files", "lines", "mappedOps", "unmappedOps", "source",
// "emulated", "runId"}; a bad file answers RequestFailed with the reader's one-line reason.
// A `.csv` path is an Nsight Compute report instead: its bound classes appear in hovers
// (result {"ncuLaunches"}).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "core/ncu/report.h"
#include "core/results/from_profile.h"
#include "core/runner/profile_inputs.h"
#include "core/support/safe_file.h"
#include "lsp/features/feature_context.h"
#include "lsp/protocol/commands.h"
#include "lsp/server/server.h"

namespace kl::lsp {

namespace fs = std::filesystem;

void registerLoadProfile(Server& server, std::shared_ptr<FeatureContext> ctx) {
  server.command<LoadProfileArgs>("kernlens.loadProfile", [&server, ctx](const LoadProfileArgs& args,
                                                                         Reply<json> reply) {
    fs::path p = server.workspace().resolve(args.path);

    if (p.extension() == ".csv") {  // Nsight Compute CSV: bound classes for hovers
      using Ncu = std::shared_ptr<Result<ncu::NcuReport>>;
      server.background<Ncu>(
          "kernlens.loadProfile", reply.token(),
          [p](const CancellationToken&) { return std::make_shared<Result<ncu::NcuReport>>(ncu::readNcuFile(p)); },
          [ctx, reply](Ncu r) {
            if (!r->ok()) return reply.error(ErrorCode::RequestFailed, r->error().message);
            size_t n = r->value().launches.size();
            ctx->results->setNcu(std::make_shared<const ncu::NcuReport>(std::move(r->value())));
            reply(json{{"ncuLaunches", n}});
          });
      return;
    }
    // Main loop: copy what the pool needs (root, open buffers); the pool scans and builds.
    const fs::path& root = server.workspace().root();
    std::map<std::string, std::string> open;
    for (const auto& d : server.documents().all())
      if (auto rel = server.workspace().relativePath(d->uri())) open[*rel] = d->text();

    // The loader's options: the environment's (read here, at the edge), the setting's nsys first.
    auto inputs = runner::ProfileInputOptions::fromEnvironment([](const char* name) { return std::getenv(name); });
    inputs.base = root;
    if (std::string nsys = server.settings().get<std::string>("nsysPath", ""); !nsys.empty()) inputs.nsys = nsys;

    using Out = std::shared_ptr<Result<results::ResultSet>>;
    server.background<Out>(
        "kernlens.loadProfile", reply.token(),
        [p, root, open, inputs](const CancellationToken& token) mutable -> Out {
          std::vector<std::string> files = root.empty() ? std::vector<std::string>{} : results::scanPythonFiles(root);
          for (const auto& [rel, text] : open) files.push_back(rel);
          std::sort(files.begin(), files.end());
          files.erase(std::unique(files.begin(), files.end()), files.end());
          results::PathMatcher matcher(std::move(files));
          results::BuildOptions o;
          o.matcher = &matcher;
          o.cancel = token;
          o.profilePath = p.string();
          // The snapshot: the saved file (what a profile ran), else the open buffer. Results are
          // then remapped onto the live buffer like stored ones.
          o.textOf = [&](const std::string& rel) -> std::optional<std::string> {
            if (!root.empty())
              if (auto text = readWorkspaceFile(root, rel)) return std::move(*text);
            if (auto it = open.find(rel); it != open.end()) return it->second;
            return std::nullopt;
          };
          // An Nsight Systems report is read through its cached SQLite export (made once).
          inputs.cancel = token;
          auto model = runner::loadProfileModel({p}, inputs);
          if (!model) return std::make_shared<Result<results::ResultSet>>(model.error());
          return std::make_shared<Result<results::ResultSet>>(results::buildFromProfile(*model, o));
        },
        [&server, ctx, reply](Out out) {
          if (!out->ok()) {
            if (out->error().code == Error::Code::Cancelled) return reply(Error::cancelled());
            return reply.error(ErrorCode::RequestFailed, out->error().message);
          }
          results::ResultSet rs = std::move(out->value());
          size_t lines = 0;
          for (const auto& f : rs.files) lines += f.lines.size();
          json summary = {{"files", rs.files.size()},
                          {"lines", lines},
                          {"mappedOps", rs.totalOps - rs.unmapped.ops},
                          {"unmappedOps", rs.unmapped.ops},
                          {"source", results::attributionSourceName(rs.provenance.source)},
                          {"emulated", rs.provenance.emulated},
                          {"runId", rs.provenance.runId}};
          std::string msg = "kernlens: " + rs.provenance.profileFile + ": " + std::to_string(lines) + " lines in " +
                            std::to_string(rs.files.size()) + " files" +
                            (rs.provenance.emulated ? " (emulated GPU)" : "");
          if (rs.files.empty()) msg += " — no GPU work maps to files of this workspace";
          ctx->results->setResults(std::move(rs));
          server.logMessage(MessageType::Info, msg);
          reply(summary);
        });
  });
}

}  // namespace kl::lsp
