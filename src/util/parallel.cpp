#include "util/parallel.h"

#include <omp.h>

#include <exception>
#include <mutex>

#include "util/interrupt_scope.h"

namespace termalign {

int resolve_threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

namespace {

// The calling thread's index in the library's innermost loop: OpenMP's thread number inside the library's own
// parallel regions, 0 on their serial paths. Not omp_get_thread_num() itself: a host program that calls the
// library from inside its own parallel region runs the library's loops serially (nested regions are off), and its
// thread numbers would index per-thread buffers sized for the library's threads.
thread_local int loop_slot = 0;

// Sets loop_slot for a scope, restoring the previous value (a loop inside a loop's body).
class LoopSlot {
 public:
  explicit LoopSlot(int slot) : previous_(loop_slot) { loop_slot = slot; }
  ~LoopSlot() { loop_slot = previous_; }
  LoopSlot(const LoopSlot&) = delete;
  LoopSlot& operator=(const LoopSlot&) = delete;

 private:
  int previous_;
};

}  // namespace

int current_thread() { return loop_slot; }

void run_both(const std::function<void()>& first, const std::function<void()>& second, int threads) {
  std::exception_ptr errors[2];
  parallel_for(2, threads, [&](std::size_t task) {
    try {
      (task == 0 ? first : second)();
    } catch (...) {
      errors[task] = std::current_exception();
    }
  });
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

namespace {

// The first error of a shared loop, and whether one happened (the remaining items are then skipped).
struct LoopErrors {
  std::exception_ptr first;
  std::mutex mutex;
  bool failed = false;

  // Inside a catch block: keeps the exception being handled if it is the first.
  void record_current() {
    std::lock_guard<std::mutex> lock(mutex);
    if (!first) first = std::current_exception();
#pragma omp atomic write
    failed = true;
  }
};

// The items [0, n) shared out, one at a time, among the threads of the enclosing parallel region (an orphaned
// worksharing loop: every thread of the region must call it).
void share_items(std::size_t n, const std::function<void(std::size_t)>& body, LoopErrors& errors) {
#pragma omp for schedule(dynamic, 1)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(n); ++i) {
    bool skip;
#pragma omp atomic read
    skip = errors.failed;
    if (skip) continue;
    try {
      body(static_cast<std::size_t>(i));
    } catch (...) {
      errors.record_current();
    }
  }
}

}  // namespace

SerialEigenProducts::SerialEigenProducts() : previous_(omp_get_max_threads()) { omp_set_num_threads(1); }
SerialEigenProducts::~SerialEigenProducts() { omp_set_num_threads(previous_); }

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body) {
  const int thread_count = resolve_threads(threads);
  if (n <= 1 || thread_count == 1 || omp_in_parallel()) {
    const LoopSlot slot(0);
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  LoopErrors errors;
  ScopedInterruptCheck::State* const interrupt_scope = detail::interrupt_scope();
#pragma omp parallel num_threads(thread_count)
  {
    const LoopSlot slot(omp_get_thread_num());
    const detail::SharedInterruptScope interruptible(interrupt_scope);
    share_items(n, body, errors);
  }
  if (errors.first) std::rethrow_exception(errors.first);
}

void on_each_thread(int threads, const std::function<void()>& body) {
  LoopErrors errors;
  ScopedInterruptCheck::State* const interrupt_scope = detail::interrupt_scope();
#pragma omp parallel num_threads(resolve_threads(threads))
  {
    const LoopSlot slot(omp_get_thread_num());
    const detail::SharedInterruptScope interruptible(interrupt_scope);
    try {
      body();
    } catch (...) {
      errors.record_current();
    }
  }
  if (errors.first) std::rethrow_exception(errors.first);
}

void parallel_for_alongside(std::size_t n, int threads, const std::function<void(std::size_t)>& body,
                            const std::function<void()>& alongside) {
  const int thread_count = resolve_threads(threads);
  if (thread_count == 1 || omp_in_parallel()) {
    const LoopSlot slot(0);
    alongside();
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  LoopErrors errors;
  std::exception_ptr alongside_error;
  ScopedInterruptCheck::State* const interrupt_scope = detail::interrupt_scope();
#pragma omp parallel num_threads(thread_count)
  {
    const LoopSlot slot(omp_get_thread_num());
    const detail::SharedInterruptScope interruptible(interrupt_scope);
    // The calling thread (whose heap holds the memory earlier steps freed) runs alongside(), then joins the loop.
    if (current_thread() == 0) {
      try {
        alongside();
      } catch (...) {
        alongside_error = std::current_exception();
      }
    }
    share_items(n, body, errors);
  }
  if (alongside_error) std::rethrow_exception(alongside_error);
  if (errors.first) std::rethrow_exception(errors.first);
}

}  // namespace termalign
