// Tag tables, per-tag statistics and the Perfetto (Chrome JSON) export of decoded regions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "core/cute/buffer.h"
#include "core/support/result.h"

namespace kl::cute {

/// Tag names in id order (index = tag_id).
struct TagTable {
  std::vector<std::string> names;
  /// names[id], or "tag_<id>" for an id the table does not name.
  std::string name(int64_t id) const;
};

/// One name per line, in id order (line 1 = id 0). Trailing white space is trimmed; a blank
/// line is an error (it would shift every later id). Error on an unreadable or empty file.
Result<TagTable> readTagFile(const std::filesystem::path& path);

struct TagStats {
  int64_t tag = 0;
  std::string name;
  int64_t count = 0;
  double meanNs = 0;
  int64_t minNs = 0, maxNs = 0, totalNs = 0;
  double share = 0;  // totalNs / sum of all tags' totalNs (nested regions are counted in both)
};

/// Per tag present in the buffer (ascending tag id).
std::vector<TagStats> summarize(const EventBuffer& buf, const TagTable& tags);

struct PerfettoOptions {
  std::string processLabel = "unit";  // process name prefix: "<label> <unit>"
  std::string threadLabel = "tid";    // track name prefix: "<label> <tid>"
};

/// Chrome trace JSON: {"traceEvents": [...], "otherData": {...}}. One process per buffer unit,
/// one track (thread) per event tid; regions that overlap without nesting go to sibling tracks
/// ("tid 5 (2)"). X events with ts/dur in microseconds (3 decimals = exact ns), rebased to the
/// earliest start; args hold tag_id, start_ns, dur_ns, tid, unit. otherData records capacity and
/// overflow. No displayTimeUnit (Perfetto ignores it).
void writePerfettoJson(std::ostream& out, const EventBuffer& buf, const TagTable& tags,
                       const PerfettoOptions& opt = {});

}  // namespace kl::cute
