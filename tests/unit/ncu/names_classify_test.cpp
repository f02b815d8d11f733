// Kernel names and families; bound classification checked against ncu's own SOLBottleneck rule
// text in the real files; roofline points from the real roofline-chart section.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/ncu/classify.h"
#include "core/ncu/family.h"
#include "core/ncu/metrics.h"
#include "core/ncu/report.h"
#include "core/ncu/roofline.h"
#include "core/profile/kernel_name.h"
#include "tests/support/test_support.h"

using namespace kl::ncu;
using kl::profile::baseName;
using kl::profile::demangle;
using kl::profile::displayName;
using kl::profile::informativeName;
using kl::profile::normalizedKey;
using kl::test::dataPath;
using kl::test::readFile;

namespace {

std::string kernelFile(int n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "ncu/dsocr_v2/kernel_%04d.details.csv", n);
  return buf;
}

NcuLaunch loadOne(const std::string& rel) {
  auto r = readNcuFile(dataPath(rel));
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  REQUIRE(r->launches.size() == 1);
  return r->launches[0];
}

// The names in nsys/top-kernels.yaml, in rank order ("-   name: <name>").
std::vector<std::string> topKernelNames() {
  std::istringstream in(readFile(dataPath("ncu/nsys/top-kernels.yaml")));
  std::vector<std::string> out;
  std::string line;
  const std::string tag = "-   name: ";
  while (std::getline(in, line))
    if (line.rfind(tag, 0) == 0) out.push_back(line.substr(tag.size()));
  return out;
}

}  // namespace

TEST_CASE("demangle, display, base and informative names") {
  CHECK(demangle("_Z3fooPfi") == "foo(float*, int)");
  CHECK(demangle("not_mangled") == "not_mangled");
  CHECK(demangle("_Zgarbage") == "_Zgarbage");
  CHECK(baseName("_Z3fooPfi") == "foo");
  const std::string nsys =
      "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<c10::BFloat16>, "
      "std::array<char *, (unsigned long)3>>(int, T2, T3)";
  CHECK(displayName(nsys) ==
        "at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char "
        "*, (unsigned long)3>>");
  CHECK(baseName(nsys) == "vectorized_elementwise_kernel");
  CHECK(baseName("std::enable_if<!T7, void>::type internal::gemvx::kernel<int, (bool)0>(T13)") == "kernel");
  CHECK(
      baseName(
          "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8>(T1::Params)") ==
      "Kernel2");
  CHECK(
      informativeName(
          "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8>(T1::Params)") ==
      "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8");
  CHECK(baseName("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT") == "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT");
  CHECK(baseName("void unnamed>::CatArrayBatchedCopy<unnamed>::OpaqueType<2>, unsigned int, 4, 64, 64>(T1 *, int)") ==
        "CatArrayBatchedCopy");
  CHECK(baseName("Fan2(float*,float*,float*,int,int,int)") == "Fan2");
  CHECK(
      baseName(
          "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(AttentionKernel<bfloat16_t, Sm80, 1, 64, 64, 64, 1, 1>::Params)") ==
      "fmha_cutlassF_bf16_aligned_64x64_rf_sm80");
  // Kineto vs nsys spellings normalise to one key.
  CHECK(normalizedKey("void at::native::(anonymous namespace)::foo<false, 4>(int)") ==
        normalizedKey("void at::native::<unnamed>::foo<(bool)0, (int)4>(int)"));
}

TEST_CASE("ncu and nsys names of the same kernels share a normalised key (real data)") {
  // The v2 kernel_00NN folders were profiled from the NN-th kernel of nsys top-kernels.yaml.
  std::vector<std::string> nsys = topKernelNames();
  REQUIRE(nsys.size() == 20);
  int matched = 0;
  for (int n = 1; n <= 20; ++n) {
    NcuLaunch l = loadOne(kernelFile(n));
    CAPTURE(n);
    CAPTURE(l.kernelName);
    CAPTURE(nsys[static_cast<size_t>(n - 1)]);
    CHECK(l.kernelName != nsys[static_cast<size_t>(n - 1)]);  // exact join would fail
    CHECK(normalizedKey(l.kernelName) == normalizedKey(nsys[static_cast<size_t>(n - 1)]));
    matched += normalizedKey(l.kernelName) == normalizedKey(nsys[static_cast<size_t>(n - 1)]);
    CHECK(kernelFamily(l.kernelName) == kernelFamily(nsys[static_cast<size_t>(n - 1)]));
    CHECK(baseName(l.kernelName) == baseName(nsys[static_cast<size_t>(n - 1)]));
  }
  CHECK(matched == 20);
}

