// `tree`: the range hierarchy (NVTX / annotations counted by attribution) as a tree of range
// *paths* (same text under the same parent path = one node), with the GPU time of the ops
// launched inside each node. Like nsys' nvtx_kern_sum projection but per path:
//   inclusive = ops whose range stack has this node's path as a prefix (sum of durations)
//   exclusive = ops whose innermost range is this node; kernels listed per node are those.
// Ops without a stack are counted in the result's unattributed totals, by reason.
#pragma once

#include <cstdint>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct NameCount {
  StrId name = 0;
  uint64_t count = 0;
  int64_t ns = 0;
};

struct TreeNode {
  StrId text = 0;
  uint32_t parent = kNone;
  uint32_t depth = 0;                 // 0 = outermost
  std::vector<uint32_t> children;     // by inclusive time desc
  uint64_t invocations = 0;           // distinct range instances at this path (with ops)
  uint64_t ops = 0, exclusiveOps = 0;
  int64_t inclusiveNs = 0, exclusiveNs = 0;
  std::vector<NameCount> kernels;     // exclusive ops by name, by time desc
};

struct TreeResult {
  std::vector<TreeNode> nodes;
  std::vector<uint32_t> roots;        // by inclusive time desc
  uint64_t noLaunchOps = 0, outsideOps = 0;
  int64_t noLaunchNs = 0, outsideNs = 0;
  int64_t totalNs = 0;                // all ops in scope
};

/// Requires v.attr (empty result without it).
TreeResult computeTree(const View& v);
/// Nodes deeper than maxDepth (0 = unlimited) are left out; at most `kernelsPerNode` names each.
void writeJson(json::Writer& w, const TreeResult& r, const ProfileModel& m, uint32_t maxDepth,
               size_t kernelsPerNode);

}  // namespace kl::analysis
