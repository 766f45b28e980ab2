#include "evidence/compositional.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "evidence/word_translation.h"
#include "io/dictionary.h"
#include "io/io.h"
#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign {

namespace {

// A term's words, by their ids: a slice of SideWords::ids_by_place.
class TermWordIds {
 public:
  TermWordIds(const std::uint32_t* first, const std::uint32_t* last) : first_(first), last_(last) {}
  const std::uint32_t* begin() const { return first_; }
  const std::uint32_t* end() const { return last_; }
  std::size_t size() const { return static_cast<std::size_t>(last_ - first_); }
  bool empty() const { return first_ == last_; }
  std::uint32_t front() const { return *first_; }
  std::uint32_t back() const { return *(last_ - 1); }
  std::uint32_t operator[](std::size_t i) const { return first_[i]; }

 private:
  const std::uint32_t *first_, *last_;
};

// The distinct words (lower-cased) of the candidates' terms on one side, each term's words as their ids, and each
// word's weight: its inverse document frequency among those terms, ln((terms + 1) / terms with the word). Words of
// many terms (`de`, `of`, `der`, a domain's `file`) weigh little in the word-level evidence, words of one term
// most: a language-independent stand-in for a stop list. The words and their vectors are the list's TermWords':
// a word id here is a word's place among the candidates' words, `row` its id there.
struct SideWords {
  const TermWords& list;
  std::vector<std::string_view> words;
  std::unordered_map<std::string_view, std::uint32_t> ids;
  std::vector<std::uint32_t> row;            // by word id: its id in `list` (its row of list.vectors)
  std::vector<char> candidate;               // by term id: whether a candidate has it
  std::vector<std::uint32_t> ids_by_place;   // list.word_ids as word ids here (for the candidates' terms)
  std::vector<float> weight;                 // by word id
  // A term's word ids, in order (none when no candidate has it).
  TermWordIds terms(std::uint32_t term) const {
    const std::uint32_t* data = ids_by_place.data();
    return candidate[term] ? TermWordIds(data + list.first[term], data + list.first[term + 1])
                           : TermWordIds(data, data);
  }
  // The summed weights of the words of `term` (word ids).
  float total(const TermWordIds& term) const {
    float sum = 0;
    for (const std::uint32_t word : term) sum += weight[word];
    return sum;
  }
  bool usable(std::uint32_t word) const { return list.vectors.usable[row[word]] != 0; }
  auto vector(std::uint32_t word) const { return list.vectors.vectors.row(row[word]); }
  // Asks for the vectors of a term's words ahead of their use: the candidates read them at random from hundreds of
  // megabytes, a wait for memory each.
  void prefetch(std::uint32_t term) const {
    for (std::size_t k = list.first[term]; k < list.first[term + 1]; ++k)
      __builtin_prefetch(list.vectors.vectors.row(list.word_ids[k]).data());
  }
};

SideWords side_words(const TermWords& list, const std::vector<std::uint32_t>& term_ids) {
  SideWords side{list, {}, {}, {}, std::vector<char>(list.terms(), 0), {}, {}};
  side.ids_by_place.resize(list.word_ids.size());
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> side_id(list.words.size(), kNone);  // by id in `list`
  for (const std::uint32_t term : term_ids) {
    if (side.candidate[term]) continue;
    side.candidate[term] = 1;
    for (std::size_t k = list.first[term]; k < list.first[term + 1]; ++k) {
      const std::uint32_t word = list.word_ids[k];
      if (side_id[word] == kNone) {
        side_id[word] = static_cast<std::uint32_t>(side.words.size());
        side.words.push_back(list.words[word]);
        side.ids.emplace(list.words[word], side_id[word]);
        side.row.push_back(word);
      }
      side.ids_by_place[k] = side_id[word];
    }
  }
  std::vector<std::uint32_t> terms_with(side.words.size(), 0), last_term(side.words.size(), 0);
  std::uint32_t terms = 0;
  for (std::uint32_t term = 0; term < side.candidate.size(); ++term) {
    if (side.terms(term).empty()) continue;
    ++terms;
    for (const std::uint32_t word : side.terms(term)) {
      if (terms_with[word] > 0 && last_term[word] == term) continue;  // once per term
      ++terms_with[word];
      last_term[word] = term;
    }
  }
  side.weight.resize(side.words.size());
  for (std::size_t word = 0; word < side.words.size(); ++word)
    side.weight[word] = std::log((static_cast<float>(terms) + 1.0f) / static_cast<float>(terms_with[word]));
  return side;
}

std::uint64_t word_pair(std::uint32_t source, std::uint32_t target) {
  return (static_cast<std::uint64_t>(source) << 32) | target;
}

// A set of word pairs (source, target) grouped by source word: each lookup scans the source word's few pairs.
class WordPairs {
 public:
  WordPairs(std::vector<std::uint64_t> pairs, std::size_t source_words, std::size_t target_words)
      : pairs_(std::move(pairs)), offset_(source_words + 1, 0), target_paired_(target_words, 0) {
    std::sort(pairs_.begin(), pairs_.end());
    pairs_.erase(std::unique(pairs_.begin(), pairs_.end()), pairs_.end());
    for (const std::uint64_t pair : pairs_) {
      ++offset_[(pair >> 32) + 1];
      target_paired_[pair & 0xffffffffu] = 1;
    }
    std::partial_sum(offset_.begin(), offset_.end(), offset_.begin());
  }
  bool contains(std::uint32_t source, std::uint32_t target) const {
    const std::uint64_t wanted = word_pair(source, target);
    for (std::size_t i = offset_[source]; i < offset_[source + 1]; ++i)
      if (pairs_[i] == wanted) return true;
    return false;
  }
  // Whether a word is in any pair.
  bool source_paired(std::uint32_t source) const { return offset_[source + 1] > offset_[source]; }
  bool target_paired(std::uint32_t target) const { return target_paired_[target] != 0; }

