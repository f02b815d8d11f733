#include "core/cute/source_map.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace kl::cute {
namespace {

using python::Expression;
using python::kNone;
using python::Module;

/// The name a call's callee ends with: `f` of `f(...)` and of `a.b.f(...)`; "" for anything
/// else (`f(x)(y)`, `a[i](y)`).
std::string_view calleeName(const Module& m, int32_t call) {
  if (call == kNone || m.expressions[call].kind != Expression::Kind::Call) return {};
  int32_t callee = m.expressions[call].object;
  if (callee == kNone) return {};
  const Expression& e = m.expressions[callee];
  return e.kind == Expression::Kind::Name || e.kind == Expression::Kind::Attribute ? std::string_view(e.name)
                                                                                   : std::string_view();
}

/// A profiler call that closes a region opened by an earlier `HANDLE = start(...)` assignment:
/// `lane0_warp0_stop(buf, eid, tag, tid, max_events)` after `eid = lane0_warp0_start(...)`, and
/// `region_end(buf, tag, token, max_events_per_unit)` after `token = region_start(...)`.
struct StopApi {
  std::string_view name;
  size_t tagPosition;
  size_t handlePosition;
  std::string_view handleKeyword;
  std::string_view start;
};
constexpr StopApi kStopApis[] = {
    {"lane0_warp0_stop", 2, 1, "eid", "lane0_warp0_start"},
    {"region_end", 1, 2, "token", "region_start"},
};

const StopApi* stopApi(std::string_view name) {
  for (const StopApi& a : kStopApis)
    if (a.name == name) return &a;
  return nullptr;
}

/// A call that records a region: `profile_region(buf, max_events, tag, tid)` (the `with` body) or
/// a StopApi.
bool isProfilerCall(std::string_view name) { return name == "profile_region" || stopApi(name) != nullptr; }

/// Where a profiler call passes its tag (a position, else `tag=`).
size_t tagPosition(std::string_view api) {
  const StopApi* stop = stopApi(api);
  return stop ? stop->tagPosition : 2;
}

std::string textOf(const std::string& src, const Expression& e) { return src.substr(e.bytes.start, e.bytes.size()); }

/// An integer literal's value (`3`, `0x1`, `1_000`); nullopt for any other expression (a negative
/// number is a unary minus, not a literal).
std::optional<int64_t> integerLiteral(const std::string& src, const Module& m, int32_t e) {
  if (e == kNone || m.expressions[e].nodeType != "integer") return std::nullopt;
  std::string v = textOf(src, m.expressions[e]);
  v.erase(std::remove(v.begin(), v.end(), '_'), v.end());
  try {
    return std::stoll(v, nullptr, 0);
  } catch (...) {
    return std::nullopt;
  }
}

bool isTagName(std::string_view name) { return name.size() > 4 && name.rfind("TAG_", 0) == 0; }

/// What a profiler call passes as its region tag: the argument at tagPosition or `tag=`,
/// optionally wrapped in `Int32(...)` / `cutlass.Int32(...)`.
struct TagArgument {
  std::string constant;            // a name: `TAG_X`, or `X` of `mod.X`; "" for a literal
  std::optional<int64_t> literal;  // an integer literal: its value
};

/// The tag argument of `call` when it is an integer literal or names a constant: a name spelled
/// `TAG_...` or one of `intNames` (module-level `NAME = <int>`), bare or as an attribute
/// (`tags.TAG_X`); nullopt for anything else (a runtime value such as a parameter `tag`).
std::optional<TagArgument> tagArgumentOf(const std::string& src, const Module& m, int32_t call,
                                         const std::map<std::string, int64_t>& intNames) {
  int32_t tag = m.argument(call, tagPosition(calleeName(m, call)), "tag");
  if (calleeName(m, tag) == "Int32") tag = m.argument(tag, 0);
  if (tag == kNone) return std::nullopt;
  if (std::optional<int64_t> v = integerLiteral(src, m, tag)) return TagArgument{"", v};
  const Expression& e = m.expressions[tag];
  if (e.kind != Expression::Kind::Name && e.kind != Expression::Kind::Attribute) return std::nullopt;
  if (!isTagName(e.name) && !intNames.count(e.name)) return std::nullopt;
  return TagArgument{e.name, std::nullopt};
}

}  // namespace