TEST_CASE("library families, ordered rules") {
  struct Case {
    const char* name;
    const char* family;
  };
  const Case cases[] = {
      {"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT", "cuBLASLt"},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       "cuBLAS"},
      {"sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize160x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel", "CUTLASS"},
      {"ampere_sgemm_128x64_nn", "cuBLAS"},
      {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(T1::Params)",
       "CUTLASS"},
      {"cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_128x128_32x5_nhwc_align8>", "cuDNN"},
      {"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, false, false, "
       "cutlass::bfloat16_t>>(flash::Flash_fwd_params)",
       "FlashAttention"},
      {"fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
       "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
       "mem-efficient attention"},
      {"triton_poi_fused_add_mul_relu_0", "Triton/Inductor"},
      {"triton_red_fused_sum_36", "Triton/Inductor"},
      {"triton_per_fused_native_layer_norm_2", "Triton/Inductor"},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "NCCL"},
      {"ncclSymDevKernel_AllReduce_RSxLD_AGxST_sum_bf16", "NCCL"},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, "
       "float>, unsigned int, float, 4, 4>>(T3)",
       "ATen reduce"},
      {"void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<c10::BFloat16>, "
       "std::array<char *, (unsigned long)3>>(int, T2, T3)",
       "ATen elementwise"},
      {"void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, "
       "const float*, int, int, int, const bool*, int, bool)",
       "ATen"},
      {"[CUDA memcpy HtoD]", "copy"},
      {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase "
       "&)::[lambda() (instance 3)]::operator ()() const::[lambda() (instance 7)]::operator ()() const::[lambda(float) "
       "(instance 1)], std::array<char *, (unsigned long)2>, (int)4>(int, T1, T2)",
       "copy"},
      {"void cub::DeviceRadixSortOnesweepKernel<int>(int)", "CUB/Thrust"},
      {"Fan2(float*,float*,float*,int,int,int)", "other"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(kernelFamily(c.name) == c.family);
  }
  CHECK(familyRules().front().family == "copy");
}

TEST_CASE("speed-of-light rule boundaries") {
  auto cls = [](double sm, double mem) {
    KernelMetrics m;
    m.smPct = sm;
    m.memPct = mem;
    return classify(m).bound;
  };
  CHECK(cls(59.9, 59.9) == Bound::Latency);
  CHECK(cls(60, 50) == Bound::Compute);  // not both < 60; a gap of exactly 10 counts
  CHECK(cls(60, 50.5) == Bound::Balanced);
  CHECK(cls(61, 50) == Bound::Compute);
  CHECK(cls(50, 61) == Bound::Memory);
  CHECK(cls(65, 60) == Bound::Balanced);
  CHECK(cls(95, 90) == Bound::Balanced);
  CHECK(classify(KernelMetrics{}).bound == Bound::Unknown);
  CHECK(classify(KernelMetrics{}).missing.find("sm__throughput") != std::string::npos);
  KernelMetrics near;
  near.smPct = 12;
  near.memPct = 94;
  near.dramPct = 10;
  near.l2Pct = 94;
  Classification c = classify(near);
  CHECK(c.bound == Bound::Memory);
  CHECK(c.limiter == MemoryLevel::L2);
  CHECK(c.nearPeak);
}

