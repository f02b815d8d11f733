#include "tests/unit/planner/scripted_executor.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "core/nvtx/overlay.h"
#include "core/planner/profile_request.h"
#include "core/profile/reader.h"
#include "tests/support/profile_builder.h"
#include "tests/support/test_support.h"

namespace kl::test {
namespace {

namespace fs = std::filesystem;
using namespace kl::profile;

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::optional<std::pair<std::string, uint32_t>> fileLine(const std::string& s, uint32_t* endLine = nullptr) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  std::string nums = s.substr(colon + 1);
  size_t dash = nums.find('-');
  try {
    uint32_t a = static_cast<uint32_t>(std::stoul(nums.substr(0, dash)));
    if (endLine) *endLine = dash == std::string::npos ? a : static_cast<uint32_t>(std::stoul(nums.substr(dash + 1)));
    return std::make_pair(s.substr(0, colon), a);
  } catch (...) {
    return std::nullopt;
  }
}

Result<TraceStep> parseStep(const std::string& line) {
  auto w = words(line);
  if (w.size() != 2) return Error::invalid("trace step: expected FRAME[>FRAME...] KERNELS, got '" + line + "'");
  TraceStep st;
  for (const auto& f : split(w[0], '>')) {
    auto fl = fileLine(f);
    if (!fl) return Error::invalid("trace step: bad frame '" + f + "'");
    st.frames.push_back(*fl);
  }
  for (const auto& alt : split(w[1], '|')) {
    std::vector<std::pair<std::string, int64_t>> ks;
    if (alt != "-")
      for (const auto& k : split(alt, ',')) {
        size_t at = k.find('@');
        ks.emplace_back(k.substr(0, at), at == std::string::npos ? 10 : std::stoll(k.substr(at + 1)));
      }
    st.alternatives.push_back(std::move(ks));
  }
  return st;
}

/// The open-range machinery of one synthetic run: push/pop ranges on the builder's thread.
struct Synth : ProfileBuilder {
  int64_t t = 1000;
  struct Open {
    size_t depth;
    std::string name;
    size_t range;  // index into m.ranges
  };
  std::vector<Open> open;

  void push(size_t depth, const std::string& name) { open.push_back(Open{depth, name, range(name, t++, 0)}); }
  void popTo(size_t n) {
    while (open.size() > n) {
      m.ranges.put<&kl::profile::Range::end>(open.back().range, t++);
      open.pop_back();
    }
  }
  void launch(const std::string& k, int64_t ns) {
    kernel(k, t, ns, true, 5);
    t += 10;
  }
};

}  // namespace

