// Editor-neutral labels for results: hint labels, lens titles, shapes, ages. The figures in them
// are worded by core/support/format.h (durations, shares, counts), the one formatter of each
// quantity; what a line shows is core/results/line_view.h. No markup beyond plain UTF-8.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/results/line_view.h"
#include "core/results/result_set.h"
#include "core/support/format.h"

namespace kl::results {

/// "128×1×1" (unknown dims "?").
std::string formatDims(const std::array<int32_t, 3>& d);

/// Code lens title: "GPU 12.4 ms · 14 kernels · 31 %" (share of the run's GPU time); the time
/// reads "4.1 ms + bwd 8.3 ms" when the function's lines hold backward kernels.
std::string lensTitle(const FunctionResult& f, int64_t totalGpuNs, Units units = Units::Auto);
/// "3 min ago", "2 h ago", "5 days ago", "just now"; "" when createdUnix is 0.
std::string formatAge(int64_t createdUnix, int64_t nowUnix);

}  // namespace kl::results
