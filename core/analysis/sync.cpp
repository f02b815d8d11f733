#include "core/analysis/sync.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/analysis/callsite.h"
#include "core/support/json_schema.h"
#include "core/support/saturating.h"

namespace kl::analysis {

namespace {

std::string_view baseName(std::string_view n) {
  // Strip a trailing "_v<digits>".
  auto p = n.rfind("_v");
  if (p != std::string_view::npos && p + 2 < n.size() &&
      std::all_of(n.begin() + static_cast<long>(p) + 2, n.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return n.substr(0, p);
  return n;
}

void sortRows(std::vector<SyncRow>& v) {
  std::sort(v.begin(), v.end(), [](const SyncRow& a, const SyncRow& b) {
    if (a.key.empty() != b.key.empty()) return b.key.empty();
    return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.key < b.key;
  });
}

}  // namespace

const char* syncKindName(SyncKind k) {
  switch (k) {
    case SyncKind::Device: return "device";
    case SyncKind::Stream: return "stream";
    case SyncKind::Event: return "event";
    case SyncKind::Context: return "context";
    case SyncKind::Memcpy: return "memcpy";
    case SyncKind::MemcpyAsyncToPageable: return "memcpy_async_pageable";
  }
  return "?";
}

bool isImplicit(SyncKind k) { return k == SyncKind::Memcpy || k == SyncKind::MemcpyAsyncToPageable; }

bool syncKindOf(std::string_view apiName, const profile::MemcpyDetail* copy, SyncKind& out) {
  std::string_view b = baseName(apiName);
  auto is = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), b) != names.end();
  };
  if (is({"cudaDeviceSynchronize", "hipDeviceSynchronize", "cudaThreadSynchronize"}))
    return out = SyncKind::Device, true;
  if (is({"cudaStreamSynchronize", "cuStreamSynchronize", "hipStreamSynchronize"})) return out = SyncKind::Stream, true;
  if (is({"cudaEventSynchronize", "cuEventSynchronize", "hipEventSynchronize"})) return out = SyncKind::Event, true;
  if (is({"cuCtxSynchronize", "hipCtxSynchronize"})) return out = SyncKind::Context, true;
  bool memcpy = b.starts_with("cudaMemcpy") || b.starts_with("cuMemcpy") || b.starts_with("hipMemcpy");
  if (!memcpy) return false;
  if (b.find("Async") == std::string_view::npos) {
    // Peer/array/symbol variants included: all synchronous with respect to the host.
    return out = SyncKind::Memcpy, true;
  }
  if (copy && copy->copyKind == 2 && copy->dstKind == 0) return out = SyncKind::MemcpyAsyncToPageable, true;
  return false;
}

namespace {

/// The synchronising API calls of a view, in call order, and what kind each is.
struct SyncCalls {
  std::vector<uint32_t> calls;
  std::vector<SyncKind> kinds;
};

/// *MemcpyAsync calls -> their copy (to know device -> pageable).
std::unordered_map<uint32_t, const profile::MemcpyDetail*> copiesByCall(const View& v) {
  const auto& m = v.m;
  std::unordered_map<uint32_t, const profile::MemcpyDetail*> copyOf;
  std::vector<uint32_t> launch = v.attr ? std::vector<uint32_t>() : attribution::linkLaunches(m);
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    const auto& op = m.gpuOps[i];
    if (op.kind != GpuOpKind::Memcpy || op.detail >= m.memcpys.size()) continue;
    uint32_t call = v.attr ? v.attr->op(i).launch : launch[i];
    if (call == kNone) continue;
    copyOf[call] = &m.memcpys[op.detail];
  }
  return copyOf;
}

