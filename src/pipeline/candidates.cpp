// Collect evidence: the candidates the scoring did not give (the targets' own lists, the close spellings) and what
// the ranking reads of every candidate.
#include <algorithm>
#include <chrono>
#include <limits>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "evidence/compositional.h"
#include "evidence/corpus_evidence.h"
#include "io/io.h"
#include "pipeline/stages.h"
#include "rerank/reranker.h"
#include "scoring/screening.h"
#include "termalign/logging.h"
#include "text/word_forms.h"
#include "util/key_groups.h"
#include "util/parallel.h"

namespace termalign::pipeline {

namespace {

// The candidates grouped by source row (detail::group_by_key): finding a pair scans its source's few candidates,
// where a hash set of millions of pairs would cost seconds and a few hundred megabytes at scale.
class CandidatesBySource {
 public:
  CandidatesBySource(const std::vector<Candidate>& candidates, std::size_t sources)
      : candidates_(candidates), groups_(detail::group_by_key(candidates.size(), sources, [&](std::size_t i) {
          return candidates[i].source;
        })) {}

  // The index of the candidate (source, target), or npos.
  std::size_t find(std::uint32_t source, std::uint32_t target) const {
    for (std::size_t k = groups_.begin(source); k < groups_.end(source); ++k)
      if (candidates_[groups_.order[k]].target == target) return groups_.order[k];
    return npos;
  }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