 private:
  std::vector<std::uint64_t> pairs_;  // sorted, unique
  std::vector<std::size_t> offset_;   // by source word: its first pair
  std::vector<char> target_paired_;   // by target word
};

// The word pairs (source, target) of the two sides that translate one another by the seed lexicon: a pair of
// words that are forms (same_stem) of the two words of a seed pair. Each side's words are grouped by their first
// kStemPrefix bytes, so a seed word meets only the words that can be its forms.
std::vector<std::uint64_t> seed_stem_pairs(
    const std::unordered_map<std::string, std::vector<std::string>>& seed_translations,
    const SideWords& source_side, const SideWords& target_side) {
  using Groups = std::unordered_map<std::string_view, std::vector<std::uint32_t>>;
  // A side's words by their first kStemPrefix bytes, and the words that can end with a compound member (at least
  // twice kStemPrefix bytes) by their last kStemPrefix bytes.
  struct Grouped {
    Groups first, last;
  };
  const auto group = [](const SideWords& side) {
    Grouped groups;
    for (std::uint32_t id = 0; id < side.words.size(); ++id) {
      const std::string_view word = side.words[id];
      if (word.size() >= kStemPrefix) groups.first[word.substr(0, kStemPrefix)].push_back(id);
      if (word.size() >= 2 * kStemPrefix) groups.last[word.substr(word.size() - kStemPrefix)].push_back(id);
    }
    return groups;
  };
  const Grouped source_groups = group(source_side), target_groups = group(target_side);
  // The side's words that are forms of `word` (the word itself included) or closed compounds it starts or ends.
  const auto forms = [](const std::string& word, const SideWords& side, const Grouped& groups,
                        std::vector<std::uint32_t>& found) {
    found.clear();
    if (word.size() < kStemPrefix) {
      const auto same = side.ids.find(word);
      if (same != side.ids.end()) found.push_back(same->second);
      return;
    }
    const std::string_view key(word);
    const auto first = groups.first.find(key.substr(0, kStemPrefix));
    if (first != groups.first.end()) {
      for (const std::uint32_t id : first->second)
        if (same_stem(word, side.words[id]) || compound_member(word, side.words[id])) found.push_back(id);
    }
    const auto last = groups.last.find(key.substr(key.size() - kStemPrefix));
    if (last != groups.last.end()) {
      for (const std::uint32_t id : last->second) {
        const std::string_view other = side.words[id];
        // Those starting with `word` as well were found above.
        if (compound_member(word, other) && other.compare(0, word.size(), word) != 0) found.push_back(id);
      }
    }
  };
  std::vector<std::uint64_t> pairs;
  std::vector<std::uint32_t> source_forms, target_forms;
  for (const auto& [word, translations] : seed_translations) {
    forms(word, source_side, source_groups, source_forms);
    if (source_forms.empty()) continue;
    for (const std::string& translation : translations) {
      forms(translation, target_side, target_groups, target_forms);
      for (const std::uint32_t x : source_forms)
        for (const std::uint32_t y : target_forms) pairs.push_back(word_pair(x, y));
    }
  }
  return pairs;
}

// Of the words of terms a and b (word ids of the two sides), the weighted shares of those with a partner in the
// other term among `pairs` (`with`) and of those in some pair but without a partner in the other term
// (`without`).
struct PartnerShares {
  float with = 0, without = 0;
};
PartnerShares partner_shares(const TermWordIds& a, const TermWordIds& b,
                             const SideWords& source_side, const SideWords& target_side, const WordPairs& pairs) {
  PartnerShares shares;
  for (const std::uint32_t x : a) {
    if (std::any_of(b.begin(), b.end(), [&](std::uint32_t y) { return pairs.contains(x, y); }))
      shares.with += source_side.weight[x];
    else if (pairs.source_paired(x))
      shares.without += source_side.weight[x];
  }
  for (const std::uint32_t y : b) {
    if (std::any_of(a.begin(), a.end(), [&](std::uint32_t x) { return pairs.contains(x, y); }))
      shares.with += target_side.weight[y];
    else if (pairs.target_paired(y))
      shares.without += target_side.weight[y];
  }
  const float total = source_side.total(a) + target_side.total(b);
  if (total > 0) {
    shares.with /= total;
    shares.without /= total;
  }
  return shares;
}

// Each word's nearest word by mapped cosine (ties by id) among the words of the other side that it meets in
// candidates (the words of the terms paired with its terms). The candidates are each term's nearest terms already,
// so these are the plausible translations; a search over the whole other vocabulary would cost a product of the
// two vocabularies (tens of thousands of words each at 20k terms: seconds) for the few pairs the candidates can
// use. Each thread keeps its own best per word; they are merged by the same order, so the result does not depend
// on the threads.
class NearestMetWords {
 public:
  NearestMetWords(std::size_t source_words, std::size_t target_words, int threads)
      : source_words_(source_words),
        target_words_(target_words),
        per_thread_(static_cast<std::size_t>(resolve_threads(threads))) {}

