#include "core/planner/loop.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "core/nvtx/naming.h"
#include "core/planner/budget.h"
#include "core/planner/harness.h"
#include "core/planner/line_strategy.h"
#include "core/runner/command.h"
#include "core/support/format.h"

namespace kl::planner {

namespace fs = std::filesystem;
using python::kNone;
using python::LineSpan;

std::optional<std::string> entryScript(const std::string& entry, const fs::path& cwd, WorkspaceIndex& index) {
  auto argv = runner::splitCommandLine(entry);
  if (!argv || argv->empty()) return std::nullopt;
  const auto& a = *argv;
  size_t i = 0;
  std::string prog = fs::path(a[0]).filename().string();
  bool python = prog.rfind("python", 0) == 0;
  if (python) {
    for (i = 1; i < a.size(); ++i) {
      if (a[i] == "-m" && i + 1 < a.size()) {
        std::string fromDir = "__kl_entry__.py";
        if (auto rel = index.relative(cwd / fromDir)) return index.moduleFile(a[i + 1], *rel);
        return std::nullopt;
      }
      if (a[i] == "-c") return std::nullopt;
      if (a[i] == "-W" || a[i] == "-X") {
        ++i;
        continue;
      }
      if (!a[i].empty() && a[i][0] == '-') continue;
      break;
    }
    if (i >= a.size()) return std::nullopt;
  }
  fs::path script = fs::path(a[i]).is_absolute() ? fs::path(a[i]) : cwd / a[i];
  if (script.extension() != ".py") return std::nullopt;
  auto rel = index.relative(script);
  if (!rel) return std::nullopt;
  if (!index.file(*rel)) return std::nullopt;
  return *rel;
}

namespace {

/// The state of one loop run (the steps of runLoop, split for readability).
class Loop {
 public:
  Loop(const LoopConfig& cfg, const ExecutorFactory& make, const LoopCallbacks& cb, const CancellationToken& cancel)
      : cfg_(cfg),
        make_(make),
        cb_(cb),
        cancel_(cancel),
        index_(cfg.workspace, {cfg.cwd.empty() ? cfg.workspace : cfg.cwd}),
        plan_(index_) {}

  Result<LoopResult> run();

 private:
  void log(const std::string& s) {
    if (cb_.log) cb_.log(s);
  }
  Result<void> planRoundZero();
  int addEntryStage(int round);
  int addCallersStage(int round);
  bool switchToHarness(const std::string& why);
  /// The runner's notes on an instrumented round (0-based `round`), once each, led by the rounds
  /// they are about ("round 2: ", "rounds 1-3: "), so that a note printed under the result never
  /// reads as a statement about the result itself or about another run (the discovery and baseline
  /// runs' notes are the loop's own and name their run). Its "not wrapped" notes are the loop's own
  /// Unplaced notes, worded per plan node.
  void addRunnerNotes(const RoundOutcome& out, int round) {
    for (const auto& note : out.notes) {
      if (note.kind == NoteKind::NotWrapped) continue;
      auto [it, fresh] = runnerNotes_.try_emplace({note.kind, note.subject, note.text}, res_.notes.size());
      if (fresh) {
        res_.notes.push_back(note);
        res_.notes.back().rounds = {round + 1};
      } else if (auto& rounds = res_.notes[it->second].rounds; rounds.back() != round + 1) {
        rounds.push_back(round + 1);
      }
    }
  }
  static RoundLog roundLog(int index, size_t ranges, const attribution::RangeTable& t, const RoundOutcome& out) {
    RoundLog rl;
    rl.index = index;
    rl.ranges = ranges;
    rl.pushes = t.invocations;
    rl.launches = t.totalOps;
    rl.wallMs = out.wallMs;
    rl.notes = out.notes;
    rl.dir = out.roundDir;
    for (const auto& p : out.profiles) rl.profiles.push_back(p.string());
    rl.profilerVersion = out.profilerVersion;
    rl.gpu = out.gpu;
    return rl;
  }
  void buildLines(const attribution::RangeTable& table, bool widenedOut);
  /// Tabulates the round (the one attribution run of the round) and has the executor record it.
  Result<attribution::RangeTable> tabulate(const RoundRequest& req, const RoundOutcome& out);
  void stop(StopReason r, std::string why = "") {
    res_.stopReason = r;
    stopped_ = true;
    if (!why.empty()) res_.why = std::move(why);
  }
  bool discover();
  /// emit_nvtx's sequence ranges for the next run: on unless call discovery ran and saw no
  /// backward pass (they cost one NVTX range per ATen op and link nothing without one).
  bool autogradRanges() const;
  /// The uninstrumented baseline run (LoopConfig::measureBaseline), once, right after the first
  /// recorded round, so that round's results are visible while it runs (LoopCallbacks::onRecorded).
  /// False when cancelled; an error when the entry does not run uninstrumented.
  Result<bool> measureBaseline(int maxRounds);
  int eagerExpand(int round);
  uint64_t predictedPushes(const PlanNode& n);
  uint64_t predictedPushes(const FunctionRef& fn);
  struct AtomicWhy {
    attribution::AtomicReason reason;  // LineResult::atomicReason
    std::string note, focus;           // LineResult::note / suggestFocus
  };
  AtomicWhy atomicReason(int id);
  std::string describe(const PlanNode& n) const {
    char buf[64];
    std::snprintf(buf, sizeof buf, ":%u-%u", n.lines.first + 1, n.lines.last + 1);
    return n.path + buf + (n.kind == NodeKind::FunctionBody ? " (" + n.qualName + " body)" : "");
  }
  Result<LoopResult> runLines();
  Result<void> prepare();
  /// One instrumented round: run, attribute, decide. False when the loop stops (stop() said why).
  Result<bool> runRound(int round);
  void keepStats(int round, attribution::RangeTable&& stats);
  bool extractBranch(int round, const attribution::RangeTable& stats);
  bool decideRanges(int round, const attribution::RangeTable& stats, RoundLog& rl, std::vector<RangeCost>& costs);
  bool applyWallBudget(const RoundOutcome& out, const attribution::RangeTable& stats,
                       const std::vector<RangeCost>& costs, RoundLog& rl);
  bool widen(int round, const attribution::RangeTable& stats, RoundLog& rl);
  void finish();

