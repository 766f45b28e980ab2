#include "termalign/interrupt.h"

#include <atomic>
#include <thread>
#include <utility>

#include "termalign/error.h"
#include "util/interrupt_scope.h"

namespace termalign {

struct ScopedInterruptCheck::State {
  std::function<bool()> check;
  std::chrono::milliseconds interval;
  std::thread::id owner;  // the thread that installed it: the only one that calls `check`
  std::chrono::steady_clock::time_point last_check;
  // Set by the owner, read by every thread of its loops: relaxed, since it only tells them to stop (the loops'
  // joins order everything else).
  std::atomic<bool> stop{false};
};

namespace {
thread_local ScopedInterruptCheck::State* current_scope = nullptr;
}  // namespace

ScopedInterruptCheck::ScopedInterruptCheck(std::function<bool()> check, std::chrono::milliseconds interval)
    : state_(std::make_unique<State>()), enclosing_(current_scope) {
  state_->check = std::move(check);
  state_->interval = interval;
  state_->owner = std::this_thread::get_id();
  state_->last_check = std::chrono::steady_clock::now();
  current_scope = state_.get();
}

ScopedInterruptCheck::~ScopedInterruptCheck() { current_scope = enclosing_; }

void throw_if_interrupted() {
  ScopedInterruptCheck::State* scope = current_scope;
  if (!scope) return;
  if (!scope->stop.load(std::memory_order_relaxed) && scope->owner == std::this_thread::get_id()) {
    const auto now = std::chrono::steady_clock::now();
    if (now - scope->last_check >= scope->interval) {
      scope->last_check = now;
      if (scope->check()) scope->stop.store(true, std::memory_order_relaxed);
    }
  }
  if (scope->stop.load(std::memory_order_relaxed)) throw Error(ErrorKind::interrupted, "Interrupted.");
}

namespace detail {

ScopedInterruptCheck::State* interrupt_scope() { return current_scope; }

SharedInterruptScope::SharedInterruptScope(ScopedInterruptCheck::State* scope) : previous_(current_scope) {
  current_scope = scope;
}

SharedInterruptScope::~SharedInterruptScope() { current_scope = previous_; }

}  // namespace detail

}  // namespace termalign
