// THE formatter of each quantity kernlens shows a person: durations, shares, counts, bytes,
// bandwidths. Every front end (hover, inlay hint, code lens, run view, the CLI's reports and
// analyses, diagnose findings) formats through these, so one figure reads the same everywhere
// ("420 µs + bwd 910 µs" in the editor and in `kernlens profile`). Plain UTF-8, no markup.
// It lives in core/support because every layer that words a figure (analysis, planner, results)
// sits above it; what a source line shows is core/results/line_view.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kl {

enum class Units { Auto, Ns, Us, Ms, S };
/// "auto" | "ns" | "us" | "ms" | "s" (anything else: Auto).
Units parseUnits(std::string_view s);

/// 3 significant digits: "850 ns", "12.4 µs", "1.92 ms", "1.20 s"; Auto picks the largest unit
/// in which the value is >= 1 (µs written "µs"); nanoseconds are whole ("851 ns").
std::string formatDuration(double ns, Units units = Units::Auto);
/// A forward time and the backward pass's part of it: "420 µs + bwd 910 µs" (the forward part,
/// ns - backwardNs, then the backward part) when backwardNs > 0, else formatDuration(ns).
std::string formatPassTime(int64_t ns, int64_t backwardNs, Units units = Units::Auto);

/// How many digits a share keeps: Editor — whole percent from 1 %, one decimal below ("31 %",
/// "0.4 %", "<0.1 %"); Table — always one decimal ("31.2 %"), for analysis tables whose rows
/// are compared with each other.
enum class ShareDigits { Editor, Table };
/// A fraction (0.31) as a percentage ("31 %").
std::string formatShare(double fraction, ShareDigits digits = ShareDigits::Editor);
/// A signed relative change (+0.12 -> "+12 %", -0.034 -> "-3 %").
std::string formatChange(double fraction);

/// "1 kernel" / "2 kernels"; `plural` defaults to singular + "s" ("1 launch", "3 launches").
std::string formatCount(uint64_t n, std::string_view singular, std::string_view plural = {});

/// 512 B, 1.50 KiB, 3.20 MiB, 1.10 GiB (binary units, 3 significant digits).
std::string formatBytes(double bytes);
/// Bandwidth in GB/s (decimal), e.g. "23.4 GB/s"; `bytesPerNs` equals GB/s.
std::string formatBandwidth(double bytesPerNs);

}  // namespace kl