TEST_CASE("classification of the 20 real kernels agrees with ncu's own SOLBottleneck rule") {
  for (int n = 1; n <= 20; ++n) {
    CAPTURE(n);
    NcuLaunch l = loadOne(kernelFile(n));
    std::string rule;
    for (const auto& r : l.rules)
      if (r.name == "SOLBottleneck") rule = r.description;
    REQUIRE(!rule.empty());
    Classification c = classify(extractMetrics(l));
    CAPTURE(rule);
    CAPTURE(c.summary());
    if (rule.find("grid is too small") != std::string::npos ||
        rule.find("low compute throughput and memory bandwidth") != std::string::npos) {
      CHECK(c.bound == Bound::Latency);
    } else if (rule.find("Memory is more heavily utilized than Compute") != std::string::npos) {
      CHECK(c.bound == Bound::Memory);
    } else if (rule.find("greater than 80.0%") != std::string::npos) {
      CHECK((c.bound == Bound::Memory || c.bound == Bound::Compute));
      CHECK(c.nearPeak);
    } else {
      FAIL("unexpected SOLBottleneck text");
    }
  }
  // Hand-checked against the README table (SM%, Mem%, DRAM%, L2%).
  Classification k10 = classify(extractMetrics(loadOne(kernelFile(10))));
  CHECK(k10.bound == Bound::Memory);      // 12.07 vs 93.99
  CHECK(k10.limiter == MemoryLevel::L2);  // L2 93.99 > DRAM 10.29
  CHECK(*k10.smPct == doctest::Approx(12.07));
  Classification k4 = classify(extractMetrics(loadOne(kernelFile(4))));
  CHECK(k4.bound == Bound::Latency);  // 0.02 vs 6.32, 2 blocks
  Classification k3 = classify(extractMetrics(loadOne(kernelFile(3))));
  CHECK(k3.bound == Bound::Memory);  // 41.49 vs 61.83 (L2)
  CHECK(k3.limiter == MemoryLevel::L2);
}

TEST_CASE("legacy V100 files classify with the old SOL names") {
  auto r = readNcuFile(dataPath("ncu/xplacer/nsight_hotspot_1024"));
  REQUIRE(r.ok());
  REQUIRE(r->launches.size() == 1);
  KernelMetrics m = extractMetrics(r->launches[0]);
  REQUIRE(m.smPct);
  REQUIRE(m.memPct);
  REQUIRE(m.dramPct);                          // SOL FB
  CHECK(classify(m).bound == Bound::Compute);  // SM ~74 %, memory ~36 %
  auto bfs = readNcuFile(dataPath("ncu/xplacer/nsight_bfs_graph4096.log"));
  REQUIRE(bfs.ok());
  for (const auto& l : bfs->launches) CHECK(classify(extractMetrics(l)).bound == Bound::Latency);
}

TEST_CASE("refinement from raw metrics: limiter, waves, stalls (synthetic raw page)") {
  auto r = readNcuFile(dataPath("ncu/synthetic/raw_page.csv"));
  REQUIRE(r.ok());
  Classification tri = classify(extractMetrics(r->launches[0]));
  CHECK(tri.bound == Bound::Memory);
  CHECK(tri.limiter == MemoryLevel::Dram);
  CHECK(tri.detail.find("long_scoreboard") != std::string::npos);  // 45.2 > 3.1; "selected" ignored
  Classification jet = classify(extractMetrics(r->launches[1]));
  CHECK(jet.bound == Bound::Compute);
  CHECK(jet.nearPeak);
  Classification nccl = classify(extractMetrics(r->launches[2]));
  CHECK(nccl.bound == Bound::Latency);
  CHECK(nccl.detail.find("small grid (0.06 waves") != std::string::npos);
  CHECK(nccl.detail.find("barrier") != std::string::npos);  // 12.0 > 8.0
  CHECK(boundForKernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", *r).bound ==
        Bound::Latency);
  CHECK(boundForKernel("not_profiled", *r).bound == Bound::Unknown);
}

