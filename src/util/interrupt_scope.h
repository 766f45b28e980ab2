// The interruption scope (interrupt.h) a parallel loop's threads share with its calling thread.
#pragma once

#include "termalign/interrupt.h"

namespace termalign::detail {

// The calling thread's scope: nullptr without one.
ScopedInterruptCheck::State* interrupt_scope();

// Makes `scope` the calling thread's while it lives (a thread of a parallel loop takes its caller's): the thread
// then stops at the polling points when the caller's check asked to stop, without calling the check itself.
class SharedInterruptScope {
 public:
  explicit SharedInterruptScope(ScopedInterruptCheck::State* scope);
  ~SharedInterruptScope();
  SharedInterruptScope(const SharedInterruptScope&) = delete;
  SharedInterruptScope& operator=(const SharedInterruptScope&) = delete;

 private:
  ScopedInterruptCheck::State* previous_;
};

}  // namespace termalign::detail
