#include "core/cute/regions.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>

#include "core/support/json_writer.h"
#include "core/support/saturating.h"

namespace kl::cute {

std::string TagTable::name(int64_t id) const {
  if (id >= 0 && static_cast<size_t>(id) < names.size()) return names[static_cast<size_t>(id)];
  return "tag_" + std::to_string(id);
}

Result<TagTable> readTagFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return Error::io(path.string() + ": cannot open tag file");
  TagTable t;
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    lines.push_back(line);
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty())
      return Error::invalid(path.string() + ":" + std::to_string(i + 1) +
                            ": blank line in the tag file (one name per line, line N = tag id N-1)");
    t.names.push_back(lines[i]);
  }
  if (t.names.empty()) return Error::invalid(path.string() + ": the tag file is empty");
  return t;
}

std::vector<TagStats> summarize(const EventBuffer& buf, const TagTable& tags) {
  std::map<int64_t, TagStats> by;
  int64_t all = 0;
  for (const RegionEvent& e : buf.events) {
    TagStats& s = by[e.tag];
    if (s.count == 0) {
      s.tag = e.tag;
      s.name = tags.name(e.tag);
      s.minNs = e.durNs;
      s.maxNs = e.durNs;
    }
    ++s.count;
    addTo(s.totalNs, e.durNs);
    s.minNs = std::min(s.minNs, e.durNs);
    s.maxNs = std::max(s.maxNs, e.durNs);
    addTo(all, e.durNs);
  }
  std::vector<TagStats> out;
  for (auto& [tag, s] : by) {
    s.meanNs = static_cast<double>(s.totalNs) / static_cast<double>(s.count);
    s.share = all > 0 ? static_cast<double>(s.totalNs) / static_cast<double>(all) : 0;
    out.push_back(s);
  }
  return out;
}

void writePerfettoJson(std::ostream& out, const EventBuffer& buf, const TagTable& tags, const PerfettoOptions& opt) {
  int64_t t0 = std::numeric_limits<int64_t>::max();
  for (const auto& e : buf.events) t0 = std::min(t0, e.startNs);
  if (buf.events.empty()) t0 = 0;
  // Group by (unit, tid); assign sibling tracks so slices on one track nest strictly.
  std::map<std::pair<int64_t, int64_t>, std::vector<const RegionEvent*>> tracks;
  for (const auto& e : buf.events) tracks[{e.unit, e.tid}].push_back(&e);
  json::Writer w(out);
  w.beginObject().key("traceEvents").beginArray();
  std::map<int64_t, bool> namedUnit;
  int64_t nextTid = 1;
  for (auto& [key, evs] : tracks) {
    auto [unit, tid] = key;
    if (!namedUnit[unit]) {
      namedUnit[unit] = true;
      w.beginObject()
          .field("ph", "M")
          .field("name", "process_name")
          .field("pid", unit)
          .key("args")
          .beginObject()
          .field("name", opt.processLabel + " " + std::to_string(unit))
          .endObject()
          .endObject();
    }
    std::stable_sort(evs.begin(), evs.end(), [](const RegionEvent* a, const RegionEvent* b) {
      return a->startNs != b->startNs ? a->startNs < b->startNs : a->durNs > b->durNs;
    });
    // lanes[i] = stack of open end times on sibling track i.
    std::vector<std::vector<int64_t>> lanes;
    std::vector<int64_t> laneTid;
    for (const RegionEvent* e : evs) {
      int64_t end = e->startNs + e->durNs;
      size_t lane = 0;
      for (; lane < lanes.size(); ++lane) {
        auto& st = lanes[lane];
        while (!st.empty() && st.back() <= e->startNs) st.pop_back();
        if (st.empty() || end <= st.back()) break;
      }
      if (lane == lanes.size()) {
        lanes.emplace_back();
        laneTid.push_back(nextTid++);
        std::string nm =
            opt.threadLabel + " " + std::to_string(tid) + (lane ? " (" + std::to_string(lane + 1) + ")" : "");
        w.beginObject()
            .field("ph", "M")
            .field("name", "thread_name")
            .field("pid", unit)
            .field("tid", laneTid.back())
            .key("args")
            .beginObject()
            .field("name", nm)
            .endObject()
            .endObject();
        w.beginObject()
            .field("ph", "M")
            .field("name", "thread_sort_index")
            .field("pid", unit)
            .field("tid", laneTid.back())
            .key("args")
            .beginObject()
            .field("sort_index", static_cast<long long>(tid) * 16 + static_cast<long long>(lane))
            .endObject()
            .endObject();
      }
      lanes[lane].push_back(end);
      w.beginObject()
          .field("ph", "X")
          .field("name", tags.name(e->tag))
          .field("cat", "region")
          .field("pid", unit)
          .field("tid", laneTid[lane]);
      w.key("ts").valueFixed(static_cast<double>(e->startNs - t0) / 1000.0, 3);
      w.key("dur").valueFixed(static_cast<double>(e->durNs) / 1000.0, 3);
      w.key("args")
          .beginObject()
          .field("tag_id", e->tag)
          .field("start_ns", e->startNs)
          .field("dur_ns", e->durNs)
          .field("tid", e->tid)
          .field("unit", e->unit)
          .endObject();
      w.endObject();
    }
  }
  w.endArray();
  w.key("otherData")
      .beginObject()
      .field("source", "kernlens cute export")
      .field("units", buf.units)
      .field("capacity_per_unit", buf.capacity)
      .field("overflow_events", buf.totalOverflow())
      .field("events", static_cast<long long>(buf.events.size()))
      .field("t0_ns", t0)
      .endObject();
  w.endObject();
  out << "\n";
}

}  // namespace kl::cute
