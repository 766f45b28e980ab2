// termalign: bilingual terminology alignment with word embeddings (BUCC 2022).
#include <CLI/CLI.hpp>
#ifdef __GLIBC__
#include <malloc.h>
#include <sys/mman.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <vector>

#include "commands.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "termalign/parallel.h"
#include "termalign/resources.h"
#include "termalign/scoring.h"
#ifdef TERMALIGN_WITH_MPI
#include "termalign/mpi_group.h"
#endif

namespace {

int run(int argc, char** argv, const termalign::ProcessGroup& group);

// Keeps freed memory in the process for the next allocations instead of giving it back to the system at once:
// fresh memory costs a page fault per 4 KiB (13 us each on the 2-core benchmark VM), and a run allocates and frees
// many buffers of a few MB (term lists, seed rows, SVD workspaces, tile buffers). Blocks up to 32 MiB come from
// the heap, which grows by 16 MiB at a time and is trimmed only when 512 MiB lie free at its top; larger blocks
// (the word vectors of a large .bin) are still mapped and unmapped on their own.
void keep_freed_memory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

// Backs the first blocks the heap serves with transparent huge pages, as glibc's tunable glibc.malloc.hugetlb=1
// would (tunables come only from the environment): each thread's allocator arena (the main thread's and one per
// OpenMP thread) is grown once, without writing to it, by blocks just under the mmap threshold, whose 2 MiB-aligned
// interiors are advised for huge pages; the blocks are freed at once and stay in their arenas (keep_freed_memory's
// trim threshold) for the allocations to come. Nothing is written, so nothing is resident until it is used. The
// term lists, word sets and hash tables of a run are millions of small blocks: in 4 KiB pages they fault one page
// at a time. At 20k x 20k terms on the 2-core benchmark VM, align's page faults fell from 16,800 to 7,100 (2
// threads) and from 13,900 to 5,800 (1 thread), its peak memory rose by 5 MiB; see the README's Performance section.
void reserve_heap_in_huge_pages() {
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  constexpr std::size_t kBlock = std::size_t{30} << 20;  // under the 32 MiB mmap threshold: from the arena
  constexpr std::size_t kMainBlocks = 2, kThreadBlocks = 1;
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  termalign::on_each_thread(0, [] {
    std::vector<void*> blocks;
    const std::size_t count = termalign::current_thread() == 0 ? kMainBlocks : kThreadBlocks;
    for (std::size_t i = 0; i < count; ++i) {
      void* block = std::malloc(kBlock);
      if (block == nullptr) break;
      blocks.push_back(block);
      const auto start = reinterpret_cast<std::uintptr_t>(block);
      const std::uintptr_t begin = (start + kHugePage - 1) & ~(kHugePage - 1);
      const std::uintptr_t end = (start + kBlock) & ~(kHugePage - 1);
      ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only: failure is harmless
    }
    for (void* block : blocks) std::free(block);
  });
#endif
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();
  reserve_heap_in_huge_pages();
  termalign::install_interrupt_handlers();  // SIGINT / SIGTERM: remove temporary files, exit 130
#ifdef TERMALIGN_WITH_MPI
  if (termalign::launched_by_mpi()) {
    const termalign::MpiSession session(&argc, &argv);
    const termalign::ProcessGroup& group = session.group();
    if (group.size() > 1) termalign::set_log_prefix("rank " + std::to_string(group.rank()));
    const int code = run(argc, argv, group);
    // A rank that failed has said why; ending every rank keeps the others from waiting for it forever.
    if (code != 0) session.abort(code);
    return 0;
  }
#endif
  return run(argc, argv, termalign::single_process());
}

namespace {

int run(int argc, char** argv, const termalign::ProcessGroup& group) {
  CLI::App app{"termalign: align bilingual terminology with word embeddings (BUCC 2022 shared task)"};
  app.require_subcommand(1);
  app.fallthrough();
  // The similarity kernel is chosen at run time (OpenBLAS's or Eigen's, scoring.h): --version says which.
  app.set_version_flag("--version", std::function<std::string()>([] {
    return "termalign 0.1.0 (similarity tiles: " + termalign::similarity_kernel() + ")";
  }));
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "Debug-level logging on stderr");
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors on stderr");
  app.parse_complete_callback([&] {
    termalign::set_verbosity(quiet ? -1 : verbose ? 1 : 0);
    // Every rank runs the same steps: rank 0 tells how they go, the others only their errors (all with -v).
    if (!group.is_root() && !verbose) termalign::logger().set_level(spdlog::level::err);
  });

  termalign::cli::add_evaluate_command(app);
  termalign::cli::add_align_command(app, group);
  termalign::cli::add_train_reranker_command(app);
  termalign::cli::add_train_vectors_command(app);
  termalign::cli::add_ablate_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // CLI11's own codes (105, 106, ...) would hide the documented usage code; --help and --version exit 0.
    return app.exit(error) == 0 ? 0 : static_cast<int>(termalign::ErrorKind::usage);
  } catch (const termalign::Error& error) {
    termalign::logger().error("{}", error.what());
    return error.exit_code();
  } catch (const std::bad_alloc&) {
    termalign::logger().error("out of memory");
    return static_cast<int>(termalign::ErrorKind::resources);
  } catch (const std::exception& error) {
    termalign::logger().error("internal error: {}", error.what());
    return static_cast<int>(termalign::ErrorKind::internal);
  }
  return 0;
}

}  // namespace
