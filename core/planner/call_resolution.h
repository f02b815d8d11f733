// Static call resolution through the tree-sitter index: which workspace functions may a call site
// run? A small abstract evaluator over the expressions of the source model (python::Expression:
// a name, then attribute / call / subscript links; the callee, argument, assignment, for-loop,
// parameter and base-class facts of python::Module) with these values: a workspace module,
// classes, instances of classes, functions, bound methods, and "unknown". It reads no source text.
//
// What it sees (all static, no execution; anything else is unknown and the call is not refined):
//  - module-level functions and classes of the file, names bound by imports of workspace modules
//    (re-exports followed, e.g. `from .model import TinyFormer` in a package __init__);
//  - `module.func(...)` for an imported workspace module;
//  - calling a class runs its `__init__`; calling an instance runs `__call__` when a workspace class
//    defines it, else `forward` (nn.Module semantics);
//  - `self.method(...)` through the class and its workspace bases (MRO: depth-first, in order);
//    `super().m(...)` / `super(C, self).m(...)` through the bases;
//  - attributes `self.x = SomeClass(...)` assigned in any method of the class (or a base);
//    containers (`nn.Sequential(A(), B())`, `nn.ModuleList([Block() for _ in ...])`, lists)
//    hold every workspace class constructed in the assignment; calling or indexing a container
//    or iterating it (`for blk in self.blocks`, `enumerate(...)`) gives its members;
//  - local variables assigned in the function (`m = Model().to(dev)`; `.to/.cuda/.eval/...`
//    keep the instance); parameters by annotation (`model: TinyFormer`) or, one level up, by the
//    argument passed at the workspace call sites of the function (files loaded in the index).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/planner/workspace_index.h"

namespace kl::planner {

class CallResolver {
 public:
  explicit CallResolver(WorkspaceIndex& index) : index_(index) {}

  /// Workspace functions call `callIndex` (python::Module::calls of `path`) may run, sorted.
  std::vector<FunctionRef> resolveCall(const std::string& path, int32_t callIndex);

  /// Resolved callees of statement `stmt`: calls whose innermost statement is `stmt` (for a
  /// compound statement those are the calls in its header), deduplicated, sorted.
  std::vector<FunctionRef> calleesOfStatement(const std::string& path, int32_t stmt);

  /// Resolved callees of every statement of `fn` itself (nested defs excluded), sorted.
  std::vector<FunctionRef> calleesOfFunction(const FunctionRef& fn);

  /// Functions of the loaded files that contain a call resolving to `fn`, plus functions that
  /// pass `fn` as `target=` (threads) — "the callers" for widening. Sorted.
  std::vector<FunctionRef> callers(const FunctionRef& fn);

  /// The function `qualName` in `path` (first definition); nullopt when absent.
  std::optional<FunctionRef> findFunction(const std::string& path, const std::string& qualName);
  /// Index of `fn` in its file's Module::functions; -1 when absent.
  int32_t functionIndex(const FunctionRef& fn);

  /// Functions expression `expr` (python::Module::expressions of `path`, evaluated in `function`)
  /// names (`worker`, `self.run`, `mod.fn`): thread targets, callbacks.
  std::vector<FunctionRef> referencedFunctions(const std::string& path, int32_t function, int32_t expr);
  /// Functions passed as `target=` to a `...Thread(...)` call, or as the first argument of
  /// `.submit(...)`, anywhere in the loaded files.
  std::vector<FunctionRef> threadTargets();

  /// Workspace classes expression `expr` evaluates to instances of (exposed for tests).
  std::set<ClassRef> instanceTypes(const std::string& path, int32_t function, int32_t expr);

 private:
  struct Value;
  Value eval(const std::string& path, int32_t fn, int32_t expr, int depth);
  Value lookupName(const std::string& path, int32_t fn, std::string_view name, uint32_t before, int depth);
  Value moduleSymbol(const std::string& path, std::string_view name, int depth);
  Value attribute(const Value& base, std::string_view name, int depth);
  Value call(const Value& callee);
  std::vector<ClassRef> mro(const ClassRef& c, int depth);
  std::optional<FunctionRef> method(const ClassRef& c, std::string_view name, bool skipSelf, int depth);
  std::set<ClassRef> attributeTypes(const ClassRef& c, std::string_view attr, int depth);
  std::set<ClassRef> parameterTypes(const std::string& path, int32_t fn, std::string_view param, int depth);
  std::vector<FunctionRef> targetsOf(const Value& v, int depth);

  WorkspaceIndex& index_;
  int paramLevel_ = 0;
  /// Names / attributes being evaluated (cycle guard: `x = x + f(x)`, `self.a = self.a`).
  std::set<std::string> active_;
};

}  // namespace kl::planner
