#include "core/planner/line_strategy.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <set>
#include <sstream>

#include "core/nvtx/naming.h"
#include "core/support/json_writer.h"

namespace kl::planner {

using python::kNone;

std::vector<FunctionRef> reachableFunctions(CallResolver& resolver, const std::vector<FunctionRef>& roots, int depth) {
  std::vector<FunctionRef> out;
  std::set<FunctionRef> seen;
  std::deque<std::pair<FunctionRef, int>> queue;
  for (const auto& r : roots)
    if (seen.insert(r).second) queue.emplace_back(r, 0);
  while (!queue.empty()) {
    auto [fn, d] = queue.front();
    queue.pop_front();
    out.push_back(fn);
    if (d >= depth) continue;
    for (const auto& c : resolver.calleesOfFunction(fn))
      if (seen.insert(c).second) queue.emplace_back(c, d + 1);
  }
  return out;
}

Result<void> writeLineSpec(WorkspaceIndex& index, const std::vector<FunctionRef>& fns,
                           const std::filesystem::path& spec) {
  std::ostringstream os;
  json::Writer w(os, 1);
  w.beginObject();
  w.field("version", 1);
  w.field("workspace", index.root().string());
  w.key("functions").beginArray();
  for (const auto& fn : fns) {
    auto f = index.file(fn.path);
    if (!f) continue;
    const auto& m = (*f)->model();
    int32_t fi = m.findFunction(fn.qualName);
    for (size_t i = 0; i < m.functions.size(); ++i)
      if (m.functions[i].qualName == fn.qualName && m.functions[i].defLine == fn.defLine) fi = static_cast<int32_t>(i);
    if (fi == kNone) continue;
    const auto& func = m.functions[fi];
    w.beginObject();
    w.field("path", fn.path);
    w.field("file", (index.root() / fn.path).string());
    w.field("qualname", fn.qualName);
    w.field("first_line", func.lines.first + 1);
    w.field("def_line", func.defLine + 1);
    w.endObject();
  }
  w.endArray();
  w.endObject();
  std::ofstream out(spec, std::ios::binary | std::ios::trunc);
  out << os.str() << "\n";
  if (!out) return Error::io("cannot write " + spec.string());
  return {};
}

std::vector<LineResult> lineResultsFromLineRanges(WorkspaceIndex& index, const attribution::RangeTable& table) {
  std::vector<LineResult> out;
  for (const auto& s : table.ranges) {
    if (s.exclusiveLaunches == 0) continue;
    LineResult l = attribution::lineResult(s);
    if (auto f = index.file(s.path)) {
      const auto& m = (*f)->model();
      int32_t si = m.statementAtLine(l.line);
      if (si != kNone && !m.statements[si].compound && m.statements[si].lines.first == l.line)
        l.lastLine = std::max(l.lastLine, m.statements[si].lines.last);
      uint32_t off = (*f)->lines().lineStart(l.line);
      int32_t fi = m.functionAt(off);
      // functionAt is by byte offset; the start of an indented line is inside its function.
      if (fi != kNone) l.function = m.functions[fi].qualName;
    }
    l.atomic = s.maxExclusivePerInvocation > 1;
    if (l.atomic) l.note = "the line launches several kernels per execution";
    out.push_back(std::move(l));
  }
  std::sort(out.begin(), out.end(), [](const LineResult& a, const LineResult& b) {
    return std::tie(a.path, a.line) < std::tie(b.path, b.line);
  });
  return out;
}

}  // namespace kl::planner
