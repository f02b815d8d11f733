#include "core/planner/decide.h"

#include <cstdio>

namespace kl::planner {

const char* actionName(Action a) {
  switch (a) {
    case Action::Idle: return "idle";
    case Action::Refuse: return "refuse";
    case Action::Resolve: return "resolve";
    case Action::OutOfFocus: return "out_of_focus";
    case Action::Refine: return "refine";
    case Action::Atomic: return "atomic";
  }
  return "?";
}

Result<std::optional<std::regex>> compileKernelPattern(const std::optional<std::string>& pattern) {
  if (!pattern) return std::optional<std::regex>();
  try {
    return std::optional<std::regex>(std::regex(*pattern, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    return Error::invalid("bad regular expression '" + *pattern + "': " + e.what());
  }
}

bool kernelMatches(const std::optional<std::regex>& re, std::string_view name) {
  if (!re) return true;
  return std::regex_search(name.begin(), name.end(), *re);
}

Decision decide(const NodeFacts& node, const attribution::RangeEntry* s, const Policy& policy,
                const std::function<bool(int)>& hasChildren) {
  Decision d;
  d.id = node.id;
  if (!s || s->invocations == 0) {
    d.action = Action::Idle;
    d.reason = "never ran";
    return d;
  }
  if (s->launches == 0) {
    d.action = Action::Idle;
    d.reason = "launched nothing";
    return d;
  }
  if (!node.root && s->invocations >= policy.budgetMinInvocations &&
      static_cast<double>(s->invocations) > policy.maxPushesPerLaunch * static_cast<double>(s->launches)) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "over the NVTX budget: %u pushes for %lld launches (%.1f per launch > %.1f)",
                  s->invocations, static_cast<long long>(s->launches),
                  static_cast<double>(s->invocations) / static_cast<double>(s->launches), policy.maxPushesPerLaunch);
    d.action = Action::Refuse;
    d.reason = buf;
    return d;
  }
  if (s->maxExclusivePerInvocation <= 1) {
    d.action = Action::Resolve;
    return d;
  }
  if (policy.kernelPattern) {
    auto re = compileKernelPattern(policy.kernelPattern);
    bool any = false;
    if (re)
      for (const auto& k : s->inclusiveKernels) any = any || kernelMatches(*re, k);
    if (!any) {
      d.action = Action::OutOfFocus;
      d.reason = "launches no kernel matching --kernel";
      return d;
    }
  }
  if (!node.expanded && hasChildren && hasChildren(node.id)) {
    d.action = Action::Refine;
    d.reason = std::to_string(s->maxExclusivePerInvocation) + " launches per invocation";
    return d;
  }
  d.action = Action::Atomic;
  d.reason = node.expanded ? "the launches left here come from the line itself (no finer workspace code)"
                           : "no statement or workspace function to descend into";
  return d;
}

}  // namespace kl::planner
