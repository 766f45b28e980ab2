// Throughput of the .vec loader on a synthetic 400k x 300 file (about 1.1 GB), with and without a word filter,
// on 1 and 2 threads; and the raw read speed of the same file for comparison.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "termalign/embeddings.h"
#include "termalign/logging.h"

namespace {

constexpr std::size_t kWords = 400'000;
constexpr int kDim = 300;
constexpr std::size_t kWanted = 50'000;
constexpr std::size_t kMostFrequent = 10'000;
constexpr std::uint64_t kSeed = 20220601;

// Word `index`: 3 to 10 pseudo-random lower-case letters, then the index (unique).
std::string synthetic_word(std::size_t index) {
  std::mt19937_64 generator(kSeed ^ (index * 0x9E3779B97F4A7C15ull));
  std::string word(3 + generator() % 8, 'a');
  for (char& letter : word) letter = static_cast<char>('a' + generator() % 26);
  return word + std::to_string(index);
}

// Values as fastText writes them: 5 significant digits, one space after each (trailing space included).
void write_synthetic_vec(const std::string& path) {
  const std::string partial = path + ".partial";
  std::ofstream stream(partial, std::ios::binary);
  stream << kWords << ' ' << kDim << '\n';
  std::mt19937_64 generator(kSeed);
  std::normal_distribution<float> value(0.0f, 0.15f);
  std::string line;
  char number[32];
  for (std::size_t index = 0; index < kWords; ++index) {
    line = synthetic_word(index);
    line += ' ';
    for (int column = 0; column < kDim; ++column) {
      const auto written =
          std::to_chars(number, number + sizeof(number), value(generator), std::chars_format::general, 5);
      line.append(number, written.ptr);
      line += ' ';
    }
    line += '\n';
    stream << line;
  }
  stream.close();
  std::filesystem::rename(partial, path);
}

// Generated once, then reused from /tmp by later runs.
const std::string& synthetic_vec() {
  static const std::string path = [] {
    const std::string directory = "/tmp/termalign-bench";
    std::filesystem::create_directories(directory);
    std::string file = directory + "/synthetic-400k-300-seed" + std::to_string(kSeed) + ".vec";
    if (!std::filesystem::exists(file)) write_synthetic_vec(file);
    return file;
  }();
  return path;
}

termalign::LoadOptions loader_options(int threads, bool filtered) {
  termalign::LoadOptions options;
  options.threads = threads;
  if (filtered) {
    options.restrict_words = true;
    options.most_frequent = kMostFrequent;
    std::mt19937_64 generator(kSeed + 1);
    while (options.wanted.size() < kWanted) options.wanted.insert(synthetic_word(generator() % kWords));
  }
  return options;
}

// Arguments: threads, filtered (0 or 1).
void BM_LoadVec(benchmark::State& state) {
  const std::string& path = synthetic_vec();
  const auto options = loader_options(static_cast<int>(state.range(0)), state.range(1) != 0);
  std::size_t kept = 0;
  for (auto _ : state) {
    const termalign::Embeddings embeddings = termalign::load_vec(path, options);
    kept = embeddings.size();
    benchmark::DoNotOptimize(embeddings.vectors.data());
  }
  const auto file_bytes = static_cast<std::int64_t>(std::filesystem::file_size(path));
  state.SetBytesProcessed(state.iterations() * file_bytes);
  state.counters["rows_kept"] = static_cast<double>(kept);
}

// Reading the (cached) file with read(2) into a 1 MB buffer: the ceiling for any parser.
void BM_ReadFile(benchmark::State& state) {
  const std::string& path = synthetic_vec();
  std::vector<char> buffer(1 << 20);
  std::int64_t total = 0;
  for (auto _ : state) {
    const int descriptor = ::open(path.c_str(), O_RDONLY);
    ssize_t got;
    while ((got = ::read(descriptor, buffer.data(), buffer.size())) > 0) total += got;
    ::close(descriptor);
    benchmark::DoNotOptimize(buffer.data());
  }
  state.SetBytesProcessed(total);
}

}  // namespace

// Wall time for MB/s; the CPU column is the whole process's (all threads), which tells parsing cost apart from
// waiting on a machine shared with other work.
BENCHMARK(BM_ReadFile)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_LoadVec)
    ->ArgNames({"threads", "filtered"})
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

int main(int argc, char** argv) {
  termalign::set_verbosity(-1);  // one info line per load would drown the table
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
