// The plan: every range the loop manages, as a tree of nodes over ORIGINAL lines (kernlens ranges
// stripped). A node is a function body or a run of statements; its children are what refining it
// would wrap (see children()). Nodes are never removed; their state says whether the next round
// wraps them. Round 0 (per focus mode) and the expansions of later rounds add nodes here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/nvtx/overlay.h"
#include "core/planner/call_resolution.h"
#include "core/planner/observed_calls.h"
#include "core/planner/workspace_index.h"

namespace kl::planner {

enum class NodeKind { FunctionBody, Statements };

enum class NodeState {
  Pending,     // planned, not measured yet
  Resolved,    // at most one launch per invocation of its own (exclusive) code: a final answer
  Atomic,      // several launches per invocation, nothing finer to wrap: a final answer
  Refining,    // several launches per invocation; children added for the next round
  Idle,        // ran but launched nothing (or never ran): not wrapped any more
  Refused,     // over the overhead budget: not wrapped any more (its kernels fall to the parent)
  Unplaced,    // the annotation engine could not wrap it
  OutOfFocus,  // --kernel: launches no kernel of interest, left unrefined
};
const char* nodeStateName(NodeState s);

/// Why a node was added.
enum class Origin { Focus, Region, Child, Callee, Caller, Entry, ThreadTarget, Harness };
const char* originName(Origin o);

struct PlanNode {
  int id = 0;
  std::string path;  // workspace-relative
  NodeKind kind = NodeKind::Statements;
  python::LineSpan lines;  // 0-based original lines: the statements, or the whole def for a body
  std::string qualName;    // FunctionBody: the function
  uint32_t defLine = 0;    // FunctionBody: line of `def`
  std::string function;    // enclosing function qualname ("" = module level)
  int parent = -1;         // the node whose refinement added it
  int round = 0;           // round it was added for
  Origin origin = Origin::Child;
  NodeState state = NodeState::Pending;
  std::string reason;     // for Atomic / Idle / Refused / Unplaced / OutOfFocus
  bool expanded = false;  // children were added (or found to be none)
  std::string rangeName;  // kl: name as placed in the latest round ("" when not placed)
  /// Label for the range name: the statement's first line with '{' '}' made '?' (torch's
  /// nvtx.range() calls str.format on the name) — set by the plan, never empty for statements.
  std::string label;

  bool wrapped() const {
    return state == NodeState::Pending || state == NodeState::Resolved || state == NodeState::Atomic ||
           state == NodeState::Refining || state == NodeState::OutOfFocus;
  }
  nvtx::RangeRequest request() const;
};

/// A workspace function that ran beneath a line (call discovery) but cannot be wrapped.
struct UnfollowedCall {
  std::string path;       // workspace-relative
  uint32_t line = 0;      // 1-based first line of the code object
  std::string qualName;   // "Block.__init__.<locals>.<lambda>"
  std::string why;        // "a lambda: source edits cannot wrap it", ...
  bool noSource = false;  // its source is not readable (compiled, generated, deleted)
};

/// What refining a node would wrap.
struct Children {
  std::vector<python::LineSpan> statements;  // statement runs in the same file (0-based lines)
  std::vector<FunctionRef> callees;          // workspace functions called by its statement(s)
  std::vector<UnfollowedCall> unfollowed;    // observed workspace callees that cannot be wrapped
  bool empty() const { return statements.empty() && callees.empty(); }
};

class Plan {
 public:
  explicit Plan(WorkspaceIndex& index) : index_(index), resolver_(index) {}

  const std::vector<PlanNode>& nodes() const { return nodes_; }
  PlanNode& node(int id) { return nodes_[id]; }
  const PlanNode& node(int id) const { return nodes_[id]; }
  CallResolver& resolver() { return resolver_; }
  WorkspaceIndex& index() { return index_; }

  /// A function body plus each logical line of its top level (one range when the body is a single
  /// line). Returns the body's node id (existing when already planned). Error when the function
  /// does not exist.
  Result<int> addFunction(const FunctionRef& fn, Origin origin, int parent, int round);
  /// A run of statements (0-based lines, resolved as the annotation engine does). Deduplicated.
  Result<int> addStatements(const std::string& path, python::LineSpan lines, Origin origin, int parent, int round);
  /// The region [first, last] (0-based) and each logical line in it.
  Result<int> addRegion(const std::string& path, python::LineSpan lines, Origin origin, int round);

  /// What refining `id` would wrap (nothing for a def/class statement or a line without workspace
  /// calls). Callees are those static resolution finds plus, with call discovery, every workspace
  /// function observed to run from the node's own lines (not the lines of its child statements);
  /// observed callees that cannot be wrapped (lambdas, code without source) are looked through:
  /// the functions THEY called become callees, and they are listed as unfollowed. Pure.
  Children children(int id);

  /// Call discovery of this run (nullptr: static resolution only).
  void setObserved(std::shared_ptr<const ObservedCalls> calls) { observed_ = std::move(calls); }
  const ObservedCalls* observed() const { return observed_.get(); }
  /// Observed code ids of the code a node's lines belong to (its function, or the module).
  std::vector<int32_t> observedCodes(const PlanNode& n) const;
  /// The workspace function an observed code object is; nullopt for lambdas, class bodies,
  /// modules and code whose source is not in the index.
  std::optional<FunctionRef> functionOfCode(int32_t code);
  /// Adds the children of `id`; returns how many new nodes were added.
  int expand(int id, int round);

  /// File plans for every wrapped node (what the next round instruments).
  std::vector<nvtx::FilePlan> filePlans() const;
  /// Matches the ranges an overlay placed to nodes (sets rangeName; unplaced requests -> Unplaced).
  void bindOverlay(const nvtx::Overlay& overlay);
  /// Node id by placed range name; -1 when none.
  int byRangeName(const std::string& name) const;

  /// Functions wrapped as bodies.
  bool hasFunction(const FunctionRef& fn) const;

 private:
  std::optional<int> find(const std::tuple<std::string, int, uint32_t, uint32_t, std::string>& key) const;
  std::string enclosingFunction(const std::string& path, python::LineSpan lines);

  void observedCallees(const PlanNode& n, const std::vector<python::LineSpan>& excluded, Children& out);

  WorkspaceIndex& index_;
  CallResolver resolver_;
  std::shared_ptr<const ObservedCalls> observed_;
  std::vector<PlanNode> nodes_;
  std::map<std::tuple<std::string, int, uint32_t, uint32_t, std::string>, int> byKey_;
  std::map<std::string, int> byName_;
};

}  // namespace kl::planner
