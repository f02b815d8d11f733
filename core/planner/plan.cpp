#include "core/planner/plan.h"

#include <algorithm>

#include "core/nvtx/engine.h"

namespace kl::planner {

using python::kNone;
using python::LineSpan;
using python::Module;

const char* nodeStateName(NodeState s) {
  switch (s) {
    case NodeState::Pending: return "pending";
    case NodeState::Resolved: return "resolved";
    case NodeState::Atomic: return "atomic";
    case NodeState::Refining: return "refining";
    case NodeState::Idle: return "idle";
    case NodeState::Refused: return "refused";
    case NodeState::Unplaced: return "unplaced";
    case NodeState::OutOfFocus: return "out_of_focus";
  }
  return "?";
}

const char* originName(Origin o) {
  switch (o) {
    case Origin::Focus: return "focus";
    case Origin::Region: return "region";
    case Origin::Child: return "child";
    case Origin::Callee: return "callee";
    case Origin::Caller: return "caller";
    case Origin::Entry: return "entry";
    case Origin::ThreadTarget: return "thread_target";
    case Origin::Harness: return "harness";
  }
  return "?";
}

nvtx::RangeRequest PlanNode::request() const {
  nvtx::RangeRequest r = kind == NodeKind::FunctionBody ? nvtx::RangeRequest::functionBody(qualName, defLine)
                                                        : nvtx::RangeRequest::statements(lines.first, lines.last);
  if (!label.empty()) r.label = label;
  return r;
}

namespace {

/// The first line of the statements at `line`, trimmed, comment cut, braces neutralised.
std::string safeLabel(const python::SourceFile& f, uint32_t line) {
  if (line >= f.lines().lineCount()) return "stmt";
  const std::string& t = f.text();
  uint32_t from = f.lines().lineStart(line), to = f.lines().lineEnd(line, t);
  // The code of the line: a trailing comment is cut (the tree knows which '#' starts one).
  to = f.codeEnd(from, to).value_or(from);
  std::string s = t.substr(from, to - from);
  size_t a = s.find_first_not_of(" \t");
  s = a == std::string::npos ? "" : s.substr(a);
  for (char& c : s)
    if (c == '{' || c == '}') c = '?';
  while (!s.empty() && (s.back() == ' ' || s.back() == ':')) s.pop_back();
  return s.empty() ? "stmt" : s;
}

}  // namespace

std::optional<int> Plan::find(const std::tuple<std::string, int, uint32_t, uint32_t, std::string>& key) const {
  auto it = byKey_.find(key);
  if (it == byKey_.end()) return std::nullopt;
  return it->second;
}

bool Plan::hasFunction(const FunctionRef& fn) const {
  return find({fn.path, 0, fn.defLine, 0, fn.qualName}).has_value();
}

std::string Plan::enclosingFunction(const std::string& path, LineSpan lines) {
  auto f = index_.file(path);
  if (!f) return "";
  const Module& m = (*f)->model();
  int32_t best = kNone;
  for (size_t i = 0; i < m.functions.size(); ++i) {
    const auto& fn = m.functions[i];
    if (fn.lines.first <= lines.first && lines.last <= fn.lines.last && fn.defLine < lines.first)
      best = static_cast<int32_t>(i);  // functions are in source order: the last match is innermost
  }
  return best == kNone ? "" : m.functions[best].qualName;
}

Result<int> Plan::addStatements(const std::string& path, LineSpan lines, Origin origin, int parent, int round) {
  auto key = std::make_tuple(path, 1, lines.first, lines.last, std::string());
  if (auto id = find(key)) return *id;
  auto f = index_.file(path);
  if (!f) return f.error();
  PlanNode n;
  n.id = static_cast<int>(nodes_.size());
  n.path = path;
  n.kind = NodeKind::Statements;
  n.lines = lines;
  n.function = enclosingFunction(path, lines);
  n.label = safeLabel(**f, lines.first);
  n.parent = parent;
  n.round = round;
  n.origin = origin;
  nodes_.push_back(std::move(n));
  byKey_[key] = nodes_.back().id;
  return nodes_.back().id;
}

Result<int> Plan::addFunction(const FunctionRef& fn, Origin origin, int parent, int round) {
  auto key = std::make_tuple(fn.path, 0, fn.defLine, 0u, fn.qualName);
  if (auto id = find(key)) return *id;
  int32_t fi = resolver_.functionIndex(fn);
  if (fi == kNone) return Error::notFound(fn.path + ": no function " + fn.qualName);
  auto f = index_.file(fn.path);
  const auto& func = (*f)->model().functions[fi];
  PlanNode n;
  n.id = static_cast<int>(nodes_.size());
  n.path = fn.path;
  n.kind = NodeKind::FunctionBody;
  n.lines = func.lines;
  n.qualName = fn.qualName;
  n.defLine = func.defLine;
  n.function = fn.qualName;
  n.label = fn.qualName;
  n.parent = parent;
  n.round = round;
  n.origin = origin;
  nodes_.push_back(std::move(n));
  int id = nodes_.back().id;
  byKey_[key] = id;
  // Round-0 shape: the body and each of its top-level logical lines, in one go.
  Children c = children(id);
  if (!c.statements.empty()) {
    for (const auto& s : c.statements) (void)addStatements(fn.path, s, Origin::Child, id, round);
    nodes_[id].expanded = true;
  }
  return id;
}

Result<int> Plan::addRegion(const std::string& path, LineSpan lines, Origin origin, int round) {
  auto f = index_.file(path);
  if (!f) return f.error();
  // Snap to the statements the engine would wrap; it refuses partial compound statements.
  nvtx::Options o;
  o.relPath = path;
  std::vector<nvtx::RangeRequest> req{nvtx::RangeRequest::statements(lines.first, lines.last)};
  auto inst = nvtx::instrument(**f, req, o);
  if (!inst)
    return Error::invalid(path + ":" + std::to_string(lines.first + 1) + "-" + std::to_string(lines.last + 1) + ": " +
                          inst.error().message);
  LineSpan snapped = inst->ranges.at(0).original;
  auto id = addStatements(path, snapped, origin, -1, round);
  if (!id) return id;
  Children c = children(*id);
  for (const auto& s : c.statements) (void)addStatements(path, s, Origin::Child, *id, round);
  nodes_[*id].expanded = !c.statements.empty();
  return id;
}

Children Plan::children(int id) {
  Children out;
  const PlanNode n = nodes_[id];
  auto f = index_.file(n.path);
  if (!f) return out;
  const Module& m = (*f)->model();
  nvtx::PlacedRange pr;
  pr.kind =
      n.kind == NodeKind::FunctionBody ? nvtx::RangeRequest::Kind::FunctionBody : nvtx::RangeRequest::Kind::Statements;
  pr.original = n.lines;
  pr.qualName = n.qualName;
  pr.defLine = n.defLine;
  auto kids = nvtx::refinedChildren(**f, pr);
  if (kids) {
    for (const auto& r : *kids) out.statements.push_back(LineSpan{r.firstLine, r.lastLine});
  }
  // The statements the node holds at its top level.
  std::vector<int32_t> top;
  int32_t bodyBlock = kNone;
  if (n.kind == NodeKind::FunctionBody) {
    int32_t fi = resolver_.functionIndex(FunctionRef{n.path, n.qualName, n.defLine});
    if (fi != kNone) bodyBlock = m.functions[fi].body;
  }
  for (size_t si = 0; si < m.statements.size(); ++si) {
    const auto& s = m.statements[si];
    if (bodyBlock != kNone) {
      if (s.parentBlock == bodyBlock && !s.docstring) top.push_back(static_cast<int32_t>(si));
      continue;
    }
    if (s.lines.first < n.lines.first || s.lines.last > n.lines.last) continue;
    bool parentInside = s.parent != kNone && m.statements[s.parent].lines.first >= n.lines.first &&
                        m.statements[s.parent].lines.last <= n.lines.last;
    if (!parentInside) top.push_back(static_cast<int32_t>(si));
  }
  bool single = top.size() == 1 || (!top.empty() && !kids);
  if (observed_) observedCallees(n, out.statements, out);
  if (!single) return out;
  for (int32_t si : top) {
    const auto& s = m.statements[si];
    if (s.definesFunction != kNone || s.definesClass != kNone) continue;
    // Simple statements: every call in them; compound ones: the calls of their header.
    for (auto& fn : resolver_.calleesOfStatement(n.path, si))
      if (std::find(out.callees.begin(), out.callees.end(), fn) == out.callees.end())
        out.callees.push_back(std::move(fn));
  }
  return out;
}

std::vector<int32_t> Plan::observedCodes(const PlanNode& n) const {
  if (!observed_) return {};
  std::string qual = n.kind == NodeKind::FunctionBody ? n.qualName : n.function.empty() ? "<module>" : n.function;
  return observed_->codesOf(n.path, qual);
}

std::optional<FunctionRef> Plan::functionOfCode(int32_t code) {
  if (!observed_) return std::nullopt;
  const ObservedCode& c = observed_->code(code);
  if (c.isLambda() || c.isModule()) return std::nullopt;
  auto f = index_.file(c.path);
  if (!f) return std::nullopt;
  const Module& m = (*f)->model();
  std::optional<FunctionRef> byName;
  for (const auto& fn : m.functions) {
    if (fn.qualName != c.qualName) continue;
    FunctionRef ref{c.path, fn.qualName, fn.defLine};
    if (fn.lines.first + 1 == c.firstLine || fn.defLine + 1 == c.firstLine) return ref;
    if (!byName) byName = ref;  // the file changed since the discovery run: the same name
  }
  return byName;
}

void Plan::observedCallees(const PlanNode& n, const std::vector<LineSpan>& excluded, Children& out) {
  std::vector<int32_t> work;
  for (int32_t code : observedCodes(n))
    for (const auto& e : observed_->edgesFrom(code, n.lines.first + 1, n.lines.last + 1)) {
      bool inChild = std::any_of(excluded.begin(), excluded.end(),
                                 [&](const LineSpan& s) { return e.line >= s.first + 1 && e.line <= s.last + 1; });
      if (!inChild) work.push_back(e.callee);
    }
  std::vector<bool> seen(observed_->codes().size(), false);
  while (!work.empty()) {
    int32_t k = work.back();
    work.pop_back();
    if (seen[static_cast<size_t>(k)]) continue;
    seen[static_cast<size_t>(k)] = true;
    if (auto fn = functionOfCode(k)) {
      if (std::find(out.callees.begin(), out.callees.end(), *fn) == out.callees.end()) out.callees.push_back(*fn);
      continue;
    }
    // Not wrappable: look through it to the workspace functions it called.
    const ObservedCode& c = observed_->code(k);
    bool classBody = false;
    auto f = index_.file(c.path);
    if (f) classBody = (*f)->model().findClass(c.qualName) != kNone;
    if (!classBody) {
      UnfollowedCall u{c.path, c.firstLine, c.qualName, "", false};
      if (!f) {
        u.why = "its source is not readable (" + f.error().message + ")";
        u.noSource = true;
      } else if (c.isLambda()) {
        u.why = "a lambda: source edits cannot wrap it";
      } else if (c.isModule()) {
        u.why = "module-level code run at import";
      } else {
        u.why = "no function of that name in the file as it is now";
      }
      out.unfollowed.push_back(std::move(u));
    }
    for (const auto& e : observed_->edgesFrom(k, 0, UINT32_MAX)) work.push_back(e.callee);
  }
}

int Plan::expand(int id, int round) {
  size_t before = nodes_.size();
  Children c = children(id);
  std::string path = nodes_[id].path;
  for (const auto& s : c.statements) (void)addStatements(path, s, Origin::Child, id, round);
  for (const auto& fn : c.callees) {
    auto added = addFunction(fn, Origin::Callee, id, round);
    // A callee already planned but no longer wrapped (idle earlier) is wrapped again.
    if (added && nodes_[*added].state == NodeState::Idle && nodes_[*added].round < round) {
      nodes_[*added].state = NodeState::Pending;
    }
  }
  nodes_[id].expanded = true;
  return static_cast<int>(nodes_.size() - before);
}

std::vector<nvtx::FilePlan> Plan::filePlans() const {
  std::map<std::string, nvtx::FilePlan> byFile;
  for (const auto& n : nodes_) {
    if (!n.wrapped()) continue;
    auto& fp = byFile[n.path];
    fp.relPath = n.path;
    fp.ranges.push_back(n.request());
  }
  std::vector<nvtx::FilePlan> out;
  for (auto& [k, v] : byFile) out.push_back(std::move(v));
  return out;
}

void Plan::bindOverlay(const nvtx::Overlay& overlay) {
  byName_.clear();
  for (auto& n : nodes_) {
    if (!n.wrapped()) continue;
    n.rangeName.clear();
    const nvtx::OverlayFile* of = overlay.find(n.path);
    if (!of) continue;
    for (const auto& r : of->ranges) {
      bool match = n.kind == NodeKind::FunctionBody
                       ? (r.kind == nvtx::RangeRequest::Kind::FunctionBody && r.qualName == n.qualName &&
                          (!r.defLine || *r.defLine == n.defLine))
                       : (r.kind == nvtx::RangeRequest::Kind::Statements && r.original == n.lines);
      if (match && !byName_.count(r.name)) {
        n.rangeName = r.name;
        byName_[r.name] = n.id;
        break;
      }
    }
    if (n.rangeName.empty()) {
      std::string why = "the annotation engine did not place it";
      for (const auto& s : of->skipped)
        if (s.request == n.request()) why = s.reason;
      n.state = NodeState::Unplaced;
      n.reason = why;
    }
  }
}

int Plan::byRangeName(const std::string& name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? -1 : it->second;
}

}  // namespace kl::planner
