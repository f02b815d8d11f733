#include "core/analysis/mfu.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>

#include "core/analysis/callsite.h"
#include "core/analysis/flops.h"
#include "core/support/saturating.h"

namespace kl::analysis {

namespace {

bool icontains(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

void byFlops(std::vector<MfuGroup>& v) {
  std::sort(v.begin(), v.end(), [](const MfuGroup& a, const MfuGroup& b) {
    return a.flops != b.flops ? a.flops > b.flops
                              : (a.kernelNs != b.kernelNs ? a.kernelNs > b.kernelNs : a.key < b.key);
  });
}

}  // namespace

bool isGemmLikeKernel(std::string_view n) {
  for (std::string_view k : {"gemm", "nvjet", "cutlass", "xmma", "cublas", "wgmma", "hgemm", "sgemm"})
    if (icontains(n, k)) return true;
  return false;
}

const char* flopSourceName(FlopSource s) {
  switch (s) {
    case FlopSource::None: return "none";
    case FlopSource::KinetoShapes: return "kineto-shapes";
    case FlopSource::NvtxShapes: return "nvtx-shapes";
  }
  return "none";
}

namespace {

/// computeMfu()'s state and steps: devices, kernels in scope, their invocations (the operator
/// range around each launch, FLOPs counted once per invocation), then the groups.
class MfuBuilder {
 public:
  explicit MfuBuilder(const View& v) : v_(v), m_(v.m) {
    // GPU name per (rank, device).
    for (const auto& g : m_.gpus) gpuName_[{g.rank, g.deviceId}] = std::string(m_.str(g.name));
  }

  /// Kernels in scope with a launch call (kernels_, calls_ and their call sites); per device its
  /// kernels, kernel time and active span (in the window).
  void collectKernels() {
    for (uint32_t i : v_.ops) {
      const auto& op = m_.gpuOps[i];
      auto& d = dev(deviceOf(op));
      if (op.kind != GpuOpKind::Kernel) continue;
      ++d.kernels;
      addTo(d.kernelNs, op.duration());
      uint32_t call = v_.attr ? v_.attr->op(i).launch : kNone;
      kernels_.push_back(i);
      if (call != kNone && !callPos_.count(call)) {
        callPos_[call] = calls_.size();
        calls_.push_back(call);
      }
    }
    // Active span per device.
    std::map<DeviceKey, std::pair<int64_t, int64_t>> span;
    for (uint32_t i : v_.ops) {
      const auto& op = m_.gpuOps[i];
      int64_t s = std::max(op.start, v_.winStart), e = std::min(op.end, v_.winEnd);
      auto [it, fresh] = span.try_emplace(deviceOf(op), s, e);
      if (!fresh) {
        it->second.first = std::min(it->second.first, s);
        it->second.second = std::max(it->second.second, e);
      }
    }
    for (auto& [k, se] : span) dev(k).activeSpanNs = std::max<int64_t>(0, se.second - se.first);
    sites_ = callSites(m_, calls_);
  }

  /// Each kernel into its invocation's FLOP-counted time, or (a GEMM-like kernel without counted
  /// FLOPs) into the uncounted groups; the result's FLOP source.
  void countKernels(MfuResult& r) {
    for (uint32_t i : kernels_) {
      const auto& op = m_.gpuOps[i];
      Inv* inv = invocationOf(i);
      auto& d = dev(deviceOf(op));
      if (inv && inv->ok) {
        addTo(inv->kernelNs, op.duration());
        ++inv->kernels;
        ++d.flopKernels;
        addTo(d.flopKernelNs, op.duration());
      } else if (isGemmLikeKernel(m_.str(op.name))) {
        ++d.uncountedGemmKernels;
        addTo(d.uncountedGemmNs, op.duration());
        auto& u = uncounted_[op.name];
        u.key = std::string(m_.str(op.name));
        ++u.kernels;
        addTo(u.kernelNs, op.duration());
      }
    }
    r.source = kineto_ ? FlopSource::KinetoShapes : nvtx_ ? FlopSource::NvtxShapes : FlopSource::None;
  }

