// Stopping a long call from the program that embeds the library: the Python module stops a call at Ctrl-C. The
// library installs nothing on its own (the CLI's SIGINT handler exits at once: resources.h).
#pragma once

#include <chrono>
#include <functional>
#include <memory>

namespace termalign {

// While one lives, the library's calls made on the thread that created it call `check` at their polling points
// (each step of a long loop's progress, each refinement iteration, boosting round and training fold), at most once
// every `interval` and only on that thread (the calling thread of a parallel loop takes part in it). When `check`
// returns true, the call stops within the current block of work: its parallel loops skip their remaining items and
// it throws Error(ErrorKind::interrupted) on the calling thread; outputs go through temporary files, which are
// removed, so existing ones are left as they were. `check` is called with no lock of the library held. Scopes nest
// (the innermost one is polled); the request to stop ends with its scope.
class ScopedInterruptCheck {
 public:
  explicit ScopedInterruptCheck(std::function<bool()> check,
                                std::chrono::milliseconds interval = std::chrono::milliseconds(100));
  ~ScopedInterruptCheck();
  ScopedInterruptCheck(const ScopedInterruptCheck&) = delete;
  ScopedInterruptCheck& operator=(const ScopedInterruptCheck&) = delete;

  struct State;

 private:
  std::unique_ptr<State> state_;
  State* enclosing_;
};

// A polling point: on the thread that installed the calling thread's check, calls it when its interval has passed
// since the last call; then throws Error(ErrorKind::interrupted) if it asked to stop. A thread-local read without
// a check, a relaxed atomic one on the other threads of a parallel loop. Call it outside parallel regions or in
// the body of a loop of parallel.h, which rethrows it after the loop, and never with a lock held.
void throw_if_interrupted();

}  // namespace termalign
