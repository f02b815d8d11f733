// Backward -> forward link (see autograd_link.h for the rules).
#include "core/attribution/autograd_link.h"

#include <algorithm>
#include <charconv>
#include <ranges>
#include <tuple>
#include <unordered_map>

#include "core/nvtx/naming.h"

namespace kl::attribution {

using namespace kl::profile;

const char* passName(Pass p) {
  switch (p) {
    case Pass::Forward: return "forward";
    case Pass::Backward: return "backward";
    case Pass::Recompute: return "recompute";
    case Pass::Optimizer: return "optimizer";
    case Pass::ZeroGrad: return "zero_grad";
    case Pass::GradClip: return "grad-clip";
    case Pass::AmpScaler: return "amp-scaler";
  }
  return "forward";
}

std::optional<Pass> passFromName(std::string_view name) {
  for (Pass p : {Pass::Forward, Pass::Backward, Pass::Recompute, Pass::Optimizer, Pass::ZeroGrad, Pass::GradClip,
                 Pass::AmpScaler})
    if (name == passName(p)) return p;
  return std::nullopt;
}

bool isBackwardNodeName(std::string_view name) {
  return name.find("Backward") != std::string_view::npos || name.starts_with("torch::autograd::") ||
         name.starts_with("autograd::engine::evaluate_function: ");
}

std::optional<Pass> stepKindOf(std::string_view text) {
  if (text.starts_with("Optimizer.step#")) return Pass::Optimizer;
  if (text.starts_with("Optimizer.zero_grad#")) return Pass::ZeroGrad;
  if (text == "torch.nn.utils.clip_grad_norm_" || text == "torch.nn.utils.clip_grad_value_") return Pass::GradClip;
  if (text.starts_with("GradScaler.")) return Pass::AmpScaler;
  return std::nullopt;
}

std::optional<SeqTag> parseSeqTag(std::string_view text) {
  if (nvtx::isManagedName(text)) return std::nullopt;  // kernlens' own line ranges never carry one
  // The tag follows the name: ", seq = N" or ", stashed seq = N" (spaces around '=' optional).
  size_t at = text.find(", ");
  while (at != std::string_view::npos) {
    std::string_view rest = text.substr(at + 2);
    bool stashed = false;
    if (rest.substr(0, 8) == "stashed ") {
      stashed = true;
      rest.remove_prefix(8);
    }
    if (rest.substr(0, 3) == "seq") {
      rest.remove_prefix(3);
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      if (!rest.empty() && rest.front() == '=') {
        rest.remove_prefix(1);
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        int64_t n = -1;
        auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
        if (ec == std::errc() && p != rest.data() && (p == rest.data() + rest.size() || *p == ',') && n >= 0) {
          SeqTag t;
          t.seq = n;
          t.backwardNode = stashed || isBackwardNodeName(text.substr(0, at));
          return t;
        }
      }
    }
    at = text.find(", ", at + 2);
  }
  return std::nullopt;
}

namespace {

struct Item {
  int64_t start, end;
  uint32_t range;
  int64_t seq;
};

/// Ranges of one kind on one thread, sorted by start, with the running maximum of ends so a
/// containment query walks back only over candidates that can still contain the point.
/// Equal intervals (two pushes within one clock tick) are ordered by content, never by row
/// order: a numbered range is inner to an unnumbered one (the engine pushes its
/// "evaluate_function" wrapper before the node), then the model's order (docs/profiles.md).
struct ThreadIndex {
  std::vector<Item> items;
  std::vector<int64_t> maxEnd;
  static std::tuple<int64_t, int64_t, bool, uint32_t> key(const Item& x) {
    return {x.start, -x.end, x.seq >= 0, x.range};
  }
  void finish() {
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return key(a) < key(b); });
    maxEnd.resize(items.size());
    int64_t m = INT64_MIN;
    for (size_t i = 0; i < items.size(); ++i) maxEnd[i] = m = std::max(m, items[i].end);
  }
  /// The latest-starting item with start <= s and end >= e (and start >= notBefore), or null.
  const Item* innermost(int64_t s, int64_t e, int64_t notBefore = INT64_MIN) const {
    auto it = std::upper_bound(items.begin(), items.end(), s, [](int64_t x, const Item& y) { return x < y.start; });
    for (size_t i = static_cast<size_t>(it - items.begin()); i-- > 0;) {
      if (maxEnd[i] < e || items[i].start < notBefore) return nullptr;
      if (items[i].end >= e) return &items[i];
    }
    return nullptr;
  }
};