  // A cosine of source word x and target word y met in a candidate (from any thread of the parallel_for).
  void offer(float cosine, std::uint32_t x, std::uint32_t y) {
    Best& best = per_thread_[static_cast<std::size_t>(current_thread())];
    if (best.source.empty()) {
      best.source.resize(source_words_);
      best.target.resize(target_words_);
    }
    best.source[x].offer(cosine, y);
    best.target[y].offer(cosine, x);
  }

  // Each word's nearest word of the other side, as word pairs (source, target), for both sides.
  std::vector<std::uint64_t> pairs() const {
    std::vector<std::uint64_t> translated;
    const auto collect = [&](std::size_t words, bool from_source) {
      for (std::size_t word = 0; word < words; ++word) {
        Nearest nearest;
        for (const Best& best : per_thread_) {
          const std::vector<Nearest>& side = from_source ? best.source : best.target;
          if (!side.empty()) nearest.offer(side[word].cosine, side[word].word);
        }
        if (nearest.word == std::numeric_limits<std::uint32_t>::max()) continue;
        const auto self = static_cast<std::uint32_t>(word);
        translated.push_back(from_source ? word_pair(self, nearest.word) : word_pair(nearest.word, self));
      }
    };
    collect(source_words_, true);
    collect(target_words_, false);
    return translated;
  }

