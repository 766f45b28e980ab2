// Guards against running out of memory or leaving debris behind: the memory limit, the loading's guard (the
// scoring's is in scoring/scoring.h), and the SIGINT / SIGTERM handling that removes temporary output files.
#pragma once

#include <cstddef>
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

// Before a loader allocates the `words` x `dim` floats it keeps of `path` (`charged`: the bytes this load was
// already charged, updated; a load that grows calls it again): a resources error (exit 5) naming the file when
// they, with the other side's (options.shared_charge) under a limit the program set, exceed memory_limit(), which
// bounds the loading as it bounds the scoring.
void guard_loading_memory(const std::string& path, std::size_t words, std::size_t dim, const LoadOptions& options,
                          std::size_t& charged);

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
