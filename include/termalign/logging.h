// Logging: a thin wrapper over spdlog that writes to stderr only.
#pragma once

#include <spdlog/logger.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace termalign {

// The library's logger ("termalign"), created on first use with a stderr sink. Library code never prints to stdout.
spdlog::logger& logger();

// -1 quiet (warnings and errors only), 0 info (default), 1 debug, 2 trace. The environment variable
// TERMALIGN_LOG_LEVEL (an spdlog level name) overrides it when set.
void set_verbosity(int verbosity);

// Starts every log line with "[prefix] " (the MPI rank, say); an empty prefix removes it.
void set_log_prefix(const std::string& prefix);

// Logs "what: done/total (pct%, elapsed s, about N s left)" at info level at most once every `interval` (by
// default progress_interval()), and "what: done in S s" at debug level on finish().
class Progress {
 public:
  Progress(std::string what, std::size_t total);
  Progress(std::string what, std::size_t total, std::chrono::milliseconds interval);
  // Thread-safe; cheap when no line is due. A polling point of interrupt.h: throws Error(interrupted) once the
  // program's check asked to stop.
  void advance(std::size_t amount = 1);
  void finish();

 private:
  void count(std::size_t amount);  // adds `amount`, logging a line when one is due

  std::string what_;
  std::size_t total_;
  std::chrono::milliseconds interval_;
  std::size_t done_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
  bool finished_ = false;
};

// The interval between a Progress's lines when it is given none: 5 s, so that only long steps log their progress
// (tests set 0: a line at every step).
std::chrono::milliseconds progress_interval();
void set_progress_interval(std::chrono::milliseconds interval);

}  // namespace termalign
