#include "core/analysis/gpu_peaks.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace kl::analysis {

namespace {

std::string lower(std::string_view s) {
  std::string o(s);
  for (auto& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

struct Entry {
  std::vector<std::string_view> all;   // every substring must occur (lower case)
  std::vector<std::string_view> none;  // none may occur
  GpuPeak peak;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      // Order matters: the first match wins (specific before generic).
      {{"h100", "pcie"},
       {},
       {"H100 PCIe", "NVIDIA H100 Tensor Core GPU datasheet", 51, 51, 378, 756.5, 756.5, 1513, 0}},
      {{"h100", "nvl"},
       {},
       {"H100 NVL", "NVIDIA H100 Tensor Core GPU datasheet", 30, 60, 417.5, 835, 835, 1670.5, 300}},
      {{"h100"}, {}, {"H100 SXM", "NVIDIA H100 Tensor Core GPU datasheet", 67, 67, 494.5, 989.5, 989.5, 1979, 450}},
      {{"h200"}, {}, {"H200 SXM", "NVIDIA H200 Tensor Core GPU datasheet", 67, 67, 494.5, 989.5, 989.5, 1979, 450}},
      {{"gh200"},
       {},
       {"GH200", "NVIDIA GH200 Grace Hopper Superchip datasheet", 67, 67, 494.5, 989.5, 989.5, 1979, 450}},
      {{"b200"}, {}, {"B200", "NVIDIA HGX B200 / DGX B200 datasheet", 37, 75, 1100, 2250, 2250, 4500, 900}},
      {{"a100"}, {}, {"A100", "NVIDIA A100 Tensor Core GPU datasheet", 19.5, 19.5, 156, 312, 312, 0, 300}},
      {{"v100s"}, {}, {"V100S PCIe", "NVIDIA V100 Tensor Core GPU datasheet", 8.2, 16.4, 0, 0, 130, 0, 0}},
      {{"v100", "pcie"}, {}, {"V100 PCIe", "NVIDIA V100 Tensor Core GPU datasheet", 7, 14, 0, 0, 112, 0, 0}},
      {{"v100"}, {}, {"V100 SXM2", "NVIDIA V100 Tensor Core GPU datasheet", 7.8, 15.7, 0, 0, 125, 0, 150}},
      {{"mi300x"}, {}, {"MI300X", "AMD Instinct MI300X datasheet", 163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 0}},
  };
  return t;
}

}  // namespace

const char* dtypeName(DType d) {
  switch (d) {
    case DType::Unknown: return "unknown";
    case DType::Fp64: return "fp64";
    case DType::Fp32: return "fp32";
    case DType::Tf32: return "tf32";
    case DType::Bf16: return "bf16";
    case DType::Fp16: return "fp16";
    case DType::Fp8: return "fp8";
  }
  return "unknown";
}

DType dtypeFromTorch(std::string_view t) {
  std::string s = lower(t);
  if (s.find("bfloat16") != std::string::npos) return DType::Bf16;
  if (s.find("float8") != std::string::npos) return DType::Fp8;
  if (s.find("half") != std::string::npos || s == "float16") return DType::Fp16;
  if (s == "float" || s == "float32") return DType::Fp32;
  if (s == "double" || s == "float64") return DType::Fp64;
  return DType::Unknown;
}

double GpuPeak::flopsPerSec(DType d) const {
  double tf = 0;
  switch (d) {
    case DType::Fp64: tf = fp64; break;
    case DType::Fp32: tf = fp32; break;
    case DType::Tf32: tf = tf32; break;
    case DType::Bf16: tf = bf16 ? bf16 : fp16; break;
    case DType::Fp16: tf = fp16; break;
    case DType::Fp8: tf = fp8 ? fp8 : (bf16 ? bf16 : fp16); break;
    case DType::Unknown: tf = bf16 ? bf16 : fp16; break;
  }
  return tf * 1e12;
}

std::optional<GpuPeak> peakForGpu(std::string_view deviceName) {
  std::string n = lower(deviceName);
  for (const auto& e : table()) {
    bool ok =
        std::all_of(e.all.begin(), e.all.end(), [&](std::string_view s) { return n.find(s) != std::string::npos; }) &&
        std::none_of(e.none.begin(), e.none.end(), [&](std::string_view s) { return n.find(s) != std::string::npos; });
    if (ok) return e.peak;
  }
  return std::nullopt;
}

}  // namespace kl::analysis