 private:
  const std::vector<Candidate>& candidates_;
  detail::KeyGroups groups_;
};

// Where each of `pairs` is among `candidates` (CandidatesBySource::npos: not there), looked up on the threads.
std::vector<std::size_t> find_candidates(const std::vector<Candidate>& pairs,
                                         const std::vector<Candidate>& candidates, std::size_t sources,
                                         int threads) {
  const CandidatesBySource index(candidates, sources);
  std::vector<std::size_t> found(pairs.size());
  constexpr std::size_t kBlock = 65536;
  parallel_for((pairs.size() + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    for (std::size_t i = block * kBlock; i < std::min(pairs.size(), (block + 1) * kBlock); ++i)
      found[i] = index.find(pairs[i].source, pairs[i].target);
  });
  return found;
}

// Each target's m best sources by CSLS (the same scores, transposed), by a second pass over the similarities: the
// reverse lists of csls_select's fused pass where it did not run. Grouped by target, each group best first; on
// rank 0 of a group only.
std::vector<Candidate> reverse_lists_by_second_pass(const ComposedTerms& X, const ComposedTerms& Z,
                                                    const NeighbourhoodMeans& means, std::size_t m,
                                                    const TileOptions& tiles, const ProcessGroup& group) {
  SelectionOptions reverse_selection;
  reverse_selection.top_m = m;
  const NeighbourhoodMeans swapped{means.target, means.source};
  std::vector<Candidate> reverse =
      select_csls_candidates(Z.vectors, X.vectors, swapped, reverse_selection, tiles, group);
  std::stable_sort(reverse.begin(), reverse.end(),
                   [](const Candidate& a, const Candidate& b) { return a.source < b.source; });
  for (Candidate& pair : reverse) std::swap(pair.source, pair.target);  // source: a row of X again
  return reverse;
}

// Adds the pairs of the targets' lists (grouped by target, each group best first) not yet among the candidates,
// and returns, for every candidate, the rank (1 = best) of its source among its target's listed sources (0: not
// listed). `sources`: the rows of X.
std::vector<float> add_reverse_candidates(const std::vector<Candidate>& reverse,
                                          std::vector<Candidate>& candidates, std::size_t sources, int threads) {
  const std::vector<std::size_t> found = find_candidates(reverse, candidates, sources, threads);
  std::vector<float> rank(candidates.size(), 0.0f);
  std::size_t added = 0;
  float position = 0;
  for (std::size_t i = 0, group = 0; i < reverse.size(); ++i) {
    const Candidate& pair = reverse[i];
    if (i == 0 || reverse[i - 1].target != pair.target) group = i;
    position = i == group ? 1.0f : position + 1;
    // A target lists each source once; a repeat (which would be a bug upstream) keeps its first rank.
    bool repeated = false;
    for (std::size_t j = group; j < i && !repeated; ++j) repeated = reverse[j].source == pair.source;
    if (repeated) continue;
    if (found[i] != CandidatesBySource::npos) {
      rank[found[i]] = position;
    } else {
      candidates.push_back(pair);
      rank.push_back(position);
      ++added;
    }
  }
  logger().debug("{} candidates added from the target side", added);
  return rank;
}

// Adds those of `found` (distinct pairs) that are not among `candidates` yet; returns how many.
std::size_t add_new_candidates(const std::vector<Candidate>& found, std::size_t sources, int threads,
                               std::vector<Candidate>& candidates) {
  const std::vector<std::size_t> present = find_candidates(found, candidates, sources, threads);
  std::size_t added = 0;
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (present[i] != CandidatesBySource::npos) continue;
    candidates.push_back(found[i]);
    ++added;
  }
  return added;
}

Spellings term_spellings(const TermList& list, bool transliterate, int threads) {
  Spellings spellings;
  spellings.latin.resize(list.size());
  spellings.profile.resize(list.size());
  spellings.words.resize(list.size());
  parallel_for(list.size(), threads, [&](std::size_t i) {
    spellings.latin[i] = latin_spelling(list.terms[i], transliterate);
    spellings.profile[i] = ngram_profile(spellings.latin[i]);
    spellings.words[i] =
        static_cast<std::uint16_t>(std::min<std::size_t>(split_words(list.terms[i]).size(), 65535));
  });
  return spellings;
}

static_assert(OrthographyOptions{}.work_bound == kOrthographicBudget, "one default work bound");

// Adds each source term's closest spellings among the targets, scored by CSLS like the others. In a group, every
// process searches for its share of the sources and rank 0 adds them all (the others add nothing).
void add_orthographic_candidates(const ComposedTerms& X, const ComposedTerms& Z, const NeighbourhoodMeans& means,
                                 const Spellings& source_spellings, const Spellings& target_spellings,
                                 std::size_t m, std::size_t work_bound, int threads, const ProcessGroup& group,
                                 std::vector<Candidate>& candidates) {
  auto profiles = [threads](const ComposedTerms& composed, std::size_t begin, std::size_t end,
                            const Spellings& spellings) {
    std::vector<NgramProfile> usable(end - begin);
    parallel_for(usable.size(), threads,
                 [&](std::size_t row) { usable[row] = spellings.profile[composed.term_ids[begin + row]]; });
    return usable;
  };
  const auto [first, last] = row_share(X.term_ids.size(), group.rank(), group.size());
  const auto matches = orthographic_neighbours(
      profiles(X, first, last, source_spellings), profiles(Z, 0, Z.term_ids.size(), target_spellings), m, 0.3,
      threads, work_bound > 0 ? work_bound : std::numeric_limits<std::size_t>::max());
  std::vector<Candidate> found;
  found.reserve(matches.size());
  for (const auto& match : matches) {
    const auto source = static_cast<std::uint32_t>(first + match.source);
    const float cosine = X.vectors.row(source).dot(Z.vectors.row(match.target));
    found.push_back({detail::csls_score(cosine, means.source(source), means.target(match.target)), cosine, source,
                     match.target});
  }
  if (group.size() > 1) found = group.gather(found);
  if (!group.is_root()) return;
  // Each source's closest spellings are distinct targets: only the candidates before them can repeat them.
  const std::size_t added = add_new_candidates(found, X.term_ids.size(), threads, candidates);
  logger().info("{} orthographic candidates added", added);
}

// Each term of `list` in the form the dictionary's phrases are in (fold_phrase).
std::vector<std::string> folded_terms(const TermList& list, int threads) {
  std::vector<std::string> folded(list.size());
  parallel_for(list.size(), threads, [&](std::size_t i) { fold_phrase(list.terms[i], folded[i]); });
  return folded;
}

// Whether each candidate's two terms are a dictionary entry and its translation.
void add_dictionary_entries(const Dictionary& dictionary, const TermList& source_terms,
                            const TermList& target_terms, int threads, CandidateEvidence& evidence) {
  const std::vector<std::string> sources = folded_terms(source_terms, threads),
                                 targets = folded_terms(target_terms, threads);
  evidence.dictionary_entry.assign(evidence.size(), 0.0f);
  parallel_for(evidence.size(), threads, [&](std::size_t i) {
    evidence.dictionary_entry[i] =
        dictionary.has_pair(sources[evidence.source[i]], targets[evidence.target[i]]) ? 1.0f : 0.0f;
  });
}

// Orthographic similarity, identity and sizes of each candidate's two terms.
void add_term_evidence(const Spellings& source, const Spellings& target, int threads,
                       CandidateEvidence& evidence) {
  const std::size_t n = evidence.size();
  evidence.orthographic.resize(n);
  evidence.identical.resize(n);
  evidence.source_words.resize(n);
  evidence.target_words.resize(n);
  evidence.source_length.resize(n);
  evidence.target_length.resize(n);
  constexpr std::size_t kBlock = 4096;
  Progress progress("spelling evidence, candidates", n);
  parallel_for((n + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    for (std::size_t i = block * kBlock; i < std::min(n, (block + 1) * kBlock); ++i) {
      const std::uint32_t s = evidence.source[i], t = evidence.target[i];
      evidence.orthographic[i] = static_cast<float>(ngram_similarity(source.profile[s], target.profile[t]));
      evidence.identical[i] = source.latin[s] == target.latin[t];
      evidence.source_words[i] = source.words[s];
      evidence.target_words[i] = target.words[t];
      evidence.source_length[i] = static_cast<std::uint16_t>(std::min<std::size_t>(source.latin[s].size(), 65535));
      evidence.target_length[i] = static_cast<std::uint16_t>(std::min<std::size_t>(target.latin[t].size(), 65535));
    }
    progress.advance(std::min(n, (block + 1) * kBlock) - block * kBlock);
  });
  progress.finish();
}

// r_T and r_S of every usable term, by its place in its list (NaN for a term without a vector), for --explain.
void keep_neighbourhood_means(const ComposedTerms& X, const ComposedTerms& Z, const NeighbourhoodMeans& means,
                              CandidateSet& result) {
  const auto by_term = [](const ComposedTerms& composed, const Eigen::VectorXf& row_means, std::size_t terms) {
    std::vector<float> values(terms, std::numeric_limits<float>::quiet_NaN());
    for (std::size_t row = 0; row < composed.term_ids.size() && row < static_cast<std::size_t>(row_means.size());
         ++row) {
      values[composed.term_ids[row]] = row_means(static_cast<Eigen::Index>(row));
    }
    return values;
  };
  result.source_means = by_term(X, means.source, result.source_terms.size());
  result.target_means = by_term(Z, means.target, result.target_terms.size());
}

}  // namespace

