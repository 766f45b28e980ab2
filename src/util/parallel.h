// The one door to parallelism: OpenMP loops whose exceptions are rethrown on the calling thread.
#pragma once

#include <cstddef>
#include <functional>

namespace termalign {

// Number of threads a parallel region will use: `requested` when > 0, else OpenMP's default.
int resolve_threads(int requested);

// Calls body(i) for i in [0, n) on `threads` threads (dynamic schedule). Runs serially when n <= 1, when
// threads == 1 or when already inside a parallel region. The first exception thrown by a body is rethrown
// after the loop; the remaining iterations are skipped. The loop's threads share the calling thread's interruption
// check (interrupt.h): once it asked to stop, each stops at its next polling point with Error(interrupted), and
// that error is rethrown as any other.
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body);

// parallel_for(n, threads, body) while the calling thread first runs alongside() (serially: alongside() first):
// for a serial step, such as an SVD, that the loop need not wait for. The calling thread joins the loop when
// alongside() returns. alongside()'s exception is rethrown first, else the loop's first.
void parallel_for_alongside(std::size_t n, int threads, const std::function<void(std::size_t)>& body,
                            const std::function<void()>& alongside);

// Runs first() and second() at once (on two threads when `threads` allows, serially otherwise), then rethrows
// first()'s exception if it threw, else second()'s: the same error whichever finished first. For the two
// languages' independent steps.
void run_both(const std::function<void()>& first, const std::function<void()>& second, int threads);

// Runs body() once on each thread of a parallel region of `threads` threads (0: OpenMP's default), for set-up that
// belongs to each thread (such as its allocator arena). The first exception thrown is rethrown after the region.
void on_each_thread(int threads, const std::function<void()>& body);

// The calling thread's index in the library's innermost loop (parallel_for, parallel_for_alongside,
// on_each_thread): below the loop's thread count, 0 when the loop runs serially, also when the library is called
// from inside a host program's parallel region. Indexes per-thread buffers.
int current_thread();

// Eigen parallelises a matrix product by itself unless it runs inside a parallel region of several threads, and a
// product's blocking (so its rounding) depends on its thread count. While one of these lives, the calling thread's
// OpenMP default is 1, so products on the serial path of parallel_for (one thread, or one item) are
// single-threaded as they are on its parallel path: results that do not depend on the thread count. Construct it
// after resolving the thread count.
class SerialEigenProducts {
 public:
  SerialEigenProducts();
  ~SerialEigenProducts();
  SerialEigenProducts(const SerialEigenProducts&) = delete;
  SerialEigenProducts& operator=(const SerialEigenProducts&) = delete;

 private:
  int previous_;
};

}  // namespace termalign
