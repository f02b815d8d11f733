#include "core/cute/source_map.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "core/python/query.h"

namespace kl::cute {
namespace {

// Profiler calls with an Int32(<identifier>) argument, and TAG_ integer constants.
constexpr const char* kQuery = R"scm(
((call
   function: [(identifier) (attribute)] @fn
   arguments: (argument_list
     (call function: (identifier) @int32 arguments: (argument_list (identifier) @tag)))) @call
 (#match? @fn "(^|\\.)(profile_region|lane0_warp0_stop)$")
 (#eq? @int32 "Int32"))

((expression_statement
   (assignment left: (identifier) @const right: (integer) @value))
 (#match? @const "^TAG_[A-Za-z0-9_]+$"))
)scm";

std::string text(const std::string& src, TSNode n) {
  return src.substr(ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

std::string lastComponent(const std::string& callee) {
  size_t dot = callee.rfind('.');
  return dot == std::string::npos ? callee : callee.substr(dot + 1);
}

// Argument `i` (positional, 0-based) of a call node as text; "" when absent.
std::string argText(const std::string& src, TSNode call, uint32_t i) {
  TSNode args = ts_node_child_by_field_name(call, "arguments", 9);
  if (ts_node_is_null(args)) return {};
  uint32_t k = 0;
  for (uint32_t c = 0; c < ts_node_named_child_count(args); ++c) {
    TSNode a = ts_node_named_child(args, c);
    if (std::string_view(ts_node_type(a)) == "keyword_argument" || std::string_view(ts_node_type(a)) == "comment")
      continue;
    if (k++ == i) return text(src, a);
  }
  return {};
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
  static const auto compiled = python::Query::compile("cute_regions", kQuery);
  if (!compiled.ok()) {
    map.warnings.push_back("internal: " + compiled.error().message);
    return map;
  }
  const python::Query& q = *compiled;
  const std::string& s = src.text();
  const python::Module& mod = src.model();
  python::QueryCursor cursor;
  int32_t cCall = q.captureIndex("call"), cFn = q.captureIndex("fn"), cTag = q.captureIndex("tag"),
          cConst = q.captureIndex("const"), cValue = q.captureIndex("value");
  std::map<std::string, int64_t> values;
  struct RawSite {
    TSNode call;
    std::string fn, tag;
  };
  std::vector<RawSite> raw;
  for (const python::Match& m : q.matches(src.root(), s, cursor)) {
    if (m.has(static_cast<uint32_t>(cConst))) {
      TSNode c = m.get(static_cast<uint32_t>(cConst));
      std::string v = text(s, m.get(static_cast<uint32_t>(cValue)));
      v.erase(std::remove(v.begin(), v.end(), '_'), v.end());
      int64_t value = 0;
      try {
        value = std::stoll(v, nullptr, 0);
      } catch (...) {
        continue;
      }
      TagConstant tc{text(s, c), value, ts_node_start_point(c).row};
      if (values.count(tc.name))
        map.warnings.push_back(tc.name + " is assigned more than once; the first value is used");
      else
        values[tc.name] = value;
      for (const auto& o : map.constants)
        if (o.value == value && o.name != tc.name)
          map.warnings.push_back(tc.name + " and " + o.name + " share the value " + std::to_string(value));
      map.constants.push_back(tc);
    } else if (m.has(static_cast<uint32_t>(cCall))) {
      raw.push_back({m.get(static_cast<uint32_t>(cCall)), text(s, m.get(static_cast<uint32_t>(cFn))),
                     text(s, m.get(static_cast<uint32_t>(cTag)))});
    }
  }
  for (const RawSite& r : raw) {
    TagSite site;
    site.constant = r.tag;
    site.api = lastComponent(r.fn);
    uint32_t start = ts_node_start_byte(r.call);
    site.callLine = ts_node_start_point(r.call).row;
    if (auto it = values.find(r.tag); it != values.end())
      site.tag = it->second;
    else
      map.warnings.push_back("line " + std::to_string(site.callLine + 1) + ": " + r.tag + " has no `" + r.tag +
                             " = <int>` constant");
    int32_t stIdx = mod.statementAt(start);
    if (stIdx == python::kNone) continue;
    const python::Statement& st = mod.statements[static_cast<size_t>(stIdx)];
    if (st.function != python::kNone) site.function = mod.functions[static_cast<size_t>(st.function)].qualName;
    if (site.api == "profile_region") {
      site.anchorLine = st.lines.first;
      site.anchorBytes = st.bytes;
      if (st.kind == python::StatementKind::With && !st.blocks.empty())
        site.region = mod.blocks[static_cast<size_t>(st.blocks[0])].lines;
      else
        site.region = {st.lines.first, st.lines.last};
    } else {
      // lane0_warp0_stop(buf, eid, ...): the latest `eid = lane0_warp0_start(...)` before it in
      // the same block.
      std::string eid = argText(s, r.call, 1);
      site.anchorLine = st.lines.first;
      site.anchorBytes = st.bytes;
      site.region = {st.lines.first, st.lines.first};
      const python::Block& blk = mod.blocks[static_cast<size_t>(st.parentBlock)];
      for (int32_t other : blk.statements) {
        const python::Statement& o = mod.statements[static_cast<size_t>(other)];
        if (o.bytes.start >= st.bytes.start) break;
        std::string t = s.substr(o.bytes.start, o.bytes.size());
        if (!eid.empty() && t.rfind(eid, 0) == 0 && t.find("lane0_warp0_start") != std::string::npos) {
          site.anchorLine = o.lines.first;
          site.anchorBytes = o.bytes;
          site.region = {o.lines.last + 1, st.lines.first == 0 ? 0 : st.lines.first - 1};
        }
      }
      if (site.anchorLine == st.lines.first)
        map.warnings.push_back("line " + std::to_string(site.callLine + 1) + ": no `" + eid +
                               " = lane0_warp0_start(...)` before this stop in the same block");
    }
    map.sites.push_back(std::move(site));
  }
  return map;
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
  const std::string fname = mod.functions[static_cast<size_t>(sa.function)].qualName;
  for (const python::CallSite& c : mod.calls) {
    if (c.function != sa.function) continue;
    std::string fn = lastComponent(c.callee);
    if (fn != "profile_region" && fn != "lane0_warp0_stop") continue;
    // Re-split the argument list text at top-level commas.
    std::string args = s.substr(c.calleeBytes.end, c.bytes.end - c.calleeBytes.end);
    if (args.size() < 2) continue;
    args = args.substr(1, args.size() - 2);
    std::vector<std::string> parts;
    int d = 0;
    std::string cur;
    for (char ch : args) {
      if (ch == '(' || ch == '[' || ch == '{') ++d;
      if (ch == ')' || ch == ']' || ch == '}') --d;
      if (ch == ',' && d == 0) {
        parts.push_back(cur);
        cur.clear();
      } else {
        cur.push_back(ch);
      }
    }
    parts.push_back(cur);
    for (auto& p : parts) {
      while (!p.empty() && std::isspace(static_cast<unsigned char>(p.front()))) p.erase(p.begin());
      while (!p.empty() && std::isspace(static_cast<unsigned char>(p.back()))) p.pop_back();
    }
    if (fn == "profile_region" && parts.size() >= 4) {
      buf = parts[0];
      maxEv = parts[1];
      tid = parts[3];
    } else if (fn == "lane0_warp0_stop" && parts.size() >= 5) {
      buf = parts[0];
      tid = parts[3];
      maxEv = parts[4];
    }
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
  (void)fname;
  return plan;
}

}  // namespace kl::cute
