// Format detection, multi-file (multi-rank) ingestion, rank clock alignment, finalisation.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

#include "core/profile/builder.h"
#include "core/profile/reader.h"
#include "core/support/gzip.h"
#include "core/support/text.h"

namespace kl::profile {

namespace {

using support::icontains;

bool isProfileFile(const std::filesystem::path& p) {
  auto n = p.filename().string();
  for (const char* ext : {".sqlite", ".sqlite.gz", ".json", ".json.gz"})
    if (n.size() > std::strlen(ext) && n.compare(n.size() - std::strlen(ext), std::string::npos, ext) == 0) return true;
  return false;
}

}  // namespace

Result<InputFormat> detectFormat(const std::filesystem::path& path) {
  auto src = openMaybeGzip(path);
  if (!src) return src.error();
  std::string head(4096, '\0');
  size_t got = 0;
  while (got < head.size()) {
    auto n = (*src)->read(head.data() + got, head.size() - got);
    if (!n) return Error::invalid(n.error().message);
    if (*n == 0) break;
    got += *n;
  }
  head.resize(got);
  if (got == 0) return Error::invalid(path.string() + ": empty file");
  if (head.size() >= 16 && head.compare(0, 16, std::string("SQLite format 3\0", 16)) == 0)
    return InputFormat::NsysSqlite;
  size_t i = 0;
  if (head.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;  // UTF-8 BOM
  while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  if (i < head.size() && (head[i] == '{' || head[i] == '[')) return InputFormat::KinetoJson;
  if (i == head.size()) return Error::invalid(path.string() + ": empty file");
  return InputFormat::Unknown;
}

Result<ProfileModel> readProfile(const std::filesystem::path& path, const ReadOptions& opts) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return readProfiles({path}, opts);
  auto fmt = detectFormat(path);
  if (!fmt) return fmt.error();
  switch (*fmt) {
    case InputFormat::NsysSqlite: return readNsysSqlite(path, opts);
    case InputFormat::KinetoJson: return readKinetoJson(path, opts);
    case InputFormat::Unknown: break;
  }
  return Error::invalid(path.string() + ": not an nsys SQLite export or a Kineto JSON trace");
}

Result<ProfileModel> readProfiles(const std::vector<std::filesystem::path>& paths, const ReadOptions& opts) {
  std::vector<std::filesystem::path> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::filesystem::path> inDir;
      for (const auto& e : std::filesystem::directory_iterator(p, ec))
        if (e.is_regular_file() && isProfileFile(e.path())) inDir.push_back(e.path());
      std::sort(inDir.begin(), inDir.end());
      if (inDir.empty()) return Error::invalid(p.string() + ": directory holds no .sqlite/.json profile");
      files.insert(files.end(), inDir.begin(), inDir.end());
    } else {
      files.push_back(p);
    }
  }
  if (files.empty()) return Error::invalid("no profile files given");
  if (files.size() == 1 && paths.size() == 1 && files[0] == paths[0]) {
    auto fmt = detectFormat(files[0]);
    if (!fmt) return fmt.error();
    if (*fmt == InputFormat::NsysSqlite) return readNsysSqlite(files[0], opts);
    if (*fmt == InputFormat::KinetoJson) return readKinetoJson(files[0], opts);
    return Error::invalid(files[0].string() + ": not an nsys SQLite export or a Kineto JSON trace");
  }

  std::vector<ProfileModel> parts;
  // Ranks of one run come from one profiler: an nsys export and a Kineto trace together are two
  // runs (or two views of one run, which would count every kernel twice), never two ranks.
  std::optional<std::pair<InputFormat, std::filesystem::path>> firstFmt;
  for (const auto& f : files) {
    auto fmt = detectFormat(f);
    if (!fmt) return fmt.error();
    if (*fmt != InputFormat::Unknown) {
      if (!firstFmt)
        firstFmt.emplace(*fmt, f);
      else if (firstFmt->first != *fmt) {
        const auto& nsysFile = firstFmt->first == InputFormat::NsysSqlite ? firstFmt->second : f;
        const auto& kinetoFile = firstFmt->first == InputFormat::NsysSqlite ? f : firstFmt->second;
        return Error::invalid(nsysFile.string() + " is an nsys export and " + kinetoFile.string() +
                              " a Kineto trace: they are different runs (or two views of one run), not ranks "
                              "of one; analyse them one at a time (kernlens diff compares two runs)");
      }
    }
  }
  ReadOptions partOpts = opts;
  partOpts.kernelDetails = true;  // alignRankClocks matches kernels by short name
  partOpts.placement = true;
  for (const auto& f : files) {
    auto fmt = detectFormat(f);
    if (!fmt) return fmt.error();
    Result<ProfileModel> m = Error::invalid("");
    if (*fmt == InputFormat::NsysSqlite)
      m = readNsysSqlite(f, partOpts);
    else if (*fmt == InputFormat::KinetoJson)
      m = readKinetoJson(f, partOpts);
    else
      return Error::invalid(f.string() + ": not an nsys SQLite export or a Kineto JSON trace");
    if (!m) return m.error();
    parts.push_back(std::move(*m));
  }
  // Ranks: the traces' own ranks when every file has one and they are distinct, else file order.
  std::vector<int32_t> ranks;
  std::set<int32_t> distinct;
  bool ownRanks = true;
  for (const auto& p : parts) {
    int32_t r = p.meta.fileRanks.empty() ? -1 : p.meta.fileRanks[0];
    if (r < 0 || !distinct.insert(r).second) ownRanks = false;
    ranks.push_back(r);
  }
  if (!ownRanks) std::iota(ranks.begin(), ranks.end(), 0);

  ProfileModel out;
  out.meta.format = parts[0].meta.format;
  out.meta.files.clear();
  for (size_t i = 0; i < parts.size(); ++i) appendRank(out, std::move(parts[i]), ranks[i]);
  out.meta.numRanks = static_cast<int32_t>(parts.size());
  if (opts.alignRanks) alignRankClocks(out);
  finalizeModel(out);
  return out;
}

