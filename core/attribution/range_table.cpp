#include "core/attribution/range_table.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/nvtx/naming.h"
#include "core/support/saturating.h"

namespace kl::attribution {
namespace {

using profile::kNone;
using profile::StrId;

constexpr int32_t kNotManaged = -1;
constexpr int32_t kBadName = -2;
constexpr int32_t kUnknown = -3;

/// An entry while ops are aggregated (StrId-keyed; strings are made at the end).
struct EntryAcc {
  RangeEntry out;
  std::set<StrId> inclusive;
  std::map<std::vector<StrId>, uint32_t> inclusiveSets;
  std::map<std::vector<StrId>, uint32_t> exclusiveSets;
  std::vector<KernelEntry> kernels;
  std::map<std::tuple<StrId, Pass, bool>, uint32_t> kernelIndex;  // (op name, pass, unowned) -> kernels[]
};

std::vector<KernelSet> materialize(const profile::ProfileModel& m, const std::map<std::vector<StrId>, uint32_t>& sets) {
  std::vector<KernelSet> out;
  for (const auto& [ids, n] : sets) {
    KernelSet s;
    for (StrId id : ids) s.kernels.emplace_back(m.str(id));
    std::sort(s.kernels.begin(), s.kernels.end());
    s.invocations = n;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const KernelSet& a, const KernelSet& b) {
    return a.invocations != b.invocations ? a.invocations > b.invocations : a.kernels < b.kernels;
  });
  return out;
}

}  // namespace

std::string_view unmappedReasonName(UnmappedReason r) {
  switch (r) {
    case UnmappedReason::NoLaunchCall: return "no_launch_call";
    case UnmappedReason::OutsideRanges: return "outside_kl_ranges";
    case UnmappedReason::BadRangeName: return "bad_range_name";
  }
  return "";
}

std::optional<UnmappedReason> unmappedReasonFromName(std::string_view name) {
  for (UnmappedReason r : {UnmappedReason::NoLaunchCall, UnmappedReason::OutsideRanges, UnmappedReason::BadRangeName})
    if (name == unmappedReasonName(r)) return r;
  return std::nullopt;
}

std::pair<Pass, bool> opPass(const Attribution& attr, uint32_t i) {
  if (i >= attr.opCount()) return {Pass::Forward, false};
  const auto& o = attr.op(i);
  return {o.pass, isBackwardPass(o.pass) && o.forwardOp == kNone};
}

void addLaunch(KernelEntry& k, const profile::ProfileModel& m, uint32_t i, const Attribution* attr) {
  const auto& op = m.gpuOps[i];
  const int64_t d = op.duration();
  const auto* kd = m.kernel(op);
  if (k.launches == 0) {
    if (attr) std::tie(k.pass, k.noForwardOwner) = opPass(*attr, i);
    k.name = std::string(m.str(op.name));
    k.shortName = std::string(m.shortName(op));
    if (k.shortName.empty()) k.shortName = k.name;
    k.fullName = kd && kd->demangledName != profile::kEmptyStr ? std::string(m.str(kd->demangledName)) : k.name;
    k.kind = op.kind;
    k.minNs = d;
    k.maxNs = d;
    if (kd)
      for (int a = 0; a < 3; ++a) {
        k.grid[a] = kd->grid[a];
        k.block[a] = kd->block[a];
      }
  } else {
    k.minNs = std::min(k.minNs, d);
    k.maxNs = std::max(k.maxNs, d);
    if (kd)
      for (int a = 0; a < 3; ++a)
        if (kd->grid[a] != k.grid[a] || kd->block[a] != k.block[a]) k.shapeVaries = true;
  }
  ++k.launches;
  addTo(k.gpuNs, d);
  auto at = std::lower_bound(k.streams.begin(), k.streams.end(), op.streamId);
  if (at == k.streams.end() || *at != op.streamId) k.streams.insert(at, op.streamId);
}

