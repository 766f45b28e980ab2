// Word forms: each word's dictionary form (Hunspell's stems, or a Snowball stem where no Hunspell dictionary of
// the language is installed) and the families of forms of a term list, the terms whose words share their
// dictionary forms (`файл`, `файла`, `файлы`; `infection`, `infections`). The task's target lists hold such
// families on purpose, and its gold respects grammatical number: the re-ranker's word-form features
// (rerank/features.cpp) read them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "termalign/types.h"

namespace termalign {

// How a language's words are analysed.
enum class FormsAnalyser { hunspell, snowball, none };

// The Hunspell dictionary of a language code in `dir`, as WordAnalyser looks for it: the base name of its .aff and
// .dic files, <ll>_<LL>, <ll>, then the first <ll>_* by name; "" when there is none.
std::string hunspell_dictionary(const std::string& language, const std::string& dir);

// A language's analyser: the Hunspell dictionary of `language` (an ISO 639-1 code: en, fr, de, ru; its files
// <dir>/<ll>_<LL>.aff and .dic, or <ll>.aff, or the first <ll>_*.aff) when one is installed in `hunspell_dir`,
// else the Snowball stemmer of the language when libstemmer has one, else none. Not thread-safe: one per thread.
class WordAnalyser {
 public:
  WordAnalyser(const std::string& language, const std::string& hunspell_dir);
  ~WordAnalyser();
  WordAnalyser(const WordAnalyser&) = delete;
  WordAnalyser& operator=(const WordAnalyser&) = delete;

  FormsAnalyser kind() const { return kind_; }
  // The dictionary's or the stemmer's name (e.g. "hunspell ru_RU", "snowball russian"), or "none".
  const std::string& name() const { return name_; }
  // A word's candidate dictionary forms, folded (fold_case): Hunspell's stems (the word tried as it is, then with
  // a capital first letter, as German nouns are written), or the Snowball stem as the one form; empty when the
  // analyser does not know the word (a stemmer knows every word).
  std::vector<std::string> forms(const std::string& word);
  // The Snowball stem of a word (folded), or the word itself when the language has no stemmer.
  std::string stem(const std::string& word) const;
  // Whether `word` is an inflected form of `form` (its dictionary form): they differ; in English, only by a
  // final -s (number), as its -ing and -ed forms stand in terms for what other languages write in citation form.
  bool inflected(const std::string& word, const std::string& form) const;
  // Whether inflected() reads the word's ending alone (English), so that a stem can stand for the dictionary form.
  bool suffix_marked() const { return english_; }
  // Whether the forms are dictionary forms (Hunspell), which a word in citation form equals.
  bool gives_dictionary_forms() const { return kind_ == FormsAnalyser::hunspell; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  FormsAnalyser kind_ = FormsAnalyser::none;
  bool english_ = false;
  std::string name_ = "none";
};

// The families of forms of a term list (TermForms): each distinct folded word gets one dictionary form: itself
// when it is one of its analyses (`marque`, though also a form of `marquer`), else the analysis that is a word of
// the list (`marques` -> `marque`), then the one shared by the most words of the list; a word the dictionary does
// not know takes the forms of the known words of its Snowball stem, else the stem (or itself, without a stemmer),
// always within 4 letters of the word (further is a derivation: `berechnung`, `berechnen`). A term's key is its
// words' forms in order; the terms of one key are a family. A word is in citation form when Hunspell knows it and
// it is no inflected form of its dictionary form (WordAnalyser::inflected), or, without a dictionary form for it,
// of the shortest of the list's words that share its form. `analyser` reads the words; no other thread may use it
// meanwhile.
TermForms term_forms(const std::vector<std::string>& terms, WordAnalyser& analyser);

// term_forms of both lists, each side with its own analyser, side by side when `threads` allows (run_both; the
// languages' codes; an empty code or one without an analyser gives empty TermForms, with an info line saying so).
void term_forms_of_pair(const std::vector<std::string>& source_terms, const std::string& source_language,
                        const std::vector<std::string>& target_terms, const std::string& target_language,
                        const std::string& hunspell_dir, int threads, TermForms& source, TermForms& target);

// Each candidate's group (source[i], target[i] its terms): the candidates of one source term whose targets are in
// one family of `target_forms` (without families, each target its own), numbered from 0 in order of first
// appearance. The word-form features rank the candidates within their group, and the agreement order reorders
// them.
struct FamilyGroups {
  std::vector<std::uint32_t> of;  // each candidate's group
  std::size_t count = 0;          // the groups
};
FamilyGroups family_groups(const std::vector<std::uint32_t>& source, const std::vector<std::uint32_t>& target,
                           const TermForms& target_forms);

}  // namespace termalign
