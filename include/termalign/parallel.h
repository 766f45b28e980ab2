// The one door to parallelism: OpenMP loops whose exceptions are rethrown on the calling thread.
#pragma once

#include <cstddef>
#include <functional>

namespace termalign {

// Number of threads a parallel region will use: `requested` when > 0, else OpenMP's default.
int resolve_threads(int requested);

// Calls body(i) for i in [0, n) on `threads` threads (dynamic schedule). Runs serially when n <= 1, when
// threads == 1 or when already inside a parallel region. The first exception thrown by a body is rethrown
// after the loop; the remaining iterations are skipped.
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body);

// Thread index inside parallel_for's body (0 when serial).
int current_thread();

}  // namespace termalign