TagTable CuteSourceMap::tagTable() const {
  TagTable t;
  for (const auto& c : constants) {
    if (c.value < 0 || c.value > 4096) continue;
    if (t.names.size() <= static_cast<size_t>(c.value)) t.names.resize(static_cast<size_t>(c.value) + 1);
    if (t.names[static_cast<size_t>(c.value)].empty()) t.names[static_cast<size_t>(c.value)] = c.name;
  }
  for (size_t i = 0; i < t.names.size(); ++i)
    if (t.names[i].empty()) t.names[i] = "tag_" + std::to_string(i);
  return t;
}

CuteSourceMap mapCuteSource(const python::SourceFile& src) {
  CuteSourceMap map;
  const std::string& s = src.text();
  const Module& mod = src.model();
  // Integer constants: `TAG_X = n` anywhere, and module-level `NAME = n` (a tag when a profiler
  // call passes it).
  struct Candidate {
    int32_t target;
    int64_t value;
  };
  std::vector<Candidate> candidates;
  std::map<std::string, int64_t> intNames;  // module-level NAME = n: first value
  for (const python::Assignment& a : mod.assignments) {
    const Expression& target = mod.expressions[a.target];
    std::optional<int64_t> value = integerLiteral(s, mod, a.value);
    if (target.kind != Expression::Kind::Name || !value) continue;
    bool moduleLevel = mod.statements[static_cast<size_t>(a.statement)].function == kNone;
    if (!isTagName(target.name) && !moduleLevel) continue;
    candidates.push_back({a.target, *value});
    if (moduleLevel) intNames.emplace(target.name, *value);
  }
  struct Call {
    const python::CallSite* call;
    std::string_view api;
    TagArgument tag;
  };
  std::vector<Call> calls;
  std::set<std::string> usedNames;
  for (const python::CallSite& c : mod.calls) {
    std::string_view api = calleeName(mod, c.expression);
    if (!isProfilerCall(api)) continue;
    std::optional<TagArgument> tag = tagArgumentOf(s, mod, c.expression, intNames);
    if (!tag) continue;
    if (!tag->constant.empty()) usedNames.insert(tag->constant);
    calls.push_back({&c, api, std::move(*tag)});
  }
  std::map<std::string, int64_t> values;
  for (const Candidate& cand : candidates) {
    const Expression& target = mod.expressions[cand.target];
    if (!isTagName(target.name) && !usedNames.count(target.name)) continue;
    TagConstant tc{target.name, cand.value, src.lines().toLineCol(target.bytes.start).line};
    if (values.count(tc.name))
      map.warnings.push_back(tc.name + " is assigned more than once; the first value is used");
    else
      values[tc.name] = cand.value;
    for (const auto& o : map.constants)
      if (o.value == cand.value && o.name != tc.name)
        map.warnings.push_back(tc.name + " and " + o.name + " share the value " + std::to_string(cand.value));
    map.constants.push_back(tc);
  }
  for (const Call& call : calls) {
    const python::CallSite& c = *call.call;
    TagSite site;
    site.api = std::string(call.api);
    site.callLine = c.line;
    if (call.tag.literal) {
      // A literal tag is shown under the constant holding its value, else as the tag table
      // names an id without one.
      site.tag = *call.tag.literal;
      auto named = std::find_if(map.constants.begin(), map.constants.end(),
                                [&](const TagConstant& k) { return k.value == site.tag; });
      site.constant = named != map.constants.end() ? named->name : "tag_" + std::to_string(site.tag);
    } else {
      site.constant = call.tag.constant;
      if (auto it = values.find(site.constant); it != values.end())
        site.tag = it->second;
      else
        map.warnings.push_back("line " + std::to_string(site.callLine + 1) + ": " + site.constant + " has no `" +
                               site.constant + " = <int>` constant");
    }
    if (c.statement == kNone) continue;
    const python::Statement& st = mod.statements[static_cast<size_t>(c.statement)];
    if (st.function != kNone) site.function = mod.functions[static_cast<size_t>(st.function)].qualName;
    site.anchorLine = st.lines.first;
    site.anchorBytes = st.bytes;
    if (site.api == "profile_region") {
      if (st.kind == python::StatementKind::With && !st.blocks.empty())
        site.region = mod.blocks[static_cast<size_t>(st.blocks[0])].lines;
      else
        site.region = {st.lines.first, st.lines.last};
    } else {
      // A stop: the latest `HANDLE = start(...)` before it in the same block.
      const StopApi& stop = *stopApi(site.api);
      int32_t eidArg = mod.argument(c.expression, stop.handlePosition, stop.handleKeyword);
      std::string eid = eidArg == kNone ? std::string() : textOf(s, mod.expressions[eidArg]);
      bool eidIsName = eidArg != kNone && mod.expressions[eidArg].kind == Expression::Kind::Name;
      site.region = {st.lines.first, st.lines.first};
      bool found = false;
      for (const python::Assignment& a : mod.assignments) {
        const python::Statement& o = mod.statements[static_cast<size_t>(a.statement)];
        if (o.bytes.start >= st.bytes.start) break;
        if (!eidIsName || o.parentBlock != st.parentBlock) continue;
        const Expression& target = mod.expressions[a.target];
        if (target.kind != Expression::Kind::Name || target.name != eid) continue;
        if (calleeName(mod, a.value) != stop.start) continue;
        found = true;
        site.anchorLine = o.lines.first;
        site.anchorBytes = o.bytes;
        site.region = {o.lines.last + 1, st.lines.first == 0 ? 0 : st.lines.first - 1};
      }
      if (!found)
        map.warnings.push_back("line " + std::to_string(site.callLine + 1) + ": no `" + eid + " = " +
                               std::string(stop.start) + "(...)` before this stop in the same block");
    }
    map.sites.push_back(std::move(site));
  }
  return map;
}

