// Scheduler: the main loop (an asio::io_context that owns all server state) and the background
// pool (an asio::thread_pool). Work on the pool gets read-only snapshots and a cancellation
// token and hands a continuation back to the main loop; nothing on a pool thread touches
// server state or the transport.
//
// asio is confined to scheduler.cpp.
//
// Deterministic mode (threads == 0): background work is queued on the main loop itself, after
// the messages already queued, so tests and the fuzzer see one fixed interleaving.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>


namespace kl::lsp {

class Scheduler {
 public:
  /// `threads` background threads; 0 = deterministic inline mode.
  explicit Scheduler(unsigned threads);
  /// Joins the pool (running work should have been cancelled); queued loop handlers are
  /// destroyed without running.
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  unsigned threads() const { return threads_; }
  /// Queues `fn` on the main loop. Thread-safe; FIFO.
  void post(std::function<void()> fn);
  /// True on the thread that is running the main loop.
  bool onLoop() const;

  /// Runs `work` in the background; the continuation it returns (may be empty) runs on the
  /// main loop. Exceptions from `work` are logged as "<name>: ..." and drop the continuation.
  void spawn(std::string name, std::function<std::function<void()>()> work);
  /// Background jobs spawned and whose continuation has not run yet. Main loop only.
  size_t pending() const { return pending_; }
  /// Calls `fn` on the main loop once no background job is pending (immediately if none is).
  void whenIdle(std::function<void()> fn);

  /// Runs the main loop on this thread until stop().
  void run();
  /// Ends run() / runUntilIdle(). Handlers still queued do not run.
  void stop();
  bool stopped() const { return stopped_; }
  /// Tests: runs ready handlers until none is left and no background job is pending.
  void runUntilIdle();

 private:
  void jobDone();

  struct Impl;  // asio stays out of this header (it is included by every feature)
  unsigned threads_;
  std::unique_ptr<Impl> impl_;
  size_t pending_ = 0;
  bool stopped_ = false;
  std::vector<std::function<void()>> idleWaiters_;
};

}  // namespace kl::lsp