 private:
  struct Nearest {
    float cosine = -std::numeric_limits<float>::infinity();
    std::uint32_t word = std::numeric_limits<std::uint32_t>::max();  // none yet
    void offer(float c, std::uint32_t w) {
      if (c > cosine || (c == cosine && w < word)) cosine = c, word = w;
    }
  };
  struct Best {
    std::vector<Nearest> source, target;  // by source word: its nearest target word; by target word: source word
  };
  std::size_t source_words_, target_words_;
  std::vector<Best> per_thread_;
};

// Soft word alignment of a candidate from its word pairs' cosines (`pairs`: cosine, word of a, word of b): each
// word's best cosine on the other side, averaged over each term's words with a vector (weighted), the two
// directions averaged; 0 when a side has no word with a vector.
float soft_alignment(const TermWordIds& a, const TermWordIds& b,
                     const SideWords& source_side, const SideWords& target_side,
                     const std::vector<std::tuple<float, std::size_t, std::size_t>>& pairs,
                     std::vector<float>& source_best, std::vector<float>& target_best) {
  const float lowest = -std::numeric_limits<float>::infinity();
  source_best.assign(a.size(), lowest);
  target_best.assign(b.size(), lowest);
  for (const auto& [similarity, x, y] : pairs) {
    if (!source_side.usable(a[x]) || !target_side.usable(b[y])) continue;
    source_best[x] = std::max(source_best[x], similarity);
    target_best[y] = std::max(target_best[y], similarity);
  }
  // A pair with vectors on both sides fills one entry of each list, so both lists are empty or neither is.
  const auto mean_kept = [lowest](const std::vector<float>& best, const TermWordIds& words,
                                  const SideWords& side) {
    float sum = 0, total = 0;
    for (std::size_t k = 0; k < best.size(); ++k)
      if (best[k] != lowest) sum += side.weight[words[k]] * best[k], total += side.weight[words[k]];
    return total > 0 ? sum / total : 0.0f;
  };
  return 0.5f * (mean_kept(source_best, a, source_side) + mean_kept(target_best, b, target_side));
}

}  // namespace

bool same_stem(std::string_view a, std::string_view b) {
  if (a == b) return true;
  if (a.size() < kStemPrefix || b.size() < kStemPrefix) return false;
  std::size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  return common >= kStemPrefix &&
         static_cast<double>(common) >= kStemShare * static_cast<double>(std::max(a.size(), b.size()));
}

bool compound_member(std::string_view part, std::string_view word) {
  if (part.size() < kStemPrefix || word.size() < part.size() + kStemPrefix) return false;
  const bool first = word.compare(0, part.size(), part) == 0;
  if (!first && word.compare(word.size() - part.size(), part.size(), part) != 0) return false;
  // The part in letters, not bytes: a Cyrillic letter takes two, and `по` (on) would start `пользователь` (user)
  // and `поиск`, as the accented `pré` would start `précédent`. The rest stays in bytes, so that an ending of two
  // letters counts when they take four (`файл` in `файлов`, `sélection` in `sélectionnée`).
  const std::size_t letters = static_cast<std::size_t>(
      std::count_if(part.begin(), part.end(), [](char byte) { return (byte & 0xC0) != 0x80; }));
  return letters >= kStemPrefix;
}

