// The ranked list evaluate scores, shared by the scores of one run and the paired comparison of runs.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "termalign/evaluation.h"
#include "termalign/lexicon.h"

namespace termalign::detail {

using Pair = std::pair<std::string, std::string>;

struct PairHash {
  std::size_t operator()(const Pair& pair) const {
    const std::size_t first = std::hash<std::string>()(pair.first);
    return first ^ (std::hash<std::string>()(pair.second) + 0x9e3779b97f4a7c15ULL + (first << 6) + (first >> 2));
  }
};

// The ranks at which a ranked list hits the relevant set (1-based, increasing).
using HitRanks = std::vector<std::size_t>;

// The gold's distinct pairs in first-occurrence order, and each one's place among them. Input error when empty.
struct GoldIndex {
  explicit GoldIndex(const PairList& gold);
  std::unordered_map<Pair, std::size_t, PairHash> index;
  std::vector<const Pair*> pairs;  // into gold.pairs
};

// A prediction list as evaluate ranks it: repeated pairs dropped (counted once, at their first rank) and, with
// options.ignore_oov, pairs outside the term lists dropped.
struct RankedList {
  std::vector<std::size_t> places;  // rank r (1-based) is predictions.pairs[places[r - 1]]
  HitRanks hit_ranks;
  std::vector<std::size_t> hit_gold;  // the gold place of each hit
  std::size_t repeated = 0, out_of_lists = 0;
};
RankedList rank_predictions(const GoldIndex& gold, const PairList& predictions, const TermList* source_terms,
                            const TermList* target_terms, const EvaluationOptions& options);

}  // namespace termalign::detail
