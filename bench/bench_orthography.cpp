// The orthographic candidate search of `align` (orthographic_neighbours) on two term lists: its wall time, the
// number of matches and a checksum of them (so that a faster search can be shown to return the same matches).
//
//   build/bench_orthography SRC_TERMS TGT_TERMS [--m 5] [--budget N] [--threads T] [--repeats R]
//
// The lists are read as `align` reads them (one term per line); the profiles are those of the default options
// (transliterated Latin spellings). The search is timed alone, after the profiles; the best of R runs is printed.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "termalign/lexicon.h"
#include "text/spelling.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SRC_TERMS TGT_TERMS [--m 5] [--budget N] [--threads T] [--repeats R]\n",
                 argv[0]);
    return 2;
  }
  std::size_t m = 5, budget = termalign::kOrthographicBudget, repeats = 3;
  int threads = 0;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--m")
      m = std::stoul(argv[i + 1]);
    else if (flag == "--budget")
      budget = std::stoul(argv[i + 1]);
    else if (flag == "--threads")
      threads = std::stoi(argv[i + 1]);
    else if (flag == "--repeats")
      repeats = std::stoul(argv[i + 1]);
  }
  const auto sources = termalign::ngram_profiles(termalign::read_term_list(argv[1]).terms, true, threads);
  const auto targets = termalign::ngram_profiles(termalign::read_term_list(argv[2]).terms, true, threads);
  double best = 1e300;
  std::vector<termalign::OrthographicMatch> matches;
  for (std::size_t run = 0; run < repeats; ++run) {
    const auto start = std::chrono::steady_clock::now();
    matches = termalign::orthographic_neighbours(sources, targets, m, 0.3, threads, budget);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::uint64_t checksum = 1469598103934665603ull;  // FNV-1a over (source, target, similarity bits)
  for (const auto& match : matches) {
    std::uint32_t bits = 0;
    static_assert(sizeof bits == sizeof match.similarity);
    std::copy_n(reinterpret_cast<const char*>(&match.similarity), sizeof bits, reinterpret_cast<char*>(&bits));
    for (const std::uint32_t value : {match.source, match.target, bits})
      checksum = (checksum ^ value) * 1099511628211ull;
  }
  std::printf("%zu x %zu terms, m %zu, budget %zu: %.3f s (best of %zu), %zu matches, checksum %016llx\n",
              sources.size(), targets.size(), m, budget, best, repeats, matches.size(),
              static_cast<unsigned long long>(checksum));
  return 0;
}
