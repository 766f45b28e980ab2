#include "text/word_forms.h"

#include <libstemmer.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <filesystem>
#include <hunspell/hunspell.hxx>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "io/io.h"
#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign {

std::string hunspell_dictionary(const std::string& language, const std::string& dir) {
  namespace fs = std::filesystem;
  if (language.empty() || dir.empty()) return "";
  const auto has = [&](const std::string& base) {
    std::error_code error;
    return fs::exists(fs::path(dir) / (base + ".aff"), error) &&
           fs::exists(fs::path(dir) / (base + ".dic"), error);
  };
  std::string upper = language;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const std::string& base : {language + "_" + upper, language})
    if (has(base)) return base;
  std::vector<std::string> others;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() > language.size() + 5 && name.compare(0, language.size() + 1, language + "_") == 0 &&
        name.compare(name.size() - 4, 4, ".aff") == 0) {
      const std::string base = name.substr(0, name.size() - 4);
      if (has(base)) others.push_back(base);
    }
  }
  std::sort(others.begin(), others.end());
  return others.empty() ? "" : others.front();
}

namespace {

// `word` (valid UTF-8, lower case) with its first letter upper-cased.
std::string capitalised(const std::string& word) {
  icu::UnicodeString text = icu::UnicodeString::fromUTF8(word);
  if (text.isEmpty()) return word;
  const UChar32 first = text.char32At(0);
  const UChar32 upper = u_toupper(first);
  if (upper == first) return word;
  text.replace(0, U16_LENGTH(first), upper);
  std::string out;
  text.toUTF8String(out);
  return out;
}

// The words of a term as matched (fold_phrase: folded, split at ASCII white space).
std::vector<std::string> folded_words(const std::string& term) {
  std::string phrase;
  fold_phrase(term, phrase);
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < phrase.size()) {
    const std::size_t end = std::min(phrase.find(' ', start), phrase.size());
    words.push_back(phrase.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

// The most code points by which an inflected form and its dictionary form differ (suffix_distance): `контекстном`
// and `контекстный`, `сносок` and `сноска` 4; derivations such as `berechnung` and `berechnen` 5.
constexpr std::size_t kInflectionDistance = 4;

std::size_t code_points(const std::string& text) {
  return static_cast<std::size_t>(icu::UnicodeString::fromUTF8(text).countChar32());
}

// The code points of `a` and `b` after their longest common prefix, on both sides.
std::size_t suffix_distance(const std::string& a, const std::string& b) {
  const icu::UnicodeString x = icu::UnicodeString::fromUTF8(a), y = icu::UnicodeString::fromUTF8(b);
  int32_t i = 0;
  while (i < x.length() && i < y.length() && x.charAt(i) == y.charAt(i)) ++i;
  if (i > 0 && U16_IS_LEAD(x.charAt(i - 1))) --i;  // not within a surrogate pair
  return static_cast<std::size_t>(x.countChar32(i) + y.countChar32(i));
}

// Hunspell 1.7 shares one UTF-16 case table among its UTF-8 dictionaries and counts their users without a lock
// (csutil.cxx, initialize_utf_tbl and free_utf_tbl): two dictionaries opened at once, as term_forms_of_pair's
// sides do, could each allocate the table and lose one. Opening and closing are serialised; the analyses
// themselves only read the table.
std::mutex& hunspell_lifetime_mutex() {
  static std::mutex mutex;
  return mutex;
}

struct CloseHunspell {
  void operator()(Hunspell* hunspell) const {
    const std::lock_guard<std::mutex> lock(hunspell_lifetime_mutex());
    delete hunspell;
  }
};
using HunspellPtr = std::unique_ptr<Hunspell, CloseHunspell>;

HunspellPtr open_hunspell(const std::string& path) {
  const std::lock_guard<std::mutex> lock(hunspell_lifetime_mutex());
  return HunspellPtr(new Hunspell((path + ".aff").c_str(), (path + ".dic").c_str()));
}

}  // namespace

struct WordAnalyser::Impl {
  HunspellPtr hunspell;
  sb_stemmer* stemmer = nullptr;
  ~Impl() {
    if (stemmer) sb_stemmer_delete(stemmer);
  }
  // The Snowball stem of `word`, or the word itself without a stemmer.
  std::string stem(const std::string& word) const {
    if (!stemmer) return word;
    const sb_symbol* stemmed =
        sb_stemmer_stem(stemmer, reinterpret_cast<const sb_symbol*>(word.data()), static_cast<int>(word.size()));
    if (!stemmed) return word;  // out of memory: the word as it is
    return std::string(reinterpret_cast<const char*>(stemmed),
                       static_cast<std::size_t>(sb_stemmer_length(stemmer)));
  }
};

WordAnalyser::WordAnalyser(const std::string& language, const std::string& hunspell_dir)
    : impl_(std::make_unique<Impl>()) {
  if (language.empty()) return;
  english_ = language == "en";
  std::vector<std::string> names;
  if (const std::string base = hunspell_dictionary(language, hunspell_dir); !base.empty()) {
    const std::string path = (std::filesystem::path(hunspell_dir) / base).string();
    HunspellPtr hunspell = open_hunspell(path);
    if (hunspell->get_dict_encoding() == "UTF-8") {
      impl_->hunspell = std::move(hunspell);
      kind_ = FormsAnalyser::hunspell;
      names.push_back("hunspell " + base);
    } else {
      logger().info("{}.aff is in {}, not UTF-8: its words are not analysed", path, hunspell->get_dict_encoding());
    }
  }
  // ISO 639-1 codes are among libstemmer's names of its languages.
  impl_->stemmer = sb_stemmer_new(language.c_str(), "UTF_8");
  if (impl_->stemmer) {
    if (kind_ == FormsAnalyser::none) kind_ = FormsAnalyser::snowball;
    names.push_back("snowball " + language);
  }
  if (!names.empty()) {
    name_ = names.front();
    for (std::size_t i = 1; i < names.size(); ++i) name_ += ", " + names[i];
  }
}

WordAnalyser::~WordAnalyser() = default;

std::string WordAnalyser::stem(const std::string& word) const { return impl_->stem(word); }

bool WordAnalyser::inflected(const std::string& word, const std::string& form) const {
  if (word == form) return false;
  // English marks number (and the third person) with -s, and its participles with -ed; its -ing forms name actions
  // in terms (`editing`), which other languages name with their nouns' citation forms.
  const auto ends_with = [&](const char* suffix) {
    const std::size_t n = std::char_traits<char>::length(suffix);
    return word.size() > n && word.compare(word.size() - n, n, suffix) == 0;
  };
  if (english_) return ends_with("s") || ends_with("ed");
  return true;
}

std::vector<std::string> WordAnalyser::forms(const std::string& word) {
  std::vector<std::string> forms;
  if (impl_->hunspell) {
    for (const std::string& variant : {word, capitalised(word)}) {
      for (const std::string& stem : impl_->hunspell->stem(variant)) {
        std::string folded = fold_case(stem);
        if (std::find(forms.begin(), forms.end(), folded) == forms.end()) forms.push_back(std::move(folded));
      }
      if (!forms.empty()) return forms;
    }
    return forms;
  }
  if (impl_->stemmer) forms.push_back(impl_->stem(word));
  return forms;
}

TermForms term_forms(const std::vector<std::string>& terms, WordAnalyser& analyser) {
  TermForms out;
  out.analyser = analyser.name();
  // The distinct words, and each term's as their ids.
  std::unordered_map<std::string, std::uint32_t> word_ids;
  std::vector<std::string> words;
  std::vector<std::vector<std::uint32_t>> term_words(terms.size());
  for (std::size_t t = 0; t < terms.size(); ++t) {
    for (std::string& word : folded_words(terms[t])) {
      const auto [it, added] = word_ids.emplace(word, static_cast<std::uint32_t>(words.size()));
      if (added) words.push_back(std::move(word));
      term_words[t].push_back(it->second);
    }
  }
  // Each word's analyses. A word the dictionary does not know takes the dictionary forms of the known words of its
  // Snowball stem (`animations`, unknown, those of `animation`), else the stem itself (or the word).
  std::vector<std::vector<std::string>> analyses(words.size());
  std::vector<char> known(words.size(), 0), inherited(words.size(), 0);
  for (std::size_t w = 0; w < words.size(); ++w) {
    analyses[w] = analyser.forms(words[w]);
    known[w] = analyser.gives_dictionary_forms();
    // Inflection changes a word's ending by a few letters; a dictionary form further away is a derivation
    // (German `berechnung` of `berechnen`), another word: the word is then its own form.
    // A word whose every analysis is such is read as one the dictionary does not know.
    analyses[w].erase(std::remove_if(analyses[w].begin(), analyses[w].end(),
                                     [&](const std::string& form) {
                                       return suffix_distance(words[w], form) > kInflectionDistance;
                                     }),
                      analyses[w].end());
    if (analyses[w].empty()) known[w] = 0;
  }
  if (analyser.gives_dictionary_forms()) {
    std::unordered_map<std::string, std::vector<std::string>> by_stem;  // stem -> the known words' forms
    for (std::size_t w = 0; w < words.size(); ++w) {
      if (!known[w]) continue;
      std::vector<std::string>& forms = by_stem[analyser.stem(words[w])];
      for (const std::string& form : analyses[w])
        if (std::find(forms.begin(), forms.end(), form) == forms.end()) forms.push_back(form);
    }
    for (std::size_t w = 0; w < words.size(); ++w) {
      if (known[w]) continue;
      const auto found = by_stem.find(analyser.stem(words[w]));
      if (found == by_stem.end()) continue;
      for (const std::string& form : found->second)
        if (suffix_distance(words[w], form) <= kInflectionDistance) analyses[w].push_back(form);
      inherited[w] = !analyses[w].empty();
    }
  }
  std::unordered_map<std::string, std::uint32_t> sharing;  // form -> the words that have it among their analyses
  for (std::size_t w = 0; w < words.size(); ++w) {
    if (analyses[w].empty()) analyses[w].push_back(analyser.stem(words[w]));
    for (const std::string& form : analyses[w]) ++sharing[form];
  }
  // Each word's one form: the word itself when it is one of its dictionary forms (`marque`, a noun, though also a
  // form of the verb `marquer`); else an analysis that is a word of the list (`marques` -> `marque`), the one
  // shared by the most words of the list, then the analyser's first.
  std::vector<std::string> form(words.size());
  for (std::size_t w = 0; w < words.size(); ++w) {
    const std::vector<std::string>& own = analyses[w];
    if (known[w] && std::find(own.begin(), own.end(), words[w]) != own.end()) {
      form[w] = words[w];
      continue;
    }
    const auto rank = [&](const std::string& candidate) {
      return std::make_pair(word_ids.count(candidate) ? 1 : 0, sharing[candidate]);
    };
    const std::string* best = &own.front();
    for (const std::string& candidate : own)
      if (rank(candidate) > rank(*best)) best = &candidate;
    form[w] = *best;
  }
  // Citation form: its own dictionary form; without one, the shortest word of its form (then the first in order).
  std::unordered_map<std::string, std::uint32_t> shortest;  // form -> word
  for (std::size_t w = 0; w < words.size(); ++w) {
    if (known[w] || inherited[w]) continue;
    const auto [it, added] = shortest.emplace(form[w], static_cast<std::uint32_t>(w));
    const std::string& held = words[it->second];
    if (!added && (words[w].size() < held.size() || (words[w].size() == held.size() && words[w] < held)))
      it->second = static_cast<std::uint32_t>(w);
  }
  std::vector<char> citation(words.size(), 0), shortened(words.size(), 0);
  for (std::size_t w = 0; w < words.size(); ++w) {
    if (analyser.suffix_marked()) {
      // English, whose -s and -ed endings tell an inflected word alone: against an analysis other than the word
      // when there is one (`created` is also its own), else against its stem (`breakpoints`, alone, a plural).
      const auto other = std::find_if(analyses[w].begin(), analyses[w].end(),
                                      [&](const std::string& analysis) { return analysis != words[w]; });
      citation[w] = !analyser.inflected(words[w], other != analyses[w].end() ? *other : analyser.stem(words[w]));
    } else {
      // Against its dictionary form; without one, against the shortest word of its form.
      const bool dictionary_form = known[w] || inherited[w];
      citation[w] = !analyser.inflected(words[w], dictionary_form ? form[w] : words[shortest.at(form[w])]);
    }
    shortened[w] = code_points(words[w]) < code_points(form[w]);
  }
  // The families: the terms of one key (their words' forms in order).
  std::unordered_map<std::string, std::uint32_t> families;
  out.family.resize(terms.size());
  out.citation.resize(terms.size());
  out.shortened.resize(terms.size());
  std::string key;
  for (std::size_t t = 0; t < terms.size(); ++t) {
    key.clear();
    std::size_t cited = 0;
    float short_words = 0;
    for (const std::uint32_t w : term_words[t]) {
      key += form[w];
      key += ' ';
      cited += citation[w];
      short_words += shortened[w];
    }
    out.shortened[t] = short_words;
    const auto [it, added] = families.emplace(key, static_cast<std::uint32_t>(out.family_size.size()));
    if (added) out.family_size.push_back(0);
    ++out.family_size[it->second];
    out.family[t] = it->second;
    out.citation[t] = term_words[t].empty() ? 1.0f : static_cast<float>(cited) / term_words[t].size();
  }
  return out;
}

void term_forms_of_pair(const std::vector<std::string>& source_terms, const std::string& source_language,
                        const std::vector<std::string>& target_terms, const std::string& target_language,
                        const std::string& hunspell_dir, int threads, TermForms& source, TermForms& target) {
  const auto side = [&](const std::vector<std::string>& terms, const std::string& language, const char* which,
                        TermForms& out) {
    if (language.empty()) {
      logger().info(
          "word forms: the {} language is not known (forms.{}_language, or the pair of a dataset folder, "
          "or a term list named terms-<language>.txt): its terms are not grouped into families",
          which, which[0] == 's' ? "src" : "tgt");
      out = TermForms();
      return;
    }
    WordAnalyser analyser(language, hunspell_dir);
    if (analyser.kind() == FormsAnalyser::none) {
      logger().info(
          "word forms: no Hunspell dictionary of '{}' in {} and no Snowball stemmer of it: the {} terms "
          "are not grouped into families",
          language, hunspell_dir, which);
      out = TermForms();
      return;
    }
    out = term_forms(terms, analyser);
  };
  run_both([&] { side(source_terms, source_language, "source", source); },
           [&] { side(target_terms, target_language, "target", target); }, threads);
}

FamilyGroups family_groups(const std::vector<std::uint32_t>& source, const std::vector<std::uint32_t>& target,
                           const TermForms& target_forms) {
  FamilyGroups groups;
  groups.of.resize(source.size());
  std::unordered_map<std::uint64_t, std::uint32_t> ids;  // (source term, target family) -> group
  for (std::size_t i = 0; i < source.size(); ++i) {
    const std::uint32_t family = target_forms.empty() ? target[i] : target_forms.family[target[i]];
    const std::uint64_t key = std::uint64_t{source[i]} << 32 | family;
    groups.of[i] = ids.emplace(key, static_cast<std::uint32_t>(ids.size())).first->second;
  }
  groups.count = ids.size();
  return groups;
}

}  // namespace termalign
