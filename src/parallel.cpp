#include "termalign/parallel.h"

#include <omp.h>

#include <exception>
#include <mutex>

namespace termalign {

int resolve_threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

int current_thread() { return omp_get_thread_num(); }

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

SerialEigenProducts::SerialEigenProducts() : previous_(omp_get_max_threads()) { omp_set_num_threads(1); }
SerialEigenProducts::~SerialEigenProducts() { omp_set_num_threads(previous_); }

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body) {
  const int thread_count = resolve_threads(threads);
  if (n <= 1 || thread_count == 1 || omp_in_parallel()) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::exception_ptr first_exception;
  std::mutex exception_mutex;
  bool failed = false;
#pragma omp parallel for schedule(dynamic, 1) num_threads(thread_count)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(n); ++i) {
    bool skip;
#pragma omp atomic read
    skip = failed;
    if (skip) continue;
    try {
      body(static_cast<std::size_t>(i));
    } catch (...) {
      std::lock_guard<std::mutex> lock(exception_mutex);
      if (!first_exception) first_exception = std::current_exception();
#pragma omp atomic write
      failed = true;
    }
  }
  if (first_exception) std::rethrow_exception(first_exception);
}

}  // namespace termalign