Result<LoopCase> parseLoopCase(const std::string& text, const std::string& name) {
  LoopCase c;
  c.name = name;
  std::istringstream in(text);
  std::string line;
  int no = 0;
  std::string* fileText = nullptr;
  Trace* trace = nullptr;
  bool inCalls = false;
  auto bad = [&](const std::string& why) { return Error::invalid(name + ":" + std::to_string(no) + ": " + why); };
  while (std::getline(in, line)) {
    ++no;
    bool indented = line.size() >= 2 && line[0] == ' ' && line[1] == ' ';
    if (indented && fileText) {
      *fileText += line.substr(2) + "\n";
      continue;
    }
    if (fileText && line.empty()) {
      *fileText += "\n";
      continue;
    }
    std::string body = line.substr(0, line.find('#'));
    auto w = words(body);
    if (w.empty()) continue;
    if (indented && inCalls) {  // the calls file: whitespace-separated fields become tabs
      std::string row;
      for (const auto& x : w) row += (row.empty() ? "" : "\t") + x;
      *c.calls += row + "\n";
      continue;
    }
    if (indented && trace) {
      auto st = parseStep(body);
      if (!st) return bad(st.error().message);
      trace->steps.push_back(std::move(*st));
      continue;
    }
    fileText = nullptr;
    trace = nullptr;
    inCalls = false;
    const std::string& k = w[0];
    auto rest = [&](size_t from) {
      std::string r;
      for (size_t i = from; i < w.size(); ++i) r += (r.empty() ? "" : " ") + w[i];
      return r;
    };
    if (k == "file" && w.size() == 2) {
      fileText = &c.files[w[1]];
    } else if (k == "entry" && w.size() >= 2) {
      c.entry = rest(1);
    } else if (k == "focus" && w.size() >= 2) {
      c.focus.assign(w.begin() + 1, w.end());
    } else if (k == "rounds" && w.size() == 2) {
      c.rounds = std::stoi(w[1]);
    } else if (k == "strategy" && w.size() == 2) {
      c.strategy = w[1] == "lines" ? planner::Strategy::Lines : planner::Strategy::Edits;
    } else if (k == "harness" && w.size() == 2) {
      c.harness = w[1] == "auto"     ? planner::HarnessMode::Auto
                  : w[1] == "always" ? planner::HarnessMode::Always
                                     : planner::HarnessMode::Off;
    } else if (k == "budget" && w.size() == 2) {
      c.pushesPerLaunch = std::stod(w[1]);
    } else if (k == "baseline" && w.size() == 2) {
      c.baseline = w[1] == "on";
    } else if (k == "discovery" && w.size() == 2) {
      c.discovery = w[1] == "on";
    } else if (k == "calls" && w.size() == 1) {
      c.calls.emplace();
      inCalls = true;
    } else if (k == "eager" && w.size() == 2) {
      c.eagerPushes = std::stoull(w[1]);
    } else if (k == "wall" && w.size() == 3) {
      c.baselineMs = std::stoll(w[1]);
      c.roundMs = std::stoll(w[2]);
    } else if (k == "trace") {
      bool harness = std::find(w.begin(), w.end(), "harness") != w.end();
      if (harness) c.harnessTrace.emplace();
      trace = harness ? &*c.harnessTrace : &c.trace;
      for (const auto& x : w)
        if (x.size() > 1 && x[0] == 'x') trace->repeat = std::stoi(x.substr(1));
    } else if (k == "fail" && w.size() >= 3) {
      c.failures[std::stoi(w[1])] = rest(2);
    } else if (k == "cancel" && w.size() == 2 && w[1] == "start") {
      c.cancelAtStart = true;
    } else if (k == "cancel" && w.size() == 2) {
      c.cancelRound = std::stoi(w[1]);
    } else if (k == "expect" && w.size() >= 3 && w[1] == "stop") {
      c.stop = w[2];
    } else if (k == "expect" && w.size() == 3 && w[1] == "rounds") {
      c.expectRounds = std::stoi(w[2]);
    } else if (k == "expect" && w.size() == 3 && w[1] == "runs") {
      c.expectRuns = std::stoi(w[2]);
    } else if (k == "expect" && w.size() >= 4 && w[1] == "atomic") {
      auto reason = attribution::atomicReasonFromName(w[3]);
      if (!reason || *reason == attribution::AtomicReason::None) return bad("expect atomic: bad reason '" + w[3] + "'");
      c.atomicReasons.push_back({w[2], *reason, rest(4)});
    } else if (k == "expect" && w.size() >= 3 && w[1] == "line") {
      ExpectedLine e;
      auto fl = fileLine(w[2], &e.endLine);
      if (!fl) return bad("expect line: bad FILE:A-B '" + w[2] + "'");
      e.file = fl->first;
      e.line = fl->second;
      size_t i = 3;
      if (i < w.size() && w[i] == "atomic") e.atomic = true, ++i;
      if (i < w.size()) e.kernels = split(w[i], ',');
      std::sort(e.kernels.begin(), e.kernels.end());
      if (!c.lines) c.lines.emplace();
      c.lines->push_back(std::move(e));
    } else if (k == "expect" && w.size() == 2 && w[1] == "no-lines") {
      c.lines.emplace();
    } else if (k == "expect" && w.size() == 4 && w[1] == "unmapped") {
      c.unmapped.emplace_back(w[2], w[3]);
    } else if (k == "expect" && w.size() == 4 && w[1] == "variants") {
      c.variants.emplace_back(w[2], std::stoul(w[3]));
    } else if (k == "expect" && w.size() >= 3 && w[1] == "refusal") {
      c.refusals.push_back(rest(2));
    } else if (k == "expect" && w.size() >= 3 && w[1] == "note") {
      c.notes.push_back(rest(2));
    } else {
      return bad("unknown directive '" + body + "'");
    }
  }
  if (c.focus.empty()) return Error::invalid(name + ": no focus");
  if (c.trace.steps.empty()) return Error::invalid(name + ": no trace");
  return c;
}

