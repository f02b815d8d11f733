// Refinement decisions after a round: one pure function from (node facts, that node's entry in the
// round's RangeTable, policy) to an action. The loop applies them; unit tests drive them with hand-built
// statistics.
//
// Rules, in order, for a node that was wrapped in the round:
//  1. not seen in the profile, or launched nothing        -> Idle (not wrapped any more)
//  2. per-range NVTX budget: invocations >= budgetMinInvocations and
//     invocations > maxPushesPerLaunch * inclusive launches (not for the focus/region roots)
//                                                          -> Refuse (its kernels fall to the parent)
//  3. at most one exclusive launch per invocation          -> Resolved (a final answer)
//  4. --kernel given and no launched kernel matches        -> OutOfFocus (left unrefined)
//  5. not refined yet and has refinable children           -> Refine
//  6. otherwise                                            -> Atomic (a final answer: one line that
//                                                             launches several kernels)
#pragma once

#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/attribution/range_table.h"
#include "core/planner/plan.h"

namespace kl::planner {

struct Policy {
  /// Per-range budget: NVTX pushes (invocations) per GPU launch inside the range.
  double maxPushesPerLaunch = 4.0;
  /// Ranges invoked fewer times than this are never refused (their cost is negligible).
  uint32_t budgetMinInvocations = 64;
  /// Wall-time budget: instrumented / uninstrumented wall - 1 (0.5 = +50 %); see budget.h.
  double maxWallOverhead = 0.5;
  /// Call discovery: the NVTX pushes (predicted from how often the lines ran) that ranges placed
  /// several call levels deep at once, before they are measured, may cost in one round.
  uint64_t maxEagerPushes = 100000;
  /// --kernel: only refine ranges that launch a kernel matching this (ECMAScript, searched).
  std::optional<std::string> kernelPattern;
};

enum class Action { Idle, Refuse, Resolve, OutOfFocus, Refine, Atomic };
const char* actionName(Action a);

struct NodeFacts {
  int id = -1;
  bool root = false;      // a focus/region root: never refused
  bool expanded = false;  // already refined once
};

struct Decision {
  int id = -1;
  Action action = Action::Idle;
  std::string reason;
};

/// `stats` == nullptr: the node's range never appeared in the profile. `hasChildren` is asked only
/// when rule 5 needs it.
Decision decide(const NodeFacts& node, const attribution::RangeEntry* stats, const Policy& policy,
                const std::function<bool(int)>& hasChildren);

/// Whether `name` matches the --kernel pattern (always true without one). Error::Invalid for a
/// bad pattern is reported by compileKernelPattern.
bool kernelMatches(const std::optional<std::regex>& re, std::string_view name);
Result<std::optional<std::regex>> compileKernelPattern(const std::optional<std::string>& pattern);

}  // namespace kl::planner
