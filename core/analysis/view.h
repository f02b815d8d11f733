// The scope every analysis runs in: a model, its attribution (optional), a device filter
// (--gpu N) and a time window (--trim START END).
//
// Time conventions (documented in docs/analyses.md):
//  - Output times are "relative ns": t - model.meta.spanStart, i.e. nanoseconds since the
//    first recorded event of the profile (the capture start as far as the file shows it).
//  - --trim START END takes relative ns. An op, API call or range is IN the window when its
//    start lies in [START, END); its duration is not cut. Interval analyses (gaps, overlap,
//    busy time) clip intervals to the window.
//  - --gpu N keeps GPU ops with deviceId N (on every rank); CPU rows are kept when they are
//    linked to a kept op (launch analyses) or unconditionally (sync/API totals).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <tuple>
#include <vector>

#include "core/attribution/attribution.h"
#include "core/profile/model.h"

namespace kl::analysis {

using profile::GpuOp;
using profile::GpuOpKind;
using profile::kNone;
using profile::ProfileModel;
using profile::StrId;

struct Scope {
  std::optional<int32_t> device;
  std::optional<int64_t> trimStart;  // relative ns
  std::optional<int64_t> trimEnd;    // relative ns (exclusive)
};

/// The GPU op indices in scope, in model order. Every op of the model when nothing is
/// filtered out (no index vector: 0..n-1 is counted on the fly), else the selected indices.
/// Reads like a const std::vector<uint32_t>: range-for, size(), empty(), [k].
class OpList {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = uint32_t;
    using difference_type = std::ptrdiff_t;
    using reference = uint32_t;
    using pointer = void;
    const_iterator() = default;
    const_iterator(const uint32_t* sel, size_t k) : sel_(sel), k_(k) {}
    uint32_t operator*() const { return sel_ ? sel_[k_] : static_cast<uint32_t>(k_); }
    const_iterator& operator++() {
      ++k_;
      return *this;
    }
    const_iterator operator++(int) {
      auto c = *this;
      ++k_;
      return c;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.k_ == b.k_; }

   private:
    const uint32_t* sel_ = nullptr;
    size_t k_ = 0;
  };
  /// Every op of a model with n ops.
  static OpList all(size_t n) {
    OpList l;
    l.all_ = n;
    l.everything_ = true;
    return l;
  }
  /// The given indices (ascending).
  static OpList of(std::vector<uint32_t> sel) {
    OpList l;
    l.sel_ = std::move(sel);
    return l;
  }
  size_t size() const { return everything_ ? all_ : sel_.size(); }
  bool empty() const { return size() == 0; }
  uint32_t operator[](size_t k) const { return everything_ ? static_cast<uint32_t>(k) : sel_[k]; }
  const_iterator begin() const { return {everything_ ? nullptr : sel_.data(), 0}; }
  const_iterator end() const { return {everything_ ? nullptr : sel_.data(), size()}; }

 private:
  std::vector<uint32_t> sel_;
  size_t all_ = 0;
  bool everything_ = false;
};

class View {
 public:
  View(const ProfileModel& model, const Scope& scope, const attribution::Attribution* attr = nullptr);

  const ProfileModel& m;
  const attribution::Attribution* attr;  // may be null: analyses that need it say so
  Scope scope;
  int64_t origin = 0;                // meta.spanStart
  int64_t winStart = 0, winEnd = 0;  // absolute window [winStart, winEnd)
  OpList ops;                        // gpuOps indices in scope, model (start) order

  bool trimmed() const { return scope.trimStart || scope.trimEnd; }
  bool inWindow(int64_t absStart) const { return absStart >= winStart && absStart < winEnd; }
  bool deviceOk(int32_t d) const { return !scope.device || *scope.device == d; }
  int64_t rel(int64_t t) const { return t - origin; }
  /// Length of the analysed window (span of the profile when untrimmed), ns.
  int64_t windowLength() const { return winEnd - winStart; }
};

/// (rank, device) and (rank, device, stream) keys; ordered.
struct DeviceKey {
  int32_t rank = 0, device = -1;
  auto operator<=>(const DeviceKey&) const = default;
};
struct StreamKey {
  int32_t rank = 0, device = -1;
  uint32_t stream = 0;
  auto operator<=>(const StreamKey&) const = default;
  DeviceKey dev() const { return {rank, device}; }
};
inline DeviceKey deviceOf(const GpuOp& op) { return {op.rank, op.deviceId}; }
inline StreamKey streamOf(const GpuOp& op) { return {op.rank, op.deviceId, op.streamId}; }

const char* opKindName(GpuOpKind k);  // "kernel", "memcpy", "memset", "graph"

}  // namespace kl::analysis