namespace {

// The dictionary's single-word pairs, source word -> its target words (as seed_translations gives a seed's), for
// the source words that can be forms or compound members of `side`'s words (their first kStemPrefix bytes, or
// their last for compounds, are some side word's): the rest cannot pair any of its words.
std::unordered_map<std::string, std::vector<std::string>> dictionary_word_translations(const Dictionary& dictionary,
                                                                                       const SideWords& side) {
  std::unordered_set<std::string_view> firsts, lasts;
  for (const std::string_view word : side.words) {
    if (word.size() >= kStemPrefix) firsts.insert(std::string_view(word).substr(0, kStemPrefix));
    if (word.size() >= 2 * kStemPrefix) lasts.insert(std::string_view(word).substr(word.size() - kStemPrefix));
  }
  std::unordered_map<std::string, std::vector<std::string>> translations;
  const PhraseTable& sources = dictionary.sources();
  for (std::uint32_t id = 0; id < sources.size(); ++id) {
    const std::string_view word = sources.phrase(id);
    if (word.find(' ') != std::string_view::npos) continue;
    const bool possible = word.size() < kStemPrefix ? side.ids.count(word) > 0
                                                    : firsts.count(word.substr(0, kStemPrefix)) > 0 ||
                                                          lasts.count(word.substr(word.size() - kStemPrefix)) > 0;
    if (!possible) continue;
    const auto [begin, end] = dictionary.translations(id);
    for (auto target = begin; target != end; ++target) {
      const std::string_view translation = dictionary.targets().phrase(*target);
      if (translation.find(' ') == std::string_view::npos)
        translations[std::string(word)].emplace_back(translation);
    }
  }
  return translations;
}

}  // namespace

