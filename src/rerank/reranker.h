// A learned re-ranker of candidate pairs: features of each candidate, and gradient-boosted trees (XGBoost) in two
// stages over them, or a logistic regression.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/types.h"

namespace termalign {

namespace detail {
class CompiledTrees;
}  // namespace detail

// The feature columns of a set of candidates: names and values (candidates x features).
struct FeatureTable {
  std::vector<std::string> names;
  Matrix values;
  // The columns named `wanted`, in that order; an input error naming `origin` (a model file) when one is missing.
  Matrix select(const std::vector<std::string>& wanted, const std::string& origin) const;
  // The same for `rows` rows from `first`.
  Matrix select(const std::vector<std::string>& wanted, const std::string& origin, Eigen::Index first,
                Eigen::Index rows) const;
  bool has(const std::string& name) const;
};

// Every feature the evidence allows: the base group (CSLS, cosine, ranks and margins among the source's and the
// target's candidates, spelling, word alignment, sizes), then the compositional group when evidence.one_to_one is
// filled, the corpus frequency and corpus context groups when evidence.context_similarity is. Values are
// scale-free where they can be (ranks, margins, z-scores within a source's or a target's candidates), so that a
// model trained on one language pair and vector space applies to others. Computed on `threads` threads (0: all).
FeatureTable candidate_feature_table(const CandidateEvidence& evidence, int threads = 1);

// The group of a feature name: "base", "compositional", "corpus-frequency", "corpus-context", "dictionary",
// "word-forms" (the ablation's units) or "first-stage" (a second stage's inputs); "" for a name that is no
// feature. The features, their groups and how each is computed are one table (src/rerank/features.cpp); a model
// file naming another is refused.
std::string feature_group(const std::string& name);
// The first of `names` that needs the corpora (a "corpus-..." group), or null when none does.
const std::string* first_corpus_feature(const std::vector<std::string>& names);

// What the features mean: raised whenever a change computes any feature differently from the same inputs (a new
// tokenisation, another rule for compound members), so that a model trained before is told apart. The bundled
// models are retrained then (scripts/train_models.sh).
constexpr int kFeatureRevision = 1;

enum class Learner { logistic, trees, ranking };
const char* to_string(Learner learner);
Learner parse_learner(const std::string& name);  // usage error on an unknown name

// A re-ranker: a logistic regression over standardised features, or gradient-boosted trees (XGBoost) trained for
// a binary label (`trees`) or a pairwise ranking objective (`ranking`).
// A two-stage re-ranker also has a first stage: the second reads the candidate features and the first stage's
// columns (stage_feature_names: the first stage's score and where it stands among the source's and the target's
// candidates), so that it sees the competition of each candidate as the first stage ranks it.
struct Reranker {
  Learner learner = Learner::logistic;
  std::vector<std::string> features;     // the columns it reads, by name
  Eigen::VectorXd mean, scale, weights;  // logistic
  double bias = 0;
  std::string booster;                          // trees and ranking: the XGBoost model (JSON)
  std::shared_ptr<const detail::CompiledTrees> compiled;  // its trees, when compile_boosted_trees takes them
  std::shared_ptr<const Reranker> first_stage;  // a two-stage model's first stage (itself of one stage)
  // How it was made, as its file says in lines "# ..." at its top (without the "# "): train_reranker writes the
  // termalign version, the recipe, the inputs' fingerprints and the options. Empty for a model of a termalign
  // before feature revision 1.
  std::vector<std::string> provenance;
  int feature_revision = 0;  // kFeatureRevision when trained; 0 when the file does not say
  std::size_t stages() const { return first_stage ? 2 : 1; }
  // The score of each row (higher = more likely a translation): the logit, or the trees' margin.
  // `features_matrix` holds this model's columns in its order.
  Eigen::VectorXd score(const Matrix& features_matrix, int threads = 0) const;
  // The same over a table, whose columns are chosen by name (`origin` names the model in errors).
  // Scored in blocks of `block_rows` rows (the model's columns selected per block): the same scores, without
  // copies of all rows' columns. A two-stage model needs the table to hold the first stage's columns
  // (with_stage_features); score_candidates computes them.
  Eigen::VectorXd score(const FeatureTable& table, const std::string& origin, int threads = 0,
                        Eigen::Index block_rows = Eigen::Index(1) << 18) const;
  // Each row's contribution of each feature to its score (the last column: the bias); for trees, XGBoost's SHAP
  // values. Rows sum to the score.
  Matrix contributions(const Matrix& features_matrix, int threads = 0) const;
};

// The columns a second stage reads beside the candidate features, computed from the first stage's scores: the
// score, and within the source's candidates and within the target's, 1 / its rank, its margin below the best and
// its margin over the best other candidate (0 when alone).
const std::vector<std::string>& stage_feature_names();
// Those columns for every candidate of `evidence`, from `first_scores` (one per candidate).
FeatureTable stage_feature_table(const CandidateEvidence& evidence, const Eigen::VectorXd& first_scores,
                                 int threads = 1);
// `table` (features of every candidate of `evidence`) with the first stage's columns from `first_scores` appended.
FeatureTable with_stage_columns(const FeatureTable& table, const CandidateEvidence& evidence,
                                const Eigen::VectorXd& first_scores, int threads = 1);
// `table` (every candidate's features) with `model`'s first-stage columns appended when it has two stages (the
// first stage scoring `table`); `table` itself for a one-stage model.
FeatureTable with_stage_features(const Reranker& model, const CandidateEvidence& evidence,
                                 const FeatureTable& table, const std::string& origin, int threads = 1);
// The score of every candidate of `evidence` by `model` (either kind), its features computed a block of rows at a
// time; `origin` names the model in errors.
Eigen::VectorXd score_candidates(const Reranker& model, const CandidateEvidence& evidence,
                                 const std::string& origin, int threads = 0);

// Fits by Newton's method with an L2 penalty `l2` on the weights (not the bias). labels: 1 for a gold pair.
Reranker train_logistic(const Matrix& features, const std::vector<std::string>& names,
                        const std::vector<std::uint8_t>& labels, double l2 = 1.0);

// Text file: a header naming the learner, the feature names, then the weights (logistic: "name mean scale weight"
// per feature and the bias) or the XGBoost model. A two-stage model: the line "termalign-reranker-stages 2", the
// first stage's text, a line "second stage", the second's. format_reranker gives the text, save_reranker writes
// it atomically. load_reranker also reads the logistic models of earlier versions ("termalign-reranker 1").
// Lines "# ..." before the header are the model's provenance; one of them, "feature revision N", is its
// feature_revision. load_reranker warns when that is not kFeatureRevision: the model reads features that this
// build computes otherwise (or cannot tell), and should be trained again. A feature name that is no feature, or a
// first stage's column outside a second stage, is an input error naming the file, the line and the name.
std::string format_reranker(const Reranker& model);
void save_reranker(const std::string& path, const Reranker& model);
Reranker load_reranker(const std::string& path);
Reranker parse_reranker(const std::string& text, const std::string& origin);

// kDefaultReranker and kNoReranker, the values of input.reranker for the bundled model and none: config.h.
// The bundled models, trained on enfr/train (models/reranker-enfr*.txt, built into the library): with the corpus
// features, or without them for runs without corpora; trained with the seed lexicon, or (seedless) with a seed
// induced from the vectors, for runs without a seed lexicon (is_induced_seed).
// With `dictionary`: the models trained with a bilingual dictionary (models/reranker-enfr-dict.txt,
// reranker-enfr-corpus-dict.txt), for runs with one.
Reranker bundled_reranker(bool with_corpora, bool seedless = false, bool dictionary = false);
// The model input.reranker names: the bundled one for kDefaultReranker (with corpora when the table has their
// features, seedless when the run's seed is induced), else the file. Not to be called for kNoReranker.
Reranker configured_reranker(const std::string& setting, const FeatureTable& table, bool seedless = false);
// The scores of config.input.reranker's model (uses_reranker(config)) for every candidate; `seedless`: the run's
// decision of the bundled models' family (RunDecisions::seedless_models).
Eigen::VectorXd rerank(const CandidateEvidence& evidence, const AlignConfig& config, bool seedless);
// What names the model that rerank applies to this evidence: its file, or the bundled model's.
std::string reranker_origin(const CandidateEvidence& evidence, const std::string& setting, bool seedless);
// What names the configured model in messages: its file, or the bundled model's.
std::string reranker_origin(const std::string& setting, const FeatureTable& table, bool seedless = false);

}  // namespace termalign
