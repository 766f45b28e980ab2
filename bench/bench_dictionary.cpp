// Reading bilingual dictionaries (--dictionary): the two en-de FreeDict databases (Ding, 460k and 519k headwords)
// read into one Dictionary, wall time and the process's peak resident memory, beside the reference of only
// decompressing their .dict.dz texts (the build's inflater: what any reader of them must do). Goal: under 2 s and
// 200 MB.
//
//   build/bench_dictionary [--pair en-de] [DATABASE...]   (default: /usr/share/dictd/freedict-eng-deu and -deu-eng,
//                                                          dict-freedict-eng-deu and dict-freedict-deu-eng)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "io/dictionary.h"
#include "io/gzip_stream.h"
#include "termalign/error.h"
#include "termalign/logging.h"

namespace {

double peak_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string pair = "en-de";
  std::vector<std::string> databases;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--pair" && i + 1 < argc) {
      pair = argv[++i];
    } else {
      databases.push_back(word);
    }
  }
  if (databases.empty()) databases = {"/usr/share/dictd/freedict-eng-deu", "/usr/share/dictd/freedict-deu-eng"};
  for (const std::string& base : databases) {
    if (!std::filesystem::exists(base + ".index")) {
      std::printf("skipped: %s.index is not there (apt-get install dict-freedict-eng-deu dict-freedict-deu-eng)\n",
                  base.c_str());
      return 0;
    }
  }
  termalign::logger().set_level(spdlog::level::warn);
  const double start_mib = peak_mib();
  try {
    // The reference: decompressing the texts alone, a piece at a time.
    auto start = std::chrono::steady_clock::now();
    std::size_t bytes = 0;
    for (const std::string& base : databases) {
      termalign::DecompressedChunks chunks(base + ".dict.dz");
      std::string piece;
      while (chunks.next(piece)) {
        bytes += piece.size();
        piece.clear();
      }
    }
    const double reference = seconds_since(start);
    start = std::chrono::steady_clock::now();
    const termalign::Dictionary dictionary = termalign::read_dictionaries(databases, pair);
    const double read = seconds_since(start);
    std::printf("| measure | read_dictionaries | reference: decompression alone (%s) |\n|---|---|---|\n",
                termalign::detail::gzip_inflater());
    std::printf("| %zu databases, %.1f MB of text: wall | %.2f s | %.2f s (%.1fx) |\n", databases.size(),
                static_cast<double>(bytes) / 1e6, read, reference, read / reference);
    std::printf("| pairs / source phrases / target phrases | %zu / %zu / %zu | |\n", dictionary.size(),
                dictionary.sources().size(), dictionary.targets().size());
    std::printf("| peak resident memory of the process | %.0f MiB (%.0f MiB at the start) | |\n", peak_mib(),
                start_mib);
  } catch (const termalign::Error& error) {
    std::fprintf(stderr, "bench_dictionary: %s\n", error.what());
    return error.exit_code();
  }
  return 0;
}