/// Kineto pageable copies: dstKind unknown but the op name says "-> Pageable" (Kineto names the
/// memory kinds only there: "Memcpy DtoH (Device -> Pageable)"). Their async calls in the window
/// not already in sc are added as MemcpyAsyncToPageable.
void addKinetoPageable(const View& v, SyncCalls& sc) {
  const auto& m = v.m;
  std::unordered_map<uint32_t, bool> pageable;
  std::vector<uint32_t> launch = v.attr ? std::vector<uint32_t>() : attribution::linkLaunches(m);
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    const auto& op = m.gpuOps[i];
    if (op.kind != GpuOpKind::Memcpy) continue;
    uint32_t call = v.attr ? v.attr->op(i).launch : launch[i];
    std::string_view n = m.str(op.name);
    if (call != kNone && n.find("DtoH") != std::string_view::npos && n.find("Pageable") != std::string_view::npos)
      pageable[call] = true;
  }
  for (uint32_t i = 0; i < m.apiCalls.size(); ++i) {
    if (!pageable.count(i) || !v.inWindow(m.apiCalls[i].start)) continue;
    std::string_view b = baseName(m.str(m.apiCalls[i].name));
    if (b.find("Async") == std::string_view::npos || std::find(sc.calls.begin(), sc.calls.end(), i) != sc.calls.end())
      continue;
    sc.calls.push_back(i);
    sc.kinds.push_back(SyncKind::MemcpyAsyncToPageable);
  }
}

/// The view's synchronising calls (syncKindOf, plus Kineto's pageable copies) in the window.
SyncCalls findSyncCalls(const View& v) {
  const auto& m = v.m;
  const auto copyOf = copiesByCall(v);
  SyncCalls sc;
  for (uint32_t i = 0; i < m.apiCalls.size(); ++i) {
    const auto& c = m.apiCalls[i];
    if (!v.inWindow(c.start)) continue;
    const profile::MemcpyDetail* copy = nullptr;
    if (auto it = copyOf.find(i); it != copyOf.end()) copy = it->second;
    SyncKind k;
    if (!syncKindOf(m.str(c.name), copy, k)) continue;
    sc.calls.push_back(i);
    sc.kinds.push_back(k);
  }
  if (m.meta.format == profile::SourceFormat::Kineto) addKinetoPageable(v, sc);
  return sc;
}

/// One call, one count: some exports record a runtime call twice (old nsys: the plain name with
/// its backtrace and the "_v<digits>" name, same thread and correlation id). Keeps the longer, in
/// the place of the first.
void dedupeCalls(const ProfileModel& m, SyncCalls& sc) {
  std::map<std::pair<uint32_t, int64_t>, size_t> seen;
  SyncCalls kept;
  for (size_t i = 0; i < sc.calls.size(); ++i) {
    const auto& c = m.apiCalls[sc.calls[i]];
    if (c.correlationId >= 0) {
      auto [it, fresh] = seen.try_emplace({c.thread, c.correlationId}, kept.calls.size());
      if (!fresh) {
        const auto& prev = m.apiCalls[kept.calls[it->second]];
        if (c.end - c.start > prev.end - prev.start) {
          kept.calls[it->second] = sc.calls[i];
          kept.kinds[it->second] = sc.kinds[i];
        }
        continue;
      }
    }
    kept.calls.push_back(sc.calls[i]);
    kept.kinds.push_back(sc.kinds[i]);
  }
  sc = std::move(kept);
}

/// The totals and the rows by kind, API and call site (sorted) of the calls into r; returns the
/// per-thread rows (without their API span).
std::map<uint32_t, SyncThreadRow> tabulateCalls(const ProfileModel& m, const SyncCalls& sc, SyncResult& r) {
  auto sites = callSites(m, sc.calls);
  std::map<std::string, SyncRow> byKind, byApi, bySite;
  std::map<std::string, std::set<std::string>> siteKinds;
  std::map<uint32_t, SyncThreadRow> threads;
  for (size_t i = 0; i < sc.calls.size(); ++i) {
    const auto& c = m.apiCalls[sc.calls[i]];
    const int64_t d = c.end - c.start;
    auto add = [&](SyncRow& row, const std::string& key) {
      row.key = key;
      ++row.calls;
      addTo(row.totalNs, d);
      row.maxNs = std::max(row.maxNs, d);
    };
    ++r.calls;
    addTo(r.blockedNs, d);
    addTo(isImplicit(sc.kinds[i]) ? r.implicitNs : r.explicitNs, d);
    add(byKind[syncKindName(sc.kinds[i])], syncKindName(sc.kinds[i]));
    std::string api(baseName(m.str(c.name)));
    add(byApi[api], api);
    const auto& s = sites[i];
    std::string key = s.site.empty() ? std::string() : s.site + (s.op.empty() ? "" : " [" + s.op + "]");
    if (key.empty() && !s.op.empty()) key = "[" + s.op + "]";
    auto& sr = bySite[key];
    add(sr, key);
    sr.file = s.file;
    sr.line = s.line;
    sr.op = s.op;
    sr.via = s.via;
    siteKinds[key].insert(syncKindName(sc.kinds[i]));
    if (!key.empty()) ++r.withSite;
    auto& t = threads[c.thread];
    t.rank = c.rank;
    t.thread = c.thread;
    ++t.calls;
    addTo(t.blockedNs, d);
  }
  for (auto& [k, row] : byKind) r.byKind.push_back(row);
  for (auto& [k, row] : byApi) r.byApi.push_back(row);
  for (auto& [k, row] : bySite) {
    for (const auto& s : siteKinds[k]) row.kinds += (row.kinds.empty() ? "" : ",") + s;
    r.bySite.push_back(row);
  }
  sortRows(r.byKind);
  sortRows(r.byApi);
  sortRows(r.bySite);
  return threads;
}