  /// The FLOPs and peak time of each counted invocation into its device, the totals, and the
  /// groups by operator and by call site; then every device and group into r, sorted.
  void sumInvocations(MfuResult& r) {
    std::map<std::string, MfuGroup> ops, lines;
    for (auto& entry : invs_) {
      auto& inv = entry.second;  // a named reference: the lambda below captures it (clang 14)
      if (!inv.ok || inv.kernels == 0) continue;
      auto& d = dev(inv.dev);
      double peakNs = 0;
      bool known = d.peak.has_value() && d.peak->flopsPerSec(inv.f.dtype) > 0;
      if (known) peakNs = inv.f.flops / d.peak->flopsPerSec(inv.f.dtype) * 1e9;
      d.flops += inv.f.flops;
      d.peakNs += peakNs;
      r.flops += inv.f.flops;
      r.peakNs += peakNs;
      auto add = [&](MfuGroup& g, const std::string& key) {
        g.key = key;
        ++g.invocations;
        g.kernels += inv.kernels;
        g.flops += inv.f.flops;
        addTo(g.kernelNs, inv.kernelNs);
        g.peakNs += peakNs;
        g.peakKnown = g.peakKnown && known;
      };
      add(ops[inv.name + " [" + dtypeName(inv.f.dtype) + ", " + inv.f.formula + "]"],
          inv.name + " [" + dtypeName(inv.f.dtype) + ", " + inv.f.formula + "]");
      std::string site = inv.site != SIZE_MAX ? sites_[inv.site].site : "";
      auto& lg = lines[site];
      add(lg, site);
      if (inv.site != SIZE_MAX) {
        lg.file = sites_[inv.site].file;
        lg.line = sites_[inv.site].line;
      }
    }
    for (auto& [k, d] : devs_) {
      addTo(r.flopKernelNs, d.flopKernelNs);
      r.devices.push_back(d);
    }
    for (auto& [k, g] : ops) r.ops.push_back(g);
    for (auto& [k, g] : lines) r.lines.push_back(g);
    for (auto& [k, g] : uncounted_) r.uncounted.push_back(g);
    byFlops(r.ops);
    byFlops(r.lines);
    std::sort(r.uncounted.begin(), r.uncounted.end(), [](const MfuGroup& a, const MfuGroup& b) {
      return a.kernelNs != b.kernelNs ? a.kernelNs > b.kernelNs : a.key < b.key;
    });
  }

 private:
  /// Invocation = the operator range (cpu_op or NVTX) around the launch. FLOPs once per invocation.
  struct Inv {
    OpFlops f;
    std::string name;
    bool ok = false;
    int64_t kernelNs = 0;
    uint64_t kernels = 0;
    DeviceKey dev;
    size_t site = SIZE_MAX;  // index into sites_ (first kernel's launch)
  };

  /// The device's entry, made on first use with its GPU name (single-GPU Kineto traces without a
  /// matching device id: the only named GPU of the rank) and peak.
  MfuDevice& dev(DeviceKey k) {
    auto [it, fresh] = devs_.try_emplace(k);
    if (fresh) {
      it->second.dev = k;
      it->second.gpuName = gpuName_.count(k) ? gpuName_[k] : "";
      if (it->second.gpuName.empty())
        for (const auto& [gk, n] : gpuName_)
          if (gk.rank == k.rank) it->second.gpuName = n;
      it->second.peak = peakForGpu(it->second.gpuName);
    }
    return it->second;
  }

  /// Kernel i's invocation: the operator range with Kineto shapes, else the NVTX range with
  /// "sizes = [" around its launch (its FLOPs counted when first seen); null without either.
  Inv* invocationOf(uint32_t i) {
    const auto& op = m_.gpuOps[i];
    uint32_t call = v_.attr ? v_.attr->op(i).launch : kNone;
    uint32_t range = kNone;
    size_t sp = SIZE_MAX;
    if (call != kNone) {
      sp = callPos_[call];
      const auto& s = sites_[sp];
      if (s.opRange != kNone && m_.ranges[s.opRange].shapes != profile::kEmptyStr)
        range = s.opRange;
      else if (s.innerRange != kNone &&
               m_.str(m_.ranges[s.innerRange].text).find("sizes = [") != std::string_view::npos)
        range = s.innerRange;
    }
    if (range == kNone) return nullptr;
    auto [it, fresh] = invs_.try_emplace(range);
    Inv* inv = &it->second;
    if (fresh) {
      const auto& rg = m_.ranges[range];
      if (rg.shapes != profile::kEmptyStr) {
        inv->name = std::string(m_.str(rg.text));
        inv->ok = flopsOf(inv->name, parseShapes(m_.str(rg.shapes)), inv->f);
        kineto_ = kineto_ || inv->ok;
      } else {
        OpShapes sh;
        std::string name;
        if (parseNvtxShapes(m_.str(rg.text), name, sh)) {
          inv->name = name;
          inv->ok = flopsOf(name, sh, inv->f);
          nvtx_ = nvtx_ || inv->ok;
        }
      }
      inv->dev = deviceOf(op);
      inv->site = sp;
    }
    return inv;
  }

