// Rank: the final score of every candidate, the ranked and capped list, and its text.
#include "pipeline/ranking.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <string_view>

#include "io/io.h"
#include "pipeline/stages.h"
#include "rerank/reranker.h"
#include "termalign/aligner.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "text/word_forms.h"
#include "util/parallel.h"

namespace termalign {

namespace {

// The text of `n` lines "source TAB target [TAB score] LF", line(i) giving line i's source, target and score.
// Two passes over blocks of lines, shared out among the threads: each block's size, then each block formatted
// straight into its place in the text (no block strings joined afterwards).
template <typename Line>
std::string format_lines(std::size_t n, bool with_scores, int threads, const Line& line) {
  constexpr std::size_t kBlock = 16384;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  // "\t%.6f" of the score into `buffer` (32 bytes); returns its length.
  const auto score_text = [](float score, char* buffer) {
    return static_cast<std::size_t>(std::snprintf(buffer, 32, "\t%.6f", static_cast<double>(score)));
  };
  std::vector<std::size_t> offsets(blocks + 1, 0);
  parallel_for(blocks, threads, [&](std::size_t b) {
    std::size_t size = 0;
    char score[32];
    for (std::size_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
      const auto [source, target, value] = line(i);
      size += source.size() + target.size() + 2 + (with_scores ? score_text(value, score) : 0);
    }
    offsets[b + 1] = size;
  });
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  std::string text(offsets.back(), '\0');
  parallel_for(blocks, threads, [&](std::size_t b) {
    char* out = text.data() + offsets[b];
    char score[32];
    for (std::size_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
      const auto [source, target, value] = line(i);
      out = std::copy(source.begin(), source.end(), out);
      *out++ = '\t';
      out = std::copy(target.begin(), target.end(), out);
      if (with_scores) out = std::copy_n(score, score_text(value, score), out);
      *out++ = '\n';
    }
  });
  return text;
}

struct Line {
  std::string_view source, target;
  float score;
};

}  // namespace

std::string format_pairs(const std::vector<RankedPair>& pairs, bool with_scores, int threads) {
  return format_lines(pairs.size(), with_scores, threads, [&](std::size_t i) {
    return Line{pairs[i].source, pairs[i].target, pairs[i].score};
  });
}

std::string format_ranked(const std::vector<RankedIndex>& ranked, const std::vector<std::string>& sources,
                          const std::vector<std::string>& targets, bool with_scores, int threads) {
  return format_lines(ranked.size(), with_scores, threads, [&](std::size_t i) {
    return Line{sources[ranked[i].source], targets[ranked[i].target], ranked[i].score};
  });
}

void write_pairs(const std::string& path, const std::vector<RankedPair>& pairs, bool with_scores) {
  write_file_atomically(path, format_pairs(pairs, with_scores));
}

namespace pipeline {

Eigen::VectorXd agreement_order(const CandidateEvidence& e, const Eigen::VectorXd& scores) {
  if (e.source_forms.empty() || e.target_forms.empty()) return scores;
  // The candidates by (source term, target family), each group of two or more ordered by agreement.
  const FamilyGroups family = family_groups(e.source, e.target, e.target_forms);
  std::vector<std::vector<std::uint32_t>> groups(family.count);
  for (std::size_t i = 0; i < e.size(); ++i)
    if (e.target_forms.family_size[e.target_forms.family[e.target[i]]] > 1)
      groups[family.of[i]].push_back(static_cast<std::uint32_t>(i));
  Eigen::VectorXd ordered = scores;
  std::vector<double> values;
  for (std::vector<std::uint32_t>& members : groups) {
    if (members.size() < 2) continue;
    // A source term in citation form (singular) takes the citation form; an inflected one keeps the model's order,
    // since the forms that agree with it differ by language (a German plural is often spelt as its singular).
    const float cited = e.source_forms.citation[e.source[members.front()]];
    if (cited < 1.0f) continue;
    const auto agreement = [&](std::uint32_t i) {
      return -std::abs(cited - e.target_forms.citation[e.target[i]]);
    };
    values.clear();
    for (const std::uint32_t i : members) values.push_back(scores(i));
    std::sort(values.begin(), values.end(), std::greater<>());
    std::sort(members.begin(), members.end(), [&](std::uint32_t a, std::uint32_t b) {
      if (agreement(a) != agreement(b)) return agreement(a) > agreement(b);
      // A form shorter than its dictionary form is rarely a citation or a plain plural (`таблиц`, a genitive).
      const float short_a = e.target_forms.shortened[e.target[a]], short_b = e.target_forms.shortened[e.target[b]];
      if (short_a != short_b) return short_a < short_b;
      return scores(a) != scores(b) ? scores(a) > scores(b) : a < b;
    });
    for (std::size_t k = 0; k < members.size(); ++k) ordered(members[k]) = values[k];
  }
  return ordered;
}

Eigen::VectorXd run_scores(const CandidateSet& candidates, const AlignConfig& config) {
  const CandidateEvidence& evidence = candidates.evidence;
  if (uses_reranker(config)) {
    const Eigen::VectorXd scores = rerank(evidence, config, candidates.decisions.seedless_models);
    return config.forms.agreement_order ? agreement_order(evidence, scores) : scores;
  }
  Eigen::VectorXd scores(static_cast<Eigen::Index>(evidence.size()));
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    const double orthographic = config.orthography.weight > 0 ? evidence.orthographic[i] : 0.0;
    scores(static_cast<Eigen::Index>(i)) = evidence.csls[i] + config.orthography.weight * orthographic;
  }
  return scores;
}

}  // namespace pipeline

