// The types that cross the public API: what the Aligner's stages take and return (termalign/aligner.h), and the
// group of processes a run may share its scoring with.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/lexicon.h"

namespace termalign {

// The scoring's results (scoring/).
// Mean cosine of each row to its k nearest rows on the other side (k is clipped to the other side's size).
struct NeighbourhoodMeans {
  Eigen::VectorXf source;  // n1: r_T(x_i), mean of the k largest x_i . z_j over j
  Eigen::VectorXf target;  // n2: r_S(z_j), mean of the k largest x_i . z_j over i
};

struct Candidate {
  float score = 0;           // CSLS
  float cosine = 0;          // x_i . z_j
  std::uint32_t source = 0;  // row of X
  std::uint32_t target = 0;  // row of Z
};

// Strict total order: score descending, then source index, then target index ascending.
inline bool ranks_before(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.source != b.source) return a.source < b.source;
  return a.target < b.target;
}

struct CslsSelection {
  NeighbourhoodMeans means;
  std::vector<Candidate> candidates;  // as select_csls_candidates returns them
  std::size_t rescored_rows = 0;      // rows whose pool could not be shown to hold their top_m (see below)
  // With `reverse_m` > 0 and the fused pass: each target's best reverse_m sources by CSLS among the 2 reverse_m
  // that the pass kept by an estimate of CSLS (see csls_select), grouped by target in ascending order, each group
  // best first; on rank 0 of a group only.
  std::vector<Candidate> reverse;
  bool has_reverse = false;  // whether `reverse` was filled (the fused pass ran with reverse_m > 0)
};

// The mapping (mapping/).
// A fitted normalisation: the same steps can be applied later to vectors outside the matrix it was fitted on
// (subword vectors of out-of-vocabulary words).
struct Normalizer {
  Normalization kind = Normalization::none;
  RowVector mean;  // the centring vector (empty unless kind centres)

  // Fits on `vectors` (n x d) and normalises them in place, blocks of rows on `threads` threads (0: OpenMP's
  // default; the result does not depend on it).
  void fit_apply(Matrix& vectors, int threads = 0);
  // Applies the fitted steps to one vector (or a matrix row), or to every row of a matrix.
  void apply(Eigen::Ref<RowVector> vector) const;
  void apply_rows(Matrix& vectors, int threads = 0) const;
};

struct Mapping {
  // Both sides are mapped into a shared space of dimension d' (d' = d unless the dimensions are reduced): a
  // normalised source vector x (1 x d) becomes x source_transform, a target vector z becomes z target_transform.
  // Orthogonal Procrustes: source_transform = W, target_transform = I.
  Matrix source_transform, target_transform;  // d x d'
  Normalizer source, target;
};

// The composed terms (mapping/composition).
struct ComposedTerms {
  Matrix vectors;                       // usable terms x d, unit rows
  std::vector<std::uint32_t> term_ids;  // row -> index in the input list
  std::vector<std::uint32_t> unusable;  // indices with no usable token
};

// The final list (pipeline/ranking).
struct RankedPair {
  std::string source, target;
  float score = 0;
};

// A pair of the final list by its terms' places in their lists (no strings copied), and its score.
struct RankedIndex {
  std::uint32_t source = 0, target = 0;
  float score = 0;
};

// One entry per candidate in every vector (the nested terms' lists excepted, which are by term id).
// The families of word forms of a term list (text/word_forms.h), by term id: the terms whose words share their
// dictionary forms (`файл`, `файла`, `файлы`). Empty when the run has none (forms off, or a language without an
// analyser).
struct TermForms {
  std::vector<std::uint32_t> family;  // by term: its family's id (0 .. families - 1)
  std::vector<float> citation;        // by term: the share of its words in citation form
  std::vector<float> shortened;  // by term: its words shorter than their forms (`таблиц` of `таблица`)
  std::vector<std::uint32_t> family_size;  // by family: its terms
  std::string analyser;                    // what read the words ("hunspell ru_RU", "snowball german")
  bool empty() const { return family.empty(); }
};

struct CandidateEvidence {
  std::vector<std::uint32_t> source, target;  // term ids in the two lists
  std::vector<float> csls, cosine;            // in the mapped space
  std::vector<float> reverse_rank;            // rank of the source among the target's best sources (0: not there)
  std::vector<float> orthographic;            // n-gram Dice of the Latin spellings
  std::vector<float> word_alignment;          // mean best word-to-word cosine, both directions averaged
  std::vector<std::uint8_t> identical;        // same Latin spelling
  std::vector<std::uint16_t> source_words, target_words;    // words per term
  std::vector<std::uint16_t> source_length, target_length;  // bytes per Latin spelling
  // Compositional evidence (compositional.h), with the full evidence: one-to-one word alignment, share of words
  // with a translation in the other term, agreement of the edge (head) words, share of words with a seed
  // translation (forms of a seed word included) in the other term, share of words whose seed translations are
  // all missing from it.
  std::vector<float> one_to_one, translated_share, edge_agreement, seed_share, seed_conflict;
  // Corpus evidence (corpus_evidence.h), only with both corpora: log relative frequency and sentence frequency of
  // each term in its corpus, their z-scores within their term list, and the context vectors' cosine.
  std::vector<float> source_log_frequency, target_log_frequency, source_log_sentences, target_log_sentences;
  std::vector<float> source_frequency_z, target_frequency_z, context_similarity;
  // Dictionary evidence (--dictionary), only with a dictionary: whether the two terms are a dictionary entry and
  // its translation (1 or 0); the share of the two terms' words with a dictionary translation in the other term
  // and of those with translations none of which is there, as seed_share and seed_conflict read the seed.
  std::vector<float> dictionary_entry, dictionary_share, dictionary_conflict;
  // Nested terms, with the full evidence (by term id; empty otherwise): the ids of the list's terms that are
  // another of its terms' words in a row (`barre d'outils` in `barre d'outils standard`).
  std::vector<std::vector<std::uint32_t>> source_parts, target_parts;
  // Word forms (forms.enabled, with the full evidence and an analyser of the language): each list's families.
  TermForms source_forms, target_forms;
  std::size_t size() const { return source.size(); }
};

