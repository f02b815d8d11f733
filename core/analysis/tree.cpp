#include "core/analysis/tree.h"

#include <algorithm>
#include <unordered_map>

#include "core/support/saturating.h"

namespace kl::analysis {

TreeResult computeTree(const View& v) {
  const auto& m = v.m;
  TreeResult r;
  if (!v.attr) return r;
  std::unordered_map<uint64_t, uint32_t> index;  // (parent + 1) << 32 | text -> node
  // Invocations = distinct ranges per node. A range sits at one node unless ranges overlap
  // without nesting (then its stacks differ between calls): the first node of each range is
  // remembered, and only (node, range) pairs at other nodes are kept for deduplication.
  std::vector<uint32_t> firstNode(m.ranges.size(), kNone);
  std::vector<uint64_t> otherInstances;  // node << 32 | range
  std::vector<std::unordered_map<StrId, NameCount>> kernels;
  // The previous op's stack and node path: consecutive ops share most of their stack, so only
  // the part below the common prefix is looked up (inclusive numbers are summed at the end).
  std::vector<uint32_t> prevStack, path;
  const auto& opStart = m.gpuOps.col<&profile::GpuOp::start>();
  const auto& opName = m.gpuOps.col<&profile::GpuOp::name>();
  for (uint32_t i : v.ops) {
    const int64_t d = m.gpuOps.get<&profile::GpuOp::end>(i) - opStart[i];
    addTo(r.totalNs, d);
    auto stack = v.attr->stack(i);
    if (stack.empty()) {
      if (v.attr->op(i).reason == attribution::Unattributed::NoLaunchCall) {
        ++r.noLaunchOps;
        addTo(r.noLaunchNs, d);
      } else {
        ++r.outsideOps;
        addTo(r.outsideNs, d);
      }
      continue;
    }
    size_t common = 0;
    while (common < stack.size() && common < prevStack.size() && stack[common] == prevStack[common]) ++common;
    path.resize(common);
    prevStack.assign(stack.begin(), stack.end());
    for (size_t depth = common; depth < stack.size(); ++depth) {
      const uint32_t parent = depth ? path[depth - 1] : kNone, range = stack[depth];
      uint32_t node = firstNode[range];  // a range's node, unless its stacks differ (see above)
      if (node == kNone || r.nodes[node].parent != parent) {
        StrId text = m.ranges.get<&profile::Range::text>(range);
        uint64_t key = (static_cast<uint64_t>(parent + 1) << 32) | text;  // kNone + 1 == 0
        auto [it, added] = index.emplace(key, static_cast<uint32_t>(r.nodes.size()));
        if (added) {
          TreeNode n;
          n.text = text;
          n.parent = parent;
          n.depth = static_cast<uint32_t>(depth);
          r.nodes.push_back(n);
          kernels.emplace_back();
          if (parent == kNone)
            r.roots.push_back(it->second);
          else
            r.nodes[parent].children.push_back(it->second);
        }
        node = it->second;
      }
      uint32_t& first = firstNode[range];
      if (first == kNone) {
        first = node;
        ++r.nodes[node].invocations;
      } else if (first != node) {
        otherInstances.push_back((uint64_t{node} << 32) | range);
      }
      path.push_back(node);
    }
    auto& leaf = r.nodes[path.back()];
    ++leaf.exclusiveOps;
    addTo(leaf.exclusiveNs, d);
    auto& k = kernels[path.back()][opName[i]];
    k.name = opName[i];
    ++k.count;
    addTo(k.ns, d);
  }
  // Parents precede their children in r.nodes: one backward pass sums the inclusive numbers.
  for (size_t n = r.nodes.size(); n-- > 0;) {
    auto& node = r.nodes[n];
    node.ops += node.exclusiveOps;
    addTo(node.inclusiveNs, node.exclusiveNs);
    if (node.parent != kNone) {
      r.nodes[node.parent].ops += node.ops;
      addTo(r.nodes[node.parent].inclusiveNs, node.inclusiveNs);
    }
  }
  firstNode = {};
  std::sort(otherInstances.begin(), otherInstances.end());
  otherInstances.erase(std::unique(otherInstances.begin(), otherInstances.end()), otherInstances.end());
  for (uint64_t x : otherInstances) ++r.nodes[x >> 32].invocations;
  for (size_t n = 0; n < r.nodes.size(); ++n) {
    for (auto& [name, k] : kernels[n]) r.nodes[n].kernels.push_back(k);
    std::sort(r.nodes[n].kernels.begin(), r.nodes[n].kernels.end(), [&](const NameCount& a, const NameCount& b) {
      return a.ns != b.ns ? a.ns > b.ns : m.str(a.name) < m.str(b.name);
    });
  }
  auto byTime = [&](uint32_t a, uint32_t b) {
    const auto& x = r.nodes[a];
    const auto& y = r.nodes[b];
    return x.inclusiveNs != y.inclusiveNs ? x.inclusiveNs > y.inclusiveNs : m.str(x.text) < m.str(y.text);
  };
  std::sort(r.roots.begin(), r.roots.end(), byTime);
  for (auto& n : r.nodes) std::sort(n.children.begin(), n.children.end(), byTime);
  return r;
}

TreeLines flattenTree(const TreeResult& r, const ProfileModel& m, uint32_t maxLevels, size_t maxNodes,
                      size_t kernelsPerNode) {
  TreeLines out;
  struct Pending {
    uint32_t node, level;
  };
  std::vector<Pending> todo;
  for (size_t i = r.roots.size(); i-- > 0;) todo.push_back({r.roots[i], 0});
  while (!todo.empty()) {
    auto [node, level] = todo.back();
    todo.pop_back();
    if (maxNodes && out.lines.size() >= maxNodes) {
      // Count the whole subtree of what is left without printing it.
      std::vector<uint32_t> rest{node};
      while (!rest.empty()) {
        uint32_t n = rest.back();
        rest.pop_back();
        ++out.omittedNodes;
        rest.insert(rest.end(), r.nodes[n].children.begin(), r.nodes[n].children.end());
      }
      continue;
    }
    TreeLine line;
    line.node = line.last = node;
    line.level = level;
    std::unordered_map<StrId, NameCount> merged;
    auto take = [&](uint32_t n) {
      line.exclusiveOps += r.nodes[n].exclusiveOps;
      addTo(line.exclusiveNs, r.nodes[n].exclusiveNs);
      for (const auto& k : r.nodes[n].kernels) {
        auto& e = merged[k.name];
        e.name = k.name;
        e.count += k.count;
        addTo(e.ns, k.ns);
      }
    };
    take(node);
    while (r.nodes[line.last].children.size() == 1) {
      uint32_t child = r.nodes[line.last].children[0];
      if (r.nodes[child].text != r.nodes[node].text) break;
      line.last = child;
      ++line.repeat;
      take(child);
    }
    for (auto& [name, k] : merged) line.kernels.push_back(k);
    std::sort(line.kernels.begin(), line.kernels.end(), [&](const NameCount& a, const NameCount& b) {
      return a.ns != b.ns ? a.ns > b.ns : m.str(a.name) < m.str(b.name);
    });
    if (line.kernels.size() > kernelsPerNode) line.kernels.resize(kernelsPerNode);
    const auto& children = r.nodes[line.last].children;
    if (maxLevels && level + 1 >= maxLevels)
      line.childrenOmitted = !children.empty();
    else
      for (size_t i = children.size(); i-- > 0;) todo.push_back({children[i], level + 1});
    out.lines.push_back(std::move(line));
  }
  return out;
}

void writeJson(json::Writer& w, const TreeResult& r, const ProfileModel& m, uint32_t maxDepth, size_t kernelsPerNode,
               size_t maxNodes) {
  auto flat = flattenTree(r, m, maxDepth ? maxDepth : kMaxJsonLevels, maxNodes, kernelsPerNode);
  w.beginObject().field("total_ns", r.totalNs);
  w.key("unattributed")
      .beginObject()
      .field("no_launch_call_ops", r.noLaunchOps)
      .field("no_launch_call_ns", r.noLaunchNs)
      .field("outside_ranges_ops", r.outsideOps)
      .field("outside_ranges_ns", r.outsideNs)
      .endObject();
  w.field("omitted_nodes", flat.omittedNodes);
  w.key("roots").beginArray();
  // Pre-order lines -> nested objects, without recursion: close the open nodes at or below
  // each new line's level.
  std::vector<const TreeLine*> open;
  auto closeOne = [&] {
    w.endArray().field("children_omitted", open.back()->childrenOmitted).endObject();
    open.pop_back();
  };
  for (const auto& line : flat.lines) {
    while (open.size() > line.level) closeOne();
    const auto& n = r.nodes[line.node];
    w.beginObject()
        .field("name", m.str(n.text))
        .field("depth", n.depth)
        .field("repeat", line.repeat)
        .field("invocations", n.invocations)
        .field("ops", n.ops)
        .field("exclusive_ops", line.exclusiveOps)
        .field("inclusive_ns", n.inclusiveNs)
        .field("exclusive_ns", line.exclusiveNs);
    w.key("kernels").beginArray();
    for (const auto& k : line.kernels)
      w.beginObject().field("name", m.str(k.name)).field("count", k.count).field("total_ns", k.ns).endObject();
    w.endArray();
    w.key("children").beginArray();
    open.push_back(&line);
  }
  while (!open.empty()) closeOne();
  w.endArray().endObject();
}

}  // namespace kl::analysis
