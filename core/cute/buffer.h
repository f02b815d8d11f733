// The event buffer a CUTE DSL kernel writes with profile_region / lane0_warp0_start/stop
// (transformer_nuggets layout): int64 little-endian, per unit `[count, then per event:
// start_ns, dur_ns, tag_id, tid]`, `1 + 4 * capacity` words per unit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/result.h"

namespace kl::cute {

struct RegionEvent {
  int64_t startNs = 0, durNs = 0;
  int64_t tag = 0;
  int64_t tid = 0;   // the id the kernel passed (block id, or block * warps + warp)
  int64_t unit = 0;  // buffer slice (unit) index
};

struct EventBuffer {
  int64_t units = 1;
  int64_t capacity = 0;             // events per unit
  std::vector<RegionEvent> events;  // written events, in buffer order
  /// Per unit: events the kernel counted beyond the capacity (lost); 0 when none.
  std::vector<int64_t> overflow;
  int64_t unwritten = 0;  // slots below count left 0/0 (a region that never closed)
  /// Problems found while decoding (bad durations...), one line each.
  std::vector<std::string> warnings;
  int64_t totalOverflow() const;
};

/// Decodes the words of a buffer. `capacity`: events per unit; nullopt = one unit holding
/// (words - 1) / 4 events. Errors (one line): empty buffer, a size that is not 1 + 4k words
/// per unit, a negative count.
Result<EventBuffer> decodeWords(const std::vector<int64_t>& words, std::optional<int64_t> capacity);

/// Reads a raw little-endian .bin or a .npy (dtype <i8 / |i8 / <u8, C order; shape (N,) or
/// (units, 1 + 4k) — the latter gives the capacity). Errors: unreadable file, a .bin whose
/// size is not a multiple of 8, a bad or unsupported .npy header (named).
Result<EventBuffer> readEventBuffer(const std::filesystem::path& path, std::optional<int64_t> capacity);

/// The words of a .npy image (exposed for tests); `shape` receives its shape.
Result<std::vector<int64_t>> parseNpy(std::string_view bytes, std::vector<int64_t>& shape);

}  // namespace kl::cute
