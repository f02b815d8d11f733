// `kernlens tree FILE...`: the range hierarchy with the GPU time and kernels under each node.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/tree.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

/// Indentation stops growing here; deeper lines show their level instead.
constexpr uint32_t kMaxIndent = 32;

void printLine(std::ostream& o, const analysis::TreeResult& r, const profile::ProfileModel& m,
               const analysis::TreeLine& line, int64_t total) {
  const auto& n = r.nodes[line.node];
  std::string indent(2 * std::min(line.level, kMaxIndent), ' ');
  if (line.level > kMaxIndent) indent += "[level " + std::to_string(line.level) + "] ";
  char share[32];
  std::snprintf(share, sizeof share, "%5.1f%%",
                total ? 100.0 * static_cast<double>(n.inclusiveNs) / static_cast<double>(total) : 0.0);
  o << share << "  " << indent << m.str(n.text);
  if (line.repeat > 1) o << " (x" << line.repeat << " nested)";
  o << "  [" << formatDuration(static_cast<double>(n.inclusiveNs)) << " incl, "
    << formatDuration(static_cast<double>(line.exclusiveNs)) << " excl, " << n.invocations << "x, " << n.ops << " ops]";
  if (line.childrenOmitted) o << " ...";
  o << "\n";
  for (const auto& k : line.kernels)
    o << "        " << indent << "  - " << m.str(k.name) << "  " << formatDuration(static_cast<double>(k.ns)) << " ("
      << k.count << "x)\n";
}

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json, Format::Csv});
  auto depth = args.getInt("--depth").value_or(0);
  auto kernels = args.getInt("--kernels").value_or(3);
  auto maxNodes = args.getInt("--max-nodes").value_or(2000);
  if (depth < 0 || kernels < 0 || maxNodes < 0) throw UsageError("--depth, --kernels and --max-nodes need values >= 0");
  // The tree reads op names, times and stacks only (and devices for --gpu).
  auto lp = loadProfile(c.files, ctx.err,
                        {.kernelDetails = false, .placement = c.scope.device.has_value(), .rangeStats = false});
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeTree(v);
  const auto& m = lp->model;
  if (c.format == Format::Json)
    return printJson(ctx.out, r, m, static_cast<uint32_t>(depth), static_cast<size_t>(kernels),
                     static_cast<size_t>(maxNodes));
  auto flat = analysis::flattenTree(r, m, static_cast<uint32_t>(depth), static_cast<size_t>(maxNodes),
                                    static_cast<size_t>(kernels));
  if (c.format == Format::Csv) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> path;  // the texts of the open lines, by level
    for (const auto& line : flat.lines) {
      const auto& n = r.nodes[line.node];
      path.resize(line.level);
      std::string text(m.str(n.text));
      if (line.repeat > 1) text += " (x" + std::to_string(line.repeat) + ")";
      path.push_back(text);
      std::string joined;
      for (size_t i = 0; i < path.size(); ++i) joined += (i ? " > " : "") + path[i];
      rows.push_back({joined, std::to_string(n.depth), std::to_string(n.invocations), std::to_string(n.ops),
                      std::to_string(n.inclusiveNs), std::to_string(line.exclusiveNs),
                      line.kernels.empty() ? "" : std::string(m.str(line.kernels[0].name))});
    }
    printCsv(ctx.out, {"path", "depth", "invocations", "ops", "inclusive_ns", "exclusive_ns", "top_kernel"}, rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, m);
  o << "GPU time by range path (" << formatDuration(static_cast<double>(r.totalNs)) << " of GPU ops in scope; "
    << "inclusive = ops launched inside the range or its children)\n";
  for (const auto& line : flat.lines) printLine(o, r, m, line, r.totalNs);
  if (flat.omittedNodes)
    o << "... " << flat.omittedNodes << " more nodes not shown (--max-nodes N, 0 = all; --depth N)\n";
  o << "unattributed: " << r.noLaunchOps << " ops (" << formatDuration(static_cast<double>(r.noLaunchNs))
    << ") without a launch call in the capture, " << r.outsideOps << " ops ("
    << formatDuration(static_cast<double>(r.outsideNs)) << ") launched outside every range\n";
  return 0;
}

Registrar reg{
    Command{"tree", "range (NVTX) hierarchy with kernels and GPU times",
            "usage: kernlens tree FILE... [--depth N] [--kernels K] [--max-nodes N] [--format text|json|csv]\n"
            "                     [--gpu N]\n"
            "                     [--trim START END]\n\n"
            "Ranges with the same text under the same parent path form one node. Inclusive time\n"
            "= GPU time of ops launched inside the node (any depth); exclusive = ops whose\n"
            "innermost range is the node; the top K kernels (exclusive) are listed under it.\n"
            "A range nested in itself again and again (pushed, never popped) is one line\n"
            "\"NAME (xN nested)\"; JSON nests at most 256 levels unless --depth is given.\n\n"
            "  --depth N    show N levels (default: all)\n"
            "  --kernels K  kernels listed per node (default 3)\n"
            "  --max-nodes N  print at most N nodes (default 2000; 0 = all), count the rest\n" +
                commonOptionsHelp(true),
            profileOptions({{"--depth"}, {"--kernels"}, {"--max-nodes"}}), run}};

}  // namespace
}  // namespace kl::cli
