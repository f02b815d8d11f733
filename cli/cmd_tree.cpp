// `kernlens tree FILE...`: the range hierarchy with the GPU time and kernels under each node.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/format.h"
#include "core/analysis/tree.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

using analysis::fmtDuration;

void printNode(std::ostream& o, const analysis::TreeResult& r, const profile::ProfileModel& m, uint32_t idx,
               uint32_t depth, size_t kernels, int64_t total) {
  const auto& n = r.nodes[idx];
  std::string indent(2 * n.depth, ' ');
  char share[32];
  std::snprintf(share, sizeof share, "%5.1f%%", total ? 100.0 * static_cast<double>(n.inclusiveNs) / static_cast<double>(total) : 0.0);
  o << share << "  " << indent << m.str(n.text) << "  [" << fmtDuration(static_cast<double>(n.inclusiveNs)) << " incl, "
    << fmtDuration(static_cast<double>(n.exclusiveNs)) << " excl, " << n.invocations << "x, " << n.ops << " ops]\n";
  for (size_t k = 0; k < n.kernels.size() && k < kernels; ++k)
    o << "        " << indent << "  - " << m.str(n.kernels[k].name) << "  " << fmtDuration(static_cast<double>(n.kernels[k].ns))
      << " (" << n.kernels[k].count << "x)\n";
  if (depth && n.depth + 1 >= depth) return;
  for (uint32_t ch : n.children) printNode(o, r, m, ch, depth, kernels, total);
}

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {"text", "json", "csv"});
  auto depth = args.getInt("--depth").value_or(0);
  auto kernels = args.getInt("--kernels").value_or(3);
  if (depth < 0 || kernels < 0) throw UsageError("--depth and --kernels need values >= 0");
  auto lp = loadProfile(c.files);
  analysis::View v(lp->model, c.scope, &lp->attr);
  auto r = analysis::computeTree(v);
  const auto& m = lp->model;
  if (c.format == "json") return printJson(ctx.out, r, m, static_cast<uint32_t>(depth), static_cast<size_t>(kernels));
  if (c.format == "csv") {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> paths(r.nodes.size());
    for (size_t i = 0; i < r.nodes.size(); ++i) {  // parents precede children
      const auto& n = r.nodes[i];
      paths[i] = (n.parent == profile::kNone ? std::string() : paths[n.parent] + " > ") + std::string(m.str(n.text));
      if (depth && n.depth >= depth) continue;
      rows.push_back({paths[i], std::to_string(n.depth), std::to_string(n.invocations), std::to_string(n.ops),
                      std::to_string(n.inclusiveNs), std::to_string(n.exclusiveNs),
                      n.kernels.empty() ? "" : std::string(m.str(n.kernels[0].name))});
    }
    printCsv(ctx.out, {"path", "depth", "invocations", "ops", "inclusive_ns", "exclusive_ns", "top_kernel"}, rows);
    return 0;
  }
  auto& o = ctx.out;
  noteEmulated(o, m);
  o << "GPU time by range path (" << fmtDuration(static_cast<double>(r.totalNs)) << " of GPU ops in scope; "
    << "inclusive = ops launched inside the range or its children)\n";
  for (uint32_t root : r.roots) printNode(o, r, m, root, static_cast<uint32_t>(depth), static_cast<size_t>(kernels), r.totalNs);
  o << "unattributed: " << r.noLaunchOps << " ops (" << fmtDuration(static_cast<double>(r.noLaunchNs))
    << ") without a launch call in the capture, " << r.outsideOps << " ops ("
    << fmtDuration(static_cast<double>(r.outsideNs)) << ") launched outside every range\n";
  return 0;
}

Registrar reg{Command{"tree", "range (NVTX) hierarchy with kernels and GPU times",
                      "usage: kernlens tree FILE... [--depth N] [--kernels K] [--format text|json|csv] [--gpu N]\n"
                      "                     [--trim START END]\n\n"
                      "Ranges with the same text under the same parent path form one node. Inclusive time\n"
                      "= GPU time of ops launched inside the node (any depth); exclusive = ops whose\n"
                      "innermost range is the node; the top K kernels (exclusive) are listed under it.\n\n"
                      "  --depth N    show N levels (default: all)\n"
                      "  --kernels K  kernels listed per node (default 3)\n" +
                          commonOptionsHelp(true),
                      profileOptions({{"--depth"}, {"--kernels"}}), run}};

}  // namespace
}  // namespace kl::cli