Result<planner::RoundOutcome> ScriptedExecutor::run(const planner::RoundRequest& req, const CancellationToken& cancel) {
  if (cancel.isCancelled()) return Error::cancelled();  // as the runner: nothing starts once cancelled
  ++log_.runs;
  log_.events.push_back("run " + std::to_string(req.index));
  planner::RoundOutcome out;
  out.wallMs = req.index < 0 ? case_.baselineMs : case_.roundMs;
  if (req.index < 0) {
    out.model = std::make_shared<const ProfileModel>();
    if (req.discoverCalls && case_.calls) {
      std::error_code ec;
      std::filesystem::create_directories(runDir_, ec);
      out.callsFile = runDir_ / "calls.tsv";
      std::ofstream(out.callsFile) << *case_.calls;
    }
    return out;
  }
  if (auto f = case_.failures.find(req.index); f != case_.failures.end()) return Error::io(f->second);
  if (case_.cancelRound && *case_.cancelRound == req.index) {
    if (cancel_) cancel_->cancel();
    return Error::cancelled();
  }
  // Instrument as the runner does.
  for (const auto& fp : req.files) {
    std::string text = readFile(workspace_ / fp.relPath);
    auto of = nvtx::instrumentFile(fp.relPath, text, fp.ranges);
    if (!of) return Error{of.error().code, fp.relPath + ": " + of.error().message};
    out.overlay.files.emplace(fp.relPath, std::move(*of));
  }
  // Line strategy: the probe opens one range per executed line of the traced files.
  std::set<std::string> lineFiles;
  if (req.lineSpec) {
    std::string spec = readFile(*req.lineSpec);
    for (const auto& [file, text] : case_.files)
      if (spec.find("\"path\": \"" + file + "\"") != std::string::npos) lineFiles.insert(file);
  }
  struct Candidate {
    size_t depth;
    uint32_t span;  // lines covered: outer (larger) ranges open first
    std::string name;
  };
  auto rangesAt = [&](const std::vector<std::pair<std::string, uint32_t>>& frames) {
    std::vector<Candidate> c;
    for (size_t d = 0; d < frames.size(); ++d) {
      const auto& [file, line] = frames[d];
      if (const auto* of = out.overlay.find(file))
        for (const auto& pr : of->ranges)
          if (pr.original.contains(line - 1)) c.push_back({d, pr.original.last - pr.original.first, pr.name});
      if (lineFiles.count(file))
        c.push_back({d, 0, "kl:" + file + ":" + std::to_string(line) + "-" + std::to_string(line) + ":line"});
    }
    std::stable_sort(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) {
      return a.depth != b.depth ? a.depth < b.depth : a.span > b.span;
    });
    return c;
  };

  Synth s;
  for (int rep = 0; rep < trace_.repeat; ++rep) {
    const std::vector<std::pair<std::string, uint32_t>>* prev = nullptr;
    for (const auto& step : trace_.steps) {
      auto want = rangesAt(step.frames);
      // Keep the open prefix that continues: same range at the same depth, outer frames unchanged.
      size_t keep = 0;
      while (keep < s.open.size() && keep < want.size() && s.open[keep].name == want[keep].name &&
             s.open[keep].depth == want[keep].depth && prev) {
        size_t d = want[keep].depth;
        bool sameOuter = prev->size() > d &&
                         std::equal(step.frames.begin(), step.frames.begin() + static_cast<long>(d), prev->begin());
        if (!sameOuter) break;
        ++keep;
      }
      s.popTo(keep);
      for (size_t i = keep; i < want.size(); ++i) s.push(want[i].depth, want[i].name);
      const auto& alt = step.alternatives[static_cast<size_t>(rep) % step.alternatives.size()];
      for (const auto& [k, ns] : alt) s.launch(k, ns);
      prev = &step.frames;
    }
    s.popTo(0);
  }
  s.finish();
  out.model = std::make_shared<const ProfileModel>(std::move(s.m));
  return out;
}

