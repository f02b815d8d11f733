// sync / streams / critical-path / mfu / nccl helpers on small synthetic profiles whose answers
// are worked out by hand here (the real-data checks are the e2e tests analyses_*.sh).
#include <doctest/doctest.h>

#include "core/analysis/critical_path.h"
#include "core/analysis/flops.h"
#include "core/analysis/gpu_peaks.h"
#include "core/analysis/nccl.h"
#include "core/analysis/streams.h"
#include "core/analysis/sync.h"
#include "synth.h"

using namespace kl::analysis;

TEST_CASE("sync: explicit and implicit calls, StreamWaitEvent and async pinned copies excluded") {
  kl::test::Synth s;
  s.api("cudaDeviceSynchronize_v3020", 100, 600);  // 500
  s.api("cudaStreamSynchronize", 1000, 1300);      // 300
  s.api("cudaStreamWaitEvent", 1400, 1500);        // not a CPU block
  s.api("cudaMemcpy_v3020", 2000, 2250);           // 250, blocking copy
  s.api("cudaMemcpyAsync", 3000, 3100, 77);        // DtoH to pinned: not blocking
  s.memcpy(2, 1024, 3050, 3400, /*hostKind pinned*/ 1);
  s.m.gpuOps.put<&kl::profile::GpuOp::correlationId>(s.m.gpuOps.size() - 1, 77);
  s.api("cudaMemcpyAsync", 4000, 4900, 78);  // DtoH to pageable: 900
  s.memcpy(2, 1024, 4050, 4800, /*pageable*/ 0);
  s.m.gpuOps.put<&kl::profile::GpuOp::correlationId>(s.m.gpuOps.size() - 1, 78);
  s.range("kl:train.py:12-12", 3900, 5000);
  auto& m = s.finish();
  auto a = kl::attribution::attribute(m);
  REQUIRE(a.ok());
  View v(m, {}, &*a);
  auto r = computeSync(v);
  CHECK(r.calls == 4);
  CHECK(r.blockedNs == 500 + 300 + 250 + 900);
  CHECK(r.explicitNs == 800);
  CHECK(r.implicitNs == 1150);
  bool found = false;
  for (const auto& site : r.bySite)
    if (site.file == "train.py") {
      found = true;
      CHECK(site.line == 12);
      CHECK(site.totalNs == 900);
      CHECK(site.kinds == "memcpy_async_pageable");
    }
  CHECK(found);
}

TEST_CASE("streams: levels, solo time and a queued pair's serialised time") {
  kl::test::Synth s;
  // Stream 7: A [0,100), B [100,200) launched at 10 (queued). Stream 8: C [50,150).
  s.kernel("A", 0, 100, 0, 7, 0, 5);
  s.kernel("B", 100, 200, 0, 7, 10, 5);
  s.kernel("C", 50, 150, 0, 8, 20, 5);
  auto& m = s.finish();
  auto a = kl::attribution::attribute(m);
  REQUIRE(a.ok());
  View v(m, {}, &*a);
  auto r = computeStreams(v);
  REQUIRE(r.devices.size() == 1);
  const auto& d = r.devices[0];
  CHECK(d.activeSpanNs == 200);
  CHECK(d.idleNs == 0);
  CHECK(d.oneNs == 100);    // [0,50) and [150,200)
  CHECK(d.multiNs == 100);  // [50,150)
  CHECK(d.maxConcurrent == 2);
  CHECK(d.queuedPairs == 1);
  CHECK(d.serialisedNs == 50);  // A alone on the device during [0,50)
}

TEST_CASE("critical path: a hole whose next op was launched late is GPU-waits-for-CPU") {
  kl::test::Synth s;
  s.range("step#1", 0, 1000);
  s.range("step#2", 1000, 2000);
  // step 1: k1 [100,200) launched at 10; k2 [500,600) launched at 400..450 (after k1 ended: late).
  s.kernel("k1", 100, 200, 0, 7, 10, 20);
  s.kernel("k2", 500, 600, 0, 7, 400, 50);
  // step 2: k3 [1100,1500) launched at 1010; k4 [1600,1900) launched at 1020 (early: other idle).
  s.kernel("k1", 1100, 1500, 0, 7, 1010, 20);
  s.kernel("k2", 1600, 1900, 0, 7, 1020, 20);
  auto& m = s.finish();
  auto a = kl::attribution::attribute(m);
  REQUIRE(a.ok());
  View v(m, {}, &*a);
  auto r = computeCriticalPath(v);
  REQUIRE(r.method == IterMethod::Nvtx);
  REQUIRE(r.iterations.size() == 2);
  const auto& i1 = r.iterations[0];
  CHECK(i1.gpuBusyNs == 200);
  CHECK(i1.gpuWaitCpuNs == 300);
  CHECK(i1.otherIdleNs == 0);
  CHECK(i1.cpuLeadNs == 100);
  CHECK(i1.cpuTailNs == 400);
  CHECK(i1.launchBound);
  const auto& i2 = r.iterations[1];
  CHECK(i2.gpuBusyNs == 700);
  CHECK(i2.gpuWaitCpuNs == 0);
  CHECK(i2.otherIdleNs == 100);
  CHECK_FALSE(i2.launchBound);
  CHECK(i1.wallNs == 1000);
}

