// `kernlens map PROFILE [--root DIR]`: what a profile already says about the workspace's source
// lines — from `kl:` ranges, or from the Python stacks of a PyTorch trace — without running
// anything (the CLI twin of the editor's kernlens.loadProfile; core/results/from_profile.h).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.h"
#include "cli/lines_json.h"
#include "cli/profile_common.h"
#include "core/attribution/op_table.h"
#include "core/profile/reader.h"
#include "core/results/format.h"
#include "core/results/from_profile.h"
#include "core/results/from_store.h"
#include "core/results/line_view.h"
#include "core/results/path_match.h"
#include "core/support/safe_file.h"

namespace kl::cli {
namespace {

namespace fs = std::filesystem;

/// A trace without source information but with ATen ops: per top-level forward op.
int printOps(const profile::ProfileModel& model, const std::string& path, Format format, Context& ctx) {
  auto t = orFail(attribution::tabulateOps(model));
  if (format == Format::Json) {
    nlohmann::json j = {{"source", "forward-ops"},
                        {"emulated", t.emulated},
                        {"ops", nlohmann::json::array()},
                        {"unmapped", {{"ops", t.unmappedOps}, {"gpu_ns", t.unmappedGpuNs}}}};
    for (const auto& o : t.ops) {
      nlohmann::json ks = nlohmann::json::array();
      for (const auto& k : o.kernels)
        ks.push_back({{"name", k.fullName},
                      {"launches", k.launches},
                      {"gpu_ns", k.gpuNs},
                      {"backward", k.backward()},
                      {"pass", attribution::passName(k.pass)}});
      j["ops"].push_back({{"op", o.name},
                          {"forward_owner", !o.noForwardOwner},
                          {"launches", o.launches},
                          {"gpu_ns", o.gpuNs},
                          {"backward_launches", o.backwardLaunches},
                          {"backward_gpu_ns", o.backwardGpuNs},
                          {"kernels", std::move(ks)}});
    }
    ctx.out << j.dump(1) << "\n";
    return 0;
  }
  ctx.out << "mapped per forward op (no kl: ranges, no Python stacks) in " << path
          << (t.emulated ? "  [EMULATED: kernels and times modelled, not measured]" : "") << "\n\n";
  for (const auto& o : t.ops)
    ctx.out << "  " << o.name << (o.noForwardOwner ? "  (backward, no forward op)" : "") << "    # "
            << formatPassTime(o.gpuNs, o.noForwardOwner ? 0 : o.backwardGpuNs) << " · "
            << formatCount(o.launches, "launch", "launches") << "\n";
  if (t.unmappedOps)
    ctx.out << "\nunmapped: " << t.unmappedOps << " GPU ops, " << formatDuration(t.unmappedGpuNs)
            << " (no ATen op around the launch)\n";
  return 0;
}

/// --kernel, --file, --line: which lines to show (FILE:N for --line).
LinesFilter filterFrom(const Args& args) {
  LinesFilter f;
  f.kernelPattern = args.getOr("--kernel", "");
  f.file = args.getOr("--file", "");
  if (auto l = args.get("--line")) {
    auto colon = l->rfind(':');
    long long n = 0;
    try {
      n = colon == std::string::npos ? -1 : std::stoll(l->substr(colon + 1));
    } catch (const std::exception&) {
      n = -1;
    }
    if (colon == std::string::npos || colon == 0 || n < 1 || n > 100000000)
      throw UsageError("--line FILE:N: expected a file and a 1-based line number, got " + *l);
    if (!f.file.empty()) throw UsageError("give one of --file and --line");
    f.file = l->substr(0, colon);
    f.line = static_cast<uint32_t>(n);
  }
  return f;
}

/// The latest stored run of the workspace.
results::ResultSet storedResults(const fs::path& root) {
  auto stored = orFail(results::loadFromStore(root));
  if (!stored)
    throw InputError("no stored run in " + (root / ".kernlens" / "kernlens.db").string() +
                     ": profile first (kernlens profile, or the MCP tool profile)");
  return std::move(*stored);
}

int run(const Args& args, Context& ctx) {
  bool fromStore = args.has("--store");
  args.expectPositional(fromStore ? 0 : 1, fromStore ? 0 : 1);
  Format format = args.format({Format::Text, Format::Json});
  fs::path root = args.getOr("--root", ".");
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw InputError("--root " + root.string() + ": not a directory");
  root = fs::absolute(root, ec).lexically_normal();
  LinesFilter filter = filterFrom(args);

  std::string from;
  results::ResultSet all;
  if (fromStore) {
    all = storedResults(root);
    from = "run " + all.provenance.runId;
  } else {
    results::PathMatcher matcher(results::scanPythonFiles(root));
    results::BuildOptions o;
    o.matcher = &matcher;
    o.profilePath = from = args.positional()[0];
    o.textOf = [&](const std::string& rel) -> std::optional<std::string> {
      auto text = readWorkspaceFile(root, rel);  // a symlink out of the workspace is not followed
      if (!text) return std::nullopt;
      return std::move(*text);
    };
    auto model = readModel({args.positional()[0]}, ctx.err);
    if (!results::mapsToSource(model) &&
        std::any_of(model.ranges.begin(), model.ranges.end(),
                    [](const profile::Range& r) { return r.kind == profile::RangeKind::CpuOp; })) {
      if (!filter.kernelPattern.empty() || !filter.file.empty())
        throw InputError(o.profilePath +
                         ": no kl: ranges and no Python stacks, so no source lines to select (kernlens map PROFILE "
                         "lists its forward ops)");
      return printOps(model, o.profilePath, format, ctx);
    }
    all = orFail(results::buildFromProfile(model, o));
  }
  auto rs = filterLines(all, filter);

  if (format == Format::Json) {
    ctx.out << linesJson(rs).dump(1) << "\n";
    return 0;
  }
  ctx.out << "mapped from " << results::attributionSourceName(rs.provenance.source) << " in " << from
          << (rs.provenance.emulated ? "  [EMULATED: kernels and times modelled, not measured]" : "") << "\n";
  for (const auto& f : rs.files) {
    ctx.out << "\n== " << f.path << "\n";
    std::vector<std::string_view> lines;
    std::string_view text = f.snapshot;
    for (size_t p = 0; p <= text.size();) {
      size_t e = text.find('\n', p);
      if (e == std::string_view::npos) e = text.size();
      lines.push_back(text.substr(p, e - p));
      p = e + 1;
    }
    for (const auto& l : f.lines) {
      std::string src = l.line < lines.size() ? std::string(lines[l.line]) : std::string();
      while (!src.empty() && (src.back() == '\r' || src.back() == ' ')) src.pop_back();
      const results::LineView view = results::describeLine(rs, f, l);  // the editor's words
      ctx.out << "  " << l.line + 1 << " | " << src << "    # " << view.text.time << " · " << view.text.launches;
      size_t shown = 0;
      for (const auto& k : l.kernels) {
        if (shown++ == 3) {
          ctx.out << ", +" << l.kernels.size() - 3 << " more";
          break;
        }
        ctx.out << (shown == 1 ? " · " : ", ") << k.name
                << (k.backward() ? " (" + std::string(attribution::passName(k.pass)) + ")" : "") << " x" << k.launches;
      }
      ctx.out << "\n";
    }
  }
  if (rs.unmapped.ops)
    ctx.out << "\nunmapped: " << rs.unmapped.ops << " GPU ops, " << formatDuration(rs.unmapped.gpuNs)
            << " (no workspace line)\n";
  return 0;
}

Registrar reg{Command{"map",
                      "map an existing profile's GPU ops to workspace source lines",
                      "usage: kernlens map (PROFILE | --store) [--root DIR] [--kernel RE] [--file F | --line F:N]\n"
                      "                    [--format text|json]\n\n"
                      "Shows what a profile already says about the source lines of the workspace\n"
                      "(DIR, default .), without running anything: from kernlens' kl: NVTX ranges, or\n"
                      "from the python_function stacks of a PyTorch-profiler trace (paths matched to\n"
                      "workspace files by suffix). PROFILE: an nsys SQLite export (or a .nsys-rep, exported\n"
                      "once with the installed nsys and cached) or a Kineto JSON.\n"
                      "Backward kernels go to the forward line (or, in a trace with neither, the\n"
                      "top-level forward ATen op, listed per op) that created their autograd node,\n"
                      "marked backward (time shown as \"fwd + bwd\").\n"
                      "  --store       the latest run stored in DIR/.kernlens/kernlens.db instead of a profile\n"
                      "  --kernel RE   only lines launching a kernel whose name matches RE (only those kernels)\n"
                      "  --file F      only the lines of workspace file F;  --line F:N  only line N of F\n"
                      "JSON: the kernlens/lines@1 document (docs/agents.md).\n"
                      "Exit status: 0 success, 1 bad input, 2 bad usage.\n",
                      {{"--root"}, {"--format"}, {"--store", false}, {"--kernel"}, {"--file"}, {"--line"}},
                      run}};

}  // namespace
}  // namespace kl::cli
