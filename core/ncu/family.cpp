#include "core/ncu/family.h"

#include <regex>

#include "core/profile/kernel_name.h"

namespace kl::ncu {

using profile::demangle;
using profile::displayName;
namespace {

struct CompiledRule {
  const FamilyRule* rule;
  std::vector<std::regex> res;
};

const std::vector<CompiledRule>& compiled() {
  static const std::vector<CompiledRule> c = [] {
    std::vector<CompiledRule> out;
    for (const FamilyRule& r : familyRules()) {
      CompiledRule cr{&r, {}};
      for (const auto& p : r.patterns) cr.res.emplace_back(p, std::regex::ECMAScript | std::regex::optimize);
      out.push_back(std::move(cr));
    }
    return out;
  }();
  return c;
}

}  // namespace

const std::vector<FamilyRule>& familyRules() {
  static const std::vector<FamilyRule> rules = {
      {"copy",
       {R"(^\[?(CUDA )?mem(cpy|set)\b)", R"(^\[CUDA mem)", R"(^(Memcpy|Memset)\b)",
        R"(\b(direct|bfloat16|float16)_copy_kernel_cuda)", R"(\bCatArrayBatchedCopy)", R"(\bcopy_kernel\b)"}},
      {"NCCL", {R"(^nccl(Sym)?DevKernel_)", R"(\bnccl[A-Z]\w*Kernel)"}},
      {"Triton/Inductor", {R"(^triton_(poi|red|per|tem|for|spl|unk)_)"}},
      {"FlashAttention", {R"(\bflash_(fwd|bwd)_)", R"(\bflash::)", R"(\bFlash_(fwd|bwd)_)"}},
      {"mem-efficient attention", {R"(\bfmha_cutlass[FB])", R"(AttentionKernel<)"}},
      {"cuDNN", {R"(cudnn)", R"(implicit_gemm)", R"(\b\w*_(fprop|dgrad|wgrad)\w*)"}},
      {"cuBLASLt", {R"(^nvjet_)", R"(\bnvjet_)"}},
      {"cuBLAS",
       {R"(^(ampere|volta|turing|maxwell|hopper|sm\d+)_[sdhcz]?gemm)", R"(_cublas\b)", R"(cublas)", R"(\bgemvx::)",
        R"(\bgemv\w*kernel)", R"(\bgemmk1_kernel)", R"(\bsplitKreduce_kernel)"}},
      {"CUTLASS", {R"(cutlass)", R"(^sm\d+_xmma_)", R"(\bKernel2<)"}},
      {"ATen reduce", {R"(\breduce_kernel<)", R"(\bat::native::.*reduce)", R"(^reduce_kernel$)"}},
      {"ATen elementwise",
       {R"(\b(vectorized_|unrolled_)?elementwise_kernel\b)", R"(\bCatArrayBatchedCopy)",
        R"(\bindex_elementwise_kernel)"}},
      {"ATen",
       {R"(\bat::native::)", R"(\bat_cuda_detail::)", R"(\bsoftmax_warp_)", R"(\blayer_norm_kernel)",
        R"(\bvectorized_layer_norm)"}},
      {"CUB/Thrust",
       {R"(\bcub::)", R"(\bthrust::)", R"(\bDevice(Radix)?Sort)", R"(\bDeviceReduce)", R"(\bDeviceScan)"}},
  };
  return rules;
}

std::string kernelFamily(std::string_view nameIn) {
  std::string full = demangle(nameIn);
  std::string disp = displayName(full);
  for (const CompiledRule& cr : compiled())
    for (const std::regex& re : cr.res)
      if (std::regex_search(full, re) || std::regex_search(disp, re)) return cr.rule->family;
  return "other";
}

}  // namespace kl::ncu
