// The parallel helpers: errors reach the caller the same way whatever the threads do.
#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "termalign/parallel.h"

TEST_CASE("run_both runs both tasks and reports the first task's error first", "[parallel]") {
  for (const int threads : {1, 2}) {
    INFO("threads " << threads);
    bool first_ran = false, second_ran = false;
    termalign::run_both([&] { first_ran = true; }, [&] { second_ran = true; }, threads);
    CHECK((first_ran && second_ran));

    // The second task fails at once, the first later: the first's error is the one reported.
    const auto both_fail = [&] {
      termalign::run_both(
          [] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            throw std::runtime_error("first");
          },
          [] { throw std::runtime_error("second"); }, threads);
    };
    CHECK_THROWS_WITH(both_fail(), "first");
    CHECK_THROWS_WITH(termalign::run_both([] {}, [] { throw std::runtime_error("second"); }, threads), "second");
  }
}