  const View& v_;
  const ProfileModel& m_;
  std::map<DeviceKey, std::string> gpuName_;
  std::map<DeviceKey, MfuDevice> devs_;
  std::vector<uint32_t> kernels_, calls_;
  std::unordered_map<uint32_t, size_t> callPos_;
  std::vector<CallSite> sites_;
  std::unordered_map<uint32_t, Inv> invs_;  // by range index
  bool kineto_ = false, nvtx_ = false;
  std::map<StrId, MfuGroup> uncounted_;
};

}  // namespace

MfuResult computeMfu(const View& v) {
  MfuResult r;
  MfuBuilder b(v);
  b.collectKernels();
  b.countKernels(r);
  b.sumInvocations(r);
  return r;
}

void writeJson(json::Writer& w, const MfuResult& r, const ProfileModel& m, size_t top) {
  auto ratio = [&](double a, double b) -> json::Writer& {
    if (b > 0 && a > 0) return w.value(a / b);
    return w.null();
  };
  w.beginObject()
      .field("emulated", m.meta.emulated)
      .field("source", flopSourceName(r.source))
      .field("flops", r.flops)
      .field("flop_kernel_ns", r.flopKernelNs);
  w.key("devices").beginArray();
  for (const auto& d : r.devices) {
    w.beginObject()
        .field("rank", static_cast<int64_t>(d.dev.rank))
        .field("device", static_cast<int64_t>(d.dev.device))
        .field("gpu", d.gpuName)
        .field("peak_model", d.peak ? d.peak->model : "")
        .field("peak_source", d.peak ? d.peak->source : "");
    w.key("peak_bf16_flops_per_s");
    if (d.peak)
      w.value(d.peak->flopsPerSec(DType::Bf16));
    else
      w.null();
    w.field("kernels", d.kernels)
        .field("kernel_ns", d.kernelNs)
        .field("flop_kernels", d.flopKernels)
        .field("flop_kernel_ns", d.flopKernelNs)
        .field("active_span_ns", d.activeSpanNs)
        .field("flops", d.flops)
        .field("peak_time_ns", static_cast<int64_t>(d.peakNs + 0.5));
    w.key("achieved_flops_per_s_in_kernels");
    ratio(d.flops * 1e9, static_cast<double>(d.flopKernelNs));
    w.key("achieved_flops_per_s_over_span");
    ratio(d.flops * 1e9, static_cast<double>(d.activeSpanNs));
    w.key("kernel_mfu");
    ratio(d.peak ? d.peakNs : 0, static_cast<double>(d.flopKernelNs));
    w.key("run_mfu");
    ratio(d.peak ? d.peakNs : 0, static_cast<double>(d.activeSpanNs));
    w.field("uncounted_gemm_kernels", d.uncountedGemmKernels).field("uncounted_gemm_ns", d.uncountedGemmNs).endObject();
  }
  w.endArray();
  auto groups = [&](const char* name, const std::vector<MfuGroup>& gs, bool site) {
    w.key(name).beginArray();
    for (size_t i = 0; i < gs.size() && (top == 0 || i < top); ++i) {
      const auto& g = gs[i];
      w.beginObject().field(site ? "site" : "name", g.key);
      if (site) w.field("file", g.file).field("line", static_cast<int64_t>(g.line));
      w.field("invocations", g.invocations)
          .field("kernels", g.kernels)
          .field("flops", g.flops)
          .field("kernel_ns", g.kernelNs);
      w.key("achieved_flops_per_s");
      ratio(g.flops * 1e9, static_cast<double>(g.kernelNs));
      w.key("mfu");
      ratio(g.peakKnown ? g.peakNs : 0, static_cast<double>(g.kernelNs));
      w.endObject();
    }
    w.endArray();
  };
  groups("operators", r.ops, false);
  groups("lines", r.lines, true);
  w.key("uncounted_gemm_kernels").beginArray();
  for (size_t i = 0; i < r.uncounted.size() && (top == 0 || i < top); ++i)
    w.beginObject()
        .field("name", r.uncounted[i].key)
        .field("kernels", r.uncounted[i].kernels)
        .field("kernel_ns", r.uncounted[i].kernelNs)
        .endObject();
  w.endArray().endObject();
}

}  // namespace kl::analysis
