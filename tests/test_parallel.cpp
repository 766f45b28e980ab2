// The parallel helpers: errors reach the caller the same way whatever the threads do.
#include <omp.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "util/parallel.h"

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

TEST_CASE("parallel_for_alongside runs every item once and alongside() once, on the calling thread",
          "[parallel]") {
  for (const int threads : {1, 2, 3}) {
    INFO("threads " << threads);
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}}) {
      INFO("items " << n);
      std::vector<int> runs(n, 0);
      int alongside_runs = 0, alongside_thread = -1;
      bool items_before_alongside = false;  // serially, alongside() must come before any item
      termalign::parallel_for_alongside(
          n, threads, [&](std::size_t i) { ++runs[i]; },
          [&] {
            ++alongside_runs;
            alongside_thread = termalign::current_thread();
            if (threads == 1) items_before_alongside = std::count(runs.begin(), runs.end(), 1) > 0;
          });
      CHECK(alongside_runs == 1);
      CHECK(alongside_thread == 0);
      CHECK(std::count(runs.begin(), runs.end(), 1) == static_cast<std::ptrdiff_t>(n));
      CHECK_FALSE(items_before_alongside);
    }
  }
}

TEST_CASE("parallel_for_alongside reports alongside()'s error first, else the loop's", "[parallel]") {
  for (const int threads : {1, 2}) {
    INFO("threads " << threads);
    const auto both_fail = [&] {
      termalign::parallel_for_alongside(
          100, threads, [](std::size_t) { throw std::runtime_error("item"); },
          [] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            throw std::runtime_error("alongside");
          });
    };
    CHECK_THROWS_WITH(both_fail(), "alongside");
    CHECK_THROWS_WITH(termalign::parallel_for_alongside(
                          100, threads,
                          [](std::size_t i) {
                            if (i == 42) throw std::runtime_error("item");
                          },
                          [] {}),
                      "item");
  }
}

TEST_CASE("on_each_thread runs the body once on each thread of the region", "[parallel]") {
  for (const int threads : {1, 2, 3}) {
    INFO("threads " << threads);
    std::mutex mutex;
    std::vector<int> seen;
    termalign::on_each_thread(threads, [&] {
      std::lock_guard<std::mutex> lock(mutex);
      seen.push_back(termalign::current_thread());
    });
    std::sort(seen.begin(), seen.end());
    std::vector<int> expected(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) expected[static_cast<std::size_t>(t)] = t;
    CHECK(seen == expected);
    // One thread fails: its error reaches the caller after the others ran.
    int ran = 0;
    const auto one_fails = [&] {
      termalign::on_each_thread(threads, [&] {
        std::lock_guard<std::mutex> lock(mutex);
        ++ran;
        if (termalign::current_thread() == threads - 1) throw std::runtime_error("last thread");
      });
    };
    CHECK_THROWS_WITH(one_fails(), "last thread");
    CHECK(ran == threads);
  }
}

TEST_CASE("current_thread stays below a loop's threads, also inside a host program's parallel region",
          "[parallel]") {
  // The library's own loop: every slot below its thread count, and 0 again once it is over.
  std::mutex mutex;
  std::vector<int> slots;
  termalign::parallel_for(64, 2, [&](std::size_t) {
    std::lock_guard<std::mutex> lock(mutex);
    slots.push_back(termalign::current_thread());
  });
  CHECK(*std::max_element(slots.begin(), slots.end()) < 2);
  CHECK(termalign::current_thread() == 0);
  // A host region of 4 threads calls the library: its loops run serially in each host thread, whose OpenMP
  // thread number (up to 3) would overrun buffers sized for the loop's 2 threads.
  std::vector<int> highest(4, -1), host_threads(4, -1);
#pragma omp parallel num_threads(4)
  {
    const int host = omp_get_thread_num();
    int seen = -1;
    termalign::parallel_for(16, 2, [&](std::size_t) { seen = std::max(seen, termalign::current_thread()); });
    termalign::parallel_for_alongside(
        4, 2, [&](std::size_t) { seen = std::max(seen, termalign::current_thread()); },
        [&] { seen = std::max(seen, termalign::current_thread()); });
    highest[static_cast<std::size_t>(host)] = seen;
    host_threads[static_cast<std::size_t>(host)] = host;
  }
  CHECK(highest == std::vector<int>(4, 0));
  CHECK(host_threads == std::vector<int>{0, 1, 2, 3});  // the host region did run 4 threads
}