/// The thread rows into r, most blocked first, each with its API span: first .. last API call
/// start/end in the window.
void addThreads(const View& v, std::map<uint32_t, SyncThreadRow>& threads, SyncResult& r) {
  std::unordered_map<uint32_t, std::pair<int64_t, int64_t>> span;
  for (const auto& c : v.m.apiCalls) {
    if (!threads.count(c.thread) || !v.inWindow(c.start)) continue;
    auto [it, fresh] = span.try_emplace(c.thread, c.start, c.end);
    if (!fresh) {
      it->second.first = std::min(it->second.first, c.start);
      it->second.second = std::max(it->second.second, c.end);
    }
  }
  for (auto& [t, row] : threads) {
    row.apiSpanNs = span[t].second - span[t].first;
    r.threads.push_back(row);
  }
  std::sort(r.threads.begin(), r.threads.end(), [](const SyncThreadRow& a, const SyncThreadRow& b) {
    return a.blockedNs != b.blockedNs ? a.blockedNs > b.blockedNs : a.thread < b.thread;
  });
}

}  // namespace

SyncResult computeSync(const View& v) {
  SyncResult r;
  r.hasStacksOrRanges = !v.m.pyFrames.empty() || !v.m.ranges.empty();
  SyncCalls sc = findSyncCalls(v);
  dedupeCalls(v.m, sc);
  auto threads = tabulateCalls(v.m, sc, r);
  addThreads(v, threads, r);
  return r;
}

void writeJson(json::Writer& w, const SyncResult& r, const View& v) {
  const auto& m = v.m;
  auto rows = [&](const char* name, const std::vector<SyncRow>& rs, bool site) {
    w.key(name).beginArray();
    for (const auto& x : rs) {
      w.beginObject()
          .field(site ? "site" : "name", x.key)
          .field("calls", x.calls)
          .field("total_ns", x.totalNs)
          .field("max_ns", x.maxNs);
      if (site)
        w.field("file", x.file)
            .field("line", static_cast<int64_t>(x.line))
            .field("op", x.op)
            .field("via", x.via)
            .field("kinds", x.kinds);
      w.endObject();
    }
    w.endArray();
  };
  w.beginObject()
      .field("schema", json_schema::kSync)
      .field("emulated", m.meta.emulated)
      .field("calls", r.calls)
      .field("blocked_ns", r.blockedNs)
      .field("explicit_ns", r.explicitNs)
      .field("implicit_ns", r.implicitNs)
      .field("calls_with_site", r.withSite)
      .field("has_stacks_or_ranges", r.hasStacksOrRanges);
  rows("by_kind", r.byKind, false);
  rows("by_api", r.byApi, false);
  rows("by_site", r.bySite, true);
  w.key("threads").beginArray();
  for (const auto& t : r.threads) {
    const auto& th = m.threads[t.thread];
    w.beginObject()
        .field("rank", static_cast<int64_t>(t.rank))
        .field("pid", static_cast<int64_t>(m.processes[th.process].pid))
        .field("tid", static_cast<int64_t>(th.tid))
        .field("name", m.str(th.name))
        .field("calls", t.calls)
        .field("blocked_ns", t.blockedNs)
        .field("api_span_ns", t.apiSpanNs)
        .endObject();
  }
  w.endArray().endObject();
}

}  // namespace kl::analysis
