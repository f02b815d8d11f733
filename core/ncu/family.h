// Library family of a kernel from its name, by an ordered rule table (first match wins).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kl::ncu {

/// One rule: the family it assigns and the patterns (ECMAScript regex, searched in the full
/// demangled name) any of which selects it.
struct FamilyRule {
  std::string family;
  std::vector<std::string> patterns;
};

/// The table, in priority order: copy (memcpy/memset, ATen copy/concat kernels), NCCL,
/// Triton/Inductor, FlashAttention, mem-efficient attention, cuDNN (before CUTLASS: cuDNN ships
/// CUTLASS kernels), cuBLASLt (`nvjet_*`), cuBLAS (incl. `sm90_xmma_*_cublas`), CUTLASS
/// (`cutlass*`, `sm80_/sm90_xmma_*`), ATen reduce, ATen elementwise, other ATen, CUB/Thrust.
/// Unmatched: "other".
const std::vector<FamilyRule>& familyRules();

/// The family of `name` (any spelling: mangled, ncu-shortened, nsys, Kineto).
std::string kernelFamily(std::string_view name);

}  // namespace kl::ncu