  const LoopConfig& cfg_;
  const ExecutorFactory& make_;
  const LoopCallbacks& cb_;
  CancellationToken cancel_;
  WorkspaceIndex index_;
  Plan plan_;
  std::shared_ptr<RoundExecutor> exec_;
  std::string entry_;
  std::optional<std::string> entryPath_;
  std::vector<int> roots_;
  LoopResult res_;
  std::optional<std::regex> kernelRe_;
  bool harnessTried_ = false;
  bool baselineMeasured_ = false;
  bool stopped_ = false;
  std::set<int> eagerSkipped_;  // nodes not expanded eagerly because the push budget was spent
  bool widenedAhead_ = false;   // the observed callers were wrapped in round 0
  /// Runner notes already in res_.notes: (kind, subject, text) -> its index there.
  std::map<std::tuple<NoteKind, std::string, std::string>, size_t> runnerNotes_;
  std::string harnessFailure_;  // why the last switchToHarness failed
  Policy policy_;               // the config's, with the kernel focus's pattern
  int widenStage_ = 0;          // 0: nothing yet, 1: callers tried, 2: entry tried
  std::set<std::string> everWrapped_;
  attribution::RangeTable last_;  // the last recorded round's table
  int lastIndex_ = -1;            // the round `last_` was recorded as
  bool haveStats_ = false;
};

Result<attribution::RangeTable> Loop::tabulate(const RoundRequest& req, const RoundOutcome& out) {
  auto table = attribution::tabulateRanges(*out.model, cancel_);
  if (!table) return table.error();
  if (auto r = exec_->record(req, *table, cancel_); !r) return r.error();
  if (cb_.onRecorded) cb_.onRecorded(req.index);
  return table;
}

Result<bool> Loop::measureBaseline(int maxRounds) {
  if (!cfg_.measureBaseline || baselineMeasured_) return true;
  baselineMeasured_ = true;
  if (cb_.onRound) cb_.onRound(LoopProgress{-1, maxRounds, 0, "baseline", "baseline: uninstrumented run"});
  RoundRequest baseReq{-1, {}, std::nullopt};
  baseReq.autogradRanges = false;  // the program as it runs without kernlens
  auto base = exec_->run(baseReq, cancel_);
  if (!base) {
    if (base.error().code == Error::Code::Cancelled) return false;
    return Error{base.error().code, "baseline run: " + base.error().message};
  }
  res_.baselineWallMs = base->wallMs;
  log("baseline (uninstrumented): " + formatDuration(static_cast<double>(base->wallMs) * 1e6));
  return true;
}

bool Loop::discover() {
  if (cb_.onRound)
    cb_.onRound(LoopProgress{-1, cfg_.maxRounds, 0, "discovery", "discovery: which workspace functions run"});
  RoundRequest req{kDiscoveryRound, {}, std::nullopt};
  req.discoverCalls = true;
  auto out = exec_->run(req, cancel_);
  if (!out) {
    if (out.error().code == Error::Code::Cancelled) return false;
    res_.notes.push_back(
        {NoteKind::DiscoveryFailed, "", "call discovery failed (static call resolution only): " + out.error().message});
    return true;
  }
  res_.discoveryWallMs = out->wallMs;
  if (out->callsFile.empty()) {
    res_.notes.push_back(
        {NoteKind::DiscoveryFailed, "", "call discovery recorded nothing (static call resolution only)"});
    return true;
  }
  auto calls = ObservedCalls::read(out->callsFile);
  if (!calls) {
    res_.notes.push_back({NoteKind::DiscoveryFailed, "",
                          "call discovery unreadable (static call resolution only): " + calls.error().message});
    return true;
  }
  res_.observedFunctions = calls->codes().size();
  log("discovery: " + std::to_string(calls->codes().size()) + " workspace code objects ran, " +
      std::to_string(calls->edges().size()) + " call edges, " + formatDuration(static_cast<double>(out->wallMs) * 1e6));
  if (calls->backwardCalls() == uint64_t{0})
    res_.notes.push_back(
        {NoteKind::NoBackwardPass, "", "no backward pass ran in the discovery run: autograd sequence ranges off"});
  plan_.setObserved(std::make_shared<const ObservedCalls>(std::move(*calls)));
  return true;
}

bool Loop::autogradRanges() const {
  const ObservedCalls* oc = plan_.observed();
  return !(oc && oc->backwardCalls() == uint64_t{0});
}

uint64_t Loop::predictedPushes(const FunctionRef& fn) {
  const ObservedCalls* oc = plan_.observed();
  uint64_t calls = 0;
  for (int32_t c : oc->codesOf(fn.path, fn.qualName)) calls += oc->code(c).calls;
  return calls;
}

uint64_t Loop::predictedPushes(const PlanNode& n) {
  const ObservedCalls* oc = plan_.observed();
  if (n.kind == NodeKind::FunctionBody) return predictedPushes(FunctionRef{n.path, n.qualName, n.defLine});
  uint64_t hits = 0;
  for (int32_t c : plan_.observedCodes(n)) hits += oc->maxLineHits(c, n.lines.first + 1, n.lines.last + 1);
  return hits;
}

int Loop::eagerExpand(int round) {
  // Follow what ran, several levels at once: every planned, unexpanded node whose lines ran is
  // refined now (its statements and the functions observed beneath it, whose own lines are then
  // treated the same way), breadth-first, while the predicted pushes fit the eager budget. What
  // does not fit is refined the ordinary way, after it was measured.
  if (!plan_.observed()) return 0;
  const ObservedCalls* oc = plan_.observed();
  std::vector<int> queue;
  for (const auto& n : plan_.nodes())
    if (n.state == NodeState::Pending && !n.expanded) queue.push_back(n.id);
  uint64_t spent = 0;
  int added = 0;
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    int id = queue[qi];
    const PlanNode& n = plan_.node(id);
    if (n.expanded || n.state != NodeState::Pending) continue;
    bool ran = false;
    for (int32_t c : plan_.observedCodes(n)) ran = ran || oc->anyLineRan(c, n.lines.first + 1, n.lines.last + 1);
    if (!ran) continue;
    Children c = plan_.children(id);
    if (c.empty()) continue;
    uint64_t cost = 0;
    for (const auto& fn : c.callees)
      if (!plan_.hasFunction(fn)) cost += predictedPushes(fn) * 2;  // body + its lines, roughly
    PlanNode probe = n;
    for (const auto& s : c.statements) {
      probe.lines = s;
      probe.kind = NodeKind::Statements;
      cost += predictedPushes(probe);
    }
    if (spent + cost > cfg_.policy.maxEagerPushes) {
      eagerSkipped_.insert(id);
      continue;
    }
    spent += cost;
    size_t mark = plan_.nodes().size();
    added += plan_.expand(id, round);
    for (size_t k = mark; k < plan_.nodes().size(); ++k) {
      const PlanNode& nk = plan_.node(static_cast<int>(k));
      queue.push_back(nk.id);
      // A function body was added with its top-level lines: those are candidates too.
    }
  }
  if (added > 0) log("followed the observed calls: " + std::to_string(added) + " ranges placed ahead");
  if (!eagerSkipped_.empty())
    log("eager placement stopped at the push budget (" + std::to_string(cfg_.policy.maxEagerPushes) + ")");
  return added;
}

Loop::AtomicWhy Loop::atomicReason(int id) {
  using Why = attribution::AtomicReason;
  Children c = plan_.children(id);
  for (const auto& k : plan_.nodes())
    if (k.parent == id && k.state == NodeState::Refused)
      return {Why::Budget, "a finer range was refused for the NVTX budget (" + describe(k) + ": " + k.reason + ")"};
  if (eagerSkipped_.count(id) && !plan_.node(id).expanded)
    return {Why::Budget, "the calls beneath it were not followed: the push budget for ranges placed ahead was spent"};
  for (const auto& fn : c.callees) {
    bool found = false;
    std::string focus = fn.path + "::" + fn.qualName;
    for (const auto& k : plan_.nodes()) {
      if (k.kind != NodeKind::FunctionBody || k.path != fn.path || k.qualName != fn.qualName) continue;
      found = true;
      if (k.state == NodeState::Refused)
        return {Why::Budget, focus + " ran beneath it but was refused for the NVTX budget (" + k.reason + ")", focus};
      if (k.state == NodeState::Unplaced)
        return {Why::Unfollowed, focus + " ran beneath it but could not be wrapped (" + k.reason + ")", focus};
    }
    if (!found) return {Why::Unfollowed, focus + " ran beneath it but was not wrapped", focus};
  }
  for (const auto& u : c.unfollowed) {
    std::string where = u.path + ":" + std::to_string(u.line) + " " + u.qualName;
    if (u.noSource) return {Why::NoSource, where + " ran beneath it: " + u.why};
    return {Why::Unfollowed, where + " ran beneath it: " + u.why +
                                 (u.qualName.find("<lambda>") != std::string::npos
                                      ? "; its launches stay on this line (make it a def to see them per line)"
                                      : "")};
  }
  if (!plan_.observed())
    return {Why::Library, "no workspace call beneath it was resolved statically (call discovery was off)"};
  return {Why::Library, "its launches come from code outside the workspace"};
}

Result<void> Loop::planRoundZero() {
  const Focus& f = cfg_.focus;
  if (f.kind == FocusKind::Function || (f.kind == FocusKind::Kernel && !f.qualName.empty())) {
    auto file = index_.file(f.path);
    if (!file) return Error::invalid(f.path + ": " + file.error().message);
    if ((*file)->hasErrors()) return Error::invalid(f.path + ": has syntax errors; fix them before profiling");
    auto fn = plan_.resolver().findFunction(f.path, f.qualName);
    if (!fn)
      return Error::notFound(f.path + ": no function '" + f.qualName + "' (use its qualified name, e.g. Class.method)");
    auto id = plan_.addFunction(*fn, Origin::Focus, -1, 0);
    if (!id) return id.error();
    roots_.push_back(*id);
    res_.focusPath = f.path;
    res_.focusFunction = f.qualName;
    const auto& n = plan_.node(*id);
    res_.focusFirstLine = n.lines.first + 1;
    res_.focusLastLine = n.lines.last + 1;
    return {};
  }
  if (f.kind == FocusKind::Lines) {
    auto file = index_.file(f.path);
    if (!file) return Error::invalid(f.path + ": " + file.error().message);
    if (f.lastLine > (*file)->lines().lineCount())
      return Error::invalid("the region: " + f.path + " has only " + std::to_string((*file)->lines().lineCount()) +
                            " lines");
    // A `def` line in the region means its function: its body is wrapped (the def statement
    // itself only runs once, when the module or class is created, and launches nothing).
    const auto& m = (*file)->model();
    LineSpan region{f.firstLine - 1, f.lastLine - 1};
    std::vector<LineSpan> defSpans;
    for (const auto& fn : m.functions) {
      if (fn.defLine < region.first || fn.defLine > region.last) continue;
      bool outer = std::none_of(defSpans.begin(), defSpans.end(), [&](const LineSpan& s) {
        return fn.lines.first >= s.first && fn.lines.last <= s.last;
      });
      if (!outer) continue;
      auto id = plan_.addFunction(FunctionRef{f.path, fn.qualName, fn.defLine}, Origin::Region, -1, 0);
      if (!id) return id.error();
      roots_.push_back(*id);
      defSpans.push_back(fn.lines);
    }
    bool others = defSpans.empty();
    for (const auto& s : m.statements) {
      if (others) break;
      if (s.lines.first < region.first || s.lines.last > region.last || s.docstring) continue;
      bool inDef = std::any_of(defSpans.begin(), defSpans.end(),
                               [&](const LineSpan& d) { return s.lines.first >= d.first && s.lines.last <= d.last; });
      others = !inDef;
    }
    if (others) {
      auto id = plan_.addRegion(f.path, region, Origin::Region, 0);
      if (!id) return id.error();
      roots_.push_back(*id);
    }
    res_.focusPath = f.path;
    res_.focusFirstLine = f.firstLine;
    res_.focusLastLine = f.lastLine;
    return {};
  }
  // --kernel alone: start from the entry script.
  if (!entryPath_)
    return Error::invalid(
        "a kernel pattern without a focus function needs an entry that runs a Python file of the workspace");
  if (addEntryStage(0) == 0) return Error::invalid(*entryPath_ + ": no top-level statement to wrap");
  res_.focusPath = *entryPath_;
  return {};
}

int Loop::addEntryStage(int round) {
  if (!entryPath_) return 0;
  auto f = index_.file(*entryPath_);
  if (!f) return 0;
  const auto& m = (*f)->model();
  int added = 0;
  size_t before = plan_.nodes().size();
  for (int32_t si : m.moduleBlock().statements) {
    const auto& s = m.statements[si];
    if (s.docstring || s.futureImport || s.definesFunction != kNone || s.definesClass != kNone) continue;
    if (s.isImport()) continue;
    auto id = plan_.addStatements(*entryPath_, s.lines, Origin::Entry, -1, round);
    if (!id) continue;
    if (plan_.node(*id).state == NodeState::Idle) plan_.node(*id).state = NodeState::Pending;
    // Descend eagerly through `if __name__ == "__main__": main()`: the entry's statements, the
    // statements of its compound ones, and the workspace functions they call, in this one round.
    if (!plan_.node(*id).expanded) {
      size_t mark = plan_.nodes().size();
      plan_.expand(*id, round);
      for (size_t k = mark; k < plan_.nodes().size(); ++k)
        if (plan_.node(static_cast<int>(k)).kind == NodeKind::Statements &&
            plan_.node(static_cast<int>(k)).parent == *id && !plan_.node(static_cast<int>(k)).expanded)
          plan_.expand(static_cast<int>(k), round);
    }
  }
  for (const auto& t : plan_.resolver().threadTargets())
    if (!plan_.hasFunction(t)) {
      (void)plan_.addFunction(t, Origin::ThreadTarget, -1, round);
      res_.notes.push_back(
          {NoteKind::Widened, t.path + "::" + t.qualName, "wrapped thread target " + t.path + "::" + t.qualName});
    }
  added = static_cast<int>(plan_.nodes().size() - before);
  return added;
}

int Loop::addCallersStage(int round) {
  size_t before = plan_.nodes().size();
  std::vector<FunctionRef> fns;
  for (int id : roots_)
    if (plan_.node(id).kind == NodeKind::FunctionBody)
      fns.push_back(FunctionRef{plan_.node(id).path, plan_.node(id).qualName, plan_.node(id).defLine});
  // The entry file may hold the callers: make sure it is loaded before searching.
  if (entryPath_) (void)index_.file(*entryPath_);
  for (const auto& fn : fns) {
    std::vector<FunctionRef> callers = plan_.resolver().callers(fn);
    if (const ObservedCalls* oc = plan_.observed()) {
      // The functions seen calling it, and theirs, up to the entry: one widening round.
      std::vector<int32_t> work = oc->codesOf(fn.path, fn.qualName);
      std::set<int32_t> seen(work.begin(), work.end());
      while (!work.empty()) {
        int32_t code = work.back();
        work.pop_back();
        for (const auto& e : oc->edgesInto(code)) {
          if (!seen.insert(e.caller).second) continue;
          work.push_back(e.caller);
          if (auto c = plan_.functionOfCode(e.caller);
              c && std::find(callers.begin(), callers.end(), *c) == callers.end())
            callers.push_back(*c);
        }
      }
    }
    for (const auto& c : callers)
      if (!plan_.hasFunction(c)) {
        (void)plan_.addFunction(c, Origin::Caller, -1, round);
        res_.notes.push_back(
            {NoteKind::Widened, c.path + "::" + c.qualName, "widened to caller " + c.path + "::" + c.qualName});
      }
  }
  for (const auto& t : plan_.resolver().threadTargets())
    if (!plan_.hasFunction(t)) {
      (void)plan_.addFunction(t, Origin::ThreadTarget, -1, round);
      res_.notes.push_back(
          {NoteKind::Widened, t.path + "::" + t.qualName, "widened to thread target " + t.path + "::" + t.qualName});
    }
  return static_cast<int>(plan_.nodes().size() - before);
}

bool Loop::switchToHarness(const std::string& why) {
  if (harnessTried_) return false;
  harnessTried_ = true;
  HarnessRequest hr;
  hr.workspace = cfg_.workspace;
  hr.path = cfg_.focus.path;
  hr.qualName = cfg_.focus.qualName;
  hr.factory = cfg_.harnessFactory;
  auto h = generateHarness(index_, hr);
  auto failed = [&](std::string text) {
    harnessFailure_ = text;
    res_.notes.push_back({NoteKind::Harness, "", std::move(text)});
  };
  if (!h) {
    failed("harness: " + h.error().message);
    log("harness: " + h.error().message);
    return false;
  }
  fs::path dir = exec_ ? exec_->runDir() : fs::path();
  if (dir.empty()) dir = cfg_.workspace / ".kernlens";
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::path script = dir / "kernlens_harness.py";
  FILE* fp = std::fopen(script.c_str(), "wb");
  if (!fp) {
    failed("harness: cannot write " + script.string());
    return false;
  }
  std::fwrite(h->script.data(), 1, h->script.size(), fp);
  std::fclose(fp);
  std::string entry = "python3 " + runner::shellQuote(script.string());
  auto ex = make_(entry);
  if (!ex) {
    failed("harness: " + ex.error().message);
    return false;
  }
  exec_ = std::move(*ex);
  entry_ = entry;
  res_.entry = entry;
  for (const auto& n : h->notes) res_.notes.push_back({NoteKind::Harness, "", "harness: " + n});
  res_.notes.push_back({NoteKind::HarnessSwitched, script.string(),
                        "profiling a generated harness (" + script.string() + ") because " + why});
  log("harness: " + why + "; running " + script.string());
  return true;
}

void Loop::buildLines(const attribution::RangeTable& stats, bool widenedOut) {
  res_.lines.clear();
  for (const auto& n : plan_.nodes()) {
    if (!n.wrapped() || n.rangeName.empty()) continue;
    const auto* found = stats.find(n.rangeName);
    if (!found || found->exclusiveLaunches == 0) continue;
    const auto& s = *found;
    LineResult l = attribution::lineResult(s);
    l.path = n.path;
    l.line = n.lines.first;
    l.lastLine = n.lines.last;
    l.function = n.function;
    l.atomic = n.state == NodeState::Atomic;
    l.body = n.kind == NodeKind::FunctionBody;
    if (l.body) {
      // A one-statement body is wrapped as one range: report it on its statement.
      Children kids = plan_.children(n.id);
      if (kids.statements.empty())
        if (auto f = index_.file(n.path)) {
          const auto& m = (*f)->model();
          int32_t fi = plan_.resolver().functionIndex(FunctionRef{n.path, n.qualName, n.defLine});
          std::vector<int32_t> top;
          for (size_t si = 0; fi != kNone && si < m.statements.size(); ++si)
            if (m.statements[si].parentBlock == m.functions[fi].body && !m.statements[si].docstring)
              top.push_back(static_cast<int32_t>(si));
          if (top.size() == 1 && !m.functions[fi].oneLine) {
            l.line = m.statements[top[0]].lines.first;
            l.lastLine = m.statements[top[0]].lines.last;
            l.body = false;
          }
        }
    }
    if (n.state == NodeState::Atomic || n.state == NodeState::OutOfFocus) l.note = n.reason;
    if (n.state == NodeState::Atomic) {
      AtomicWhy why = atomicReason(n.id);
      l.atomicReason = why.reason;
      l.note = std::move(why.note);
      l.suggestFocus = std::move(why.focus);
    }
    if (kernelRe_ && std::none_of(l.kernels.begin(), l.kernels.end(), [&](const attribution::KernelStat& k) {
          return kernelMatches(kernelRe_, k.opName);
        })) {
      l.noMatchingKernel = true;
      l.note = "launches no kernel matching --kernel";
    }
    if (n.state == NodeState::Refining || n.state == NodeState::Pending) l.note = "not converged: still being refined";
    res_.lines.push_back(std::move(l));
  }
  std::sort(res_.lines.begin(), res_.lines.end(), [](const LineResult& a, const LineResult& b) {
    return std::tie(a.path, a.line, b.lastLine) < std::tie(b.path, b.line, a.lastLine);
  });
  res_.unmapped.clear();
  res_.unmapped = stats.unmapped;
  if (widenedOut && !stats.unmapped.empty())
    res_.notes.push_back({NoteKind::UnmappedRemain, "",
                          "unmapped launches remain although the callers and the entry script were wrapped "
                          "(import-time code, other processes or threads not started from workspace code)"});
}

Result<void> Loop::prepare() {
  if (cfg_.entry.empty()) return Error::invalid("no entry command (e.g. \"python train.py\")");
  if (cfg_.maxRounds < 1) return Error::invalid("at least one round is needed");
  if (cfg_.focus.kind == FocusKind::Kernel && cfg_.focus.kernelPattern.empty())
    return Error::invalid("empty kernel pattern");
  policy_ = cfg_.policy;
  if (cfg_.focus.kind == FocusKind::Kernel) policy_.kernelPattern = cfg_.focus.kernelPattern;
  auto re = compileKernelPattern(policy_.kernelPattern);
  if (!re) return re.error();
  kernelRe_ = *re;

  entry_ = cfg_.entry;
  res_.entry = entry_;
  fs::path cwd = cfg_.cwd.empty() ? cfg_.workspace : cfg_.cwd;
  entryPath_ = entryScript(cfg_.entry, cwd, index_);
  if (auto p = planRoundZero(); !p) return p.error();
  res_.strategy = cfg_.strategy;

  auto ex = make_(entry_);
  if (!ex) return ex.error();
  exec_ = std::move(*ex);
  res_.backend = exec_->backendName();
  if (cfg_.harness == HarnessMode::Always && cfg_.focus.kind == FocusKind::Function)
    if (!switchToHarness("a harness was asked for"))
      return Error::invalid(harnessFailure_.empty() ? "harness failed" : harnessFailure_);
  return {};
}

Result<LoopResult> Loop::run() {
  // 1. Check the configuration, plan round 0, make the executor (a harness when asked for).
  if (auto p = prepare(); !p) return p.error();
  if (cfg_.strategy == Strategy::Lines) return runLines();

  // 2. Call discovery: which workspace functions run, from where.
  if (cfg_.discoverCalls) {
    if (!discover()) {
      stop(StopReason::Cancelled, "cancelled during the call discovery run");
      return res_;
    }
    // The focus is seen called from workspace code: wrap that caller chain now rather than
    // after a round shows launches outside the focus (nearly every program launches some).
    if (plan_.observed() && cfg_.focus.kind != FocusKind::Kernel && addCallersStage(0) > 0) widenedAhead_ = true;
    eagerExpand(0);
  }

  // 3. Rounds, until converged, the round budget is spent, or a round is cancelled or fails.
  widenStage_ = widenedAhead_ ? 1 : 0;
  for (int round = 0; round < cfg_.maxRounds + (harnessTried_ ? 1 : 0); ++round) {
    auto next = runRound(round);
    if (!next) return next.error();
    if (!*next) break;
  }

  // 4. The lines of the last recorded round, their verdicts, and why the loop stopped.
  finish();
  return res_;
}

void Loop::keepStats(int round, attribution::RangeTable&& stats) {
  last_ = std::move(stats);
  lastIndex_ = round;
  haveStats_ = true;
}

Result<bool> Loop::runRound(int round) {
  if (cancel_.isCancelled()) {
    stop(StopReason::Cancelled, "cancelled before round " + std::to_string(round));
    return false;
  }
  // 1. Run the round's plan.
  auto files = plan_.filePlans();
  size_t nranges = 0;
  for (const auto& f : files) nranges += f.ranges.size();
  std::string stage = "round " + std::to_string(round + 1) + "/" + std::to_string(cfg_.maxRounds);
  if (cb_.onRound)
    cb_.onRound(
        LoopProgress{round, cfg_.maxRounds, nranges, stage, stage + ": " + std::to_string(nranges) + " ranges"});
  RoundRequest req{round, files, std::nullopt};
  req.autogradRanges = autogradRanges();
  auto out = exec_->run(req, cancel_);
  if (!out) {
    if (out.error().code == Error::Code::Cancelled) {
      stop(StopReason::Cancelled, "cancelled during round " + std::to_string(round + 1));
      return false;
    }
    if (round == 0 && !haveStats_) return Error{out.error().code, "round 1: " + out.error().message};
    stop(StopReason::Failed, "round " + std::to_string(round + 1) + " failed: " + out.error().message);
    return false;
  }
  ++res_.rounds;
  res_.emulated = res_.emulated || out->emulated;
  addRunnerNotes(*out, round);
  res_.lastWallMs = out->wallMs;
  plan_.bindOverlay(out->overlay);
  for (const auto& n : plan_.nodes())
    if (n.state == NodeState::Unplaced && n.round == round)
      res_.notes.push_back({NoteKind::NotWrapped, describe(n), "not wrapped: " + describe(n) + ": " + n.reason});

  // 2. Attribute and record it; the baseline run after the first.
  auto stats = tabulate(req, *out);
  if (!stats) {
    stop(stats.error().code == Error::Code::Cancelled ? StopReason::Cancelled : StopReason::Failed,
         "attribution of round " + std::to_string(round + 1) + ": " + stats.error().message);
    return false;
  }
  if (auto b = measureBaseline(cfg_.maxRounds); !b) {
    return b.error();
  } else if (!*b) {
    stop(StopReason::Cancelled, "cancelled during the uninstrumented baseline run");
    keepStats(round, std::move(*stats));  // the round itself is complete
    return false;
  }
  RoundLog rl = roundLog(round, nranges, *stats, *out);
  for (const auto& n : plan_.nodes())
    if (!n.rangeName.empty() && n.wrapped()) everWrapped_.insert(n.rangeName);

  // 3. Branch extraction: the entry never reached the focus function.
  if (extractBranch(round, *stats)) {
    rl.notes.push_back(
        {NoteKind::HarnessSwitched, "", "entry never reached the focus: switched to a generated harness"});
    res_.roundLog.push_back(std::move(rl));
    return true;
  }

  // 4. Decide on every wrapped range, then the wall-time budget, then widening.
  std::vector<RangeCost> costs;
  bool changed = decideRanges(round, *stats, rl, costs);
  if (applyWallBudget(*out, *stats, costs, rl)) changed = true;
  if (widen(round, *stats, rl)) changed = true;
  if (changed) eagerExpand(round + 1);
  keepStats(round, std::move(*stats));
  res_.roundLog.push_back(rl);
  log("round " + std::to_string(round + 1) + ": " + std::to_string(rl.ranges) + " ranges, " +
      std::to_string(rl.launches) + " launches, refined " + std::to_string(rl.refined) + ", resolved " +
      std::to_string(rl.resolved) + ", atomic " + std::to_string(rl.atomic) + ", " +
      formatDuration(static_cast<double>(rl.wallMs) * 1e6));

  // 5. Converged, or out of rounds.
  if (!changed) {
    res_.converged = true;
    stop(StopReason::Converged);
    return false;
  }
  if (res_.rounds >= cfg_.maxRounds) {
    stop(StopReason::RoundBudget);
    return false;
  }
  return true;
}

bool Loop::extractBranch(int round, const attribution::RangeTable& stats) {
  if (round != 0 || cfg_.focus.kind != FocusKind::Function || cfg_.harness != HarnessMode::Auto || roots_.empty())
    return false;
  const auto& root = plan_.node(roots_[0]);
  const auto* rootEntry = stats.find(root.rangeName);
  if ((rootEntry && rootEntry->invocations != 0) || harnessTried_) return false;
  return switchToHarness("the entry never reached " + root.path + "::" + root.qualName);
}

bool Loop::decideRanges(int round, const attribution::RangeTable& stats, RoundLog& rl, std::vector<RangeCost>& costs) {
  bool changed = false;
  for (const auto& n0 : plan_.nodes()) {
    if (!n0.wrapped() || n0.rangeName.empty()) continue;
    int id = n0.id;
    bool root = std::find(roots_.begin(), roots_.end(), id) != roots_.end();
    const attribution::RangeEntry* s = stats.find(n0.rangeName);
    if (s) costs.push_back(RangeCost{id, s->invocations, root});
    NodeFacts facts{id, root, n0.expanded};
    Decision d = decide(facts, s, policy_, [&](int nid) { return !plan_.children(nid).empty(); });
    PlanNode& n = plan_.node(id);
    switch (d.action) {
      case Action::Idle:
        n.state = NodeState::Idle;
        n.reason = d.reason;
        ++rl.idle;
        break;
      case Action::Refuse:
        n.state = NodeState::Refused;
        n.reason = d.reason;
        res_.refusals.push_back(describe(n) + ": " + d.reason);
        log("refused " + describe(n) + ": " + d.reason);
        changed = true;
        ++rl.refused;
        break;
      case Action::Resolve:
        n.state = NodeState::Resolved;
        n.reason.clear();
        ++rl.resolved;
        break;
      case Action::OutOfFocus:
        n.state = NodeState::OutOfFocus;
        n.reason = d.reason;
        break;
      case Action::Refine: {
        int added = plan_.expand(id, round + 1);
        if (added > 0) {
          n.state = NodeState::Refining;
          n.reason = d.reason;
          changed = true;
          ++rl.refined;
          log("refine " + describe(n) + ": " + d.reason + " -> " + std::to_string(added) + " new ranges");
        } else {
          n.state = NodeState::Atomic;
          n.reason = "its statements and callees are already wrapped; the rest comes from the line itself";
          ++rl.atomic;
        }
        break;
      }
      case Action::Atomic:
        n.state = NodeState::Atomic;
        n.reason = d.reason;
        n.expanded = true;
        ++rl.atomic;
        break;
    }
  }
  return changed;
}

bool Loop::applyWallBudget(const RoundOutcome& out, const attribution::RangeTable& stats,
                           const std::vector<RangeCost>& costs, RoundLog& rl) {
  bool changed = false;
  Overhead oh{res_.baselineWallMs, out.wallMs, stats.invocations, stats.totalOps};
  for (const auto& w : wallRefusals(oh, costs, policy_.maxWallOverhead)) {
    PlanNode& n = plan_.node(w.id);
    if (n.state == NodeState::Refused || n.state == NodeState::Idle) continue;
    n.state = NodeState::Refused;
    n.reason = w.reason;
    res_.refusals.push_back(describe(n) + ": " + w.reason);
    changed = true;
    ++rl.refused;
  }
  res_.pushesPerLaunch = oh.pushesPerLaunch();
  return changed;
}

bool Loop::widen(int round, const attribution::RangeTable& stats, RoundLog& rl) {
  // Kernels launched outside every managed range: wrap the callers, then the entry script.
  int64_t outside = 0;
  for (const auto& u : stats.unmapped)
    if (u.reason == attribution::UnmappedReason::OutsideRanges && kernelMatches(kernelRe_, u.name))
      outside += u.launches;
  if (outside == 0 || widenStage_ >= 2) return false;
  int added = 0;
  if (widenStage_ == 0) {
    widenStage_ = 1;
    added = addCallersStage(round + 1);
    if (added > 0)
      rl.notes.push_back(
          {NoteKind::Widened, "", std::to_string(outside) + " launches outside every range: wrapped the callers"});
  }
  if (added == 0 && widenStage_ == 1) {
    widenStage_ = 2;
    added = addEntryStage(round + 1);
    if (added > 0)
      rl.notes.push_back(
          {NoteKind::Widened, "", std::to_string(outside) + " launches outside every range: wrapped the entry script"});
  }
  return added > 0;
}

void Loop::finish() {
  res_.rangesInserted = everWrapped_.size();
  if (haveStats_) {
    buildLines(last_, widenStage_ == 2);
    // The round's stored ranges get the verdicts (an editor reading the store shows them).
    if (auto a = exec_->annotate(lastIndex_, res_.lines); !a)
      res_.notes.push_back(
          {NoteKind::VerdictsNotStored, "", "the atomic reasons were not stored: " + a.error().message});
  }
  if (!stopped_) stop(StopReason::RoundBudget);
  int64_t outsideLaunches = 0;
  for (const auto& u : res_.unmapped) outsideLaunches += u.launches;
  size_t atomicLines = 0, counted = 0, unmatched = 0;
  for (const auto& l : res_.lines) {
    if (l.noMatchingKernel) {
      ++unmatched;
      continue;
    }
    ++counted;
    atomicLines += l.atomic ? 1 : 0;
  }
  if (haveStats_ && !roots_.empty() &&
      std::all_of(roots_.begin(), roots_.end(), [&](int id) { return plan_.node(id).state == NodeState::Idle; })) {
    const auto& r0 = plan_.node(roots_[0]);
    res_.notes.push_back({NoteKind::FocusLaunchedNothing, describe(r0),
                          (cfg_.focus.kind == FocusKind::Lines ? "the region " : "the focus ") + describe(r0) +
                              " launched nothing (" + r0.reason + ")"});
  }
  if (res_.stopReason == StopReason::Converged) {
    res_.why = "every attributed launch lies in a leaf range with at most one launch per invocation (" +
               std::to_string(counted - atomicLines) + " lines) or in an atomic line (" + std::to_string(atomicLines) +
               ")";
    if (unmatched > 0)
      res_.why += "; " + std::to_string(unmatched) + " lines launch no kernel matching --kernel (not counted)";
    if (outsideLaunches > 0)
      res_.why +=
          "; " + std::to_string(outsideLaunches) + " launches stayed outside every wrapped range (see unmapped)";
  } else if (res_.stopReason == StopReason::RoundBudget) {
    size_t pending = 0;
    for (const auto& n : plan_.nodes()) pending += n.state == NodeState::Refining || n.state == NodeState::Pending;
    res_.why = "the round budget (" + std::to_string(cfg_.maxRounds) + ") was spent with " + std::to_string(pending) +
               " ranges still being refined";
  }
}

Result<LoopResult> Loop::runLines() {
  // One round: the probe opens a range per executed line of the traced functions.
  std::vector<FunctionRef> fns;
  for (int id : roots_) {
    const auto& n = plan_.node(id);
    if (n.kind == NodeKind::FunctionBody)
      fns.push_back(FunctionRef{n.path, n.qualName, n.defLine});
    else if (!n.function.empty())
      if (auto fn = plan_.resolver().findFunction(n.path, n.function)) fns.push_back(*fn);
  }
  if (fns.empty()) return Error::invalid("the line strategy needs a focus function (or a region inside a function)");
  auto traced = reachableFunctions(plan_.resolver(), fns, cfg_.lineDepth);
  fs::path dir = exec_->runDir();
  if (dir.empty()) dir = cfg_.workspace / ".kernlens";
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::path spec = dir / "line_ranges.json";
  if (auto w = writeLineSpec(index_, traced, spec); !w) return w.error();
  if (cb_.onRound)
    cb_.onRound(LoopProgress{0, 1, traced.size(), "line strategy",
                             "line strategy: tracing " + std::to_string(traced.size()) + " functions"});
  RoundRequest req{0, {}, spec};
  req.autogradRanges = autogradRanges();
  auto out = exec_->run(req, cancel_);
  if (!out) {
    if (out.error().code == Error::Code::Cancelled) {
      stop(StopReason::Cancelled, "cancelled during the line-strategy round");
      return res_;
    }
    return Error{out.error().code, "line-strategy round: " + out.error().message};
  }
  res_.rounds = 1;
  res_.emulated = out->emulated;
  res_.lastWallMs = out->wallMs;
  auto stats = tabulate(req, *out);
  if (!stats) return stats.error();
  res_.lines = lineResultsFromLineRanges(index_, *stats);
  res_.rangesInserted = stats->ranges.size();
  res_.pushesPerLaunch =
      stats->totalOps ? static_cast<double>(stats->invocations) / static_cast<double>(stats->totalOps) : 0;
  addRunnerNotes(*out, 0);
  res_.roundLog.push_back(roundLog(0, stats->ranges.size(), *stats, *out));
  res_.unmapped = stats->unmapped;
  if (auto b = measureBaseline(1); !b)
    return b.error();
  else if (!*b) {
    stop(StopReason::Cancelled, "cancelled during the baseline run");
    return res_;
  }
  res_.converged = true;
  stop(StopReason::Converged);
  size_t atomicLines = 0;
  for (const auto& l : res_.lines) atomicLines += l.atomic ? 1 : 0;
  res_.why = "line strategy: one range per executed line of " + std::to_string(traced.size()) +
             " traced functions in one round; " + std::to_string(atomicLines) + " lines launch several kernels";
  return res_;
}

}  // namespace

const char* stopReasonName(StopReason r) {
  switch (r) {
    case StopReason::Converged: return "converged";
    case StopReason::RoundBudget: return "round_budget";
    case StopReason::Cancelled: return "cancelled";
    case StopReason::Failed: return "failed";
  }
  return "";
}

Result<LoopResult> runLoop(const LoopConfig& cfg, const ExecutorFactory& makeExecutor, const LoopCallbacks& cb,
                           const CancellationToken& cancel) {
  if (cfg.workspace.empty() || !fs::is_directory(cfg.workspace))
    return Error::invalid("workspace is not a directory: " + cfg.workspace.string());
  Loop loop(cfg, makeExecutor, cb, cancel);
  return loop.run();
}

}  // namespace kl::planner
