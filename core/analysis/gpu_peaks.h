// Peak dense FLOP/s per GPU model and data type, from the vendors' datasheets (no sparsity;
// tensor-core figures for 16-bit, TF32 and FP8; boost clock). Used by `mfu` as the denominator.
//
// Sources (numbers as printed there, "with sparsity" figures halved where only those are given):
//  - NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100/, 2023): H100 SXM
//    FP64 34, FP64 TC 67, FP32 67, TF32 TC 494.5 (989 sparse), BF16/FP16 TC 989.5 (1979 sparse),
//    FP8 TC 1979 (3958 sparse) TFLOPS; H100 PCIe FP64 26, FP64 TC 51, FP32 51, TF32 378,
//    BF16/FP16 756.5, FP8 1513.
//  - NVIDIA H200 Tensor Core GPU datasheet (2024): H200 SXM has the H100 SXM compute figures.
//  - NVIDIA A100 Tensor Core GPU datasheet (2021): FP64 9.7, FP64 TC 19.5, FP32 19.5, TF32 156,
//    BF16/FP16 312 TFLOPS (SXM and PCIe alike).
//  - NVIDIA V100 Tensor Core GPU datasheet (2020): V100 SXM2 FP64 7.8, FP32 15.7, tensor 125;
//    V100 PCIe FP64 7, FP32 14, tensor 112; V100S PCIe FP64 8.2, FP32 16.4, tensor 130 TFLOPS.
//    V100-DGXS (DGX Station) boards are SXM2 modules.
//  - NVIDIA HGX B200 / DGX B200 datasheet (2024): per B200 GPU FP64/FP64 TC 37 (HGX: 296 for 8),
//    TF32 1.1 PF (2.2 sparse), BF16/FP16 2.25 PF (4.5 sparse), FP8 4.5 PF (9 sparse).
//  - AMD Instinct MI300X datasheet (2023): FP64 81.7, FP64 matrix 163.4, FP32 163.4, TF32 653.7,
//    BF16/FP16 1307.4, FP8 2614.9 TFLOPS (dense).
// NVLink totals (bidirectional) from the same datasheets: H100/H200 SXM 900 GB/s, H100 NVL 600,
// A100 600, V100 SXM2 300, B200 1.8 TB/s.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kl::analysis {

/// Data types `mfu` distinguishes. Fp32 = plain FP32 (CUDA cores; PyTorch's default for fp32
/// matmul, which does not use TF32 unless allowed).
enum class DType { Unknown, Fp64, Fp32, Tf32, Bf16, Fp16, Fp8 };
const char* dtypeName(DType d);  // "fp64", "fp32", ...
/// From a PyTorch type name: "c10::BFloat16" -> Bf16, "float" -> Fp32, "c10::Half" -> Fp16,
/// "double" -> Fp64, "c10::Float8_e4m3fn" -> Fp8; else Unknown.
DType dtypeFromTorch(std::string_view t);

struct GpuPeak {
  std::string model;                                                 // "H100 SXM"
  std::string source;                                                // the datasheet
  double fp64 = 0, fp32 = 0, tf32 = 0, bf16 = 0, fp16 = 0, fp8 = 0;  // dense TFLOP/s
  /// GPU-to-GPU link (NVLink) bandwidth per direction, GB/s: half the datasheet's total
  /// bidirectional figure (H100/H200 SXM 900 -> 450, A100 600 -> 300, V100 SXM2 300 -> 150,
  /// B200 1800 -> 900). 0 = not listed here (PCIe cards, MI300X).
  double linkGBps = 0;
  /// Peak for a type in FLOP/s (Unknown -> the 16-bit tensor peak, the usual MFU denominator).
  double flopsPerSec(DType d) const;
};

/// The entry matching a device name ("NVIDIA H100 80GB HBM3", "A100-SXM4-40GB",
/// "Tesla V100-SXM2-32GB", "NVIDIA B200", "AMD Instinct MI300X"), case-insensitive.
std::optional<GpuPeak> peakForGpu(std::string_view deviceName);

}  // namespace kl::analysis