/// linkAutograd()'s index of the tagged ranges: backward nodes, forward ops and kernlens' own line
/// ranges per thread; forward ops by (process, sequence number) and by Kineto `fwdbwd` flow.
class AutogradIndex {
 public:
  explicit AutogradIndex(const ProfileModel& m)
      : m_(m), nThreads_(m.threads.size()), nodes_(nThreads_), fwdOps_(nThreads_), lineRanges_(nThreads_) {}

  /// Step 1a: the backward-node and forward-op ranges (tagged by data or by text). False when
  /// there is none (then nothing else is collected).
  bool collectTagged() {
    std::unordered_map<StrId, std::optional<SeqTag>> tags;
    bool any = false;
    const auto& rText = m_.ranges.col<&Range::text>();
    StrId lastText = kNone;  // consecutive ranges often share a text: one lookup per run
    const std::optional<SeqTag>* lastTag = nullptr;
    for (uint32_t r = 0; r < m_.ranges.size(); ++r) {
      const RangeKind kind = m_.ranges.get<&Range::kind>(r);
      if (rThread(r) >= nThreads_ || kind == RangeKind::NvtxMark || kind == RangeKind::GpuUserAnnotation) continue;
      // Recorded as data (Kineto args), not in the text: such ranges are never skipped by text.
      const int64_t seq = m_.ranges.get<&Range::seq>(r);
      const bool nodeFlag = m_.ranges.get<&Range::backwardNode>(r);
      std::optional<SeqTag> dataTag;
      if (seq >= 0 || nodeFlag) dataTag = SeqTag{seq, nodeFlag || isBackwardNodeName(m_.str(rText[r]))};
      if (!dataTag && lastTag && rText[r] == lastText && !*lastTag) continue;
      const auto g = m_.ranges[r];
      if (!dataTag && nvtx::isManagedName(m_.str(g.text))) continue;  // line ranges: collected below
      auto it = tags.end();
      if (!dataTag) {
        it = tags.find(g.text);
        if (it == tags.end()) {
          std::string_view text = m_.str(g.text);
          auto tag = parseSeqTag(text);
          // Nodes pushed without a number (AccumulateGrad, the engine's evaluate_function wrapper).
          if (!tag && !nvtx::isManagedName(text) && isBackwardNodeName(text)) tag = SeqTag{-1, true};
          it = tags.emplace(g.text, tag).first;
        }
        lastText = g.text;
        lastTag = &it->second;
        if (!it->second) continue;
      }
      any = true;
      addTagged(r, dataTag ? *dataTag : *it->second);
    }
    return any;
  }

  /// Step 1b: kernlens' own "kl:" line ranges per thread; then every index sorted for lookups.
  void collectLineRanges() {
    const auto& rText = m_.ranges.col<&Range::text>();
    StrId lastText = kNone;
    bool lastManaged = false;
    for (uint32_t r = 0; r < m_.ranges.size(); ++r) {
      if (rThread(r) >= nThreads_ || m_.ranges.get<&Range::seq>(r) >= 0 || m_.ranges.get<&Range::backwardNode>(r))
        continue;
      if (rText[r] != lastText) {
        lastText = rText[r];
        lastManaged = nvtx::isManagedName(m_.str(lastText));
      }
      const RangeKind kind = m_.ranges.get<&Range::kind>(r);
      if (!lastManaged || kind == RangeKind::NvtxMark || kind == RangeKind::GpuUserAnnotation) continue;
      lineRanges_[rThread(r)].items.push_back({m_.ranges.get<&Range::start>(r), m_.ranges.get<&Range::end>(r), r, -1});
    }
    for (auto& x : nodes_) x.finish();
    for (auto& x : fwdOps_) x.finish();
    for (auto& x : lineRanges_) x.finish();
    std::sort(bySeq_.begin(), bySeq_.end(), [](const Fwd& a, const Fwd& b) {
      return std::tie(a.process, a.seq, a.start, a.range) < std::tie(b.process, b.seq, b.start, b.range);
    });
  }