void appendRank(ProfileModel& into, ProfileModel&& part, int32_t rank) {
  std::vector<StrId> sm(part.strings.size());
  for (StrId i = 0; i < part.strings.size(); ++i) sm[i] = into.strings.intern(part.strings.str(i));
  auto S = [&](StrId s) { return s < sm.size() ? sm[s] : kEmptyStr; };
  const auto pOff = static_cast<uint32_t>(into.processes.size());
  const auto tOff = static_cast<uint32_t>(into.threads.size());
  const auto kOff = static_cast<uint32_t>(into.kernels.size());
  const auto cOff = static_cast<uint32_t>(into.memcpys.size());
  const auto sOff = static_cast<uint32_t>(into.memsets.size());
  const auto fOff = static_cast<uint32_t>(into.pyFrames.size());
  auto T = [&](uint32_t t) { return t == kNone ? kNone : t + tOff; };

  for (auto p : part.processes) {
    p.rank = rank;
    p.name = S(p.name);
    into.processes.push_back(p);
  }
  for (auto t : part.threads) {
    t.process += pOff;
    t.name = S(t.name);
    into.threads.push_back(t);
  }
  for (auto g : part.gpus) {
    g.rank = rank;
    g.name = S(g.name);
    g.busLocation = S(g.busLocation);
    g.uuid = S(g.uuid);
    into.gpus.push_back(g);
  }
  const auto colOff = static_cast<uint32_t>(into.collectives.size());
  for (auto cd : part.collectives) {
    cd.name = S(cd.name);
    cd.dtype = S(cd.dtype);
    cd.processGroup = S(cd.processGroup);
    into.collectives.push_back(cd);
  }
  for (auto k : part.kernels) {
    if (k.collective != kNone) k.collective += colOff;
    k.demangledName = S(k.demangledName);
    k.shortName = S(k.shortName);
    k.mangledName = S(k.mangledName);
    into.kernels.push_back(k);
  }
  into.memcpys.insert(into.memcpys.end(), part.memcpys.begin(), part.memcpys.end());
  into.memsets.insert(into.memsets.end(), part.memsets.begin(), part.memsets.end());
  into.gpuOps.reserve(into.gpuOps.size() + part.gpuOps.size());
  for (GpuOp op : part.gpuOps) {
    op.rank = rank;
    op.name = S(op.name);
    op.process += pOff;
    if (op.detail != kNone) {
      switch (op.kind) {
        case GpuOpKind::Kernel: op.detail += kOff; break;
        case GpuOpKind::Memcpy: op.detail += cOff; break;
        case GpuOpKind::Memset: op.detail += sOff; break;
        case GpuOpKind::Graph: break;
      }
    }
    into.gpuOps.push_back(op);
  }
  into.apiCalls.reserve(into.apiCalls.size() + part.apiCalls.size());
  for (ApiCall c : part.apiCalls) {
    c.rank = rank;
    c.name = S(c.name);
    c.thread = T(c.thread);
    into.apiCalls.push_back(c);
  }
  into.ranges.reserve(into.ranges.size() + part.ranges.size());
  for (Range r : part.ranges) {
    r.rank = rank;
    r.text = S(r.text);
    r.domain = S(r.domain);
    r.category = S(r.category);
    r.shapes = S(r.shapes);
    r.thread = T(r.thread);
    r.endThread = T(r.endThread);
    into.ranges.push_back(r);
  }
  for (PyFrame f : part.pyFrames) {
    f.rank = rank;
    f.file = S(f.file);
    f.function = S(f.function);
    f.name = S(f.name);
    f.thread = T(f.thread);
    if (f.parent != kNone) f.parent += fOff;
    into.pyFrames.push_back(f);
  }
  auto& m = into.meta;
  for (const auto& f : part.meta.files) {
    m.files.push_back(f);
    m.fileRanks.push_back(rank);
    m.rankClockOffsetNs.push_back(0);
    m.rankClockMethod.push_back("none: not aligned");
  }
  for (const auto& w : part.meta.warnings) m.warnings.push_back("rank " + std::to_string(rank) + ": " + w);
  m.skippedRows.merge(part.meta.skippedRows);
  if (m.toolVersion.empty()) m.toolVersion = part.meta.toolVersion;
  if (m.schemaVersion.empty()) m.schemaVersion = part.meta.schemaVersion;
  m.emulated = m.emulated || part.meta.emulated;
  m.numRanks = static_cast<int32_t>(m.files.size());
}

