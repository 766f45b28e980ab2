// The corpus pass of the corpus evidence (gather_corpus_statistics) on a synthetic corpus of 10 million tokens:
// its wall time on 1 and 2 threads, with the progress lines it logs. Issue 20's bar: at most 10 s on 2 threads.
//
//   build/bench_corpus [--tokens N] [--terms N] [--keep FILE]
//
// The corpus: sentences of 5-35 tokens drawn from a Zipf distribution over 50,000 made-up words (seeded), with
// punctuation and accented letters; the term list: 5,000 distinct terms of 1-4 content words (Zipf ranks past 50).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "io/corpus.h"
#include "termalign/logging.h"

namespace {

std::string made_up_word(std::mt19937& generator) {
  static const char* const syllables[] = {"ka",  "lo",  "mi",  "ne",  "ru",  "sa",  "ti",  "vo", "ze",
                                          "pha", "qui", "dro", "bel", "cor", "tan", "gré", "mü", "ñu"};
  std::uniform_int_distribution<int> count(1, 4), pick(0, 17);
  std::string word;
  for (int i = count(generator); i > 0; --i) word += syllables[pick(generator)];
  return word;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t tokens = 10'000'000, terms = 5000;
  std::string keep;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--tokens")
      tokens = std::stoul(argv[i + 1]);
    else if (flag == "--terms")
      terms = std::stoul(argv[i + 1]);
    else if (flag == "--keep")
      keep = argv[i + 1];
  }
  std::mt19937 generator(2022);
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 50000; ++i) vocabulary.push_back(made_up_word(generator) + std::to_string(i % 97));
  // Zipf (s = 1) over the vocabulary by its cumulative distribution.
  std::vector<double> cumulative(vocabulary.size());
  double sum = 0;
  for (std::size_t r = 0; r < vocabulary.size(); ++r) cumulative[r] = sum += 1.0 / static_cast<double>(r + 1);
  std::uniform_real_distribution<double> uniform(0, sum);
  const auto draw = [&] {
    return static_cast<std::size_t>(std::lower_bound(cumulative.begin(), cumulative.end(), uniform(generator)) -
                                    cumulative.begin());
  };
  const std::string path =
      keep.empty() ? (std::filesystem::temp_directory_path() / "termalign-bench-corpus.txt").string() : keep;
  {
    std::ofstream out(path, std::ios::binary);
    std::uniform_int_distribution<int> length(5, 35), punctuation(0, 9);
    std::string line;
    for (std::size_t written = 0; written < tokens;) {
      line.clear();
      const int n = length(generator);
      for (int i = 0; i < n; ++i) {
        std::string word = vocabulary[draw()];
        if (i == 0) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
        line += (i ? " " : "") + word;
        if (punctuation(generator) == 0 && i + 1 < n) line += ",", ++written;
      }
      line += ".\n";
      written += static_cast<std::size_t>(n) + 1;
      out << line;
    }
  }
  // Distinct terms (as a term list is) of content words: Zipf ranks past the 50 most frequent, which play the
  // function words' part.
  std::vector<std::string> term_list;
  std::set<std::string> listed;
  std::uniform_int_distribution<int> words(1, 4);
  while (term_list.size() < terms) {
    std::string term;
    for (int w = words(generator); w > 0; --w) term += (term.empty() ? "" : " ") + vocabulary[50 + draw() % 20000];
    if (listed.insert(term).second) term_list.push_back(term);
  }
  termalign::set_progress_interval(std::chrono::milliseconds(1000));
  std::printf("corpus: %s (%.0f MB, about %zu tokens), %zu terms\n", path.c_str(),
              std::filesystem::file_size(path) / 1e6, tokens, terms);
  for (const int threads : {2, 1}) {
    termalign::CorpusOptions options;
    options.threads = threads;
    const auto start = std::chrono::steady_clock::now();
    const termalign::CorpusStatistics statistics = termalign::gather_corpus_statistics(path, term_list, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::size_t found = 0;
    for (const auto count : statistics.term_count) found += count > 0;
    std::printf("threads %d: %.2f s (%zu tokens, %zu sentences, %zu of %zu terms found, %zu context words)\n",
                threads, seconds, statistics.tokens, statistics.sentences, found, terms, statistics.words.size());
    std::fflush(stdout);
  }
  if (keep.empty()) std::filesystem::remove(path);
  return 0;
}