  /// Step 2, for call c: node -> forward op -> (repeat while the point is inside a node), into l.
  void linkCall(uint32_t c, LinkedCall& l) const {
    const auto& call = m_.apiCalls[c];
    if (call.thread >= nThreads_ || nodes_[call.thread].items.empty()) return;
    uint32_t thread = call.thread;
    int64_t s = call.start, e = call.end;
    for (int depth = 0; depth < 8; ++depth) {
      const Item* node = nodes_[thread].innermost(s, e);
      if (!node) break;
      const Item* op = fwdOps_[thread].innermost(s, e, node->start);
      if (depth == 0) {
        l.node = node->range;
        l.pass = op && op->seq > 0 ? Pass::Recompute : Pass::Backward;
      }
      // A forward op re-run inside the node (activation checkpointing) by code whose own line
      // ranges are open around it on this thread: those ranges are the answer.
      if (op && op->seq >= 0 && lineRanges_[thread].innermost(s, e, node->start)) {
        l.forwardOp = op->range;
        break;
      }
      // The flow names the forward op exactly; the sequence number is the fallback.
      uint32_t fwd = kNone;
      if (int64_t flow = m_.ranges.get<&Range::fwdbwdFlow>(node->range); flow >= 0)
        if (auto ff = flowForward_.find(flowKey(thread, flow)); ff != flowForward_.end()) fwd = ff->second;
      if (fwd == kNone && node->seq >= 0)
        if (const Fwd* f = forwardOf(m_.threads[thread].process, node->seq, node->start)) fwd = f->range;
      if (fwd == kNone) break;
      const auto& fr = m_.ranges[fwd];
      l.forwardOp = fwd;
      thread = fr.thread;
      s = fr.start;
      e = fr.end;
    }
    if (l.pass != Pass::Forward && l.forwardOp != kNone) {
      l.thread = thread;
      l.start = s;
      l.end = e;
    }
  }

 private:
  struct Fwd {
    uint32_t process;
    int64_t seq, start;
    uint32_t range;
  };
  uint32_t rThread(size_t i) const { return m_.ranges.get<&Range::thread>(i); }
  /// Kineto `fwdbwd` flows: (process, flow id) -> the forward op at the flow's start.
  uint64_t flowKey(uint32_t thread, int64_t flow) const {
    return (static_cast<uint64_t>(m_.threads[thread].process) << 40) ^ static_cast<uint64_t>(flow);
  }
  /// Range r, tagged t: a backward node or a forward op of its thread (and by sequence and flow).
  void addTagged(uint32_t r, const SeqTag& t) {
    const auto g = m_.ranges[r];
    if (g.fwdbwdFlow >= 0 && !t.backwardNode) flowForward_.emplace(flowKey(g.thread, g.fwdbwdFlow), r);
    Item item{g.start, g.end, r, t.seq};
    if (t.backwardNode) {
      nodes_[g.thread].items.push_back(item);
    } else {
      fwdOps_[g.thread].items.push_back(item);
      bySeq_.push_back({m_.threads[g.thread].process, t.seq, g.start, r});
    }
  }
  /// The latest forward op of (process, seq) that starts before `before`, or null.
  const Fwd* forwardOf(uint32_t process, int64_t seq, int64_t before) const {
    Fwd key{process, seq, before, 0};
    auto it = std::lower_bound(bySeq_.begin(), bySeq_.end(), key, [](const Fwd& a, const Fwd& b) {
      return std::tie(a.process, a.seq, a.start) < std::tie(b.process, b.seq, b.start);
    });
    if (it == bySeq_.begin()) return nullptr;
    --it;
    return it->process == process && it->seq == seq ? &*it : nullptr;
  }

  const ProfileModel& m_;
  const size_t nThreads_;
  std::vector<ThreadIndex> nodes_, fwdOps_;
  std::vector<ThreadIndex> lineRanges_;  // kernlens' own "kl:" ranges, per thread
  std::vector<Fwd> bySeq_;
  std::unordered_map<uint64_t, uint32_t> flowForward_;
};

