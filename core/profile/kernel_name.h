// Kernel-name normalisation: demangling, the display/base names, and a key that matches the same
// kernel across ncu (namespaces stripped, `0` literals), nsys (`(int)4`, `<unnamed>`) and
// Kineto (`(anonymous namespace)`, `false`).
#pragma once

#include <string>
#include <string_view>

namespace kl::profile {

/// abi::__cxa_demangle of an Itanium-mangled name (`_Z...`); the input unchanged when it is not
/// mangled or does not demangle.
std::string demangle(std::string_view name);

/// The demangled name without a leading return type (`void `, `std::enable_if<...>::type `) and
/// without the trailing top-level parameter list. Bracket-depth aware (`operator()`, lambdas).
/// An op name of the model's own ("[CUDA memcpy HtoD]", "[CUDA graph 3]") is returned whole.
std::string displayName(std::string_view name);

/// The last identifier before the outermost template/parameter list: `vectorized_elementwise_kernel`,
/// `Kernel2`, `nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT`. Equals nsys `shortName`.
std::string baseName(std::string_view name);

/// The informative name: the base name, except for wrapper kernels (`cutlass::Kernel2<X>`,
/// `cutlass::Kernel<X>`, `device_kernel<X>`) whose first template argument names the real kernel.
std::string informativeName(std::string_view name);

/// A key equal for the same kernel as printed by ncu, nsys and Kineto: display name with every
/// namespace/class qualifier, cast literal (`(int)4` -> `4`), anonymous-namespace marker,
/// `const`, brackets `[` `]` and white space removed; `true`/`false` -> `1`/`0`.
std::string normalizedKey(std::string_view name);

}  // namespace kl::profile
