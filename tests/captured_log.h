// What the library logs, for tests of warnings and progress lines.
#pragma once

#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "termalign/logging.h"

// Collects what the library logs while it lives.
class CapturedLog {
 public:
  CapturedLog() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_)) {
    sink_->set_pattern("%l %v");
    termalign::logger().sinks().push_back(sink_);
  }
  ~CapturedLog() {
    auto& sinks = termalign::logger().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  // The messages logged at `level` ("info", "warning", ...) that contain `text`, in order.
  std::vector<std::string> lines_with(const std::string& level, const std::string& text) const {
    std::istringstream lines(stream_.str());
    std::vector<std::string> found;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(level + " ", 0) == 0 && line.find(text) != std::string::npos)
        found.push_back(line.substr(level.size() + 1));
    }
    return found;
  }
  // How many warning lines contain `text`.
  std::size_t warnings_with(const std::string& text) const { return lines_with("warning", text).size(); }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

// Sets the default interval of progress lines (termalign::set_progress_interval) while it lives.
class ProgressInterval {
 public:
  explicit ProgressInterval(std::chrono::milliseconds interval) : previous_(termalign::progress_interval()) {
    termalign::set_progress_interval(interval);
  }
  ~ProgressInterval() { termalign::set_progress_interval(previous_); }
  ProgressInterval(const ProgressInterval&) = delete;
  ProgressInterval& operator=(const ProgressInterval&) = delete;

 private:
  std::chrono::milliseconds previous_;
};
