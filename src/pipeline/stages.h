// The Aligner's stages as functions over explicit data: the Aligner's stage methods (aligner.cpp) and the private
// scheduler that overlaps them in align() (scheduler.cpp) both call these, so the two cannot drift.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "evidence/corpus_evidence.h"
#include "evidence/word_translation.h"
#include "io/corpus.h"
#include "io/dictionary.h"
#include "mapping/composition.h"
#include "mapping/mapping.h"
#include "mapping/seed_stage.h"
#include "pipeline/ranking.h"
#include "scoring/scoring.h"
#include "termalign/aligner.h"
#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/lexicon.h"
#include "text/spelling.h"
#include "util/distributed.h"

namespace termalign {

class VectorCache;

namespace pipeline {

// --- Load and map (load_and_map.cpp) ---

// What one side loads: the words composing `lists` may look up (collect_word_set), and the frequent ones.
LoadOptions side_options(std::initializer_list<const std::vector<std::string>*> lists, const AlignConfig& config);

// Both languages' vectors, which must have the same dimension; through `cache` when given (each distinct load
// once).
void load_pair(const std::string& source_path, const std::string& target_path, const LoadOptions& source_options,
               const LoadOptions& target_options, VectorCache* cache, Embeddings& source, Embeddings& target);

// One side's corpus statistics for its term list (gather_corpus_statistics of that side's corpus, with
// statistics_options): what the corpus evidence reads.
std::shared_ptr<const CorpusStatistics> side_corpus_statistics(const CorpusEvidenceOptions& options, Side side,
                                                               const std::vector<std::string>& terms);

// A gzipped fastText model is read in one pass, so the words whose subword vectors the corpus evidence will ask of
// it (the corpora's most frequent context words) must be known before: with corpora and a .bin.gz on either side,
// the corpora's statistics (`statistics` gathers them, or takes those kept) give them as that side's
// LoadOptions::subword_wanted. With a .bin they are gathered after the scoring, when the vectors' memory is freed.
void ask_gzipped_models_for_corpus_words(const AlignConfig& config,
                                         const std::function<const CorpusStatistics&(Side)>& statistics,
                                         LoadOptions& source, LoadOptions& target);

// Without a seed lexicon (an induced seed, or none with dictionaries): the dictionaries' frequent single-word
// pairs (dictionary_seed), when there are min_seed_pairs of them: then they are the seed (decide_dictionary_seed).
// Fewer is an input error without an induced seed to fall back on, else a warning. The vectors are the loaded
// ones.
std::optional<PairList> seed_from_dictionary(const AlignConfig& config, RunDecisions& decisions,
                                             const Dictionary& dictionary, const Embeddings& source,
                                             const Embeddings& target);

// A mapping whose normalisers are fitted on both sides, which they normalise in place; its transforms are still to
// be fitted (fit_seed_transforms).
Mapping normalise_pair(const AlignConfig& config, Embeddings& source, Embeddings& target);

// Both lists' unit term vectors in the shared space. `finish_fit`, when given, is the rest of the mapping's fit
// (fit_seed_transforms): one thread runs it while the others compose. The source list comes first, then
// `source_composed` runs (when given; the mapping is complete by then), so that what needs the source words can
// read them and they can leave memory before the target terms' matrix is allocated.
void compose_mapped(const std::vector<std::string>& source_terms, const TermComposer& source_composer,
                    const std::vector<std::string>& target_terms, const TermComposer& target_composer,
                    const Mapping& mapping, const std::function<void()>& finish_fit, int threads, ComposedTerms& X,
                    ComposedTerms& Z, const std::function<void()>& source_composed = {});

// Side by side: (sqrt(1 - w) general row, sqrt(w) corpus row), renormalised, for every term usable in either
// space. A space that does not know a term leaves a zero block.
ComposedTerms combine_spaces(const ComposedTerms& general, const ComposedTerms& corpus, std::size_t terms,
                             double corpus_weight);

// The first n rows of the (file-ordered) vectors, mapped into the shared space, unit rows.
Matrix frequent_rows(const Embeddings& embeddings, std::size_t n, const Matrix& transform, int threads);

// Both loaded vocabularies in the shared space (normalised, mapped), as PREFIX.src.vec and PREFIX.tgt.vec.
void save_mapped_vectors(const std::string& prefix, const Embeddings& source, const Embeddings& target,
                         const Mapping& mapping, int threads);

// A warning naming a few of the terms that have no usable word.
void log_unusable(const char* side, const std::vector<std::string>& terms, const ComposedTerms& composed);

// --- Score (candidates.cpp) ---

// The similarity tiles as configured (the scheduler may shrink them to the memory there is).
TileOptions scoring_tiles(const AlignConfig& config);

// The cap of the final list for lists of these sizes: the BUCC cap, or config's when lower (with a warning when
// config's is higher and `warn`).
std::size_t final_cap(const AlignConfig& config, std::size_t source_terms, std::size_t target_terms, bool warn);

// Whether the candidates get the spelling evidence (and orthographic candidates when configured).
bool uses_orthography(const AlignConfig& config, bool full_evidence);

// CSLS over X (n1 x d') and Z (n2 x d'), neighbourhoods within them: the means and each row's candidates (top_m,
// mutual_m, the best `limit` overall; 0: all); with `full_evidence`, the targets' lists of their best sources too.
CslsSelection score_terms(const Matrix& X, const Matrix& Z, const AlignConfig& config, bool full_evidence,
                          std::size_t limit, const TileOptions& tiles, const ProcessGroup& group);

// --- Collect evidence (candidates.cpp, evidence.cpp) ---

// What the orthographic candidates and evidence need of every term of a list, computed once, on the threads.
struct Spellings {
  std::vector<std::string> latin;     // Latin spelling
  std::vector<NgramProfile> profile;  // its n-gram profile
  std::vector<std::uint16_t> words;   // words in the term
};

// What add_other_candidates leaves for collect_evidence.
struct OtherCandidates {
  bool orthographic = false;
  std::vector<float> reverse_rank;  // by candidate: its source's rank among its target's best sources
  Spellings source_spellings, target_spellings;
  TermForms source_forms, target_forms;  // with forms.enabled and the full evidence (on rank 0)
};

// Adds the candidates from the target side (with the full evidence), from the spellings (orthographic
// candidates), with a `dictionary` from its translations (add_dictionary_candidates) and, with the full evidence
// and forms.enabled, from the families of word forms (add_family_candidates) to scored.candidates. In
// a group every process takes part; rank 0 gets the candidates. `forms`, when given, keeps the lists' word forms
// for the next runs of the same lists (the ranked rounds): computed when it is empty, else read from it.
OtherCandidates add_other_candidates(const AlignConfig& config, bool full_evidence, const TermList& source_terms,
                                     const TermList& target_terms, const ComposedTerms& X, const ComposedTerms& Z,
                                     CslsSelection& scored, const TileOptions& tiles, const ProcessGroup& group,
                                     const Dictionary* dictionary = nullptr,
                                     std::shared_ptr<const std::pair<TermForms, TermForms>>* forms = nullptr);

// The share of the distinct words of the source terms that the dictionary translates (as a one-word entry):
// the dictionary's features rank the run from input.dictionary_min_coverage on (decide_dictionary_features).
double dictionary_coverage(const Dictionary& dictionary, const TermList& source_terms);
// Each source term's targets that the dictionary links to it, scored by CSLS like the others: the translations of
// the whole term that are target terms, and at most `limit` target terms (ranking.dictionary_candidates) in which
// every word of the source term has a translation and whose word count is within two of the source term's, the
// closest word count first, then the highest cosine. Returns how many were added.
std::size_t add_dictionary_candidates(const Dictionary& dictionary, const TermList& source_terms,
                                      const TermList& target_terms, const ComposedTerms& X, const ComposedTerms& Z,
                                      const NeighbourhoodMeans& means, std::size_t limit, int threads,
                                      std::vector<Candidate>& candidates);

// The members of the families of forms (TermForms) of each source term's `best` targets by CSLS that are not its
// candidates yet, scored by CSLS like the others (families of more than 16 terms are left alone). Returns how many
// were added.
std::size_t add_family_candidates(const TermForms& target_forms, const ComposedTerms& X, const ComposedTerms& Z,
                                  const NeighbourhoodMeans& means, std::size_t best, int threads,
                                  std::vector<Candidate>& candidates);

// The lists' languages for their word forms: forms.src_language and tgt_language, else the dataset folder's pair,
// else the term lists' file names terms-<language>.txt; "" where none says.
std::pair<std::string, std::string> forms_languages(const AlignConfig& config);

// What the evidence beyond the term vectors reads (full evidence): each list's words with their mapped vectors
// (term_words, for the compositional evidence; freed once read), the seed, and for the corpus evidence the
// normalised word vectors, the mapping and each list's composition options. The callbacks, when given, run just
// before the term words and the word vectors are read (the scheduler brings back what it spilled).
struct WordEvidenceInputs {
  TermWords& source_words;
  TermWords& target_words;
  const PairList& seed;
  const Embeddings& source;
  const Embeddings& target;
  const Mapping& mapping;
  const CompositionOptions& source_composition;
  const CompositionOptions& target_composition;
  std::function<void()> restore_term_words = nullptr;
  std::function<void()> restore_word_vectors = nullptr;
  const Dictionary* dictionary = nullptr;  // --dictionary, when given
  // The corpora's statistics, when gathered before the vectors were loaded (a gzipped model needs to know the
  // corpus words it will be asked for); null: the corpus evidence gathers them.
  std::shared_ptr<const CorpusStatistics> source_corpus = nullptr, target_corpus = nullptr;
};

// Fills result.evidence (result holds the term lists) from the scored candidates: CSLS and cosine always, the
// rest as configured, and the neighbourhood means. The term vectors, candidates and spellings are freed as soon as
// they are read (half a gigabyte at scale).
void collect_evidence(const AlignConfig& config, bool full_evidence, ComposedTerms& X, ComposedTerms& Z,
                      CslsSelection& scored, OtherCandidates& other, const WordEvidenceInputs& words,
                      CandidateSet& result);

// --- Rank (ranking.cpp) ---

// The ranked pairs' strings, copied on `threads` threads.
std::vector<RankedPair> ranked_pairs(const CandidateSet& candidates, const std::vector<RankedIndex>& indices,
                                     int threads);
// The run's own score of each candidate: the re-ranker's (the model the run decided on), or the unsupervised
// score; candidate_scores averages it with the earlier runs' (CandidateSet::earlier_scores).
Eigen::VectorXd run_scores(const CandidateSet& candidates, const AlignConfig& config);
// final_ranking of candidates whose scores (candidate_scores) are given.
std::vector<RankedIndex> ranking_by(const CandidateSet& candidates, const Eigen::VectorXd& scores,
                                    const AlignConfig& config);

// The run's scores with each family's scores among a source term's candidates reassigned in the order of their
// agreement with the source term (forms.agreement_order): the candidates of a source term in citation form whose
// targets are of one family of forms (TermForms) keep their set of scores, the best going to the target whose
// share of words in citation form is nearest the source term's, then to the one with fewer words shorter than
// their forms (TermForms::shortened), then to the one nearest its forms (TermForms::distance), then to the best
// scored. Unchanged without both lists' families.
Eigen::VectorXd agreement_order(const CandidateEvidence& evidence, const Eigen::VectorXd& scores);

// --- Checks (checks.cpp) ---

// The inputs checked against the loaded vectors (sanity.h); a seed lexicon too, not an induced seed (made later).
void check_inputs_against_vectors(const RunDecisions& decisions, bool fit, bool allow_reversed,
                                  const TermList& source_terms, const TermList& target_terms,
                                  const Embeddings& source, const Embeddings& target, const PairList& seed,
                                  bool source_compounds, bool target_compounds);
// What can be found wrong before any work (missing output folders, a re-ranker that cannot run).
void check_before_work(const AlignConfig& config);
// Each file a run writes is its own and none is one of its inputs.
void check_outputs_distinct(const AlignConfig& config);

// --- Decide (decisions.cpp) ---

// What `config` decides before any work (RunDecisions): the seed's kind, the ranked rounds and the mean over the
// runs, the models' family; the rest is decided on the way (decide_dictionary_seed, decide_dictionary_features).
RunDecisions planned_decisions(const AlignConfig& config);
// Without a seed lexicon, enough of the dictionaries' frequent pairs to seed the map: they are its seed; without
// the dictionaries' features (decided before), the seedless models rank the run.
void decide_dictionary_seed(RunDecisions& decisions);
// The dictionaries' share of the source terms' words (dictionary_coverage, measured as the lists are read): their
// features, and their models, rank the run from `min_coverage` on.
void decide_dictionary_features(RunDecisions& decisions, double coverage, double min_coverage);
// Whether the seed evidence reads the mapping's own lexicon (induced_lexicon) rather than the seed: with an
// induced seed. A dictionary's seed is read as it is, also where the seedless models rank the run (its features
// left out): on enru/train with FreeDict (12 % coverage), split seeds 0-3, 0.4543 against 0.4472 with the
// mapping's own lexicon (4 of 4 seeds better) and 0.4306 with the models trained with a seed lexicon.
bool reads_own_lexicon(const RunDecisions& decisions);
// The decisions as the comment block that ends a run's resolved configuration.
std::string format_decisions(const RunDecisions& decisions);

// --- Schedule (scheduler.cpp) ---

// The stages up to the evidence, overlapped as fast as they go: what align() ranks. With a `cache`, vectors and
// mapped term vectors are kept for the runs after; in a group, rank 0 gets the candidates. With `ranked`, the
// induced seed is that ranked round's (ranked_seed) instead of the start and the term rounds. With `corpora`, the
// corpora's statistics are taken from it, or gathered and kept in it (the runs of one align()).
struct SharedCorpora {
  std::shared_ptr<const CorpusStatistics> source, target;
  std::shared_ptr<const std::pair<TermForms, TermForms>> forms;  // the lists' word forms (add_other_candidates)
};
CandidateSet scheduled_candidates(const AlignConfig& config, RunDecisions& decisions, bool full_evidence,
                                  AlignmentSummary& stats, const ProcessGroup& group, VectorCache* cache,
                                  const RankedSeed* ranked = nullptr, SharedCorpora* corpora = nullptr);

}  // namespace pipeline
}  // namespace termalign