std::size_t add_dictionary_candidates(const Dictionary& dictionary, const TermList& source_terms,
                                      const TermList& target_terms, const ComposedTerms& X, const ComposedTerms& Z,
                                      const NeighbourhoodMeans& means, std::size_t limit, int threads,
                                      std::vector<Candidate>& candidates) {
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  const std::vector<std::string> sources = folded_terms(source_terms, threads),
                                 targets = folded_terms(target_terms, threads);
  // The targets with a vector: by their folded text, and by each of their words.
  std::vector<std::uint32_t> target_row(targets.size(), kNone);
  for (std::size_t row = 0; row < Z.term_ids.size(); ++row) target_row[Z.term_ids[row]] = static_cast<std::uint32_t>(row);
  std::unordered_map<std::string_view, std::uint32_t> target_by_text;
  std::unordered_map<std::string, std::vector<std::uint32_t>> targets_by_word;  // rows
  std::vector<std::uint16_t> target_word_count(Z.term_ids.size(), 0);
  for (std::size_t row = 0; row < Z.term_ids.size(); ++row) {
    const std::string& text = targets[Z.term_ids[row]];
    target_by_text.emplace(text, static_cast<std::uint32_t>(row));
    std::vector<std::string> words = split_words(text);
    target_word_count[row] = static_cast<std::uint16_t>(std::min<std::size_t>(words.size(), 65535));
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    for (std::string& word : words) targets_by_word[std::move(word)].push_back(static_cast<std::uint32_t>(row));
  }
  const PhraseTable& phrases = dictionary.sources();
  // Each source row's dictionary targets, found on the threads.
  std::vector<std::vector<Candidate>> found(X.term_ids.size());
  parallel_for(X.term_ids.size(), threads, [&](std::size_t source) {
    const std::string& text = sources[X.term_ids[source]];
    std::vector<std::uint32_t> picked;
    // The whole term's translations.
    if (const std::uint32_t id = phrases.find(text); id != PhraseTable::npos) {
      const auto [begin, end] = dictionary.translations(id);
      for (auto t = begin; t != end; ++t) {
        const auto hit = target_by_text.find(dictionary.targets().phrase(*t));
        if (hit != target_by_text.end()) picked.push_back(hit->second);
      }
    }
    // The targets in which every source word has a translation (at most 32 words are followed).
    const std::vector<std::string> words = split_words(text);
    if (!words.empty() && words.size() <= 32) {
      std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> hits;  // row -> (word bits, hits)
      for (std::size_t k = 0; k < words.size(); ++k) {
        const std::uint32_t id = phrases.find(words[k]);
        if (id == PhraseTable::npos) continue;
        const auto [begin, end] = dictionary.translations(id);
        for (auto t = begin; t != end; ++t) {
          const auto rows = targets_by_word.find(std::string(dictionary.targets().phrase(*t)));
          if (rows == targets_by_word.end()) continue;
          for (const std::uint32_t row : rows->second) {
            auto& [bits, count] = hits[row];
            if (!(bits & (1u << k))) ++count;
            bits |= 1u << k;
          }
        }
      }
      const std::uint32_t all = words.size() == 32 ? 0xffffffffu : (1u << words.size()) - 1;
      std::vector<std::tuple<std::size_t, float, std::uint32_t>> complete;  // (word count gap, -cosine, row)
      for (const auto& [row, hit] : hits) {
        if (hit.first != all || target_word_count[row] > words.size() + 2) continue;
        const std::size_t gap = target_word_count[row] > words.size() ? target_word_count[row] - words.size()
                                                                      : words.size() - target_word_count[row];
        complete.emplace_back(gap, -X.vectors.row(source).dot(Z.vectors.row(row)), row);
      }
      std::sort(complete.begin(), complete.end());
      for (std::size_t k = 0; k < complete.size() && k < limit; ++k) picked.push_back(std::get<2>(complete[k]));
    }
    std::sort(picked.begin(), picked.end());
    picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
    for (const std::uint32_t target : picked) {
      const float cosine = X.vectors.row(source).dot(Z.vectors.row(target));
      found[source].push_back({detail::csls_score(cosine, means.source(static_cast<Eigen::Index>(source)),
                                                  means.target(static_cast<Eigen::Index>(target))),
                               cosine, static_cast<std::uint32_t>(source), target});
    }
  });
  std::vector<Candidate> pairs;
  for (std::vector<Candidate>& list : found) pairs.insert(pairs.end(), list.begin(), list.end());
  return add_new_candidates(pairs, X.term_ids.size(), threads, candidates);
}

