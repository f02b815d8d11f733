#include "core/analysis/tree.h"

#include <algorithm>
#include <unordered_map>

namespace kl::analysis {

TreeResult computeTree(const View& v) {
  const auto& m = v.m;
  TreeResult r;
  if (!v.attr) return r;
  std::unordered_map<uint64_t, uint32_t> index;  // (parent + 1) << 32 | text -> node
  std::vector<std::vector<uint32_t>> instances;
  std::vector<std::unordered_map<StrId, NameCount>> kernels;
  for (uint32_t i : v.ops) {
    const auto& op = m.gpuOps[i];
    int64_t d = op.duration();
    r.totalNs += d;
    auto stack = v.attr->stack(i);
    if (stack.empty()) {
      if (v.attr->op(i).reason == attribution::Unattributed::NoLaunchCall) {
        ++r.noLaunchOps;
        r.noLaunchNs += d;
      } else {
        ++r.outsideOps;
        r.outsideNs += d;
      }
      continue;
    }
    uint32_t parent = kNone;
    for (size_t depth = 0; depth < stack.size(); ++depth) {
      StrId text = m.ranges[stack[depth]].text;
      uint64_t key = (static_cast<uint64_t>(parent + 1) << 32) | text;  // kNone + 1 == 0
      auto [it, added] = index.emplace(key, static_cast<uint32_t>(r.nodes.size()));
      if (added) {
        TreeNode n;
        n.text = text;
        n.parent = parent;
        n.depth = static_cast<uint32_t>(depth);
        r.nodes.push_back(n);
        instances.emplace_back();
        kernels.emplace_back();
        if (parent == kNone) r.roots.push_back(it->second);
        else r.nodes[parent].children.push_back(it->second);
      }
      uint32_t node = it->second;
      auto& n = r.nodes[node];
      ++n.ops;
      n.inclusiveNs += d;
      instances[node].push_back(stack[depth]);
      if (depth + 1 == stack.size()) {
        ++n.exclusiveOps;
        n.exclusiveNs += d;
        auto& k = kernels[node][op.name];
        k.name = op.name;
        ++k.count;
        k.ns += d;
      }
      parent = node;
    }
  }
  for (size_t n = 0; n < r.nodes.size(); ++n) {
    auto& inst = instances[n];
    std::sort(inst.begin(), inst.end());
    r.nodes[n].invocations = static_cast<uint64_t>(std::unique(inst.begin(), inst.end()) - inst.begin());
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

namespace {
void writeNode(json::Writer& w, const TreeResult& r, const ProfileModel& m, uint32_t idx,
               uint32_t maxDepth, size_t kernelsPerNode) {
  const auto& n = r.nodes[idx];
  w.beginObject()
      .field("name", m.str(n.text))
      .field("depth", n.depth)
      .field("invocations", n.invocations)
      .field("ops", n.ops)
      .field("exclusive_ops", n.exclusiveOps)
      .field("inclusive_ns", n.inclusiveNs)
      .field("exclusive_ns", n.exclusiveNs);
  w.key("kernels").beginArray();
  for (size_t k = 0; k < n.kernels.size() && k < kernelsPerNode; ++k)
    w.beginObject()
        .field("name", m.str(n.kernels[k].name))
        .field("count", n.kernels[k].count)
        .field("total_ns", n.kernels[k].ns)
        .endObject();
  w.endArray();
  w.key("children").beginArray();
  if (maxDepth == 0 || n.depth + 1 < maxDepth)
    for (uint32_t c : n.children) writeNode(w, r, m, c, maxDepth, kernelsPerNode);
  w.endArray();
  w.endObject();
}
}  // namespace

void writeJson(json::Writer& w, const TreeResult& r, const ProfileModel& m, uint32_t maxDepth,
               size_t kernelsPerNode) {
  w.beginObject().field("total_ns", r.totalNs);
  w.key("unattributed").beginObject()
      .field("no_launch_call_ops", r.noLaunchOps)
      .field("no_launch_call_ns", r.noLaunchNs)
      .field("outside_ranges_ops", r.outsideOps)
      .field("outside_ranges_ns", r.outsideNs)
      .endObject();
  w.key("roots").beginArray();
  for (uint32_t root : r.roots) writeNode(w, r, m, root, maxDepth, kernelsPerNode);
  w.endArray().endObject();
}

}  // namespace kl::analysis
