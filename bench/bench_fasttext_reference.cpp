// The reference for the real-size loading case of run_benchmarks.sh: libfasttext's own FastText::loadModel of a
// .bin, then getWordVector of the words a run keeps (the words of the term lists given, plus the dictionary's
// most frequent words), as every fastText-based tool loads vectors. Prints one line of timings; the peak memory
// is measured around it (/usr/bin/time -v).
//
//   bench_fasttext_reference MODEL.bin MOST_FREQUENT [TERMS.txt ...]
#include <fasttext/fasttext.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.bin MOST_FREQUENT [TERMS.txt ...]\n", argv[0]);
    return 2;
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  fasttext::FastText model;
  model.loadModel(argv[1]);
  const auto loaded = Clock::now();

  const auto dictionary = model.getDictionary();
  const std::int32_t most_frequent = std::min<std::int32_t>(std::stoi(argv[2]), dictionary->nwords());
  std::vector<std::string> words;
  std::unordered_set<std::string> seen;
  for (std::int32_t id = 0; id < most_frequent; ++id) {
    words.push_back(dictionary->getWord(id));
    seen.insert(words.back());
  }
  for (int list = 3; list < argc; ++list) {
    std::ifstream terms(argv[list]);
    std::string line, word;
    while (std::getline(terms, line)) {
      std::istringstream split(line);
      while (split >> word) {
        if (seen.insert(word).second) words.push_back(word);
      }
    }
  }
  fasttext::Vector vector(model.getDimension());
  double checksum = 0;
  for (const std::string& word : words) {
    model.getWordVector(vector, word);
    checksum += vector[0];
  }
  const auto done = Clock::now();
  const auto seconds = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
  };
  std::printf("loadModel %.2f s, getWordVector of %zu words %.2f s, total %.2f s (checksum %g)\n",
              seconds(start, loaded), words.size(), seconds(loaded, done), seconds(start, done), checksum);
  return 0;
}
