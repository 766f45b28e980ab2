// The re-ranker's features as one table: each feature's name, its group and how its value is computed from a
// candidate's evidence and the run's statistics. A run's column names and values, the group of a name and the
// check of a model file's features all walk it: a feature is added by adding its entry (and, when its value needs
// a run-wide statistic not yet kept, that statistic in FeatureInputs and compute_statistics). Model files and
// explain's columns (feature:NAME) name features by these names, so a name stays as it is.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "rerank/reranker.h"
#include "rerank/statistics.h"
#include "termalign/types.h"

namespace termalign::detail {

// The ablation's units; a model's columns come from the groups its run computes.
enum class FeatureGroup {
  base,
  compositional,
  corpus_frequency,
  corpus_context,
  dictionary,
  word_forms,
  first_stage
};
// "base", "compositional", "corpus-frequency", "corpus-context", "dictionary", "word-forms", "first-stage".
const char* to_string(FeatureGroup group);
bool needs_corpora(FeatureGroup group);

// The evidence and the run-wide statistics of the groups computed (the others' stay empty). Holds pointers into
// itself and the evidence, which must outlive it.
struct FeatureInputs {
  explicit FeatureInputs(const CandidateEvidence& evidence_) : evidence(evidence_) {}
  FeatureInputs(const FeatureInputs&) = delete;
  FeatureInputs& operator=(const FeatureInputs&) = delete;

  const CandidateEvidence& evidence;
  // base: CSLS by source and by target, spelling by source and by target
  RunScale csls, cosine, word_alignment;
  Standing csls_by_source, csls_by_target, ortho_by_source, ortho_by_target;
  // compositional
  RunScale one_to_one;
  Standing one_to_one_by_source, one_to_one_by_target, translated_share_by_source, seed_share_by_source,
      seed_share_by_target;
  // corpus frequency: how close the two terms' frequencies are (minus their log ratio)
  std::vector<float> frequency_closeness;
  Standing frequency_closeness_by_source;
  // corpus context
  RunScale context;
  Standing context_by_source, context_by_target;
  std::vector<float> context_z_by_source;
  // dictionary
  Standing dictionary_entry_by_source, dictionary_entry_by_target, dictionary_share_by_source,
      dictionary_share_by_target;
  // word forms (TermForms; a side without families: each term its own, all its words in citation form), by
  // candidate: the two terms' shares of words in citation form, their families' sizes, whether each is its
  // family's most cited form (and the target its family's most frequent in the corpus, with corpora); the
  // candidates of one source term in one target family (family_group), and where each stands among them
  std::vector<float> source_citation, target_citation, source_family_size, target_family_size;
  std::vector<float> source_citation_best, target_citation_best, target_frequency_best, family_candidates;
  std::vector<std::uint32_t> family_group;
  Standing family_by_source;
  // first stage: its scores
  std::vector<float> stage_scores;
  Standing stage_by_source, stage_by_target, stage_by_family;
  NestedSupport nested;
};

struct Feature {
  std::string_view name;  // unique
  FeatureGroup group;
  float (*value)(const FeatureInputs& inputs, std::size_t candidate);
};

// Every feature, in the order of a run's columns (a model reads its own by name).
const std::vector<Feature>& feature_list();
// The feature of that name, or null.
const Feature* find_feature(std::string_view name);

// The feature columns of a run's candidates: the run-wide statistics computed once, then any range of rows filled
// from them, in blocks on the threads (re-ranking fills a block at a time: at 3.5M candidates the whole table is
// 360 MB). The evidence must outlive it.
class FeatureColumns {
 public:
  // The groups the evidence allows: base, compositional and word forms with evidence.one_to_one (the full
  // evidence), the corpus groups with evidence.context_similarity, the dictionary's with
  // evidence.dictionary_entry.
  FeatureColumns(const CandidateEvidence& evidence, int threads);
  // The first stage's group alone.
  FeatureColumns(const CandidateEvidence& evidence, const Eigen::VectorXd& first_scores, int threads);
  FeatureColumns(const FeatureColumns&) = delete;
  FeatureColumns& operator=(const FeatureColumns&) = delete;

  // Appends the first stage's group, from its score of every candidate.
  void add_first_stage(const Eigen::VectorXd& first_scores);
  const std::vector<std::string>& names() const { return names_; }
  FeatureTable rows(std::size_t first, std::size_t end) const;
  FeatureTable all() const { return rows(0, inputs_.evidence.size()); }

 private:
  void add_group(FeatureGroup group);

  FeatureInputs inputs_;
  int threads_;
  std::vector<const Feature*> columns_;
  std::vector<std::string> names_;
};

}  // namespace termalign::detail