TEST_CASE("flops: GEMM and attention formulas from recorded shapes") {
  OpFlops f;
  REQUIRE(flopsOf("aten::addmm",
                  parseShapes("512;141,512;512,512;;|c10::BFloat16;c10::BFloat16;c10::BFloat16;Scalar;Scalar|;;;1;1"),
                  f));
  CHECK(f.flops == 2.0 * 141 * 512 * 512);
  CHECK(f.dtype == DType::Bf16);
  REQUIRE(flopsOf("aten::bmm", parseShapes("4,8,16;4,16,32|float;float|"), f));
  CHECK(f.flops == 2.0 * 4 * 8 * 32 * 16);
  CHECK(f.dtype == DType::Fp32);
  REQUIRE(flopsOf(
      "aten::_flash_attention_forward",
      parseShapes("1,141,8,64;1,141,8,64;1,141,8,64|c10::BFloat16;c10::BFloat16;c10::BFloat16|;;;;;141;141;0.;True"),
      f));
  CHECK(f.flops == 2.0 * 1 * 8 * 141 * 141 * 128 / 2);  // causal
  REQUIRE(flopsOf("aten::_scaled_dot_product_flash_attention_backward",
                  parseShapes("2,4,10,8;2,4,10,8;2,4,12,8;2,4,12,8|c10::Half;c10::Half;c10::Half;c10::Half|"), f));
  CHECK(f.flops == 2 * (2.0 * 2 * 4 * 10 * 12 * 16));
  CHECK_FALSE(flopsOf("aten::mm", parseShapes("4,5;6,7|float;float|"), f));  // K mismatch
  CHECK_FALSE(flopsOf("aten::relu", parseShapes("4,5|float|"), f));
  std::string name;
  OpShapes sh;
  REQUIRE(parseNvtxShapes("aten::mm, seq = 3, op_id = 5, sizes = [[64, 128], [128, 256]], input_op_ids = [1, 2]", name,
                          sh));
  CHECK(name == "aten::mm");
  REQUIRE(flopsOf(name, sh, f));
  CHECK(f.flops == 2.0 * 64 * 128 * 256);
}

TEST_CASE("peaks and NCCL helpers") {
  auto h = peakForGpu("NVIDIA H100 80GB HBM3");
  REQUIRE(h);
  CHECK(h->model == "H100 SXM");
  CHECK(h->flopsPerSec(DType::Bf16) == 989.5e12);
  CHECK(h->linkGBps == 450);
  CHECK(peakForGpu("NVIDIA H100 PCIe")->model == "H100 PCIe");
  CHECK(peakForGpu("Tesla V100-SXM2-32GB")->flopsPerSec(DType::Fp32) == 15.7e12);
  CHECK(peakForGpu("A100-PG509-200")->model == "A100");
  CHECK_FALSE(peakForGpu("GeForce GTX 1080"));
  CHECK(busBwFactor("AllReduce", 8) == doctest::Approx(1.75));
  CHECK(busBwFactor("AllGather", 4) == doctest::Approx(0.75));
  CHECK(busBwFactor("SendRecv", 2) == 1.0);
  std::string algo, proto;
  ncclAlgoProto("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long)", algo, proto);
  CHECK(algo == "RING");
  CHECK(proto == "LL");
  ncclAlgoProto("ncclDevKernel_AllReduce_Sum_bf16_NVLS_TREE_SIMPLE", algo, proto);
  CHECK(algo == "NVLS_TREE");
  CHECK(proto == "SIMPLE");
  ncclAlgoProto("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", algo, proto);
  CHECK(algo.empty());
  CHECK(dtypeBytes("BFloat16") == 2);
  CHECK(dtypeBytes("c10::Float8_e4m3fn") == 1);
}