Result<void> ScriptedExecutor::record(const planner::RoundRequest&, const attribution::RangeTable& table,
                                      const CancellationToken&) {
  log_.recorded.push_back(table);
  return {};
}

Result<void> ScriptedExecutor::annotate(int round, const std::vector<attribution::LineResult>& lines) {
  log_.annotatedRounds.push_back(round);
  log_.annotated = lines;
  return {};
}

Result<planner::LoopResult> runLoopCase(const LoopCase& c, const fs::path& workspace, ScriptLog& log) {
  for (const auto& [rel, text] : c.files) writeFile(workspace / rel, text);
  // The case's focus in the command line's spelling, made a typed request here.
  planner::ProfileRequest req;
  req.run.workspace = workspace;
  req.run.entry = c.entry;
  req.rounds = c.rounds;
  req.strategy = c.strategy;
  req.harness = c.harness;
  req.discovery = c.discovery;
  req.baseline = c.baseline;
  if (c.pushesPerLaunch) req.maxPushesPerLaunch = *c.pushesPerLaunch;
  auto function = [&](const std::string& spec) {
    size_t sep = spec.rfind("::");
    req.file = spec.substr(0, sep);
    req.function = spec.substr(sep + 2);
  };
  const auto& f = c.focus;
  if (f[0].find("::") != std::string::npos) {
    function(f[0]);
  } else if (f[0] == "lines" && f.size() == 2) {
    size_t colon = f[1].rfind(':'), dash = f[1].find('-', colon);
    req.file = f[1].substr(0, colon);
    req.lines = planner::FocusLines{static_cast<uint32_t>(std::stoul(f[1].substr(colon + 1, dash - colon - 1))),
                                    static_cast<uint32_t>(std::stoul(f[1].substr(dash + 1)))};
  } else if (f[0] == "kernel" && f.size() >= 2) {
    if (f.size() == 3) function(f[2]);
    req.kernelPattern = f[1];
  } else {
    return Error::invalid(c.name + ": focus FILE::QUALNAME | lines FILE:A-B | kernel RE [FILE::QUALNAME]");
  }
  auto checked = planner::checkRequest(req);
  if (!checked.config)
    return Error::invalid(std::string(planner::requestFieldName(checked.error.field)) + ": " + checked.error.message);
  planner::LoopConfig cfg = *checked.config;
  if (c.eagerPushes) cfg.policy.maxEagerPushes = *c.eagerPushes;
  CancellationSource cancel;
  if (c.cancelAtStart) cancel.cancel();
  fs::path runDir = workspace / ".kernlens" / "scripted";
  planner::ExecutorFactory make = [&](const std::string& entry) -> Result<std::shared_ptr<planner::RoundExecutor>> {
    log.entries.push_back(entry);
    bool harness = entry.find("kernlens_harness") != std::string::npos;
    if (harness && !c.harnessTrace) return Error::invalid("the case has no harness trace");
    const Trace& t = harness ? *c.harnessTrace : c.trace;
    return std::shared_ptr<planner::RoundExecutor>(
        std::make_shared<ScriptedExecutor>(c, t, workspace, runDir, log, &cancel));
  };
  planner::LoopCallbacks cb;
  cb.onRecorded = [&log](int round) { log.events.push_back("recorded " + std::to_string(round)); };
  return planner::runLoop(cfg, make, cb, cancel.token());
}

}  // namespace kl::test