void alignRankClocks(ProfileModel& model) {
  auto& meta = model.meta;
  if (meta.fileRanks.empty()) return;
  std::set<int32_t> rankSet(meta.fileRanks.begin(), meta.fileRanks.end());
  const int32_t ref = *rankSet.begin();
  // rank -> collective name -> end times in start order.
  std::map<int32_t, std::map<StrId, std::vector<int64_t>>> ends;
  std::vector<uint32_t> ops;
  for (uint32_t i = 0; i < model.gpuOps.size(); ++i) {
    const auto& op = model.gpuOps[i];
    if (op.kind == GpuOpKind::Kernel && icontains(model.shortName(op), "nccl")) ops.push_back(i);
  }
  std::stable_sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
    return model.gpuOps.get<&GpuOp::start>(a) < model.gpuOps.get<&GpuOp::start>(b);
  });
  for (uint32_t i : ops) {
    const auto& op = model.gpuOps[i];
    StrId key = op.name;
    if (const auto* k = model.kernel(op); k && k->shortName != kEmptyStr) key = k->shortName;
    ends[op.rank][key].push_back(op.end);
  }
  std::map<int32_t, int64_t> offset;
  std::map<int32_t, std::string> method;
  for (int32_t r : rankSet) {
    if (r == ref) {
      offset[r] = 0;
      method[r] = "reference rank";
      continue;
    }
    // Try small shifts of the occurrence index (a trace may start mid-collective) and keep the
    // one whose differences agree best (smallest median absolute deviation).
    int64_t bestOff = 0;
    uint64_t bestSpread = UINT64_MAX;
    size_t bestN = 0;
    for (int shift = -3; shift <= 3; ++shift) {
      std::vector<int64_t> d;
      for (const auto& [name, mine] : ends[r]) {
        auto it = ends[ref].find(name);
        if (it == ends[ref].end()) continue;
        const auto& theirs = it->second;
        for (size_t i = 0; i < mine.size(); ++i) {
          long j = static_cast<long>(i) + shift;
          if (j < 0 || j >= static_cast<long>(theirs.size())) continue;
          d.push_back(theirs[static_cast<size_t>(j)] - mine[i]);
        }
      }
      if (d.empty()) continue;
      std::sort(d.begin(), d.end());
      int64_t med = d[d.size() / 2];
      std::vector<uint64_t> dev;  // unsigned: |x - med| may exceed INT64_MAX on hostile input
      for (auto x : d)
        dev.push_back(x > med ? static_cast<uint64_t>(x) - static_cast<uint64_t>(med)
                              : static_cast<uint64_t>(med) - static_cast<uint64_t>(x));
      std::sort(dev.begin(), dev.end());
      uint64_t spread = dev[dev.size() / 2];
      // Prefer more matches when the spread is equal (shift 0 first).
      if (spread < bestSpread || (spread == bestSpread && d.size() > bestN)) {
        bestSpread = spread;
        bestOff = med;
        bestN = d.size();
      }
    }
    if (bestN == 0) {
      offset[r] = 0;
      method[r] = "none: no NCCL kernels matching the reference rank";
    } else {
      offset[r] = std::clamp<int64_t>(bestOff, -(int64_t{1} << 62), int64_t{1} << 62);
      method[r] = "nccl-kernel-end-median(n=" + std::to_string(bestN) + ", mad_ns=" + std::to_string(bestSpread) + ")";
    }
  }
  auto off = [&](int32_t r) { return offset.count(r) ? offset[r] : 0; };
  auto shift = [&](auto& table) {
    table.updateAll([&](auto& x) {
      auto o = off(x.rank);
      x.start += o;
      x.end += o;
    });
  };
  shift(model.gpuOps);
  shift(model.apiCalls);
  shift(model.ranges);
  shift(model.pyFrames);
  meta.rankClockOffsetNs.assign(meta.fileRanks.size(), 0);
  meta.rankClockMethod.assign(meta.fileRanks.size(), "");
  for (size_t i = 0; i < meta.fileRanks.size(); ++i) {
    meta.rankClockOffsetNs[i] = off(meta.fileRanks[i]);
    meta.rankClockMethod[i] = method[meta.fileRanks[i]];
  }
}

