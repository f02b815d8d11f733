#include "lsp/server/scheduler.h"

#include <chrono>
#include <exception>
#include <optional>
#include <utility>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/thread_pool.hpp>

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
    if (pending_ == 0) break;
    impl_->loop.restart();
    impl_->loop.run_one_for(std::chrono::milliseconds(5));  // a pool job will post back
  }
}

}  // namespace kl::lsp
