// Guards against running out of memory or leaving debris behind: the memory limit, the loading's guard (the
// scoring's is in scoring/scoring.h), and the SIGINT / SIGTERM handling that removes temporary output files.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "termalign/config.h"
#include "termalign/embeddings.h"

namespace termalign {

// The memory the loaded vectors and the scoring may use, in bytes: the limit a program set (set_memory_limit; the
// CLI sets TERMALIGN_MAX_MEMORY_MB's), otherwise MemAvailable of /proc/meminfo; nullopt when neither is known.
std::optional<std::size_t> memory_limit();
// Sets the limit (nullopt: MemAvailable again). The library reads no environment variable.
void set_memory_limit(std::optional<std::size_t> bytes);
// Whether the limit is the program's (a budget the loading and the scoring share) rather than MemAvailable, which
// already leaves out what the run holds.
bool fixed_memory_limit();
// A number of MiB as typed ("512", "0.5") in bytes; a usage error naming TERMALIGN_MAX_MEMORY_MB unless positive.
std::size_t parse_memory_limit_mb(const std::string& text);

// One load's part of the memory budget, in bytes: what the load holds, raised before it allocates and lowered when
// it frees. Its parts: the vectors it keeps (a matrix as allocated; a .bin.gz's held rows too) and what reading
// the file takes besides (the words read and their duplicate table; the gzip blocks and the unfinished line),
// released when the load ends. Under a limit the program set, the loads of a run share it (LoadOptions::
// shared_charge: both sides), and the scoring has what they keep left of it (guard_scoring_memory's held_bytes);
// under MemAvailable, which leaves out what is held already, each load is checked alone.
class LoadingCharge {
 public:
  enum class Reading { words, buffers };

  LoadingCharge(std::string path, const LoadOptions& options);
  LoadingCharge(const LoadingCharge&) = delete;
  LoadingCharge& operator=(const LoadingCharge&) = delete;
  // Releases the charge, but the vectors kept (keep).
  ~LoadingCharge();

  // The vectors of `words` words will take `bytes`; reading the file, `bytes` for `part`. A charge raised past
  // memory_limit() is a resources error (exit 5) naming the file, before the allocation.
  void vectors(std::size_t words, std::size_t bytes);
  void reading(Reading part, std::size_t bytes);
  // The load is done: its charge is the `bytes` of vectors it keeps, and stays after it.
  void keep(std::size_t bytes);

 private:
  void update();

  std::string path_;
  std::shared_ptr<std::atomic<std::size_t>> total_;  // the run's (shared_charge) or this load's alone
  std::size_t words_ = 0, vector_bytes_ = 0, reading_bytes_[2] = {0, 0}, charged_ = 0;
  bool kept_ = false;
};

// "1.5 MiB": a byte count for messages.
std::string format_bytes(std::size_t bytes);

// glibc's allocator set so that a run's millions of small blocks and many few-MB buffers do not pay a page fault
// each: freed memory stays in the process and the heap's first blocks are in transparent huge pages (the settings
// and what they save: docs/performance.md). Called once by the CLI at start, before any other allocation of note;
// elsewhere (not glibc) it does nothing. A library user may call it likewise.
void tune_allocator();

// SIGINT and SIGTERM: remove the registered temporary files and exit at once with 130 (ErrorKind::interrupted).
// Installed once by the CLI; a library user that wants its own handling does not call it.
void install_interrupt_handlers();

// Temporary files that a signal must remove (AtomicFile's). Registration takes a fixed slot that the handler reads
// without locks; when all slots are taken the file is simply not registered. Unregistering an unknown path is a
// no-op.
void register_temporary_file(const std::string& path);
void unregister_temporary_file(const std::string& path);

}  // namespace termalign
