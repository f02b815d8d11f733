// Observed calls: which workspace functions actually ran, called from which workspace line — the
// call tree the probe's discovery pass records (kernlens_probe/call_discovery.py, a file in the
// run folder). The loop uses it in addition to static call resolution (call_resolution.h): a
// line whose callee static text matching cannot follow (containers of any shape, locals,
// parameters, callbacks, decorators, factories) is refined into the functions that ran beneath it.
//
// Everything here is 1-based lines (as Python reports them) and workspace-relative paths.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/result.h"

namespace kl::planner {

/// One workspace code object that ran: a function, a lambda, a class body or a module.
struct ObservedCode {
  std::string path;        // workspace-relative
  uint32_t firstLine = 0;  // co_firstlineno (the first decorator's line for a decorated def)
  std::string qualName;    // co_qualname: "GPT.forward", "Block.__init__.<locals>.<lambda>", "<module>"
  uint64_t calls = 0;      // frames entered (generators: every resumption)
  bool isLambda() const { return qualName.size() >= 8 && qualName.compare(qualName.size() - 8, 8, "<lambda>") == 0; }
  bool isModule() const { return qualName == "<module>"; }
};

/// `caller` (a code id) ran `callee` from its line `line` `count` times (the innermost workspace
/// frame above the callee: library frames in between — nn.Module.__call__, functools.partial,
/// library decorators — are skipped; comprehensions belong to their enclosing function).
struct ObservedEdge {
  int32_t caller = -1;
  uint32_t line = 0;
  int32_t callee = -1;
  uint64_t count = 0;
};

class ObservedCalls {
 public:
  /// Parses the discovery file ("kernlens-calls\t1" then code/line/edge/root records). Unknown
  /// record kinds are skipped (forward compatible); a malformed record is an error naming its line.
  static Result<ObservedCalls> parse(std::string_view text);
  static Result<ObservedCalls> read(const std::filesystem::path& file);

  const std::vector<ObservedCode>& codes() const { return codes_; }
  const ObservedCode& code(int32_t id) const { return codes_[static_cast<size_t>(id)]; }
  const std::vector<ObservedEdge>& edges() const { return edges_; }
  bool empty() const { return codes_.empty(); }

  /// Code ids of `qualName` in `path` ("<module>" for module-level code). Several when the
  /// function was redefined (or a nested def was created anew: one code object per def site).
  std::vector<int32_t> codesOf(const std::string& path, const std::string& qualName) const;
  /// Edges leaving code `caller` from a line in [first, last] (1-based, inclusive).
  std::vector<ObservedEdge> edgesFrom(int32_t caller, uint32_t first, uint32_t last) const;
  /// Edges entering code `callee`.
  std::vector<ObservedEdge> edgesInto(int32_t callee) const;
  /// How often line `line` of code `id` started executing ('line' events); 0 when never.
  uint64_t lineHits(int32_t id, uint32_t line) const;
  /// Whether any line of code `id` in [first, last] ran.
  bool anyLineRan(int32_t id, uint32_t first, uint32_t last) const;
  /// The most 'line' events of one line in [first, last] of code `id` (an upper bound of how often
  /// a statement there ran).
  uint64_t maxLineHits(int32_t id, uint32_t first, uint32_t last) const;
  /// Autograd backward passes the run made (the `backward` record: torch.autograd.backward /
  /// grad calls); nullopt when the file has no such record (a probe that does not count them).
  std::optional<uint64_t> backwardCalls() const { return backwardCalls_; }

 private:
  std::optional<uint64_t> backwardCalls_;
  std::vector<ObservedCode> codes_;
  std::vector<ObservedEdge> edges_;  // sorted by (caller, line, callee)
  std::map<std::pair<int32_t, uint32_t>, uint64_t> lines_;
  std::map<std::pair<std::string, std::string>, std::vector<int32_t>> byName_;
};

}  // namespace kl::planner
