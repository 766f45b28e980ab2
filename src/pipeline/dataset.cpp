// The files of a BUCC dataset folder: its language pair, term lists, corpora, gold and seed lexicon (the task's
// folders hold none: a seed is then induced from the vectors).
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/option_table.h"
#include "termalign/error.h"
#include "termalign/logging.h"

namespace termalign {

namespace {

// The files of a BUCC dataset folder for languages l, l1-l2 (the organisers' names).
std::string terms_file(const std::string& l) { return "terms-" + l + ".txt"; }
std::string corpus_file(const std::string& l) { return "corpus-" + l + ".txt"; }
std::string seed_file(const std::string& l1, const std::string& l2) { return "seed-" + l1 + "-" + l2 + ".txt"; }
std::string gold_file(const std::string& l1, const std::string& l2) { return "terms-" + l1 + "-" + l2 + ".txt"; }

// A language pair "l1-l2" split at its one dash into `languages`; false when `pair` is not of that form.
bool split_pair(const std::string& pair, std::pair<std::string, std::string>& languages) {
  const std::size_t dash = pair.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == pair.size() ||
      pair.find('-', dash + 1) != std::string::npos) {
    return false;
  }
  languages = {pair.substr(0, dash), pair.substr(dash + 1)};
  return true;
}

}  // namespace

namespace pipeline {

// A change of `data_dir`, `pair` or `dataset_corpora` (to false) over a configuration that already names the
// files the former folder gave (a resolved O.config.toml does, resolve_dataset having filled them) empties those
// inputs, so that the new folder or pair fills them again: else the former dataset's lists would be scored
// against the new folder's gold. Inputs named otherwise are kept.
void forget_dataset_inputs(InputOptions& input, bool corpora_only) {
  std::pair<std::string, std::string> languages;
  if (input.data_dir.empty() || !split_pair(input.pair, languages)) return;
  const std::filesystem::path dir = std::filesystem::path(input.data_dir).lexically_normal();
  const auto from_folder = [&](const std::string& field, const std::string& name) {
    return !field.empty() && std::filesystem::path(field).lexically_normal() == dir / name;
  };
  std::vector<std::string> forgotten;
  const auto forget = [&](std::string& field, const char* key, const std::string& name) {
    if (!from_folder(field, name)) return;
    forgotten.push_back(std::string(key) + " (" + field + ")");
    field.clear();
  };
  const std::string &l1 = languages.first, &l2 = languages.second;
  if (!corpora_only) {
    forget(input.src_terms, "src_terms", terms_file(l1));
    forget(input.tgt_terms, "tgt_terms", terms_file(l2));
    forget(input.seed, "seed", seed_file(l1, l2));
  }
  if (from_folder(input.src_corpus, corpus_file(l1)) && from_folder(input.tgt_corpus, corpus_file(l2))) {
    forget(input.src_corpus, "src_corpus", corpus_file(l1));
    forget(input.tgt_corpus, "tgt_corpus", corpus_file(l2));
  }
  if (forgotten.empty()) return;
  std::string list;
  for (const std::string& item : forgotten) list += (list.empty() ? "" : ", ") + item;
  logger().info("the dataset folder {} ({}) gave {}: the new data_dir, pair or dataset_corpora decides them again",
                input.data_dir, input.pair, list);
}

}  // namespace pipeline

namespace {

// The language pairs a BUCC folder names in its files (seed-<l1>-<l2>.txt, terms-<l1>-<l2>.txt), each as "l1-l2",
// sorted and without repeats; a pair counts only when the folder also holds its two term lists.
std::vector<std::string> pairs_in_folder(const std::filesystem::path& dir) {
  std::set<std::string> pairs;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    for (const std::string prefix : {"seed-", "terms-"}) {
      if (name.rfind(prefix, 0) != 0 || name.size() <= prefix.size() + 4 ||
          name.compare(name.size() - 4, 4, ".txt") != 0) {
        continue;
      }
      const std::string pair = name.substr(prefix.size(), name.size() - prefix.size() - 4);
      std::pair<std::string, std::string> languages;
      if (split_pair(pair, languages) && std::filesystem::exists(dir / terms_file(languages.first), error) &&
          std::filesystem::exists(dir / terms_file(languages.second), error)) {
        pairs.insert(pair);
      }
    }
  }
  return {pairs.begin(), pairs.end()};
}