namespace {

/// Processes by (rank, process id), threads by (their process, thread id): the order the reader
/// met them in decides nothing (a thread's index orders ties and listings). Every index into
/// them is remapped.
void canonicalThreads(ProfileModel& m) {
  const auto np = static_cast<uint32_t>(m.processes.size()), nt = static_cast<uint32_t>(m.threads.size());
  std::vector<uint32_t> pp(np), tp(nt), pWhere(np), tWhere(nt);
  std::iota(pp.begin(), pp.end(), 0u);
  std::iota(tp.begin(), tp.end(), 0u);
  std::stable_sort(pp.begin(), pp.end(), [&](uint32_t a, uint32_t b) {
    const auto &x = m.processes[a], &y = m.processes[b];
    return std::tuple(x.rank, x.globalPid, x.pid) < std::tuple(y.rank, y.globalPid, y.pid);
  });
  for (uint32_t k = 0; k < np; ++k) pWhere[pp[k]] = k;
  auto procOf = [&](uint32_t t) { return m.threads[t].process < np ? pWhere[m.threads[t].process] : kNone; };
  std::stable_sort(tp.begin(), tp.end(), [&](uint32_t a, uint32_t b) {
    return std::tuple(procOf(a), m.threads[a].globalTid, m.threads[a].tid) <
           std::tuple(procOf(b), m.threads[b].globalTid, m.threads[b].tid);
  });
  for (uint32_t k = 0; k < nt; ++k) tWhere[tp[k]] = k;
  auto identity = [](const std::vector<uint32_t>& v) {
    for (uint32_t i = 0; i < v.size(); ++i)
      if (v[i] != i) return false;
    return true;
  };
  if (identity(pp) && identity(tp)) return;
  std::vector<Process> procs(np);
  for (uint32_t k = 0; k < np; ++k) procs[k] = m.processes[pp[k]];
  std::vector<Thread> threads(nt);
  for (uint32_t k = 0; k < nt; ++k) {
    threads[k] = m.threads[tp[k]];
    if (threads[k].process < np) threads[k].process = pWhere[threads[k].process];
  }
  m.processes = std::move(procs);
  m.threads = std::move(threads);
  auto t = [&](uint32_t old) { return old < nt ? tWhere[old] : old; };
  for (size_t i = 0; i < m.apiCalls.size(); ++i)
    m.apiCalls.put<&ApiCall::thread>(i, t(m.apiCalls.get<&ApiCall::thread>(i)));
  for (size_t i = 0; i < m.ranges.size(); ++i) {
    m.ranges.put<&Range::thread>(i, t(m.ranges.get<&Range::thread>(i)));
    if (uint32_t e = m.ranges.get<&Range::endThread>(i); e != kNone) m.ranges.put<&Range::endThread>(i, t(e));
  }
  for (size_t i = 0; i < m.pyFrames.size(); ++i)
    m.pyFrames.put<&PyFrame::thread>(i, t(m.pyFrames.get<&PyFrame::thread>(i)));
  for (size_t i = 0; i < m.gpuOps.size(); ++i)
    if (uint32_t p = m.gpuOps.get<&GpuOp::process>(i); p < np) m.gpuOps.put<&GpuOp::process>(i, pWhere[p]);
}

}  // namespace

