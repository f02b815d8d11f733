// core/attribution/kernel_label: labels that tell a line's kernels apart, on real demangled PyTorch
// kernel names (from the emulated and real nsys profiles under tests/data), and the hint label of
// a call line.
#include "core/attribution/kernel_label.h"

#include <doctest/doctest.h>

#include <set>

#include "core/results/format.h"

using namespace kl;
using namespace kl::results;
using namespace kl::attribution;

namespace {
KernelStat kernel(std::string shortName, std::string full) {
  KernelStat k;
  k.name = std::move(shortName);
  k.fullName = std::move(full);
  k.kind = kl::profile::GpuOpKind::Kernel;
  return k;
}
const char* kAdd =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> "
    ">"
    "(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)";
const char* kFill =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"
    "(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";
const char* kClamp =
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar("
    "at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
    "const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, "
    "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
    "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::"
    "{lambda(float)#1}, at::detail::Array<char*, 2>)";
const char* kSum =
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
    "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
    "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
    "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
    "unsigned int, float, 4>)";
}  // namespace

TEST_CASE("template arguments and their telling identifier") {
  auto args = templateArguments(kAdd, "vectorized_elementwise_kernel");
  REQUIRE(args.size() == 3);
  CHECK(args[0] == "4");
  CHECK(args[1] == "at::native::CUDAFunctor_add<float>");
  CHECK(argumentTag(args[0]).empty());
  CHECK(argumentTag(args[1]) == "CUDAFunctor_add");
  CHECK(argumentTag(args[2]).empty());  // a wrapper of plain types
  CHECK(argumentTag(templateArguments(kClamp, "vectorized_elementwise_kernel")[1]) == "launch_clamp_scalar");
  CHECK(argumentTag(templateArguments(kSum, "reduce_kernel")[2]) == "sum_functor");
  CHECK(templateArguments("ampere_sgemm_128x64_tn", "ampere_sgemm_128x64_tn").empty());
  CHECK(templateArguments("void f<(int)3>(int)", "vectorized_elementwise_kernel").empty());
}

TEST_CASE("kernelLabels tells kernels with one short name apart") {
  std::vector<KernelStat> ks{kernel("vectorized_elementwise_kernel", kAdd),
                             kernel("vectorized_elementwise_kernel", kFill),
                             kernel("vectorized_elementwise_kernel", kClamp), kernel("reduce_kernel", kSum),
                             kernel("[CUDA memcpy DtoH]", "[CUDA memcpy DtoH]")};
  auto l = kernelLabels(ks, 60);
  CHECK(l[0] == "vectorized_elementwise_kernel<CUDAFunctor_add>");
  CHECK(l[1] == "vectorized_elementwise_kernel<FillFunctor>");
  CHECK(l[2] == "vectorized_elementwise_kernel<launch_clamp_scalar>");
  CHECK(l[3] == "reduce_kernel<sum_functor>");
  CHECK(l[4] == "[CUDA memcpy DtoH]");
  CHECK(std::set<std::string>(l.begin(), l.end()).size() == l.size());
}

TEST_CASE("kernelLabels adds the differing argument when the tags agree, and cuts long names where they differ") {
  std::vector<KernelStat> ks{
      kernel("softmax_warp_forward",
             "void (anonymous namespace)::softmax_warp_forward<float, float, float, 4, true, false>(float*)"),
      kernel("softmax_warp_forward",
             "void (anonymous namespace)::softmax_warp_forward<float, float, float, 5, true, false>(float*)")};
  auto l = kernelLabels(ks, 60);
  CHECK(l[0] == "softmax_warp_forward<4>");
  CHECK(l[1] == "softmax_warp_forward<5>");

  std::string a =
      "sm90_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
      "cublas";
  std::string b =
      "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
      "cublas";
  auto g = kernelLabels({kernel(a, a), kernel(b, b)}, 40);
  CHECK(displayWidth(g[0]) <= 40);
  CHECK(displayWidth(g[1]) <= 40);
  CHECK(g[0] != g[1]);
  CHECK(g[0].find("nt_n") != std::string::npos);
  CHECK(g[1].find("nn_n") != std::string::npos);
  CHECK(g[0].rfind("sm90_xmma", 0) == 0);
}

TEST_CASE("kernelLabels tells apart kernels that differ only inside a wrapper's arguments") {
  // opt.step()'s adds: a binary add (3 pointers) and an in-place add (2), same functor.
  std::string add2 = kAdd;
  for (auto at = add2.find("char*, 3"); at != std::string::npos; at = add2.find("char*, 3"))
    add2.replace(at, 8, "char*, 2");
  std::vector<KernelStat> ks{kernel("vectorized_elementwise_kernel", kAdd),
                             kernel("vectorized_elementwise_kernel", add2)};
  auto wide = kernelLabels(ks, 80);
  CHECK(wide[0] == "vectorized_elementwise_kernel<CUDAFunctor_add, Array<…, 3>>");
  CHECK(wide[1] == "vectorized_elementwise_kernel<CUDAFunctor_add, Array<…, 2>>");
  auto narrow = kernelLabels(ks, 44);  // the hover's width: the base name gives way, the difference stays
  CHECK(narrow[0] != narrow[1]);
  for (const auto& l : narrow) {
    CHECK(displayWidth(l) <= 44);
    CHECK(l.find("CUDAFunctor_add") != std::string::npos);
  }
  CHECK(narrow[0].find("Array<…, 3>") != std::string::npos);
}

TEST_CASE("kernelLabels names the op of ATen's multi-tensor (foreach) kernels") {
  // AdamW(foreach=True).step(): one kernel name, the metadata and functor templates generic,
  // the op (multiplies, plus, sqrt, ...) the argument that tells the launches apart.
  auto mta = [](const std::string& meta, const std::string& functor, const std::string& op) {
    std::string ns = "at::native::(anonymous namespace)::";
    std::string args = ns + meta + ", " + ns + functor + ", " + op;
    return kernel("multi_tensor_apply_kernel", "void " + ns + "multi_tensor_apply_kernel<" + args + ">(" + args + ")");
  };
  std::vector<KernelStat> ks{
      mta("TensorListMetadata<1>", "BinaryOpScalarFunctor<float, 1, 1, 0>", "std::multiplies<float>, float"),
      mta("TensorListMetadata<2>", "UnaryOpFunctor<float, 2, 1, 1>", "at::native::(anonymous namespace)::Sqrt<float>"),
      mta("TensorListScalarListMetadata<float, 3>", "PointwiseOpScalarListFunctor<float, 3, 3, 0>",
          "std::divides<float>"),
      mta("TensorListMetadata<2>", "BinaryOpListAlphaFunctor<float, 2, 2, 0>", "std::plus<float>, float"),
      mta("TensorListMetadata<2>", "BinaryOpScalarFunctor<float, 2, 1, 1>", "std::plus<float>, float"),
      mta("TensorListMetadata<3>", "PointwiseOpScalarFunctor<float, 3, 3, 0>", "std::multiplies<float>, float")};
  auto l = kernelLabels(ks, 44);
  CHECK(l[1] == "multi_tensor_apply_kernel<Sqrt>");
  CHECK(l[2] == "multi_tensor_apply_kernel<divides>");
  // The same op: the functor tells them apart (an in-place add with alpha vs with a scalar;
  // mul_ vs addcmul_), not the tensor-list metadata.
  CHECK(std::set<std::string>(l.begin(), l.end()).size() == l.size());
  for (size_t i : {0, 5}) CHECK(l[i].find("multiplies") != std::string::npos);
  CHECK(l[5].find("Pointwise") != std::string::npos);
  for (size_t i : {3, 4}) CHECK(l[i].find("plus") != std::string::npos);
  CHECK(l[3].find("ListAlpha") != std::string::npos);
  for (const auto& x : l) CHECK(displayWidth(x) <= 44);
  CHECK(kernelLabels(ks, 80)[5] == "multi_tensor_apply_kernel<multiplies, PointwiseOpScalarFunctor>");
}

TEST_CASE("hint labels: own kernels, call lines, prefix") {
  LineResult own;
  own.gpuNs = 1'920'000;
  own.ops = 3;
  own.kernels = {kernel("a", "a"), kernel("b", "b")};
  CHECK(hintLabel(own) == "◷ 1.92 ms · 2 kernels");
  CHECK(hintLabel(own, Units::Auto, "GPU") == "GPU 1.92 ms · 2 kernels");
  CHECK(hintLabel(own, Units::Auto, "") == "1.92 ms · 2 kernels");

  LineResult call;
  call.inclusiveNs = 730'000;
  call.callees = {CalleeLine{"m.py", 3, "x = f(x)", "M.forward", 730'000}};
  CHECK(call.isCallLine());
  CHECK(hintLabel(call) == "◷ 730 µs total");
  call.gpuNs = 12'000;
  call.ops = 1;
  call.kernels = {kernel("a", "a")};
  CHECK(hintLabel(call) == "◷ 12.0 µs · 1 kernel · 730 µs total");
  LineResult sync = own;  // blocked in sync calls too; a sync-only line shows only that
  sync.syncCalls = 2;
  sync.syncNs = 3'100'000;
  CHECK(hintLabel(sync) == "◷ 1.92 ms · 2 kernels · ‖ sync 3.10 ms");
  sync.ops = 0;
  sync.kernels.clear();
  sync.gpuNs = 0;
  CHECK(hintLabel(sync) == "‖ sync 3.10 ms");
  LineResult loop = own;  // nested statements only (no callees): not a call line
  loop.inclusiveNs = 5'000'000;
  CHECK_FALSE(loop.isCallLine());
}

TEST_CASE("hint labels and lens titles: forward + backward time") {
  LineResult l;
  l.gpuNs = 1'330'000;
  l.backwardNs = 910'000;
  l.ops = 4;
  auto bwd = kernel("a", "a");
  bwd.pass = kl::attribution::Pass::Backward;
  l.kernels = {kernel("a", "a"), bwd};
  CHECK(bwd.backward());
  CHECK(hintLabel(l) == "◷ 420 µs + bwd 910 µs · 1 kernel");  // one name, two passes
  CHECK(formatPassTime(1'000, 0) == "1.00 µs");
  FunctionResult f;
  f.gpuNs = 12'400'000;
  f.backwardNs = 8'300'000;
  f.distinctKernels = 14;
  CHECK(lensTitle(f, 0) == "GPU 4.10 ms + bwd 8.30 ms · 14 kernels");
}

TEST_CASE("kernel labels from names only: the short name from the demangled name, equal labels told apart") {
  // Two adds that differ only in their pointer array (a tensor + tensor and a tensor + scalar
  // add, as the emulated optimizer step launches them), a kernel in an anonymous namespace, a
  // plain name and a copy.
  const std::vector<std::string> names = {
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 2> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 2>)",
      "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 8, false, false>(float*, "
      "float const*, int, int, int, bool const*, int, bool)",
      "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32", "[CUDA memcpy HtoD]"};
  const auto labels = kernelLabels(names, 80);
  REQUIRE(labels.size() == names.size());
  CHECK(labels[0] != labels[1]);
  CHECK(labels[0].starts_with("vectorized_elementwise_kernel<CUDAFunctor_add"));
  CHECK(labels[1].starts_with("vectorized_elementwise_kernel<CUDAFunctor_add"));
  CHECK(labels[0].find('3') != std::string::npos);
  CHECK(labels[1].find('2') != std::string::npos);
  CHECK(labels[2].starts_with("softmax_warp_forward"));
  CHECK(labels[3] == names[3]);
  CHECK(labels[4] == names[4]);
}

TEST_CASE("kernelLabels: a kernel running a generic launcher's lambda is tagged by what the launcher runs") {
  // Real names (tests/data/real: hta_a100_alexnet_small and param_dlrm_v100_8ranks worker 0):
  // `elementwise_kernel` runs the lambda of `gpu_kernel_impl<F>`; the tag is F's, not the launcher's.
  const std::string add =
      "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float> "
      ">(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1}>(int, "
      "at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, "
      "at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1})";
  const std::string copy =
      "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda("
      "at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>"
      "(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()"
      "() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, "
      "at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::"
      "operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, "
      "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::"
      "operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})";
  CHECK(argumentTag(templateArguments(add, "elementwise_kernel")[2]) == "CUDAFunctor_add");
  CHECK(argumentTag(templateArguments(copy, "elementwise_kernel")[2]) == "direct_copy_kernel_cuda");
  const auto labels = kernelLabels(std::vector<std::string>{add, copy}, 60);
  CHECK(labels[0] == "elementwise_kernel<CUDAFunctor_add>");
  CHECK(labels[1] == "elementwise_kernel<direct_copy_kernel_cuda>");
}