// The languages of the term lists terms-<l>.txt of a folder, sorted.
std::vector<std::string> list_languages_in_folder(const std::filesystem::path& dir) {
  std::set<std::string> languages;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("terms-", 0) != 0 || name.size() <= 10 || name.compare(name.size() - 4, 4, ".txt") != 0)
      continue;
    const std::string language = name.substr(6, name.size() - 10);
    if (language.find('-') == std::string::npos) languages.insert(language);
  }
  return {languages.begin(), languages.end()};
}

// Term lists named as in a BUCC folder (terms-<l>.txt) with that folder's corpora beside them, given without
// them: the run leaves out the corpus evidence, most likely by oversight (a note, not a warning: runs without
// corpora are legitimate ablations).
void note_corpora_beside_lists(const InputOptions& input) {
  if (!input.src_corpus.empty() || !input.tgt_corpus.empty()) return;
  const auto corpus_beside = [](const std::string& terms) {
    const std::filesystem::path path(terms);
    const std::string name = path.filename().string();
    const std::size_t dash = name.find('-'), dot = name.rfind('.');
    if (dash == std::string::npos || dot == std::string::npos || dot <= dash + 1) return std::filesystem::path();
    const std::string language = name.substr(dash + 1, dot - dash - 1);
    if (name != terms_file(language)) return std::filesystem::path();
    const std::filesystem::path corpus = path.parent_path() / corpus_file(language);
    std::error_code error;
    return std::filesystem::is_regular_file(corpus, error) ? corpus : std::filesystem::path();
  };
  const std::filesystem::path source = corpus_beside(input.src_terms), target = corpus_beside(input.tgt_terms);
  if (source.empty() || target.empty()) return;
  logger().info(
      "the corpora {} and {} lie beside the term lists and are not used: --src-corpus and --tgt-corpus "
      "(or --data-dir) add their evidence to the ranking",
      source.lexically_normal().string(), target.lexically_normal().string());
}

}  // namespace

