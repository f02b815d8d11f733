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
#include <chrono>
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

  /// A one-shot deadline on the main loop, for work that should wait until events settle
  /// (debouncing): arm(delay, fn) (re)sets it, and fn runs on the main loop once `delay` has
  /// passed without another arm() or a cancel(). Main loop only; destroying it cancels it.
  /// Deterministic mode (threads == 0): no clock — runUntilIdle() fires armed deadlines, earliest
  /// first, whenever nothing else is ready (time skips forward), so tests see the settled state
  /// at once and in a fixed order.
  class Deadline {
   public:
    ~Deadline();
    Deadline(const Deadline&) = delete;
    Deadline& operator=(const Deadline&) = delete;
    void arm(std::chrono::milliseconds delay, std::function<void()> fn);
    void cancel();
    bool armed() const { return armed_; }

   private:
    friend class Scheduler;
    explicit Deadline(Scheduler& s);
    void detach();
    void fire();
    struct Timer;
    Scheduler* scheduler_;          // null once the Scheduler is gone
    std::unique_ptr<Timer> timer_;  // null in deterministic mode
    std::function<void()> fn_;
    std::chrono::steady_clock::time_point due_;
    uint64_t armCount_ = 0;  // a wait completing for an older arm() does nothing
    bool armed_ = false;
  };
  /// A new deadline on this loop; it must not outlive the Scheduler.
  std::unique_ptr<Deadline> deadline();

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
  std::vector<Deadline*> deadlines_;  // every live Deadline (deterministic mode fires them)
};

}  // namespace kl::lsp