std::size_t add_family_candidates(const TermForms& target_forms, const ComposedTerms& X, const ComposedTerms& Z,
                                  const NeighbourhoodMeans& means, std::size_t best, int threads,
                                  std::vector<Candidate>& candidates) {
  if (target_forms.empty() || best == 0) return 0;
  // A family's members with a vector (rows of Z), at most kMembers of them followed per family: the task's lists
  // hold a dozen forms of a Russian noun, and a family larger than that is a common word's, not a term's forms.
  constexpr std::size_t kMembers = 16;
  const detail::KeyGroups members =
      detail::group_by_key(Z.term_ids.size(), target_forms.family_size.size(),
                           [&](std::size_t row) { return target_forms.family[Z.term_ids[row]]; });
  const detail::KeyGroups by_source = detail::group_by_key(candidates.size(), X.term_ids.size(),
                                                           [&](std::size_t i) { return candidates[i].source; });
  std::vector<std::vector<Candidate>> found(X.term_ids.size());
  parallel_for(X.term_ids.size(), threads, [&](std::size_t source) {
    std::vector<const Candidate*> own;
    for (std::size_t k = by_source.begin(source); k < by_source.end(source); ++k)
      own.push_back(&candidates[by_source.order[k]]);
    const std::size_t kept = std::min(best, own.size());
    std::partial_sort(own.begin(), own.begin() + static_cast<std::ptrdiff_t>(kept), own.end(),
                      [](const Candidate* a, const Candidate* b) { return ranks_before(*a, *b); });
    for (std::size_t k = 0; k < kept; ++k) {
      const std::uint32_t family = target_forms.family[Z.term_ids[own[k]->target]];
      const std::size_t size = members.end(family) - members.begin(family);
      if (size < 2 || size > kMembers) continue;
      for (std::size_t m = members.begin(family); m < members.end(family); ++m) {
        const std::uint32_t target = members.order[m];
        const float cosine = X.vectors.row(static_cast<Eigen::Index>(source)).dot(Z.vectors.row(target));
        found[source].push_back({detail::csls_score(cosine, means.source(static_cast<Eigen::Index>(source)),
                                                    means.target(static_cast<Eigen::Index>(target))),
                                 cosine, static_cast<std::uint32_t>(source), target});
      }
    }
    std::sort(found[source].begin(), found[source].end(),
              [](const Candidate& a, const Candidate& b) { return a.target < b.target; });
    found[source].erase(std::unique(found[source].begin(), found[source].end(),
                                    [](const Candidate& a, const Candidate& b) { return a.target == b.target; }),
                        found[source].end());
  });
  std::vector<Candidate> pairs;
  for (std::vector<Candidate>& list : found) pairs.insert(pairs.end(), list.begin(), list.end());
  return add_new_candidates(pairs, X.term_ids.size(), threads, candidates);
}