std::string resolve_dataset(AlignConfig& config, bool note) {
  InputOptions& input = config.input;
  if (input.data_dir.empty()) {
    if (!input.pair.empty()) throw_usage_error("`pair` names the language pair of a `data_dir`: give both.");
    if (note) note_corpora_beside_lists(input);
    return {};
  }
  const std::filesystem::path dir(input.data_dir);
  // The folder's files are looked up without throwing: a path the system refuses (too long, not permitted) is an
  // input error naming it, or a file that is not there.
  std::error_code status;
  if (!std::filesystem::is_directory(dir, status)) {
    throw_input_error(input.data_dir, 0,
                      "is not a folder (`data_dir`)" + (status ? ": " + status.message() : std::string()));
  }
  const auto there = [](const std::filesystem::path& path) {
    std::error_code ignored;
    return std::filesystem::exists(path, ignored);
  };
  if (input.pair.empty()) {
    // The folder's file names say its pair when they name one only (a folder of both directions must choose).
    std::vector<std::string> pairs = pairs_in_folder(dir);
    // A task folder (term lists and corpora only) names no pair; the task's pairs all translate from English
    // (en-fr, en-de, en-ru), so two term lists one of which is English give it.
    const std::vector<std::string> languages = list_languages_in_folder(dir);
    const bool english_first =
        pairs.empty() && languages.size() == 2 && (languages[0] == "en" || languages[1] == "en");
    if (english_first) {
      pairs = {"en-" + (languages[0] == "en" ? languages[1] : languages[0])};
      if (note) {
        logger().info(
            "language pair {} for {}: its files name no pair, and the task's pairs translate from English "
            "(--pair {}-en for the other direction)",
            pairs.front(), input.data_dir, pairs.front().substr(3));
      }
    }
    if (pairs.size() != 1) {
      std::string found;
      for (const std::string& pair : pairs) found += (found.empty() ? "" : ", ") + pair;
      throw_usage_error("`data_dir` needs the language pair of its files as `pair` l1-l2, e.g. en-fr: " +
                        (pairs.empty() ? std::string("its file names (a gold terms-l1-l2.txt or a seed "
                                                     "seed-l1-l2.txt beside terms-l1.txt and terms-l2.txt) name "
                                                     "none, and its term lists are not two of which one is "
                                                     "English (en)")
                                       : "its file names name several (" + found + ")") +
                        ".");
    }
    input.pair = pairs.front();
    if (note && !english_first)
      logger().info("language pair {}, read from the file names of {}", input.pair, input.data_dir);
  }
  std::pair<std::string, std::string> languages;
  if (!split_pair(input.pair, languages)) {
    throw_usage_error("`data_dir` needs the language pair of its files as `pair` l1-l2, e.g. en-fr (got '" +
                      input.pair + "').");
  }
  const std::string &l1 = languages.first, &l2 = languages.second;
  const auto take = [&](std::string& field, const std::string& name) {
    if (!field.empty()) return;
    const std::filesystem::path file = dir / name;
    if (!there(file)) {
      std::string cause = " (a BUCC dataset holds the term lists " + terms_file(l1) + " and " + terms_file(l2) +
                          ", and may hold the corpora, a gold " + gold_file(l1, l2) + " and a seed lexicon " +
                          seed_file(l1, l2) + "); give that input with its own option.";
      // A folder of the other direction: its seed lexicon reads l2<TAB>l1, which a run l1-l2 cannot take.
      if (there(dir / seed_file(l2, l1)) && !there(dir / seed_file(l1, l2))) {
        cause = ": it is a dataset of the pair " + l2 + "-" + l1 + " (" + seed_file(l2, l1) + "). Give --pair " +
                l2 + "-" + l1 + ", or for the direction " + l1 + "-" + l2 +
                " a seed lexicon with the columns swapped (--seed).";
      }
      throw_input_error(input.data_dir, 0, "the dataset folder has no " + name + cause);
    }
    field = file.lexically_normal().string();
  };
  take(input.src_terms, terms_file(l1));
  take(input.tgt_terms, terms_file(l2));
  if (config.input.saved_mapping.empty() && input.seed.empty()) {
    // A seed lexicon when the folder has one; the task's folders have none, and the run induces one.
    if (there(dir / seed_file(l1, l2)) || there(dir / seed_file(l2, l1))) {
      take(input.seed, seed_file(l1, l2));
    } else {
      input.seed = kAutoSeed;
      if (note) {
        logger().info(
            "the dataset folder {} has no seed lexicon {}: the run induces one from the vectors (seed \"auto\"); "
            "give one with --seed FILE, e.g. a MUSE dictionary",
            input.data_dir, seed_file(l1, l2));
      }
    }
  }
  // The corpora: both or neither (a dataset with one of them is used without; a corpus given by its own option
  // keeps the pair as given, and validate() asks for the other).
  const std::filesystem::path src_corpus = dir / corpus_file(l1), tgt_corpus = dir / corpus_file(l2);
  if (input.dataset_corpora && input.src_corpus.empty() && input.tgt_corpus.empty() && there(src_corpus) &&
      there(tgt_corpus)) {
    input.src_corpus = src_corpus.lexically_normal().string();
    input.tgt_corpus = tgt_corpus.lexically_normal().string();
  }
  const std::filesystem::path gold = dir / gold_file(l1, l2);
  return there(gold) ? gold.lexically_normal().string() : std::string();
}

}  // namespace termalign

namespace termalign::pipeline {

std::pair<std::string, std::string> forms_languages(const AlignConfig& config) {
  std::pair<std::string, std::string> pair;
  if (!config.input.data_dir.empty()) split_pair(config.input.pair, pair);
  // A term list named as a BUCC folder names it: terms-<language>.txt, the language a code of 2 or 3 letters.
  const auto from_name = [](const std::string& path) -> std::string {
    const std::string name = std::filesystem::path(path).filename().string();
    const std::string prefix = "terms-", suffix = ".txt";
    if (name.size() < prefix.size() + suffix.size() + 2 || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      return "";
    const std::string code = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    const bool letters = std::all_of(code.begin(), code.end(), [](char c) { return c >= 'a' && c <= 'z'; });
    return letters && code.size() <= 3 ? code : "";
  };
  const auto pick = [&](const std::string& given, const std::string& of_pair, const std::string& list) {
    return !given.empty() ? given : !of_pair.empty() ? of_pair : from_name(list);
  };
  return {pick(config.forms.src_language, pair.first, config.input.src_terms),
          pick(config.forms.tgt_language, pair.second, config.input.tgt_terms)};
}

}  // namespace termalign::pipeline
