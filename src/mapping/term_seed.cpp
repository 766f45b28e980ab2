#include "mapping/term_seed.h"

#include <algorithm>
#include <set>
#include <utility>

#include "scoring/scoring.h"

namespace termalign {

std::vector<Candidate> confident_term_pairs(const Matrix& X, const Matrix& Z, int k, std::size_t limit,
                                            int threads) {
  if (X.rows() == 0 || Z.rows() == 0) return {};
  TileOptions tiles;
  tiles.threads = threads;
  SelectionOptions mutual_nearest;
  mutual_nearest.top_m = 1;
  mutual_nearest.mutual_m = 1;
  std::vector<Candidate> pairs =
      select_csls_candidates(X, Z, neighbourhood_means(X, Z, k, tiles), mutual_nearest, tiles);
  std::sort(pairs.begin(), pairs.end(), [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.source != b.source ? a.source < b.source : a.target < b.target;
  });
  if (limit > 0 && pairs.size() > limit) pairs.resize(limit);
  return pairs;
}

namespace {

// The words of a term that `side.words` knows, and their unit rows in the shared space (one row per word).
struct KnownWords {
  std::vector<std::string> words;
  Matrix rows;
};

KnownWords known_words(const TermSide& side, std::uint32_t row) {
  KnownWords known;
  const std::vector<std::string> tokens = split_words(side.terms[side.term_ids[row]]);
  Matrix rows(static_cast<Eigen::Index>(tokens.size()), side.words.dim());
  RowVector vector(side.words.dim());
  for (const std::string& token : tokens) {
    if (!side.words.compose(token, vector)) continue;
    rows.row(static_cast<Eigen::Index>(known.words.size())) = vector;
    known.words.push_back(token);
  }
  known.rows = rows.topRows(static_cast<Eigen::Index>(known.words.size())) * side.transform;
  known.rows.rowwise().normalize();
  return known;
}

}  // namespace

PairList term_word_pairs(const std::vector<Candidate>& pairs, const TermSide& source, const TermSide& target,
                         const std::string& path) {
  PairList seed;
  seed.path = path;
  std::set<std::pair<std::string, std::string>> seen;
  const auto add = [&](const std::string& s, const std::string& t) {
    if (!seen.emplace(s, t).second) return;
    seed.pairs.emplace_back(s, t);
    seed.lines.push_back(seed.pairs.size());
  };
  for (const Candidate& pair : pairs) {
    const KnownWords s = known_words(source, pair.source);
    const KnownWords t = known_words(target, pair.target);
    if (s.words.empty() || t.words.empty()) continue;
    if (s.words.size() == 1 && t.words.size() == 1) {
      add(s.words[0], t.words[0]);
      continue;
    }
    // Within the pair: each source word's closest target word, kept when that word's closest is it.
    const Matrix similarity = s.rows * t.rows.transpose();
    for (Eigen::Index i = 0; i < similarity.rows(); ++i) {
      Eigen::Index j = 0, back = 0;
      similarity.row(i).maxCoeff(&j);
      similarity.col(j).maxCoeff(&back);
      if (back == i) add(s.words[static_cast<std::size_t>(i)], t.words[static_cast<std::size_t>(j)]);
    }
  }
  return seed;
}

}  // namespace termalign