double dictionary_coverage(const Dictionary& dictionary, const TermList& source_terms) {
  std::unordered_set<std::string> words;
  for (const std::string& term : source_terms.terms)
    for (std::string& word : split_words(fold_case(term))) words.insert(std::move(word));
  std::size_t translated = 0;
  for (const std::string& word : words) {
    const std::uint32_t id = dictionary.sources().find(word);
    translated += id != PhraseTable::npos && dictionary.translations(id).first != dictionary.translations(id).second;
  }
  return words.empty() ? 0.0 : static_cast<double>(translated) / static_cast<double>(words.size());
}

TileOptions scoring_tiles(const AlignConfig& config) {
  TileOptions tiles;
  tiles.rows = config.scoring.tile_rows;
  tiles.cols = config.scoring.tile_cols;
  tiles.threads = config.scoring.threads;
  tiles.precision = resolve_precision(config.scoring.precision);
  return tiles;
}

std::size_t final_cap(const AlignConfig& config, std::size_t source_terms, std::size_t target_terms, bool warn) {
  const std::size_t cap = submission_cap(source_terms, target_terms);
  if (config.ranking.cap > cap && warn) {
    logger().warn("cap {} is above the BUCC cap of these lists, 10 x ({} + {}) / 2 = {}: the list stops there",
                  config.ranking.cap, source_terms, target_terms, cap);
  }
  return config.ranking.cap > 0 ? std::min(cap, config.ranking.cap) : cap;
}

