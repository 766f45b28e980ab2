// Interruption of a long call by the program's check (interrupt.h): the check is polled on the calling thread
// only, a check that asks to stop stops the call with the interrupted error and leaves the outputs as they were,
// and a check that never asks changes nothing.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "io/io.h"
#include "shared_data.h"
#include "termalign/aligner.h"
#include "termalign/error.h"
#include "termalign/interrupt.h"
#include "util/parallel.h"

using namespace termalign;
namespace fs = std::filesystem;

namespace {

using termalign_tests::kSource;
const std::string kPrevious = "previous\toutput\n";

// The sample run (its dataset folder) on two threads, writing its submission and scores into `folder`.
AlignConfig sample_run(const fs::path& folder) {
  std::string gold;
  AlignConfig config =
      termalign_tests::dataset_config(kSource + "/models/sample", "vec", kSource + "/data/sample", gold);
  config.output.out = (folder / "submission.tsv").string();
  config.output.scores = (folder / "scores.tsv").string();
  config.scoring.threads = 2;
  return config;
}

// A check polled at every polling point (interval 0) that asks to stop at its `stop_at`th call (0: never), and
// records whether any call came from another thread than the one that installed it.
struct CountingCheck {
  std::size_t stop_at = 0;
  std::size_t calls = 0;
  std::thread::id installer = std::this_thread::get_id();
  bool other_thread = false;

  bool operator()() {
    other_thread = other_thread || std::this_thread::get_id() != installer;
    return ++calls == stop_at;
  }
};

// A fresh folder under the build tree, removed afterwards.
struct Scratch {
  fs::path folder = fs::path(TERMALIGN_BINARY_DIR) / "test_interrupt_outputs";
  Scratch() {
    fs::remove_all(folder);
    fs::create_directories(folder);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(folder, ignored);
  }
};

}  // namespace

TEST_CASE("a check that asks to stop stops align with the interrupted error; one that never asks changes nothing",
          "[interrupt]") {
  const Scratch scratch;
  const AlignConfig config = sample_run(scratch.folder);
  run_align(config);
  const std::string submission = read_file(config.output.out), scores = read_file(config.output.scores);
  REQUIRE(!submission.empty());

  // Polled at every point, never asking: the same files, and the number of polls of a whole run.
  CountingCheck never;
  {
    const ScopedInterruptCheck installed([&never] { return never(); }, std::chrono::milliseconds(0));
    run_align(config);
  }
  CHECK(read_file(config.output.out) == submission);
  CHECK(read_file(config.output.scores) == scores);
  CHECK_FALSE(never.other_thread);
  INFO("polls in a whole run: " << never.calls);
  REQUIRE(never.calls >= 10);

  // Asking halfway: the interrupted error, polled no more after the request, the outputs as they were and no
  // temporary file left.
  for (const std::string& output : {config.output.out, config.output.scores}) std::ofstream(output) << kPrevious;
  CountingCheck halfway;
  halfway.stop_at = never.calls / 2;
  ErrorKind kind = ErrorKind::internal;
  try {
    const ScopedInterruptCheck installed([&halfway] { return halfway(); }, std::chrono::milliseconds(0));
    run_align(config);
    FAIL("align was not interrupted");
  } catch (const Error& error) {
    kind = error.kind();
  }
  CHECK(kind == ErrorKind::interrupted);
  CHECK(halfway.calls == halfway.stop_at);
  CHECK_FALSE(halfway.other_thread);
  CHECK(read_file(config.output.out) == kPrevious);
  CHECK(read_file(config.output.scores) == kPrevious);
  for (const auto& entry : fs::directory_iterator(scratch.folder)) {
    CAPTURE(entry.path().string());
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
  }

  // The request ends with its scope: the same run then completes as before.
  run_align(config);
  CHECK(read_file(config.output.out) == submission);
}

TEST_CASE("a parallel loop's threads stop at their next polling point once the check asked", "[interrupt]") {
  constexpr std::size_t kItems = 1000;
  std::atomic<std::size_t> done{0};
  CountingCheck check;
  check.stop_at = 3;
  ErrorKind kind = ErrorKind::internal;
  {
    const ScopedInterruptCheck installed([&check] { return check(); }, std::chrono::milliseconds(0));
    try {
      parallel_for(kItems, 2, [&](std::size_t) {
        throw_if_interrupted();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++done;
      });
    } catch (const Error& error) {
      kind = error.kind();
    }
    // Every later poll in the scope says so too, without calling the check again.
    CHECK_THROWS_AS(throw_if_interrupted(), Error);
  }
  CHECK(kind == ErrorKind::interrupted);
  CHECK(check.calls == 3);
  CHECK_FALSE(check.other_thread);
  // The calling thread polled 3 items; the other thread's items after the request were skipped.
  CHECK(done < kItems / 2);
  CHECK_NOTHROW(throw_if_interrupted());  // no scope any more
}
