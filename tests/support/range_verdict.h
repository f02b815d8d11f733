// A hand-built convergence-loop verdict for store tests: the LineResult that Store::annotateRanges
// is given for one range of a round, holding only what it writes (the range's name and the line's
// atomic reason, note and focus suggestion). Header-only.
#pragma once

#include <string>

#include "core/attribution/line_result.h"

namespace kl::test {

inline attribution::LineResult rangeVerdict(std::string rangeName, attribution::AtomicReason reason, std::string note,
                                            std::string suggestFocus = "") {
  attribution::LineResult l;
  l.range.name = std::move(rangeName);
  l.atomic = reason != attribution::AtomicReason::None;
  l.atomicReason = reason;
  l.note = std::move(note);
  l.suggestFocus = std::move(suggestFocus);
  return l;
}

}  // namespace kl::test