bool uses_orthography(const AlignConfig& config, bool full_evidence) {
  return full_evidence || config.orthography.weight > 0 || config.orthography.candidates > 0;
}

CslsSelection score_terms(const Matrix& X, const Matrix& Z, const AlignConfig& config, bool full_evidence,
                          std::size_t limit, const TileOptions& tiles, const ProcessGroup& group) {
  SelectionOptions selection;
  selection.top_m = config.ranking.top_m;
  selection.mutual_m = config.ranking.mutual_m;
  selection.limit = limit;
  // With the full evidence, the targets' lists of their best sources come from the same pass.
  return csls_select(X, Z, config.scoring.k, selection, tiles, config.scoring.candidate_pool, group,
                     full_evidence ? selection.top_m : 0);
}

OtherCandidates add_other_candidates(const AlignConfig& config, bool full_evidence, const TermList& source_terms,
                                     const TermList& target_terms, const ComposedTerms& X, const ComposedTerms& Z,
                                     CslsSelection& scored, const TileOptions& tiles, const ProcessGroup& group,
                                     const Dictionary* dictionary,
                                     std::shared_ptr<const std::pair<TermForms, TermForms>>* forms) {
  const int threads = config.scoring.threads;
  const std::size_t top_m = config.ranking.top_m;
  OtherCandidates other;
  if (full_evidence && top_m > 0) {
    if (!scored.has_reverse)
      scored.reverse = reverse_lists_by_second_pass(X, Z, scored.means, top_m, tiles, group);
    if (group.is_root())
      other.reverse_rank = add_reverse_candidates(scored.reverse, scored.candidates, X.term_ids.size(), threads);
    scored.reverse = {};
  }
  other.orthographic = uses_orthography(config, full_evidence);
  if (other.orthographic) {
    other.source_spellings = term_spellings(source_terms, config.orthography.transliterate, threads);
    other.target_spellings = term_spellings(target_terms, config.orthography.transliterate, threads);
  }
  if (other.orthographic && config.orthography.candidates > 0) {
    add_orthographic_candidates(X, Z, scored.means, other.source_spellings, other.target_spellings,
                                config.orthography.candidates, config.orthography.work_bound, threads, group,
                                scored.candidates);
  }
  if (dictionary && group.is_root()) {
    const std::size_t added =
        add_dictionary_candidates(*dictionary, source_terms, target_terms, X, Z, scored.means,
                                  config.ranking.dictionary_candidates, threads, scored.candidates);
    logger().info("{} dictionary candidates added", added);
  }
  if (full_evidence && config.forms.enabled && group.is_root()) {
    const auto start = std::chrono::steady_clock::now();
    if (forms && *forms) {
      other.source_forms = (*forms)->first;
      other.target_forms = (*forms)->second;
    } else {
      const auto [source_language, target_language] = forms_languages(config);
      term_forms_of_pair(source_terms.terms, source_language, target_terms.terms, target_language,
                         config.forms.hunspell_dir, threads, other.source_forms, other.target_forms);
      if (forms)
        *forms = std::make_shared<const std::pair<TermForms, TermForms>>(other.source_forms, other.target_forms);
    }
    const std::size_t added = add_family_candidates(other.target_forms, X, Z, scored.means,
                                                    config.forms.family_candidates, threads, scored.candidates);
    logger().info("word forms ({}; {}): {} and {} families, {} candidates added, {:.2f} s",
                  other.source_forms.empty() ? "none" : other.source_forms.analyser,
                  other.target_forms.empty() ? "none" : other.target_forms.analyser,
                  other.source_forms.family_size.size(), other.target_forms.family_size.size(), added,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return other;
}

void collect_evidence(const AlignConfig& config, bool full_evidence, ComposedTerms& X, ComposedTerms& Z,
                      CslsSelection& scored, OtherCandidates& other, const WordEvidenceInputs& words,
                      CandidateSet& result) {
  keep_neighbourhood_means(X, Z, scored.means, result);
  CandidateEvidence& evidence = result.evidence;
  const std::vector<Candidate>& candidates = scored.candidates;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& candidate = candidates[i];
    evidence.source.push_back(X.term_ids[candidate.source]);
    evidence.target.push_back(Z.term_ids[candidate.target]);
    evidence.csls.push_back(candidate.score);
    evidence.cosine.push_back(candidate.cosine);
    // The orthographic candidates came after the targets' lists: not in them.
    if (full_evidence)
      evidence.reverse_rank.push_back(i < other.reverse_rank.size() ? other.reverse_rank[i] : 0.0f);
  }
  // What the rest of the evidence does not need goes first: at 130k x 290k terms the term vectors alone are half
  // a gigabyte, and the candidates and their target ranks a few hundred megabytes more.
  X.vectors = Matrix();
  Z.vectors = Matrix();
  scored.candidates = std::vector<Candidate>();
  other.reverse_rank = std::vector<float>();
  const int threads = config.scoring.threads;
  if (other.orthographic) add_term_evidence(other.source_spellings, other.target_spellings, threads, evidence);
  const Dictionary* dictionary = words.dictionary;
  if (full_evidence && dictionary) {
    if (result.decisions.dictionary_coverage < 0)  // not measured as the lists were read
      decide_dictionary_features(result.decisions, dictionary_coverage(*dictionary, result.source_terms),
                                 config.input.dictionary_min_coverage);
    const double coverage = result.decisions.dictionary_coverage;
    if (!result.decisions.dictionary_features) {
      logger().info(
          "the dictionaries translate {:.0f} % of the source terms' words, under {:.0f} % "
          "(dictionary_min_coverage): their features are left out (the models trained without them rank the run), "
          "their candidates stay",
          100 * coverage, 100 * config.input.dictionary_min_coverage);
      dictionary = nullptr;
    } else {
      logger().info("the dictionaries translate {:.0f} % of the source terms' words", 100 * coverage);
      add_dictionary_entries(*dictionary, result.source_terms, result.target_terms, threads, evidence);
    }
  }
  other.source_spellings = Spellings();
  other.target_spellings = Spellings();
  if (!full_evidence) return;
  if (words.seed.pairs.empty()) {
    logger().warn(
        "no seed lexicon: the re-ranker's seed evidence (comp_seed_share, comp_seed_conflict) is 0 for every "
        "candidate, which the models never saw in training; with --mapping, give the --seed it was fitted on too");
  }
  if (words.restore_term_words) words.restore_term_words();
  add_compositional_evidence(words.source_words, words.target_words, words.seed, threads, evidence, dictionary);
  words.source_words = TermWords();
  words.target_words = TermWords();
  if (!config.input.src_corpus.empty()) {
    if (words.restore_word_vectors) words.restore_word_vectors();
    const TermComposer source_composer(words.source, words.mapping.source, words.source_composition);
    const TermComposer target_composer(words.target, words.mapping.target, words.target_composition);
    CorpusEvidenceOptions options = corpus_evidence_options(config);
    options.source_statistics = words.source_corpus;
    options.target_statistics = words.target_corpus;
    add_corpus_evidence(options, result.source_terms, result.target_terms, source_composer, target_composer,
                        words.mapping, words.seed, evidence);
  }
  evidence.source_forms = std::move(other.source_forms);
  evidence.target_forms = std::move(other.target_forms);
  evidence.source_parts = nested_terms(result.source_terms);
  evidence.target_parts = nested_terms(result.target_terms);
  if (uses_reranker(config))
    result.decisions.reranker = reranker_origin(evidence, config.input.reranker, result.decisions.seedless_models);
}

}  // namespace termalign::pipeline
