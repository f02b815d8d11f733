// `mfu`: achieved FLOP/s and model-FLOPs utilisation of GEMM and attention work.
//
// FLOPs: for every GPU kernel whose launch call lies inside an operator with recorded shapes —
// the innermost Kineto cpu_op around the launch (Input Dims, record_shapes=True) or, in nsys
// exports, the innermost NVTX range whose text carries emit_nvtx sizes — the operator's model
// FLOPs (flops.h) are counted ONCE per operator invocation and shared by the kernels it launched
// (e.g. a GEMM and its split-K reduction). Operators without a formula (convolutions, element-
// wise ops) contribute no FLOPs; GEMM-like kernels (names with gemm/nvjet/cutlass/xmma/cublas)
// that received none are reported as "uncounted".
//
// Utilisation against the device's dense peak for each invocation's dtype (gpu_peaks.h):
//   peak_time = sum over invocations of flops / peak(device, dtype)   ("time at peak")
//   kernel MFU = peak_time / sum of durations of the kernels that carry FLOPs
//   run MFU    = peak_time / the device's active span (first op start .. last op end in scope)
//   achieved FLOP/s = flops / kernel time (per op, per line) or / active span (per run)
// Per line = per call site of the launch (callsite.h: kl: range or user Python frame).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/gpu_peaks.h"
#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct MfuGroup {
  std::string key;   // operator (with formula and dtype) / call site / kernel name
  std::string file;  // call-site rows: source file and line when known
  int32_t line = 0;
  uint64_t invocations = 0, kernels = 0;
  double flops = 0;
  int64_t kernelNs = 0;
  double peakNs = 0;  // time the FLOPs take at peak (0 when the peak is unknown)
  bool peakKnown = true;
};

struct MfuDevice {
  DeviceKey dev;
  std::string gpuName;          // as recorded ("" when the profile has no device info)
  std::optional<GpuPeak> peak;  // matched datasheet entry
  double flops = 0, peakNs = 0;
  int64_t flopKernelNs = 0;  // durations of kernels carrying FLOPs
  int64_t activeSpanNs = 0;
  int64_t kernelNs = 0;  // all kernels of the device
  uint64_t kernels = 0, flopKernels = 0;
  int64_t uncountedGemmNs = 0;  // GEMM-like kernels without FLOPs
  uint64_t uncountedGemmKernels = 0;
};

/// Where the operators' input shapes (hence FLOPs) come from; None: no FLOPs counted.
enum class FlopSource : uint8_t { None, KinetoShapes, NvtxShapes };
/// "none", "kineto-shapes", "nvtx-shapes" (the JSON and text spelling).
const char* flopSourceName(FlopSource s);

struct MfuResult {
  FlopSource source = FlopSource::None;
  std::vector<MfuDevice> devices;   // by (rank, device)
  std::vector<MfuGroup> ops;        // by flops desc
  std::vector<MfuGroup> lines;      // by flops desc
  std::vector<MfuGroup> uncounted;  // GEMM-like kernel names without FLOPs, by time desc
  double flops = 0, peakNs = 0;
  int64_t flopKernelNs = 0;
};

MfuResult computeMfu(const View& v);
void writeJson(json::Writer& w, const MfuResult& r, const ProfileModel& m, size_t top);

/// Kernel names that are GEMMs by convention (gemm, nvjet, cutlass, xmma, cublas, wgmma).
bool isGemmLikeKernel(std::string_view name);

}  // namespace kl::analysis
