// Human-readable numbers for text output: durations, byte counts, rates, percentages.
#pragma once

#include <cstdint>
#include <string>

namespace kl::analysis {

/// 950 ns, 12.3 µs, 4.56 ms, 1.234 s (3 significant digits, "us" spelled "µs").
std::string fmtDuration(double ns);
/// 512 B, 1.5 KiB, 3.2 MiB, 1.1 GiB.
std::string fmtBytes(double bytes);
/// Bandwidth in GB/s (decimal), e.g. "23.4 GB/s".
std::string fmtBandwidth(double bytesPerNs);
/// "12.3%".
std::string fmtPercent(double fraction);

}  // namespace kl::analysis