bool inCuteKernel(const Module& m, int32_t function) {
  for (int32_t f = function; f != kNone; f = m.functions[static_cast<size_t>(f)].parent)
    for (const python::Decorator& d : m.functions[static_cast<size_t>(f)].decorators) {
      int32_t e = d.expression;
      if (e != kNone && m.expressions[e].kind == Expression::Kind::Call) e = m.expressions[e].object;
      std::optional<std::string> name = m.dottedName(e);
      if (name && (*name == "cute.kernel" || m.resolve(*name) == "cutlass.cute.kernel")) return true;
    }
  return false;
}

Result<CuteSourceMap> mapCuteSourceFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::io(path.string() + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  auto src = python::SourceFile::parse(ss.str());
  if (!src) return src.error();
  return mapCuteSource(**src);
}

Result<TimeRegionPlan> planTimeRegion(const python::SourceFile& src, uint32_t firstLine, uint32_t lastLine,
                                      const std::string& labelIn) {
  const python::Module& mod = src.model();
  const std::string& s = src.text();
  if (lastLine < firstLine) std::swap(firstLine, lastLine);
  int32_t a = mod.statementAtLine(firstLine), b = mod.statementAtLine(lastLine);
  if (a == python::kNone || b == python::kNone) return Error::invalid("the selection holds no statement");
  auto depth = [&](int32_t i) {
    int d = 0;
    while (mod.statements[static_cast<size_t>(i)].parent != python::kNone) {
      i = mod.statements[static_cast<size_t>(i)].parent;
      ++d;
    }
    return d;
  };
  while (depth(a) > depth(b)) a = mod.statements[static_cast<size_t>(a)].parent;
  while (depth(b) > depth(a)) b = mod.statements[static_cast<size_t>(b)].parent;
  while (a != python::kNone &&
         mod.statements[static_cast<size_t>(a)].parentBlock != mod.statements[static_cast<size_t>(b)].parentBlock) {
    a = mod.statements[static_cast<size_t>(a)].parent;
    b = mod.statements[static_cast<size_t>(b)].parent;
  }
  if (a == python::kNone || b == python::kNone) return Error::invalid("the selection spans several blocks");
  const python::Statement& sa = mod.statements[static_cast<size_t>(a)];
  const python::Statement& sb = mod.statements[static_cast<size_t>(b)];
  if (sa.function == python::kNone) return Error::invalid("select code inside the kernel function (a def)");
  const python::Block& blk = mod.blocks[static_cast<size_t>(sa.parentBlock)];
  if (blk.sameLine) return Error::unsupported("cannot time a one-line body; put it on its own line first");
  // Existing profiler arguments in this function.
  CuteSourceMap map = mapCuteSource(src);
  std::string buf = "prof_buf", maxEv = "max_events", tid = "bidx";
  for (const python::CallSite& c : mod.calls) {
    if (c.function != sa.function) continue;
    std::string_view fn = calleeName(mod, c.expression);
    if (fn != "profile_region" && fn != "lane0_warp0_stop") continue;
    // profile_region(buf, max_events, tag, tid) / lane0_warp0_stop(buf, eid, tag, tid, max_events).
    bool region = fn == "profile_region";
    int32_t bufArg = mod.argument(c.expression, 0, "buf"), tidArg = mod.argument(c.expression, 3, "tid"),
            maxArg = mod.argument(c.expression, region ? 1 : 4, "max_events");
    if (bufArg == kNone || maxArg == kNone || tidArg == kNone) continue;
    buf = textOf(s, mod.expressions[bufArg]);
    maxEv = textOf(s, mod.expressions[maxArg]);
    tid = textOf(s, mod.expressions[tidArg]);
    break;
  }
  int64_t next = 0;
  uint32_t lastConstLine = 0;
  bool haveConst = false;
  for (const auto& c : map.constants) {
    next = std::max(next, c.value + 1);
    if (!haveConst || c.line > lastConstLine) lastConstLine = c.line;
    haveConst = true;
  }
  std::string label = labelIn;
  if (label.empty()) label = "region_" + std::to_string(next);
  std::string upper, lower;
  for (char ch : label) {
    char c = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  TimeRegionPlan plan;
  plan.constant = "TAG_" + upper;
  plan.value = next;
  for (const auto& c : map.constants)
    if (c.name == plan.constant) return Error::invalid(plan.constant + " already exists; choose another label");
  const std::string eid = "eid_" + lower;
  const std::string& ind = blk.indent;
  const LineIndex& li = src.lines();
  uint32_t startOfFirst = static_cast<uint32_t>(li.toOffset({sa.lines.first, 0}));
  // End of the last statement's line (after its newline when there is one).
  uint32_t endLine = sb.lines.last + 1;
  uint32_t afterLast =
      endLine < li.lineCount() ? static_cast<uint32_t>(li.toOffset({endLine, 0})) : static_cast<uint32_t>(s.size());
  std::string tail = afterLast == s.size() && (s.empty() || s.back() != '\n') ? "\n" : "";
  plan.edits.push_back({startOfFirst, startOfFirst, ind + eid + " = lane0_warp0_start(" + buf + ", " + maxEv + ")\n"});
  plan.edits.push_back({afterLast, afterLast,
                        tail + ind + "lane0_warp0_stop(" + buf + ", " + eid + ", Int32(" + plan.constant + "), " + tid +
                            ", " + maxEv + ")\n"});
  std::string constLine = plan.constant + " = " + std::to_string(next) + "\n";
  uint32_t at;
  if (haveConst) {
    at = lastConstLine + 1 < li.lineCount() ? static_cast<uint32_t>(li.toOffset({lastConstLine + 1, 0}))
                                            : static_cast<uint32_t>(s.size());
  } else {
    // Before the top-level statement holding the kernel.
    int32_t top = a;
    while (mod.statements[static_cast<size_t>(top)].parent != python::kNone)
      top = mod.statements[static_cast<size_t>(top)].parent;
    at = mod.statements[static_cast<size_t>(top)].bytes.start;
    at = static_cast<uint32_t>(li.toOffset({li.toLineCol(at).line, 0}));
    constLine += "\n";
  }
  plan.edits.insert(plan.edits.begin(), {at, at, constLine});
  return plan;
}

}  // namespace kl::cute
