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
  uint32_t depth = 0;              // 0 = outermost
  std::vector<uint32_t> children;  // by inclusive time desc
  uint64_t invocations = 0;        // distinct range instances at this path (with ops)
  uint64_t ops = 0, exclusiveOps = 0;
  int64_t inclusiveNs = 0, exclusiveNs = 0;
  std::vector<NameCount> kernels;  // exclusive ops by name, by time desc
};

struct TreeResult {
  std::vector<TreeNode> nodes;
  std::vector<uint32_t> roots;  // by inclusive time desc
  uint64_t noLaunchOps = 0, outsideOps = 0;
  int64_t noLaunchNs = 0, outsideNs = 0;
  int64_t totalNs = 0;  // all ops in scope
};

/// Requires v.attr (empty result without it). O(ops + range-stack changes between consecutive
/// ops): deep or never-popped stacks cost once, not once per op.
TreeResult computeTree(const View& v);

/// One printed node of a tree, in pre-order. A chain of nodes with the same text where each has
/// exactly one child (a range pushed again and again, e.g. never popped) is collapsed into one
/// line: `repeat` levels from `node` down to `last`, exclusive numbers and kernels summed.
struct TreeLine {
  uint32_t node = 0, last = 0;
  uint32_t repeat = 1;
  uint32_t level = 0;  // printed nesting level (0 = outermost)
  uint64_t exclusiveOps = 0;
  int64_t exclusiveNs = 0;
  std::vector<NameCount> kernels;  // by time desc, at most kernelsPerNode
  bool childrenOmitted = false;    // it has children that --depth left out
};
struct TreeLines {
  std::vector<TreeLine> lines;
  uint64_t omittedNodes = 0;  // nodes not printed because of maxNodes
};
/// Pre-order lines with identical chains collapsed; levels >= maxLevels (0 = unlimited) are
/// left out, and after maxNodes lines (0 = unlimited) the rest is only counted. Iterative.
TreeLines flattenTree(const TreeResult& r, const ProfileModel& m, uint32_t maxLevels, size_t maxNodes,
                      size_t kernelsPerNode);

/// The default nesting limit of JSON output (parsers recurse per level).
constexpr uint32_t kMaxJsonLevels = 256;
/// Nodes deeper than maxDepth (0 = kMaxJsonLevels) are left out ("children_omitted": true on
/// their parent); at most maxNodes nodes (0 = unlimited; "omitted_nodes" counts the rest); at
/// most `kernelsPerNode` names each; identical chains collapsed ("repeat": levels).
void writeJson(json::Writer& w, const TreeResult& r, const ProfileModel& m, uint32_t maxDepth, size_t kernelsPerNode,
               size_t maxNodes = 0);

}  // namespace kl::analysis