TEST_CASE("roofline from the real roofline-chart section (kernel 0001)") {
  NcuLaunch l = loadOne("ncu/dsocr_v2/kernel_0001.section_SpeedOfLight_RooflineChart.csv");
  RooflinePoint p = rooflinePoint(l);
  REQUIRE(p.ok);
  CHECK(p.source == "roofline chart");
  // Rows: FFMA ops/cycle 158.12, FADD 1.97, FMUL 0, SM 2.15 GHz, DRAM 345.14 GB/s;
  // peaks: 43,520 FFMA ops/cycle x 2.15 GHz; 128 B/cycle x 13.72 GHz.
  CHECK(p.flopsPerSec == doctest::Approx((158.12 + 1.97 + 0) * 2.15e9));
  CHECK(p.bytesPerSec == doctest::Approx(345.14e9));
  CHECK(p.intensity == doctest::Approx((158.12 + 1.97) * 2.15e9 / 345.14e9));
  CHECK(*p.peakFlopsPerSec == doctest::Approx(43520 * 2.15e9));
  CHECK(*p.peakBytesPerSec == doctest::Approx(128 * 13.72e9));
  CHECK(*p.ridge == doctest::Approx(43520 * 2.15e9 / (128 * 13.72e9)));
}

TEST_CASE("roofline: tensor-only point for the CUTLASS GEMM, absent metrics named") {
  // kernel 0003 details: sm__ops_path_tensor_src_bf16_dst_fp32.sum = 1,275,068,416 ops,
  // dram__bytes_read.sum = 3.35 Mbyte, dram__bytes_write.sum = 0, duration 23.42 us.
  RooflinePoint p = rooflinePoint(loadOne(kernelFile(3)));
  REQUIRE(p.ok);
  CHECK(p.source == "counters");
  CHECK(*p.tensorFlopsPerSec == doctest::Approx(1275068416.0 / 23.42e-6));
  CHECK(p.intensity == doctest::Approx(1275068416.0 / 3.35e6));  // ~380 ops per DRAM byte
  CHECK(p.missingText().find("fp32") != std::string::npos);
  // kernel 0001 details: no fp32 counters, tensor counter 0 -> no point; say what is missing.
  RooflinePoint q = rooflinePoint(loadOne(kernelFile(1)));
  CHECK_FALSE(q.ok);
  CHECK(q.missingText().find("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum") != std::string::npos);
  // Legacy V100 files carry no FLOP or byte counters.
  auto g = readNcuFile(dataPath("ncu/xplacer/nsight_gaussian_matrix3.log"));
  REQUIRE(g.ok());
  RooflinePoint lg = rooflinePoint(g->launches[0]);
  CHECK_FALSE(lg.ok);
  CHECK(lg.missingText().find("dram__bytes.sum") != std::string::npos);
}

TEST_CASE("roofline from counters (synthetic raw page)") {
  auto r = readNcuFile(dataPath("ncu/synthetic/raw_page.csv"));
  REQUIRE(r.ok());
  RooflinePoint p = rooflinePoint(r->launches[0]);
  REQUIRE(p.ok);
  // fadd 2,097,152 + fmul 2,097,152 + 2 x ffma 0 over 5.12 us; 8.39 Mbyte.
  CHECK(p.flopsPerSec == doctest::Approx(4194304.0 / 5.12e-6));
  CHECK(p.bytesPerSec == doctest::Approx(8.39e6 / 5.12e-6));
  CHECK(p.intensity == doctest::Approx(4194304.0 / 8.39e6));
  CHECK(*p.peakFlopsPerSec == doctest::Approx(16896.0 * 2 * 1.755e9));
  CHECK(*p.peakBytesPerSec == doctest::Approx(1280 * 2.6e9));
  RooflinePoint none = rooflinePoint(r->launches[2]);  // counters n/a
  CHECK_FALSE(none.ok);
}

TEST_CASE("kernel names: the model's copy and graph names are not signatures") {
  CHECK(displayName("[CUDA memcpy HtoD]") == "[CUDA memcpy HtoD]");
  CHECK(baseName("[CUDA memset]") == "[CUDA memset]");
  CHECK(baseName("[CUDA graph 3]") == "[CUDA graph 3]");
}
