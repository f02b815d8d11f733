// `kernlens info FILE...`: format, tool version, hardware, span, row counts, attribution.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/info.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json});
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeInfo(v);
  const auto& m = lp->model;
  if (c.format == Format::Json) return printJson(ctx.out, r, m);
  auto& o = ctx.out;
  o << "profile:   " << lp->label << "\n";
  o << "format:    " << r.format << (r.toolVersion.empty() ? "" : " " + r.toolVersion)
    << (r.schemaVersion.empty() ? "" : " (schema " + r.schemaVersion + ")") << (r.emulated ? "  EMULATED" : "") << "\n";
  if (r.emulated) noteEmulated(o, m);
  o << "ranks:     " << r.ranks << "\n";
  o << "span:      " << formatDuration(static_cast<double>(r.spanNs));
  if (v.trimmed()) o << "  (analysed window " << r.windowStartRel << " .. " << r.windowEndRel << " ns)";
  o << "\n";
  if (r.gpus.empty()) o << "gpus:      (no GPU table in the profile)\n";
  for (const auto& g : r.gpus) {
    o << "gpu:       " << (r.ranks > 1 ? "rank " + std::to_string(g.rank) + " " : "") << "device " << g.deviceId << "  "
      << m.str(g.name);
    if (g.smCount) o << "  " << g.smCount << " SMs";
    if (g.memoryBytes) o << "  " << formatBytes(static_cast<double>(g.memoryBytes));
    if (g.computeMajor) o << "  cc " << g.computeMajor << "." << g.computeMinor;
    o << "\n";
  }
  o << "processes: " << r.processes << "   threads: " << r.threads << "   devices with ops: " << r.devicesWithOps
    << "   streams: " << r.streams << "\n";
  o << "gpu ops:   " << r.kernels << " kernels (" << r.distinctKernelNames << " names), " << r.memcpys << " memcpy, "
    << r.memsets << " memset";
  if (r.graphs) o << ", " << r.graphs << " graph launches";
  o << "\n";
  o << "cpu:       " << r.apiCalls << " CUDA API calls (" << r.launchCalls << " launches, " << r.syncCalls
    << " syncs)\n";
  o << "ranges:    " << r.nvtxRanges << " NVTX ranges, " << r.nvtxMarks << " marks, " << r.annotations
    << " annotations, " << r.cpuOps << " cpu ops, " << r.pyFrames << " python frames\n";
  o << "attribution: " << r.attributed << " ops attributed, " << r.noLaunchCall << " no launch call in the capture, "
    << r.outsideRanges << " launched outside every range\n";
  for (size_t i = 0; i < r.rankClockOffsetNs.size() && r.ranks > 1; ++i)
    o << "rank " << i << " clock offset: " << r.rankClockOffsetNs[i] << " ns ("
      << (i < r.rankClockMethod.size() ? r.rankClockMethod[i] : "") << ")\n";
  for (const auto& w : r.warnings) o << "warning:   " << w << "\n";
  return 0;
}

Registrar reg{Command{"info", "what a profile holds: tool, hardware, span, counts",
                      "usage: kernlens info FILE... [--format text|json] [--gpu N] [--trim START END]\n\n"
                      "Prints the profile format and tool version, the GPUs, the time span, row counts\n"
                      "(kernels, copies, API calls, ranges) and how many GPU ops were attributed to a\n"
                      "range. Says EMULATED when the profile came from kernlens' emulate backend.\n\n" +
                          commonOptionsHelp(false),
                      profileOptions(), run}};

}  // namespace
}  // namespace kl::cli
