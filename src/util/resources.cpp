#include "util/resources.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <vector>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/huge_pages.h"
#include "util/parallel.h"

namespace termalign {

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
std::optional<std::size_t> mem_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  std::size_t kilobytes = 0;
  while (meminfo >> key >> kilobytes >> unit) {
    if (key == "MemAvailable:") return kilobytes * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::string format_bytes(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
  return text;
}

namespace {
std::mutex memory_limit_mutex;
std::optional<std::size_t> program_limit;  // set_memory_limit's
}  // namespace

std::size_t parse_memory_limit_mb(const std::string& text) {
  double megabytes = 0;
  const char* begin = text.c_str();
  const char* end = begin + text.size();
  const auto parsed = std::from_chars(begin, end, megabytes);
  if (text.empty() || parsed.ec != std::errc() || parsed.ptr != end || !std::isfinite(megabytes) ||
      megabytes <= 0 ||
      megabytes * static_cast<double>(kMiB) >= static_cast<double>(std::numeric_limits<std::size_t>::max())) {
    throw_usage_error("TERMALIGN_MAX_MEMORY_MB must be a positive number of MiB (got '" + text + "').");
  }
  return static_cast<std::size_t>(megabytes * static_cast<double>(kMiB));
}

void set_memory_limit(std::optional<std::size_t> bytes) {
  std::lock_guard<std::mutex> lock(memory_limit_mutex);
  program_limit = bytes;
}

// Whether the limit is the program's (a budget the run's parts share) rather than MemAvailable, which already
// leaves out what the run holds.
bool fixed_memory_limit() {
  std::lock_guard<std::mutex> lock(memory_limit_mutex);
  return program_limit.has_value();
}

std::optional<std::size_t> memory_limit() {
  {
    std::lock_guard<std::mutex> lock(memory_limit_mutex);
    if (program_limit) return program_limit;
  }
  return mem_available();
}

LoadingCharge::LoadingCharge(std::string path, const LoadOptions& options)
    : path_(std::move(path)),
      total_(options.shared_charge ? options.shared_charge : std::make_shared<std::atomic<std::size_t>>(0)) {}

LoadingCharge::~LoadingCharge() {
  if (!kept_) total_->fetch_sub(charged_);
}

void LoadingCharge::vectors(std::size_t words, std::size_t bytes) {
  words_ = words;
  vector_bytes_ = bytes;
  update();
}

void LoadingCharge::reading(Reading part, std::size_t bytes) {
  std::size_t& held = reading_bytes_[static_cast<int>(part)];
  if (held == bytes) return;
  held = bytes;
  update();
}

void LoadingCharge::keep(std::size_t bytes) {
  vector_bytes_ = bytes;
  reading_bytes_[0] = reading_bytes_[1] = 0;
  update();
  kept_ = true;
}

void LoadingCharge::update() {
  const std::size_t reading = reading_bytes_[0] + reading_bytes_[1], bytes = vector_bytes_ + reading;
  // What the run's other loads hold: one budget for both sides (the atomic's wrap-around lowers it too).
  std::size_t others = total_->fetch_add(bytes - charged_) - charged_;
  const bool raised = bytes > charged_;
  charged_ = bytes;
  if (!raised) return;
  if (!fixed_memory_limit()) others = 0;  // MemAvailable leaves it out already
  const auto limit = memory_limit();
  if (!limit || others + bytes <= *limit) return;
  const std::string needs = vector_bytes_ == 0
                                ? "reading the file needs " + format_bytes(bytes)
                                : "loading the vectors of " + std::to_string(words_) + " words needs " +
                                      format_bytes(bytes) +
                                      (reading > 0 ? " (" + format_bytes(vector_bytes_) + " of vectors, " +
                                                         format_bytes(reading) + " to read the file)"
                                                   : std::string());
  throw Error(ErrorKind::resources,
              path_ + ": " + needs +
                  (others > 0 ? " beside the other side's " + format_bytes(others) : std::string()) +
                  ", but only " + format_bytes(*limit) +
                  " may be used (TERMALIGN_MAX_MEMORY_MB, or the available memory; one budget for both sides and "
                  "the scoring): raise TERMALIGN_MAX_MEMORY_MB or free memory" +
                  (vector_bytes_ == 0 ? "." : ", or keep fewer words (--most-frequent)."));
}

// Signal handling. The handler may only use async-signal-safe calls: it reads fixed slots and calls unlink and
// _exit.
namespace {

constexpr std::size_t kSlots = 64, kPathBytes = 4096;
enum SlotState : int { kFree = 0, kBusy = 1, kRegistered = 2 };
struct TemporarySlot {
  std::atomic<int> state{kFree};
  char path[kPathBytes];
};
TemporarySlot temporary_slots[kSlots];

void write_stderr(const char* text) {
  const std::size_t length = std::strlen(text);
  if (::write(STDERR_FILENO, text, length) < 0) return;  // nothing left to do if stderr is gone
}

extern "C" void on_interrupt(int signal_number) {
  for (TemporarySlot& slot : temporary_slots) {
    if (slot.state.load(std::memory_order_acquire) == kRegistered) ::unlink(slot.path);
  }
  write_stderr(signal_number == SIGINT
                   ? "termalign: interrupted by SIGINT; stopped, removed its temporary files and "
                     "left existing output files as they were.\n"
                   : "termalign: interrupted by SIGTERM; stopped, removed its temporary files "
                     "and left existing output files as they were.\n");
  ::_exit(static_cast<int>(ErrorKind::interrupted));
}

}  // namespace

void tune_allocator() {
#ifdef __GLIBC__
  constexpr std::size_t kMmapThreshold = std::size_t{32} << 20;
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold));
  mallopt(M_TOP_PAD, 16 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  constexpr std::size_t kBlock = kMmapThreshold - (std::size_t{2} << 20);  // from the arena, not mapped apart
  constexpr std::size_t kCallerBlocks = 2, kThreadBlocks = 1;
  on_each_thread(0, [] {
    std::vector<void*> blocks;
    const std::size_t count = current_thread() == 0 ? kCallerBlocks : kThreadBlocks;
    for (std::size_t i = 0; i < count; ++i) {
      void* block = std::malloc(kBlock);
      if (block == nullptr) break;
      blocks.push_back(block);
      detail::advise_huge_pages(block, kBlock);
    }
    for (void* block : blocks) std::free(block);
  });
#endif
}

void install_interrupt_handlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_interrupt;
  sigfillset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM}) ::sigaction(signal_number, &action, nullptr);
}

void register_temporary_file(const std::string& path) {
  if (path.size() >= kPathBytes) return;
  for (TemporarySlot& slot : temporary_slots) {
    int expected = kFree;
    if (!slot.state.compare_exchange_strong(expected, kBusy, std::memory_order_acquire)) continue;
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.state.store(kRegistered, std::memory_order_release);
    return;
  }
  logger().debug("{}: too many temporary files to register for removal on SIGINT", path);
}

void unregister_temporary_file(const std::string& path) {
  for (TemporarySlot& slot : temporary_slots) {
    int expected = kRegistered;
    if (slot.state.load(std::memory_order_acquire) != kRegistered || path != slot.path) continue;
    if (slot.state.compare_exchange_strong(expected, kBusy, std::memory_order_acquire)) {
      slot.state.store(kFree, std::memory_order_release);
      return;
    }
  }
}

}  // namespace termalign
