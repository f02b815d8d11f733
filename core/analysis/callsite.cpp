#include "core/analysis/callsite.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "core/nvtx/naming.h"

namespace kl::analysis {

using profile::kNone;
using profile::RangeKind;

namespace {

struct Item {
  int64_t start, end;
  uint32_t idx;
};

/// For each query (sorted by start), the innermost item (by start) containing it that
/// `accept`s, else the innermost containing one when `fallback`, else kNone.
/// Items sorted by (start asc, end desc).
void sweep(const std::vector<Item>& items, const std::vector<Item>& queries,
           const std::function<bool(uint32_t)>& accept, std::vector<uint32_t>& out) {
  std::vector<const Item*> stack;
  size_t i = 0;
  for (const auto& q : queries) {
    while (i < items.size() && items[i].start <= q.start) stack.push_back(&items[i++]);
    while (!stack.empty() && stack.back()->end < q.start) stack.pop_back();
    uint32_t any = kNone, good = kNone;
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      const Item& x = **it;
      if (x.start > q.start || x.end < q.end) continue;
      if (any == kNone) any = x.idx;
      if (!accept || accept(x.idx)) {
        good = x.idx;
        break;
      }
    }
    out[q.idx] = good != kNone ? good : any;
  }
}

void byStart(std::vector<Item>& v) {
  std::sort(v.begin(), v.end(), [](const Item& a, const Item& b) {
    return a.start != b.start ? a.start < b.start : (a.end != b.end ? a.end > b.end : a.idx < b.idx);
  });
}

}  // namespace

bool isLibraryFile(std::string_view f) {
  if (f.empty() || f.front() == '<') return true;
  for (std::string_view p : {"site-packages/", "dist-packages/", "/lib/python3", "/usr/lib/python"})
    if (f.find(p) != std::string_view::npos) return true;
  return f.starts_with("torch/") || f.find("/torch/") != std::string_view::npos;
}

std::vector<CallSite> callSites(const profile::ProfileModel& m, const std::vector<uint32_t>& calls) {
  std::vector<CallSite> out(calls.size());
  // Per thread: the queries, ranges (annotations), cpu ops, python frames.
  struct PerThread {
    std::vector<Item> q, ranges, kl, ops, frames;
  };
  std::unordered_map<uint32_t, PerThread> th;
  for (uint32_t i = 0; i < calls.size(); ++i) {
    const auto& c = m.apiCalls[calls[i]];
    th[c.thread].q.push_back({c.start, c.end, i});
  }
  for (uint32_t r = 0; r < m.ranges.size(); ++r) {
    const auto& rg = m.ranges[r];
    auto it = th.find(rg.thread);
    if (it == th.end()) continue;
    if (rg.kind == RangeKind::CpuOp)
      it->second.ops.push_back({rg.start, rg.end, r});
    else if (rg.kind == RangeKind::NvtxPushPop || rg.kind == RangeKind::NvtxStartEnd ||
             rg.kind == RangeKind::UserAnnotation) {
      if (nvtx::isManagedName(m.str(rg.text)))
        it->second.kl.push_back({rg.start, rg.end, r});
      else
        it->second.ranges.push_back({rg.start, rg.end, r});
    }
  }
  for (uint32_t f = 0; f < m.pyFrames.size(); ++f) {
    const auto& fr = m.pyFrames[f];
    auto it = th.find(fr.thread);
    if (it != th.end()) it->second.frames.push_back({fr.start, fr.end, f});
  }
  auto userFrame = [&](uint32_t f) {
    const auto& fr = m.pyFrames[f];
    return fr.line > 0 && !isLibraryFile(m.str(fr.file));
  };
  auto pythonFrame = [&](uint32_t f) { return m.pyFrames[f].line > 0 && m.pyFrames[f].file != profile::kEmptyStr; };
  const size_t n = calls.size();
  std::vector<uint32_t> klOf(n, kNone), rangeOf(n, kNone), opOf(n, kNone), frameOf(n, kNone), anyFrame(n, kNone);
  for (auto& [t, p] : th) {
    byStart(p.q);
    byStart(p.ranges);
    byStart(p.kl);
    byStart(p.ops);
    byStart(p.frames);
    sweep(p.kl, p.q, {}, klOf);
    sweep(p.ranges, p.q, {}, rangeOf);
    sweep(p.ops, p.q, {}, opOf);
    sweep(p.frames, p.q, userFrame, frameOf);
    sweep(p.frames, p.q, pythonFrame, anyFrame);
  }
  for (size_t i = 0; i < n; ++i) {
    auto& s = out[i];
    s.opRange = opOf[i];
    s.innerRange = rangeOf[i];
    if (opOf[i] != kNone) s.op = m.str(m.ranges[opOf[i]].text);
    if (klOf[i] != kNone) {
      std::string_view text = m.str(m.ranges[klOf[i]].text);
      s.site = text;
      s.via = "kl";
      if (auto rn = nvtx::parseName(text)) {
        s.file = rn->path;
        s.line = static_cast<int32_t>(rn->firstLine);
      }
      continue;
    }
    uint32_t f = frameOf[i] != kNone && userFrame(frameOf[i]) ? frameOf[i] : anyFrame[i];
    if (f != kNone && pythonFrame(f)) {
      const auto& fr = m.pyFrames[f];
      s.file = m.str(fr.file);
      s.line = fr.line;
      s.function = m.str(fr.function);
      s.site = s.file + ":" + std::to_string(s.line) + (s.function.empty() ? "" : " " + s.function);
      s.via = "python";
      continue;
    }
    if (rangeOf[i] != kNone) {
      s.site = "range: " + std::string(m.str(m.ranges[rangeOf[i]].text));
      s.via = "range";
    }
  }
  return out;
}

}  // namespace kl::analysis
