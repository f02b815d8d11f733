// Cooperative cancellation: a source fires, tokens observe. Cheap to copy and poll.
// Long loops poll isCancelled() every few thousand iterations and return Error::cancelled().
#pragma once

#include <atomic>
#include <memory>

namespace kl {

class CancellationToken {
 public:
  /// A token that is never cancelled.
  CancellationToken() = default;
  bool isCancelled() const { return flag_ && flag_->load(std::memory_order_relaxed); }
  /// For C APIs that poll a flag (ts_parser_set_cancellation_flag takes const size_t*).
  const std::atomic<size_t>* rawFlag() const { return flag_.get(); }

 private:
  friend class CancellationSource;
  explicit CancellationToken(std::shared_ptr<std::atomic<size_t>> f) : flag_(std::move(f)) {}
  std::shared_ptr<std::atomic<size_t>> flag_;
};

class CancellationSource {
 public:
  CancellationSource() : flag_(std::make_shared<std::atomic<size_t>>(0)) {}
  void cancel() { flag_->store(1, std::memory_order_relaxed); }
  bool isCancelled() const { return flag_->load(std::memory_order_relaxed) != 0; }
  CancellationToken token() const { return CancellationToken(flag_); }

 private:
  std::shared_ptr<std::atomic<size_t>> flag_;
};

}  // namespace kl
