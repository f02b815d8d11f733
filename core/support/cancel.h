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
  /// The signal given to CancellationSource::cancel (0 when none): a child process being
  /// stopped receives it first (an interrupted CLI forwards SIGINT/SIGTERM/SIGHUP).
  int signal() const { return flag_ ? static_cast<int>(flag_->load(std::memory_order_relaxed) >> 8) : 0; }
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
  /// Async-signal-safe (a lock-free store). `signal`: see CancellationToken::signal().
  void cancel(int sig = 0) { flag_->store(1 | (static_cast<size_t>(sig) << 8), std::memory_order_relaxed); }
  bool isCancelled() const { return flag_->load(std::memory_order_relaxed) != 0; }
  CancellationToken token() const { return CancellationToken(flag_); }

 private:
  std::shared_ptr<std::atomic<size_t>> flag_;
};

}  // namespace kl
