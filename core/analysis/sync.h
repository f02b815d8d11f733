// `sync`: CPU time blocked waiting for the GPU. A "sync call" is a CUDA/HIP runtime or driver
// API call that blocks its CPU thread until GPU work finishes (API name, "_v<digits>" ignored):
//   explicit:  cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize,
//              cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize, hip* equivalents
//              (cudaStreamWaitEvent is NOT one: the GPU waits, not the CPU)
//   implicit:  blocking copies — cudaMemcpy / cudaMemcpy2D/3D / cudaMemcpy{To,From}Symbol and
//              cuMemcpy*/hipMemcpy* without "Async" — and cudaMemcpyAsync (any *MemcpyAsync)
//              whose copy is device -> pageable host memory (CUDA returns from those only once
//              the copy is done);
// Blocked time = the call's duration (CPU side, end - start), each call counted once (two API rows
// with the same thread and correlation id — old nsys exports record a call under its plain and
// its "_v<digits>" name — are one call: the longer row counts). Calls are
// in scope when their start lies in the --trim window (--gpu does not filter CPU calls).
// Call sites: see callsite.h (kl: range, Python frame, NVTX range; the ATen op around it, e.g.
// aten::item / aten::_local_scalar_dense for `.item()`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

enum class SyncKind : uint8_t { Device, Stream, Event, Context, Memcpy, MemcpyAsyncToPageable };
const char* syncKindName(SyncKind k);  // "device", "stream", "event", "context", "memcpy", "memcpy_async_pageable"
bool isImplicit(SyncKind k);

/// The sync kind of an API call, or false when it does not block the CPU. `copy` is the call's
/// memcpy (for *MemcpyAsync), null when unknown.
bool syncKindOf(std::string_view apiName, const profile::MemcpyDetail* copy, SyncKind& out);

struct SyncRow {
  std::string key;  // API name / kind / call site
  uint64_t calls = 0;
  int64_t totalNs = 0, maxNs = 0;
  // call-site rows only:
  std::string file;
  int32_t line = 0;
  std::string op;     // ATen op around the calls, when one ("aten::item")
  std::string via;    // "kl", "python", "range" or ""
  std::string kinds;  // sync kinds seen at the site, comma-separated
};

struct SyncThreadRow {
  int32_t rank = 0;
  uint32_t thread = kNone;  // index into threads
  uint64_t calls = 0;
  int64_t blockedNs = 0;
  int64_t apiSpanNs = 0;  // first .. last API call of the thread (context for the share)
};

struct SyncResult {
  uint64_t calls = 0;
  int64_t blockedNs = 0, explicitNs = 0, implicitNs = 0;
  uint64_t withSite = 0;               // calls with a known call site
  std::vector<SyncRow> byKind;         // total desc
  std::vector<SyncRow> byApi;          // total desc
  std::vector<SyncRow> bySite;         // total desc ("" key = unknown site, listed last)
  std::vector<SyncThreadRow> threads;  // blocked desc
  bool hasStacksOrRanges = false;      // the profile records Python frames or ranges at all
};

SyncResult computeSync(const View& v);
void writeJson(json::Writer& w, const SyncResult& r, const View& v);

}  // namespace kl::analysis
