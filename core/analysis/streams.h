// `streams`: stream concurrency per device.
//
// Per (rank, device), over its active span (first op start .. last op end, clipped to the
// window), with every GPU op (kernel, memcpy, memset, graph) of the device in scope:
//  - a stream is BUSY at t when one of its ops runs at t (per-stream union of op intervals);
//  - level(t) = number of busy streams; time at level 0 (idle), 1, and 2+ streams; the time at
//    every level (level_ns[k] = time with exactly k streams busy), the maximum level;
//  - per stream: ops, busy time, solo time (the only busy stream of the device).
// Serialised candidates ("could overlap but serialise on one stream"): consecutive ops A, B of
// one stream (stream order = start order) where B's launch call returned before A ended (B was
// already queued and waited only for A, in stream order) are a QUEUED PAIR. Its serialised
// time is the part of A's execution during which no other stream of the device was busy (the
// GPU ran one stream while B waited). Whether B truly depends on A's data cannot be seen in a
// trace: these are candidates for moving B (or A) to another stream, not proofs. Needs the
// op -> launch-call link (pairs whose B has no launch call in the capture are not counted).
#pragma once

#include <cstdint>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct StreamUse {
  uint32_t stream = 0;
  uint64_t ops = 0;
  int64_t busyNs = 0;  // union of the stream's ops
  int64_t soloNs = 0;  // busy while no other stream of the device is
};

struct StreamsDevice {
  DeviceKey dev;
  int64_t activeSpanNs = 0;
  int64_t idleNs = 0, oneNs = 0, multiNs = 0;  // 0, 1, 2+ busy streams
  std::vector<int64_t> levelNs;                // [k] = time with exactly k streams busy
  uint32_t maxConcurrent = 0;
  std::vector<StreamUse> streams;  // by stream id
  uint64_t queuedPairs = 0;
  int64_t serialisedNs = 0;  // over queued pairs (see above)
};

struct SerialisedPair {
  DeviceKey dev;
  uint32_t stream = 0;
  StrId first = 0, second = 0;  // op names (A then B)
  uint64_t count = 0;
  int64_t serialisedNs = 0;
};

struct StreamsResult {
  std::vector<StreamsDevice> devices;  // by (rank, device)
  std::vector<SerialisedPair> pairs;   // by serialised time desc
  bool launchLinks = false;            // attribution available
};

StreamsResult computeStreams(const View& v);
void writeJson(json::Writer& w, const StreamsResult& r, const ProfileModel& m, size_t topPairs);

}  // namespace kl::analysis
