#include "lsp/server/scheduler.h"

#include <algorithm>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/thread_pool.hpp>
#include <chrono>
#include <exception>
#include <optional>
#include <utility>

#include "core/support/log.h"

namespace kl::lsp {

struct Scheduler::Impl {
  asio::io_context loop;
  std::optional<asio::thread_pool> pool;
};

Scheduler::Scheduler(unsigned threads) : threads_(threads), impl_(std::make_unique<Impl>()) {
  if (threads_ > 0) impl_->pool.emplace(threads_);
}

Scheduler::~Scheduler() {
  if (impl_->pool) impl_->pool->join();
  for (Deadline* d : std::exchange(deadlines_, {})) d->detach();
}

bool Scheduler::onLoop() const { return impl_->loop.get_executor().running_in_this_thread(); }

void Scheduler::post(std::function<void()> fn) { asio::post(impl_->loop, std::move(fn)); }

void Scheduler::spawn(std::string name, std::function<std::function<void()>()> work) {
  ++pending_;
  auto job = [this, name = std::move(name), work = std::move(work)] {
    std::function<void()> then;
    try {
      then = work();
    } catch (const std::exception& e) {
      kl::log::error("background task " + name + " failed: " + e.what());
    } catch (...) {
      kl::log::error("background task " + name + " failed");
    }
    post([this, then = std::move(then)] {
      if (then) {
        try {
          then();
        } catch (const std::exception& e) {
          kl::log::error(std::string("background continuation failed: ") + e.what());
        }
      }
      jobDone();
    });
  };
  if (impl_->pool)
    asio::post(*impl_->pool, std::move(job));
  else
    post(std::move(job));
}

void Scheduler::jobDone() {
  if (--pending_ > 0) return;
  auto waiters = std::exchange(idleWaiters_, {});
  for (auto& w : waiters) w();
}

void Scheduler::whenIdle(std::function<void()> fn) {
  if (pending_ == 0)
    fn();
  else
    idleWaiters_.push_back(std::move(fn));
}

struct Scheduler::Deadline::Timer {
  explicit Timer(asio::io_context& loop) : t(loop) {}
  asio::steady_timer t;
};

Scheduler::Deadline::Deadline(Scheduler& s) : scheduler_(&s) {
  if (s.threads_ > 0) timer_ = std::make_unique<Timer>(s.impl_->loop);
  s.deadlines_.push_back(this);
}

Scheduler::Deadline::~Deadline() {
  if (!scheduler_) return;
  auto& all = scheduler_->deadlines_;
  all.erase(std::remove(all.begin(), all.end(), this), all.end());
  if (timer_) timer_->t.cancel();
}

void Scheduler::Deadline::detach() {
  timer_.reset();  // while the io_context still exists
  scheduler_ = nullptr;
  armed_ = false;
  fn_ = nullptr;
}

std::unique_ptr<Scheduler::Deadline> Scheduler::deadline() { return std::unique_ptr<Deadline>(new Deadline(*this)); }

void Scheduler::Deadline::arm(std::chrono::milliseconds delay, std::function<void()> fn) {
  if (!scheduler_) return;
  fn_ = std::move(fn);
  armed_ = true;
  due_ = std::chrono::steady_clock::now() + delay;
  uint64_t mine = ++armCount_;
  if (!timer_) return;  // deterministic: runUntilIdle fires it
  timer_->t.expires_at(due_);
  timer_->t.async_wait([this, mine](const std::error_code& ec) {
    // A cancelled or re-armed wait does nothing; `this` is alive while its wait is pending
    // (the destructor cancels, and cancelled handlers still run: they only check ec).
    if (ec || mine != armCount_) return;
    fire();
  });
}

void Scheduler::Deadline::cancel() {
  armed_ = false;
  fn_ = nullptr;
  ++armCount_;
  if (timer_) timer_->t.cancel();
}

void Scheduler::Deadline::fire() {
  if (!armed_) return;
  armed_ = false;
  auto fn = std::move(fn_);
  fn_ = nullptr;
  try {
    if (fn) fn();
  } catch (const std::exception& e) {
    kl::log::error(std::string("deadline handler failed: ") + e.what());
  }
}

void Scheduler::run() {
  auto guard = asio::make_work_guard(impl_->loop);
  if (!stopped_) impl_->loop.run();
}

void Scheduler::stop() {
  stopped_ = true;
  impl_->loop.stop();
}

void Scheduler::runUntilIdle() {
  auto guard = asio::make_work_guard(impl_->loop);
  while (!stopped_) {
    impl_->loop.restart();
    if (impl_->loop.poll() > 0) continue;
    if (pending_ == 0) {
      // Nothing else to do: skip time forward to the earliest armed deadline.
      Deadline* next = nullptr;
      for (Deadline* d : deadlines_)
        if (d->armed_ && (!next || d->due_ < next->due_)) next = d;
      if (!next) break;
      if (next->timer_) next->timer_->t.cancel();
      next->fire();
      continue;
    }
    impl_->loop.restart();
    impl_->loop.run_one_for(std::chrono::milliseconds(5));  // a pool job will post back
  }
}

}  // namespace kl::lsp
