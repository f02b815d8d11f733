// Editor-neutral text for results: durations, shares, hint labels, lens titles, shapes.
// Used by the LSP features and usable by the CLI; no markup beyond plain UTF-8.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/results/result_set.h"

namespace kl::results {

enum class Units { Auto, Ns, Us, Ms, S };
/// "auto" | "ns" | "us" | "ms" | "s" (anything else: Auto).
Units parseUnits(std::string_view s);

/// 3 significant digits: "1.92 ms", "12.4 ms", "850 ns", "1.20 s"; Auto picks the largest unit
/// in which the value is >= 1 (µs written "µs").
std::string formatDuration(int64_t ns, Units units = Units::Auto);
/// Whole percent for >= 1 %, one decimal below ("31 %", "0.4 %", "<0.1 %").
std::string formatShare(double share);
/// "1 kernel" / "2 kernels".
std::string kernelCount(uint64_t n);
/// "0.42 ms + bwd 0.91 ms" (forward part, then the backward part) when `backwardNs` > 0, else
/// formatDuration(ns).
std::string formatPassTime(int64_t ns, int64_t backwardNs, Units units = Units::Auto);
/// "128×1×1" (unknown dims "?").
std::string formatDims(const std::array<int32_t, 3>& d);
/// The default glyph before a hint's time, and the one before CPU time blocked in sync calls:
/// both are in Debian's default fonts (DejaVu), no colour-emoji font needed.
inline constexpr std::string_view kHintPrefix = "◷";
inline constexpr std::string_view kSyncGlyph = "‖";

/// Inlay hint label: "◷ 1.92 ms · 2 kernels" ("◷ 0.42 ms + bwd 0.91 ms · 5 kernels" when backward
/// kernels were attributed to the line); a call line (LineResult::isCallLine): "◷ 0.73 ms
/// total", or "◷ 12.0 µs · 1 kernel · 0.73 ms total" when it launches kernels itself too; plus
/// " · ‖ sync 3.1 ms" when the line blocks the CPU in sync calls ("‖ sync 3.1 ms" alone when it
/// launched nothing). `prefix` replaces kHintPrefix (empty: no prefix).
std::string hintLabel(const LineResult& line, Units units = Units::Auto, std::string_view prefix = kHintPrefix);
/// Code lens title: "GPU 12.4 ms · 14 kernels · 31 %" (share of the run's GPU time); the time
/// reads "4.1 ms + bwd 8.3 ms" when the function's lines hold backward kernels.
std::string lensTitle(const FunctionResult& f, int64_t totalGpuNs, Units units = Units::Auto);
/// "3 min ago", "2 h ago", "5 days ago", "just now"; "" when createdUnix is 0.
std::string formatAge(int64_t createdUnix, int64_t nowUnix);

}  // namespace kl::results
