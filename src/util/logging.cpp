#include "termalign/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "termalign/interrupt.h"

namespace termalign {

namespace {
constexpr const char* kPattern = "[%H:%M:%S.%e] [%^%l%$] ";
}

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    // Not registered in spdlog's global registry: a program with a logger of its own named "termalign" (or one
    // that drops all loggers) is left alone, and the library's stays its own.
    auto created =
        std::make_shared<spdlog::logger>("termalign", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    created->set_pattern(std::string(kPattern) + "%v");
    created->set_level(spdlog::level::info);
    return created;
  }();
  return *instance;
}

void set_verbosity(int verbosity) {
  spdlog::level::level_enum level = spdlog::level::info;
  if (verbosity < 0) level = spdlog::level::warn;
  if (verbosity == 1) level = spdlog::level::debug;
  if (verbosity >= 2) level = spdlog::level::trace;
  // spdlog reads a name it does not know as "off": a mistyped level would silence every line, errors included.
  const char* from_environment = std::getenv("TERMALIGN_LOG_LEVEL");
  bool unknown = false;
  if (from_environment) {
    const spdlog::level::level_enum named = spdlog::level::from_str(from_environment);
    unknown = named == spdlog::level::off && std::string(from_environment) != "off";
    if (!unknown) level = named;
  }
  logger().set_level(level);
  if (unknown) {
    logger().warn(
        "TERMALIGN_LOG_LEVEL='{}' is not a level (trace, debug, info, warning, error, critical or off): "
        "ignored",
        from_environment);
  }
}

void set_log_prefix(const std::string& prefix) {
  // spdlog patterns treat % as a flag: a literal one is written %%.
  std::string literal;
  for (char c : prefix) literal += c == '%' ? std::string("%%") : std::string(1, c);
  logger().set_pattern(std::string(kPattern) + (prefix.empty() ? "" : "[" + literal + "] ") + "%v");
}

namespace {
std::mutex progress_mutex;
std::atomic<std::int64_t> default_progress_interval{5000};  // milliseconds
}  // namespace

std::chrono::milliseconds progress_interval() {
  return std::chrono::milliseconds(default_progress_interval.load());
}

void set_progress_interval(std::chrono::milliseconds interval) { default_progress_interval = interval.count(); }

Progress::Progress(std::string what, std::size_t total) : Progress(std::move(what), total, progress_interval()) {}

Progress::Progress(std::string what, std::size_t total, std::chrono::milliseconds interval)
    : what_(std::move(what)),
      total_(total),
      interval_(interval),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void Progress::advance(std::size_t amount) {
  count(amount);
  // Outside the lock: a program's check may wait for a lock of its own (the Python module's takes the GIL), and no
  // lock of the library may be held meanwhile (interrupt.h).
  throw_if_interrupted();
}

void Progress::count(std::size_t amount) {
  std::lock_guard<std::mutex> lock(progress_mutex);
  done_ += amount;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < interval_) return;
  last_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double fraction = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  if (done_ > 0 && done_ < total_) {
    logger().info("{}: {}/{} ({:.0f}%, {:.1f} s, about {:.0f} s left)", what_, done_, total_, 100.0 * fraction,
                  seconds, seconds * (1.0 - fraction) / fraction);
  } else {
    logger().info("{}: {}/{} ({:.0f}%, {:.1f} s)", what_, done_, total_, 100.0 * fraction, seconds);
  }
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(progress_mutex);
  if (finished_) return;
  finished_ = true;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  logger().debug("{}: done in {:.2f} s", what_, seconds);
}

}  // namespace termalign