void mergeKernel(KernelEntry& into, const KernelEntry& k) {
  if (into.launches == 0) {
    into = k;
    return;
  }
  into.minNs = std::min(into.minNs, k.minNs);
  into.maxNs = std::max(into.maxNs, k.maxNs);
  if (k.shapeVaries || k.grid != into.grid || k.block != into.block) into.shapeVaries = true;
  into.launches += k.launches;
  addTo(into.gpuNs, k.gpuNs);
  std::vector<uint32_t> streams;
  std::set_union(into.streams.begin(), into.streams.end(), k.streams.begin(), k.streams.end(),
                 std::back_inserter(streams));
  into.streams = std::move(streams);
}

const RangeEntry* RangeTable::find(std::string_view name) const {
  auto it = std::lower_bound(ranges.begin(), ranges.end(), name,
                             [](const RangeEntry& e, std::string_view n) { return e.name < n; });
  return it != ranges.end() && it->name == name ? &*it : nullptr;
}

RangeEntry* RangeTable::find(std::string_view name) {
  return const_cast<RangeEntry*>(static_cast<const RangeTable*>(this)->find(name));
}

Result<RangeEntry*> RangeTable::insert(std::string_view name) {
  if (RangeEntry* e = find(name)) return e;
  auto p = nvtx::parseName(name);
  if (!p) return Error::invalid(std::string(name) + ": " + p.error().message);
  RangeEntry e;
  e.name = std::string(name);
  e.path = p->path;
  e.firstLine = p->firstLine;
  e.lastLine = p->lastLine;
  e.label = p->label;
  auto at = std::lower_bound(ranges.begin(), ranges.end(), e.name,
                             [](const RangeEntry& x, const std::string& n) { return x.name < n; });
  return &*ranges.insert(at, std::move(e));
}

Options managedRangeOptions(const CancellationToken& cancel) {
  Options o;
  o.namePrefix = std::string(nvtx::kNamePrefix);
  o.cpuOp = false;
  o.pythonFrames = false;
  o.cancel = cancel;
  return o;
}

Result<RangeTable> tabulateRanges(const profile::ProfileModel& model, const CancellationToken& cancel) {
  auto attr = attribute(model, managedRangeOptions(cancel));
  if (!attr) return attr.error();
  return tabulateRanges(model, *attr, cancel);
}

namespace {

/// tabulateRanges()'s state and steps: range -> managed entry by text, then the invocations, the
/// ops and the per-invocation figures, then the table.
class RangeTabulator {
 public:
  RangeTabulator(const profile::ProfileModel& m, const Attribution& attr)
      : m_(m),
        attr_(attr),
        rstats_(attr.ranges()),
        nr_(std::min(m.ranges.size(), rstats_.size())),
        entryOf_(nr_, kUnknown) {}

  /// Invocations: per managed entry its inclusive numbers, inclusive kernel sets and parent range;
  /// t.invocations counts every counted managed-looking range (bad names too).
  Result<void> invocations(RangeTable& t, const CancellationToken& cancel) {
    for (uint32_t r = 0; r < nr_; ++r) {
      if (r % 4096 == 0 && cancel.isCancelled()) return Error::cancelled();
      int32_t e = classify(r);
      if (e == kNotManaged) continue;
      ++t.invocations;
      if (e < 0) continue;
      EntryAcc& a = acc_[static_cast<size_t>(e)];
      const auto& s = rstats_[r];
      ++a.out.invocations;
      a.out.launches += s.ops;
      addTo(a.out.gpuNs, s.inclusiveGpuNs);
      auto ks = attr_.kernelSet(r);
      std::vector<StrId> set(ks.begin(), ks.end());
      a.inclusive.insert(set.begin(), set.end());
      a.out.minKernelsPerInvocation = std::min(a.out.minKernelsPerInvocation, static_cast<uint32_t>(set.size()));
      a.out.maxKernelsPerInvocation = std::max(a.out.maxKernelsPerInvocation, static_cast<uint32_t>(set.size()));
      ++a.inclusiveSets[std::move(set)];
      uint32_t par = s.parent;
      while (par != kNone && par < nr_ && classify(par) == kNotManaged) par = rstats_[par].parent;
      if (par != kNone && par < nr_ && a.out.parentRange.empty())
        a.out.parentRange = std::string(m_.str(m_.ranges[par].text));
    }
    return {};
  }

