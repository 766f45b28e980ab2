// A learned re-ranker of candidate pairs: features of each candidate and a logistic regression over them.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "termalign/embeddings.h"

namespace termalign {

// What is known of each candidate pair (one entry per candidate in every vector).
struct CandidateEvidence {
  std::vector<std::uint32_t> source, target;  // term ids in the two lists
  std::vector<float> csls, cosine;            // in the mapped space
  std::vector<float> reverse_rank;            // rank of the source among the target's best sources (0: not there)
  std::vector<float> orthographic;            // n-gram Dice of the Latin spellings
  std::vector<float> word_alignment;          // mean best word-to-word cosine, both directions averaged
  std::vector<std::uint8_t> identical;        // same Latin spelling
  std::vector<std::uint16_t> source_words, target_words;    // words per term
  std::vector<std::uint16_t> source_length, target_length;  // bytes per Latin spelling
  std::size_t size() const { return source.size(); }
};

// Names of the feature columns, in order.
const std::vector<std::string>& feature_names();

// candidates x features: the evidence plus ranks and margins of each candidate among those of its source term and
// among those of its target term.
Matrix candidate_features(const CandidateEvidence& evidence);

// Logistic regression over standardised features.
struct Reranker {
  std::vector<std::string> features;  // names, must equal feature_names() when applied
  Eigen::VectorXd mean, scale, weights;
  double bias = 0;
  // The logit of each row (higher = more likely a translation).
  Eigen::VectorXd score(const Matrix& features) const;
};

// Fits by Newton's method with an L2 penalty `l2` on the weights (not the bias). labels: 1 for a gold pair.
Reranker train_logistic(const Matrix& features, const std::vector<std::uint8_t>& labels, double l2 = 1.0);

// Text file: a header, then "name mean scale weight" per feature and the bias. format_reranker gives the text,
// save_reranker writes it atomically.
std::string format_reranker(const Reranker& model);
void save_reranker(const std::string& path, const Reranker& model);
Reranker load_reranker(const std::string& path);

}  // namespace termalign