Eigen::VectorXd candidate_scores(const CandidateSet& candidates, const AlignConfig& config) {
  Eigen::VectorXd scores = pipeline::run_scores(candidates, config);
  if (candidates.earlier_scores.empty()) return scores;
  // The mean over the runs (Aligner::candidates, seed_ranked_fusion), in a fixed order: the earlier runs, then
  // this one.
  const double runs = static_cast<double>(candidates.earlier_scores.size() + 1);
  for (const std::vector<float>& earlier : candidates.earlier_scores)
    TERMALIGN_CHECK(earlier.size() == candidates.evidence.size(), "one earlier score per candidate");
  for (std::size_t i = 0; i < candidates.evidence.size(); ++i) {
    double sum = 0;
    for (const std::vector<float>& earlier : candidates.earlier_scores) sum += earlier[i];
    auto& score = scores(static_cast<Eigen::Index>(i));
    score = (sum + score) / runs;
  }
  return scores;
}

std::vector<RankedIndex> rank_candidate_indices(const CandidateSet& candidates, const Eigen::VectorXd& scores,
                                                int threads) {
  const CandidateEvidence& evidence = candidates.evidence;
  const std::size_t n = evidence.size();
  // The sort keys side by side (an indirect sort reads three arrays at random: at 3.5M candidates, most of a
  // second), in ranks_before's order: score descending, then source and target ids (a pair is one candidate).
  struct Key {
    double score;
    std::uint32_t source, target;
    bool operator<(const Key& other) const {
      if (score != other.score) return score > other.score;
      return source != other.source ? source < other.source : target < other.target;
    }
  };
  std::vector<Key> keys(n);
  constexpr std::size_t kBlock = 65536;
  parallel_for((n + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    for (std::size_t i = block * kBlock; i < std::min(n, (block + 1) * kBlock); ++i)
      keys[i] = {scores(static_cast<Eigen::Index>(i)), evidence.source[i], evidence.target[i]};
  });
  // NaN is ordered against nothing: the sort's result would be undefined.
  const auto nan = std::find_if(keys.begin(), keys.end(), [](const Key& key) { return std::isnan(key.score); });
  if (nan != keys.end()) {
    throw_usage_error("The score of candidate " + std::to_string(nan - keys.begin()) + " (source term " +
                      std::to_string(nan->source) + ", target term " + std::to_string(nan->target) +
                      ") is NaN: candidates are ranked by scores that are numbers.");
  }
  // Without other evidence the scoring already returns its candidates in this order: one pass checks it.
  // Otherwise each thread sorts a slice and the slices are merged in pairs (each level's merges in parallel).
  if (!std::is_sorted(keys.begin(), keys.end())) {
    std::size_t slices = 1;
    while (slices * 2 <= static_cast<std::size_t>(resolve_threads(threads)) && n / (slices * 2) >= kBlock)
      slices *= 2;
    const auto bound = [&](std::size_t slice) {
      return keys.begin() + static_cast<std::ptrdiff_t>(n * slice / slices);
    };
    parallel_for(slices, threads, [&](std::size_t slice) { std::sort(bound(slice), bound(slice + 1)); });
    for (std::size_t width = 1; width < slices; width *= 2) {
      parallel_for(slices / (2 * width), threads, [&](std::size_t pair) {
        const std::size_t first = 2 * width * pair;
        std::inplace_merge(bound(first), bound(first + width), bound(first + 2 * width));
      });
    }
  }
  std::vector<RankedIndex> ranked;
  ranked.reserve(std::min(n, candidates.cap));
  std::vector<std::size_t> kept_per_source(candidates.per_source > 0 ? candidates.source_terms.size() : 0, 0);
  for (const Key& key : keys) {
    if (ranked.size() == candidates.cap) break;
    if (candidates.per_source > 0 && ++kept_per_source[key.source] > candidates.per_source) continue;
    ranked.push_back({key.source, key.target, static_cast<float>(key.score)});
  }
  return ranked;
}

namespace pipeline {

std::vector<RankedPair> ranked_pairs(const CandidateSet& candidates, const std::vector<RankedIndex>& indices,
                                     int threads) {
  std::vector<RankedPair> ranked(indices.size());
  constexpr std::size_t kBlock = 16384;
  parallel_for((indices.size() + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    for (std::size_t r = block * kBlock; r < std::min(indices.size(), (block + 1) * kBlock); ++r) {
      ranked[r] = {candidates.source_terms.terms[indices[r].source],
                   candidates.target_terms.terms[indices[r].target], indices[r].score};
    }
  });
  return ranked;
}

std::vector<RankedIndex> ranking_by(const CandidateSet& candidates, const Eigen::VectorXd& scores,
                                    const AlignConfig& config) {
  std::vector<RankedIndex> ranked = rank_candidate_indices(candidates, scores, config.scoring.threads);
  logger().info("ranked {} pairs (cap {})", ranked.size(), candidates.cap);
  return ranked;
}

}  // namespace pipeline

std::vector<RankedIndex> final_ranking(const CandidateSet& candidates, const AlignConfig& config) {
  return pipeline::ranking_by(candidates, candidate_scores(candidates, config), config);
}

std::vector<RankedPair> rank_candidates(const CandidateSet& candidates, const Eigen::VectorXd& scores,
                                        int threads) {
  return pipeline::ranked_pairs(candidates, rank_candidate_indices(candidates, scores, threads), threads);
}

}  // namespace termalign