void add_compositional_evidence(const TermWords& source_words, const TermWords& target_words, const PairList& seed,
                                int threads, CandidateEvidence& evidence, const Dictionary* dictionary) {
  const SideWords source_side = side_words(source_words, evidence.source);
  const SideWords target_side = side_words(target_words, evidence.target);

  const std::size_t n = evidence.size();
  evidence.one_to_one.assign(n, 0.0f);
  evidence.translated_share.assign(n, 0.0f);
  evidence.edge_agreement.assign(n, 0.0f);
  evidence.seed_share.assign(n, 0.0f);
  evidence.seed_conflict.assign(n, 0.0f);
  evidence.word_alignment.assign(n, 0.0f);
  constexpr std::size_t kBlock = 1024, kAhead = 8;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  Progress progress("word-level evidence, candidates", 2 * n);

  // 1. Each candidate's word pairs by mapped cosine, computed once (the word vectors are read at random: the
  // products cost their memory traffic): its soft and one-to-one word alignments, and each word's nearest word
  // among those it meets.
  NearestMetWords nearest(source_side.words.size(), target_side.words.size(), threads);
  parallel_for(blocks, threads, [&](std::size_t block) {
    std::vector<std::uint8_t> source_used, target_used;
    std::vector<std::tuple<float, std::size_t, std::size_t>> pairs;
    std::vector<float> source_best, target_best;
    const std::size_t end = std::min(n, (block + 1) * kBlock);
    for (std::size_t i = block * kBlock; i < end; ++i) {
      if (i + kAhead < end) {
        source_side.prefetch(evidence.source[i + kAhead]);
        target_side.prefetch(evidence.target[i + kAhead]);
      }
      const TermWordIds a = source_side.terms(evidence.source[i]);
      const TermWordIds b = target_side.terms(evidence.target[i]);
      if (a.empty() || b.empty()) continue;
      pairs.clear();
      for (std::size_t x = 0; x < a.size(); ++x) {
        const auto row = source_side.vector(a[x]);
        for (std::size_t y = 0; y < b.size(); ++y) {
          const float cosine = row.dot(target_side.vector(b[y]));
          pairs.emplace_back(cosine, x, y);
          if (source_side.usable(a[x]) && target_side.usable(b[y])) nearest.offer(cosine, a[x], b[y]);
        }
      }
      evidence.word_alignment[i] = soft_alignment(a, b, source_side, target_side, pairs, source_best,
                                                  target_best);
      // Greedy one-to-one matching by cosine: the best remaining pair first.
      std::sort(pairs.begin(), pairs.end(), [](const auto& p, const auto& q) {
        return std::get<0>(p) != std::get<0>(q) ? std::get<0>(p) > std::get<0>(q) : p < q;
      });
      source_used.assign(a.size(), 0);
      target_used.assign(b.size(), 0);
      float matched = 0;
      for (const auto& [similarity, x, y] : pairs) {
        if (source_used[x] || target_used[y]) continue;
        source_used[x] = target_used[y] = 1;
        matched += std::max(similarity, 0.0f) * 0.5f * (source_side.weight[a[x]] + target_side.weight[b[y]]);
      }
      const float larger = std::max(source_side.total(a), target_side.total(b));
      evidence.one_to_one[i] = larger > 0 ? matched / larger : 0.0f;
    }
    progress.advance(std::min(n, (block + 1) * kBlock) - block * kBlock);
  });

  // 2. Translated word pairs: the seed's, and each word's nearest met word, in either direction. How many words of
  // each candidate have a translation on the other side, and whether its first or last words translate each other;
  // how many have a seed translation, forms of the seed's words included.
  std::vector<std::uint64_t> translated_pairs = nearest.pairs();
  const auto seed_words = seed_translations(seed, false);
  for (const auto& [word, targets] : seed_words) {
    const auto s = source_side.ids.find(word);
    if (s == source_side.ids.end()) continue;
    for (const std::string& target_word : targets) {
      const auto t = target_side.ids.find(target_word);
      if (t != target_side.ids.end()) translated_pairs.push_back(word_pair(s->second, t->second));
    }
  }
  const WordPairs translated(std::move(translated_pairs), source_side.words.size(), target_side.words.size());
  const WordPairs seed_stems(seed_stem_pairs(seed_words, source_side, target_side), source_side.words.size(),
                             target_side.words.size());
  const WordPairs dictionary_stems(
      dictionary ? seed_stem_pairs(dictionary_word_translations(*dictionary, source_side), source_side, target_side)
                 : std::vector<std::uint64_t>(),
      source_side.words.size(), target_side.words.size());
  if (dictionary) {
    evidence.dictionary_share.assign(n, 0.0f);
    evidence.dictionary_conflict.assign(n, 0.0f);
  }
  parallel_for(blocks, threads, [&](std::size_t block) {
    for (std::size_t i = block * kBlock; i < std::min(n, (block + 1) * kBlock); ++i) {
      const TermWordIds a = source_side.terms(evidence.source[i]);
      const TermWordIds b = target_side.terms(evidence.target[i]);
      if (a.empty() || b.empty()) continue;
      evidence.translated_share[i] = partner_shares(a, b, source_side, target_side, translated).with;
      const PartnerShares seed_partners = partner_shares(a, b, source_side, target_side, seed_stems);
      evidence.seed_share[i] = seed_partners.with;
      evidence.seed_conflict[i] = seed_partners.without;
      if (dictionary) {
        const PartnerShares dictionary_partners = partner_shares(a, b, source_side, target_side, dictionary_stems);
        evidence.dictionary_share[i] = dictionary_partners.with;
        evidence.dictionary_conflict[i] = dictionary_partners.without;
      }
      bool edge = false;
      for (const std::uint32_t x : {a.front(), a.back()})
        for (const std::uint32_t y : {b.front(), b.back()}) edge = edge || translated.contains(x, y);
      evidence.edge_agreement[i] = edge ? 1.0f : 0.0f;
    }
    progress.advance(std::min(n, (block + 1) * kBlock) - block * kBlock);
  });
  progress.finish();
}

}  // namespace termalign