  /// Ops: the owner is the innermost managed range of the stack. An owned op counts in its entry's
  /// exclusive numbers and kernels (and in owned_); any other in unmapped_, by name and reason.
  Result<void> ops(RangeTable& t, const CancellationToken& cancel) {
    owned_.reserve(m_.gpuOps.size());
    for (uint32_t i = 0; i < m_.gpuOps.size(); ++i) {
      if (i % 8192 == 0 && cancel.isCancelled()) return Error::cancelled();
      const auto& op = m_.gpuOps[i];
      ++t.totalOps;
      addTo(t.totalGpuNs, op.duration());
      auto stack = i < attr_.opCount() ? attr_.stack(i) : std::span<const uint32_t>();
      int32_t owner = kNotManaged;
      uint32_t ownerRange = kNone;
      for (size_t k = stack.size(); k-- > 0;) {
        int32_t c = classify(stack[k]);
        if (c != kNotManaged) {
          owner = c;
          ownerRange = stack[k];
          break;
        }
      }
      if (owner < 0) {
        addUnmapped(i, owner);
        continue;
      }
      ++t.mappedOps;
      EntryAcc& a = acc_[static_cast<size_t>(owner)];
      ++a.out.exclusiveLaunches;
      addTo(a.out.exclusiveGpuNs, op.duration());
      auto [pass, unowned] = opPass(attr_, i);
      if (isBackwardPass(pass)) addTo(a.out.exclusiveBackwardGpuNs, op.duration());
      auto [ki, fresh] =
          a.kernelIndex.try_emplace(std::make_tuple(op.name, pass, unowned), static_cast<uint32_t>(a.kernels.size()));
      if (fresh) a.kernels.emplace_back();
      addLaunch(a.kernels[ki->second], m_, i, &attr_);
      owned_.emplace_back(ownerRange, op.name);
    }
    return {};
  }

  /// Per invocation (after ops()): exclusive count, distinct names, variants.
  void perInvocation() {
    std::sort(owned_.begin(), owned_.end());
    for (size_t i = 0; i < owned_.size();) {
      size_t j = i;
      std::vector<StrId> names;
      while (j < owned_.size() && owned_[j].first == owned_[i].first) {
        if (names.empty() || names.back() != owned_[j].second) names.push_back(owned_[j].second);
        ++j;
      }
      EntryAcc& a = acc_[static_cast<size_t>(entryOf_[owned_[i].first])];
      a.out.maxExclusivePerInvocation = std::max(a.out.maxExclusivePerInvocation, static_cast<uint32_t>(j - i));
      a.out.maxDistinctPerInvocation = std::max(a.out.maxDistinctPerInvocation, static_cast<uint32_t>(names.size()));
      ++a.exclusiveSets[std::move(names)];
      i = j;
    }
  }

  /// The table's rows (entries by name, with leaf and depth), unmapped rows and bad names.
  void materializeInto(RangeTable& t) {
    std::set<std::string> parents;
    for (auto& a : acc_)
      if (!a.out.parentRange.empty()) parents.insert(a.out.parentRange);
    for (auto& a : acc_) {
      RangeEntry& e = a.out;
      if (e.minKernelsPerInvocation == UINT32_MAX) e.minKernelsPerInvocation = 0;
      for (StrId k : a.inclusive) e.inclusiveKernels.emplace_back(m_.str(k));
      std::sort(e.inclusiveKernels.begin(), e.inclusiveKernels.end());
      e.kernelSets = materialize(m_, a.inclusiveSets);
      e.variants = materialize(m_, a.exclusiveSets);
      e.kernels = std::move(a.kernels);
      std::sort(e.kernels.begin(), e.kernels.end(), [](const KernelEntry& x, const KernelEntry& y) {
        if (x.gpuNs != y.gpuNs) return x.gpuNs > y.gpuNs;
        return std::tie(x.name, x.pass, x.noForwardOwner) < std::tie(y.name, y.pass, y.noForwardOwner);
      });
      e.leaf = !parents.count(e.name);
      t.ranges.push_back(std::move(e));
    }
    std::sort(t.ranges.begin(), t.ranges.end(),
              [](const RangeEntry& x, const RangeEntry& y) { return x.name < y.name; });
    for (auto& e : t.ranges) {
      int32_t depth = 0;
      for (const RangeEntry* p = t.find(e.parentRange); p && depth < 256; p = t.find(p->parentRange)) ++depth;
      e.depth = depth;
    }
    for (auto& [k, u] : unmapped_) t.unmapped.push_back(std::move(u));
    std::sort(t.unmapped.begin(), t.unmapped.end(), [](const UnmappedEntry& x, const UnmappedEntry& y) {
      if (x.gpuNs != y.gpuNs) return x.gpuNs > y.gpuNs;
      return std::tie(x.name, x.reason) < std::tie(y.name, y.reason);
    });
    t.badRangeNames.assign(bad_.begin(), bad_.end());
  }

