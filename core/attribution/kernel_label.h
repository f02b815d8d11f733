// Short kernel labels that tell the kernels of one table apart.
//
// A line's kernels often share a short name (`vectorized_elementwise_kernel` for a multiply, an
// add and a fill); their demangled names differ in a template argument — the functor or the
// function whose lambda the kernel runs. kernelLabels() keeps the short name and adds the
// telling argument: `vectorized_elementwise_kernel<MulFunctor>`, `reduce_kernel<sum_functor>`,
// `vectorized_elementwise_kernel<launch_clamp_scalar>` (a lambda: the function or class it is
// defined in), `multi_tensor_apply_kernel<multiplies>` (the op of a foreach kernel); when two labels are still equal,
// the first template argument in which they differ is added too. Labels longer than `maxWidth` code points are cut
// around the place where they differ from the others ("…").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/attribution/line_result.h"
#include "core/support/text_table.h"

namespace kl::attribution {

/// The template arguments of `base` in a demangled name (top level, in order), e.g. for
/// "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, ...>(...)"
/// and base "vectorized_elementwise_kernel": {"4", "at::native::MulFunctor<float>", ...}.
/// Empty when the name has no template argument list after `base`.
std::vector<std::string> templateArguments(std::string_view demangled, std::string_view base);

/// The telling identifier of one template argument: a functor / op / impl type name, else the
/// function or class a lambda is defined in; "" for plain types and numbers.
std::string argumentTag(std::string_view arg);

/// One label per kernel (same order), unique where the demangled names allow it, each at most
/// `maxWidth` code points.
std::vector<std::string> kernelLabels(const std::vector<KernelStat>& kernels, size_t maxWidth = 44);

/// The same for kernels known by name only (demangled, else as the profile has it): the short
/// name is profile::baseName of the name.
std::vector<std::string> kernelLabels(const std::vector<std::string>& names, size_t maxWidth = 44);

/// Number of code points of UTF-8 text (core/support/text_table.h).
using kl::displayWidth;

}  // namespace kl::attribution
