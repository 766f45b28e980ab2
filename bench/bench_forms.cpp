// The word-forms stage of `align` (term_forms_of_pair: each list's words analysed on its own thread, then grouped
// into families) on two term lists, beside its floor: Hunspell's stem() of each distinct word alone, on one thread
// per side, with no grouping (the reference: what any use of the dictionaries pays).
//
//   build/bench_forms SRC_TERMS SRC_LANGUAGE TGT_TERMS TGT_LANGUAGE [--hunspell-dir DIR] [--repeats R]
//
// Prints the best of R runs of each (dictionary loading included), and the families found.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <hunspell/hunspell.hxx>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "termalign/lexicon.h"
#include "text/word_forms.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The reference: the language's Hunspell dictionary loaded and stem() called once per distinct word.
void stem_every_word(const std::vector<std::string>& terms, const std::string& dictionary) {
  Hunspell hunspell((dictionary + ".aff").c_str(), (dictionary + ".dic").c_str());
  std::set<std::string> words;
  for (const std::string& term : terms) {
    std::istringstream in(term);
    for (std::string word; in >> word;) words.insert(word);
  }
  std::size_t stems = 0;
  for (const std::string& word : words) stems += hunspell.stem(word).size();
  if (stems == static_cast<std::size_t>(-1)) std::puts("");  // keeps the calls
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: %s SRC_TERMS SRC_LANGUAGE TGT_TERMS TGT_LANGUAGE [--hunspell-dir DIR] [--repeats R]\n",
                 argv[0]);
    return 2;
  }
  std::string dir = "/usr/share/hunspell";
  std::size_t repeats = 3;
  for (int i = 5; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--hunspell-dir") dir = argv[i + 1];
    if (flag == "--repeats") repeats = std::stoul(argv[i + 1]);
  }
  const std::vector<std::string> sources = termalign::read_term_list(argv[1]).terms;
  const std::vector<std::string> targets = termalign::read_term_list(argv[3]).terms;
  double stage = 1e300, floor = 1e300;
  termalign::TermForms source, target;
  for (std::size_t run = 0; run < repeats; ++run) {
    auto start = std::chrono::steady_clock::now();
    termalign::term_forms_of_pair(sources, argv[2], targets, argv[4], dir, 2, source, target);
    stage = std::min(stage, seconds_since(start));
    const std::string source_base = termalign::hunspell_dictionary(argv[2], dir),
                      target_base = termalign::hunspell_dictionary(argv[4], dir);
    if (source_base.empty() || target_base.empty()) continue;
    const std::string source_dictionary = dir + "/" + source_base, target_dictionary = dir + "/" + target_base;
    start = std::chrono::steady_clock::now();
    std::thread source_side([&] { stem_every_word(sources, source_dictionary); });
    stem_every_word(targets, target_dictionary);
    source_side.join();
    floor = std::min(floor, seconds_since(start));
  }
  std::printf(
      "%zu x %zu terms (%s; %s): forms stage %.3f s, Hunspell stem() of every word %.3f s (best of %zu); "
      "%zu and %zu families\n",
      sources.size(), targets.size(), source.analyser.c_str(), target.analyser.c_str(), stage,
      floor < 1e300 ? floor : 0.0, repeats, source.family_size.size(), target.family_size.size());
  return 0;
}