void finalizeModel(ProfileModel& m) {
  canonicalThreads(m);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  auto span = [&](const auto& table) {
    using Row = typename std::remove_reference_t<decltype(table)>::value_type;
    for (int64_t s : table.template col<&Row::start>()) lo = std::min(lo, s);
    for (size_t i = 0; i < table.size(); ++i) hi = std::max(hi, table.template get<&Row::end>(i));
  };
  span(m.gpuOps);
  span(m.apiCalls);
  span(m.ranges);
  span(m.pyFrames);
  if (lo > hi) lo = hi = 0;
  m.meta.spanStart = lo;
  m.meta.spanEnd = hi;
  if (m.ranges.stored<&Range::open>())
    for (size_t i = 0; i < m.ranges.size(); ++i)
      if (m.ranges.get<&Range::open>(i)) m.ranges.put<&Range::end>(i, std::max(m.ranges.get<&Range::start>(i), hi));

  // Rows of equal start and end are ordered by what they are, never by where they stood in the
  // file (nsys 2025.6 and later write rows in no particular order; Kineto events come in any
  // order): the tie keys of docs/profiles.md ("Row order"). Threads and processes by their
  // recorded ids, strings by their text, never by the index the reader gave them.
  auto tid = [&m](uint32_t t) { return t < m.threads.size() ? m.threads[t].globalTid : INT64_MIN; };
  auto pid = [&m](uint32_t p) { return p < m.processes.size() ? m.processes[p].globalPid : INT64_MIN; };
  detail::sortByTime(m.gpuOps, [&](uint32_t a, uint32_t b) {
    const auto x = m.gpuOps[a], y = m.gpuOps[b];
    return std::tuple(x.rank, x.deviceId, x.contextId, x.streamId, pid(x.process), x.correlationId,
                      static_cast<int>(x.kind), x.graphId,
                      m.str(x.name)) < std::tuple(y.rank, y.deviceId, y.contextId, y.streamId, pid(y.process),
                                                  y.correlationId, static_cast<int>(y.kind), y.graphId, m.str(y.name));
  });
  detail::sortByTime(m.apiCalls, [&](uint32_t a, uint32_t b) {
    const auto x = m.apiCalls[a], y = m.apiCalls[b];
    return std::tuple(x.rank, tid(x.thread), x.correlationId, static_cast<int>(x.level), static_cast<int>(x.role),
                      m.str(x.name)) < std::tuple(y.rank, tid(y.thread), y.correlationId, static_cast<int>(y.level),
                                                  static_cast<int>(y.role), m.str(y.name));
  });
  detail::sortByTime(m.ranges, [&](uint32_t a, uint32_t b) {
    const auto x = m.ranges[a], y = m.ranges[b];
    return std::tuple(x.rank, tid(x.thread), static_cast<int>(x.kind), m.str(x.text), m.str(x.domain), x.seq,
                      tid(x.endThread), x.deviceId, x.streamId, x.fwdbwdFlow) <
           std::tuple(y.rank, tid(y.thread), static_cast<int>(y.kind), m.str(y.text), m.str(y.domain), y.seq,
                      tid(y.endThread), y.deviceId, y.streamId, y.fwdbwdFlow);
  });
  // Frames: among equal intervals an ancestor comes before its descendants (a 2021 Kineto call
  // stack is a chain of frames spanning one operator), so the depth along the parent links leads
  // the tie key; parent links follow the permutation.
  std::vector<uint32_t> depth(m.pyFrames.size(), 0);
  if (m.pyFrames.stored<&PyFrame::parent>()) {
    for (size_t i = 0; i < m.pyFrames.size(); ++i) {
      uint32_t d = 0;
      for (uint32_t p = m.pyFrames.get<&PyFrame::parent>(i); p != kNone && p < m.pyFrames.size() && d < 4096;
           p = m.pyFrames.get<&PyFrame::parent>(p))
        ++d;
      depth[i] = d;
    }
  }
  auto perm = detail::sortByTime(m.pyFrames, [&](uint32_t a, uint32_t b) {
    const auto x = m.pyFrames[a], y = m.pyFrames[b];
    return std::tuple(x.rank, tid(x.thread), depth[a], x.pythonId, x.line, m.str(x.name), m.str(x.file)) <
           std::tuple(y.rank, tid(y.thread), depth[b], y.pythonId, y.line, m.str(y.name), m.str(y.file));
  });
  if (!perm.empty() && m.pyFrames.stored<&PyFrame::parent>()) {
    std::vector<uint32_t> where(perm.size());
    for (uint32_t i = 0; i < perm.size(); ++i) where[perm[i]] = i;
    for (size_t i = 0; i < m.pyFrames.size(); ++i) {
      uint32_t p = m.pyFrames.get<&PyFrame::parent>(i);
      if (p != kNone) m.pyFrames.put<&PyFrame::parent>(i, p < where.size() ? where[p] : kNone);
    }
  }
}

}  // namespace kl::profile