/// Step 3: nodes without a forward op: the thread blocked in backward() is the forward thread of
/// the nearest linked call on the same thread (previous, else next).
void linkFromNeighbours(const ProfileModel& m, const std::vector<uint8_t>& wanted, std::vector<LinkedCall>& out) {
  const size_t nThreads = m.threads.size();
  std::vector<uint32_t> lastFwdThread(nThreads, kNone);
  auto fill = [&](auto begin, auto end) {
    std::fill(lastFwdThread.begin(), lastFwdThread.end(), kNone);
    for (auto it = begin; it != end; ++it) {
      uint32_t c = *it;
      if (!wanted[c]) continue;
      LinkedCall& l = out[c];
      uint32_t t = m.apiCalls[c].thread;
      if (t >= nThreads) continue;
      if (l.pass != Pass::Forward && l.forwardOp != kNone) {
        lastFwdThread[t] = l.thread;
      } else if (l.pass != Pass::Forward && l.thread == kNone && lastFwdThread[t] != kNone && lastFwdThread[t] != t) {
        l.thread = lastFwdThread[t];
        l.start = m.apiCalls[c].start;
        l.end = m.apiCalls[c].end;
      }
    }
  };
  auto calls = std::views::iota(uint32_t{0}, static_cast<uint32_t>(m.apiCalls.size()));
  fill(calls.begin(), calls.end());
  fill(std::make_reverse_iterator(calls.end()), std::make_reverse_iterator(calls.begin()));
}

}  // namespace

std::vector<LinkedCall> linkAutograd(const ProfileModel& m, const std::vector<uint8_t>& wanted) {
  // 1. Tagged ranges: backward nodes and forward ops per thread; forward ops by (process, seq).
  AutogradIndex index(m);
  // Nothing tagged (no autograd ranges): nothing allocated per call or per line range.
  if (!index.collectTagged()) return {};
  index.collectLineRanges();
  // 2. Per call: node -> forward op -> (repeat while the point is inside a node).
  std::vector<LinkedCall> out(m.apiCalls.size());
  for (uint32_t c = 0; c < m.apiCalls.size(); ++c)
    if (wanted[c]) index.linkCall(c, out[c]);
  // 3. Nodes without a forward op: linked from the nearest linked call on the same thread.
  linkFromNeighbours(m, wanted, out);
  return out;
}

std::vector<Pass> stepScopes(const ProfileModel& m, const std::vector<uint8_t>& wanted) {
  const size_t nThreads = m.threads.size();
  std::vector<ThreadIndex> scopes(nThreads);
  std::unordered_map<StrId, std::optional<Pass>> kinds;
  auto rThread = [&m](size_t i) { return m.ranges.get<&Range::thread>(i); };
  const auto& rText = m.ranges.col<&Range::text>();
  bool any = false;
  for (uint32_t r = 0; r < m.ranges.size(); ++r) {
    const RangeKind kind = m.ranges.get<&Range::kind>(r);
    if (rThread(r) >= nThreads || kind == RangeKind::NvtxMark || kind == RangeKind::GpuUserAnnotation) continue;
    auto it = kinds.find(rText[r]);
    if (it == kinds.end()) it = kinds.emplace(rText[r], stepKindOf(m.str(rText[r]))).first;
    if (!it->second) continue;
    any = true;
    scopes[rThread(r)].items.push_back(
        {m.ranges.get<&Range::start>(r), m.ranges.get<&Range::end>(r), r, static_cast<int64_t>(*it->second)});
  }
  if (!any) return {};
  for (auto& x : scopes) x.finish();
  std::vector<Pass> out(m.apiCalls.size(), Pass::Forward);
  for (uint32_t c = 0; c < m.apiCalls.size(); ++c) {
    if (!wanted[c]) continue;
    const auto& call = m.apiCalls[c];
    if (call.thread >= nThreads) continue;
    if (const Item* s = scopes[call.thread].innermost(call.start, call.end)) out[c] = static_cast<Pass>(s->seq);
  }
  return out;
}

}  // namespace kl::attribution