// The pipeline's summary and candidates (termalign/aligner.h).
struct AlignmentSummary {
  std::size_t source_terms = 0, target_terms = 0;     // listed
  std::size_t source_usable = 0, target_usable = 0;   // with a vector
  std::size_t seed_pairs = 0, seed_pairs_usable = 0;  // 0 usable when the mapping was loaded
  std::size_t cap = 0;
  double seconds = 0;
};

// What a run decided on the way, from its configuration and its inputs (Aligner::candidates, or the Aligner's
// steps): fixed by the first run of an align(), read by every stage after it (the ranked rounds, the final
// ranking, --explain), and written with the run at the end of OUT.config.toml. None of it is an option: the same
// configuration on the same inputs decides the same.
struct RunDecisions {
  // What the mapping is fitted on: the seed lexicon, a saved mapping, a seed induced from the vectors (the words
  // spelt alike, then the term lists' and the ranked lists' word pairs), or a dictionary's frequent pairs (then
  // the term lists', when seed_term_rounds > 0).
  enum class Seed { lexicon, saved_mapping, induced, dictionary };
  Seed seed = Seed::lexicon;
  std::size_t ranked_rounds = 0;  // runs after the first, each seeded by the last run's ranked list
  bool fusion = false;            // the final list ranks each candidate by its mean score over the runs
  // With dictionaries: the share of the source terms' distinct words they translate (-1: not measured yet), and
  // whether their features rank the run (dictionary_min_coverage); their candidates are added either way.
  bool dictionary = false;
  double dictionary_coverage = -1;
  bool dictionary_features = false;
  // The models trained without a seed lexicon (seedless) rank a run whose seed is induced (its seed evidence then
  // reads the mapping's own lexicon, induced_lexicon) or a dictionary's without the dictionaries' features (the
  // evidence reads its pairs: measured best, pipeline/stages.h reads_own_lexicon). With the dictionaries'
  // features, their models, trained with a seed lexicon and a dictionary.
  bool seedless_models = false;
  std::string reranker;  // the model that ranks the run (its file or the bundled model's name); empty: none
};

const char* to_string(RunDecisions::Seed seed);

// Candidate pairs and their evidence, before the final ranking.
struct CandidateSet {
  TermList source_terms, target_terms;
  CandidateEvidence evidence;  // csls and cosine always; the rest only when asked for
  std::size_t cap = 0;
  std::size_t per_source = 0;  // the final list keeps each source term's best `per_source` pairs (0 = all)
  // r_T and r_S of CSLS (mean similarity to the k nearest terms of the other side) by term id; NaN: no vector.
  std::vector<float> source_means, target_means;
  // With a seed induced from the vectors: the run's mapping, under which a ranked round reads the word pairs of
  // the run's best pairs (Aligner::candidates).
  std::shared_ptr<const Mapping> mapping;
  RunDecisions decisions;
  // After ranked rounds (seed_ranked_fusion): each earlier run's score of each candidate (one vector per run, by
  // candidate; see fused_score for a candidate a run lacked); candidate_scores averages them with the
  // candidate's own score.
  std::vector<std::vector<float>> earlier_scores;
};

// The processes a run shares its scoring with (the collectives of util/distributed.h): single_process() by
// default, an MPI group (termalign/mpi_group.h, TERMALIGN_WITH_MPI) across the ranks of an `mpirun`.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  bool is_root() const { return rank() == 0; }

  // Per-slot best-k lists, `capacity` items per slot, each slot's items in any order and padded with items that
  // rank after every real one (the sentinels of detail::BoundedHeaps). Afterwards every process holds, per slot,
  // the best `capacity` items of the union over all processes, in any order.
  virtual void merge_best(std::vector<float>& values, std::size_t capacity) const = 0;
  virtual void merge_best(std::vector<Candidate>& candidates, std::size_t capacity) const = 0;

  // Every process's vector, concatenated in rank order, on every process.
  virtual std::vector<float> all_gather(const std::vector<float>& local) const = 0;
  // Every process's vector, concatenated in rank order, on rank 0 (empty elsewhere).
  virtual std::vector<Candidate> gather(const std::vector<Candidate>& local) const = 0;

  // Rank 0's `items` on every process (the others' are replaced).
  virtual void broadcast(std::vector<std::uint32_t>& items) const = 0;

  // Throws an input error naming `what` on every process unless all processes pass the same fingerprint.
  virtual void require_same(std::uint64_t fingerprint, const std::string& what) const = 0;
};

// This process alone: the collectives copy or do nothing.
const ProcessGroup& single_process();

}  // namespace termalign