 private:
  /// Range index -> entry index (or kNotManaged / kBadName), by text; made on first use.
  int32_t classify(uint32_t r) {
    if (r >= nr_) return kNotManaged;
    if (entryOf_[r] != kUnknown) return entryOf_[r];
    StrId text = m_.ranges[r].text;
    auto it = byText_.find(text);
    if (it == byText_.end()) {
      std::string_view name = m_.str(text);
      int32_t v = kNotManaged;
      if (nvtx::isManagedName(name)) {
        if (auto p = nvtx::parseName(name)) {
          v = static_cast<int32_t>(acc_.size());
          EntryAcc& e = acc_.emplace_back();
          e.out.name = std::string(name);
          e.out.path = p->path;
          e.out.firstLine = p->firstLine;
          e.out.lastLine = p->lastLine;
          e.out.label = p->label;
          e.out.minKernelsPerInvocation = UINT32_MAX;
        } else {
          v = kBadName;
          bad_.emplace(name);
        }
      }
      it = byText_.emplace(text, v).first;
    }
    return entryOf_[r] = rstats_[r].counted ? it->second : kNotManaged;
  }

  /// Op i, which no managed range owns (`owner`: kNotManaged or kBadName), into unmapped_.
  void addUnmapped(uint32_t i, int32_t owner) {
    const auto& op = m_.gpuOps[i];
    UnmappedReason why = owner == kBadName ? UnmappedReason::BadRangeName
                         : i < attr_.opCount() && attr_.op(i).reason == Unattributed::NoLaunchCall
                             ? UnmappedReason::NoLaunchCall
                             : UnmappedReason::OutsideRanges;
    auto& u = unmapped_[{op.name, why}];
    if (u.launches == 0) {
      u.name = std::string(m_.str(op.name));
      u.kind = op.kind;
      u.reason = why;
    }
    ++u.launches;
    addTo(u.gpuNs, op.duration());
  }

  const profile::ProfileModel& m_;
  const Attribution& attr_;
  const std::vector<RangeStats>& rstats_;
  const size_t nr_;
  std::vector<EntryAcc> acc_;
  std::unordered_map<StrId, int32_t> byText_;
  std::set<std::string> bad_;
  std::vector<int32_t> entryOf_;
  std::map<std::pair<StrId, UnmappedReason>, UnmappedEntry> unmapped_;
  std::vector<std::pair<uint32_t, StrId>> owned_;  // (owner range invocation, op name)
};

}  // namespace

Result<RangeTable> tabulateRanges(const profile::ProfileModel& m, const Attribution& attr,
                                  const CancellationToken& cancel) {
  RangeTable t;
  t.emulated = m.meta.emulated;
  t.warnings = m.meta.warnings;
  RangeTabulator tab(m, attr);
  KL_TRY(tab.invocations(t, cancel));
  KL_TRY(tab.ops(t, cancel));
  tab.perInvocation();
  tab.materializeInto(t);
  return t;
}

}  // namespace kl::attribution
