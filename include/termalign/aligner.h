// The `align` pipeline as an object whose stages take and return in-memory data, and which keeps what it loaded
// for the runs after (a grid, a notebook, the Python module).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/lexicon.h"
#include "termalign/types.h"

namespace termalign {

struct CorpusStatistics;
struct SeedFit;
class Dictionary;
namespace pipeline {
class RunHistory;
}

enum class Side { source, target };

// The one pipeline: align_terms, run_align, the CLI, `ablate`, MPI and Python all run an Aligner. It holds a
// configuration and the vectors loaded for it. Every stage reads the configuration as it is when called (config()
// may change between runs); the vectors are read once per distinct load (VectorCache).
//   vectors / set_vectors -> fit_mapping / set_mapping -> compose -> score -> collect_evidence -> rank
// and, with an induced seed, ranked_rounds() times more: fit_ranked_round(last candidates) -> compose -> score ->
// collect_evidence, whose candidates then carry the earlier runs' scores, so that rank gives the mean over the
// runs. Called so on config()'s term lists, the stages give align()'s list pair for pair (the tests check it for a
// seed lexicon, an induced seed, a dictionary and a gzipped model with corpora). Two options are align()'s alone:
// neighbourhood "vocabulary" and corpus-trained vectors (src_corpus_vectors).
// align() runs the same stage functions through one private scheduler that overlaps them (reading beside loading,
// the mapping's last step beside the composition, the word vectors on disk during the scoring, the mapped terms of
// a grid's runs kept), and checks the inputs against the vectors on the way. What a run decides on the way (the
// seed's kind, the rounds, the dictionary's role, the model: RunDecisions) is decided once and carried by its
// candidates.
class Aligner {
 public:
  explicit Aligner(AlignConfig config = {});
  // A run over `cache`, which a grid's runs share (null: the vectors are not kept after the run).
  Aligner(AlignConfig config, VectorCache* cache);

  AlignConfig& config() { return config_; }
  const AlignConfig& config() const { return config_; }

  // Load: the vectors of config().input as a run with its term lists and seed loads them (raw, before
  // normalisation), read on the first call and kept; or, after set_vectors, those.
  const Embeddings& vectors(Side side);
  // Vectors given in memory, used from now on instead of the files (both languages, the same dimension).
  void set_vectors(Embeddings source, Embeddings target);

  // Map: normalises both sides' vectors (copies) as configured and fits the mapping on the seed pairs both know:
  // `seed`, or config().input.seed when it is null: a seed lexicon, or as align() makes it without one (the
  // dictionaries' frequent pairs, or a seed induced from the vectors and read off config()'s term lists). Kept,
  // with its seed, for the stages below.
  const Mapping& fit_mapping(const PairList* seed = nullptr);
  // How many ranked rounds a run of config() makes after its first (0 unless its seed is induced, fitted and
  // re-ranked, without a dictionary): each fit_ranked_round, then compose, score and collect_evidence again.
  std::size_t ranked_rounds() const;
  // A ranked round: the mapping refitted on the word pairs of the best seed_ranked_pairs pairs of `last`'s own
  // ranking (the candidates of the run since the last fit); `last`'s scores are kept for the mean over the runs,
  // which the next collect_evidence's candidates carry (seed_ranked_fusion).
  const Mapping& fit_ranked_round(const CandidateSet& last);
  // A saved mapping instead (the configured seed, when there is one, is still the re-ranker's evidence).
  void set_mapping(Mapping mapping);
  const Mapping& mapping() const;

  // Compose: the terms' unit vectors in the shared space (composed from the normalised vectors, mapped). Closed
  // compounds are split as align() splits those of config()'s term list of that side, or (no list) as `terms`
  // ask (closed_compounds_for).
  ComposedTerms compose(const std::vector<std::string>& terms, Side side);
  // Score: CSLS over X (n1 x d') and Z (n2 x d'): neighbourhood means and each row's candidates (config().scoring
  // and ranking's top_m, mutual_m); with a re-ranker, each target's best sources too. The neighbourhoods are
  // taken within X and Z (neighbourhood "vocabulary" is a usage error here), and without align()'s memory guard,
  // which sizes the tiles to the memory limit.
  CslsSelection score(const Matrix& X, const Matrix& Z) const;
  // Collect evidence: the candidates of `scored` (score of compose's X and Z for these lists) with what the
  // ranking reads: the targets' own candidates and the orthographic ones added, CSLS and cosine, and as
  // configured the spelling evidence and, with a re-ranker, the word-level evidence (which needs the mapping).
  // X, Z and scored are consumed (their memory is freed as the evidence grows).
  CandidateSet collect_evidence(const std::vector<std::string>& source_terms,
                                const std::vector<std::string>& target_terms, ComposedTerms X, ComposedTerms Z,
                                CslsSelection scored);
  // Rank: the final list of the candidates (final_ranking: the re-ranker's or the unsupervised score, each
  // source's best top_m, cut at the cap), by the terms' places in candidates.source_terms and target_terms.
  std::vector<RankedIndex> rank(const CandidateSet& candidates) const;

  // The scheduled stages up to the evidence on config()'s inputs (generate_candidates); with `full_evidence`
  // every field of the evidence. In a group, rank 0 gets the candidates.
  CandidateSet candidates(bool full_evidence = false, AlignmentSummary* summary = nullptr,
                          const ProcessGroup& group = single_process());
  // The whole pipeline on config()'s inputs with the kept vectors: candidates(), then rank (align_terms' list).
  std::vector<RankedPair> align(AlignmentSummary* summary = nullptr, const ProcessGroup& group = single_process());
  // align() and its files (run_align). In a group only rank 0 writes.
  AlignmentSummary run(const ProcessGroup& group = single_process());
  // Vector files read so far (a grid over one dataset reads each once).
  std::size_t files_read() const { return cache_ ? cache_->files_read() : 0; }

 private:
  void load();
  AlignConfig config_;
  VectorCache own_cache_;
  VectorCache* cache_;  // own_cache_, a grid's, or none
  bool given_ = false;  // set_vectors was called
  Embeddings source_, target_;
  bool loaded_ = false;
  std::string loaded_for_;  // the inputs source_ and target_ were loaded for (reloaded when they change)
  Embeddings normalised_source_, normalised_target_;
  Mapping mapping_;
  PairList seed_;  // the mapping's seed: the word-level evidence reads its translations
  bool has_mapping_ = false;
  RunDecisions decisions_;  // what the run since fit_mapping decided
  std::size_t ranked_rounds_done_ = 0;
  std::shared_ptr<pipeline::RunHistory> history_;  // the runs since fit_mapping before the last (mean over runs)
  // With a gzipped model and corpora, the corpora's statistics, gathered before the vectors are read (load), and
  // the lists they were gathered for.
  std::shared_ptr<const CorpusStatistics> source_corpus_, target_corpus_;
  std::pair<std::vector<std::string>, std::vector<std::string>> corpora_terms_;
  std::shared_ptr<const Dictionary> dictionary_;  // config().input.dictionary, read once per change
  std::string dictionary_key_;
  const Dictionary& dictionary();
  // A new run from fit_mapping or set_mapping: config()'s planned decisions, no earlier runs.
  void start_run();
  // A fit of the seed stage (mapping/seed_stage.h) over `mapping` (its normalisers; the fit's last step writes its
  // transforms) as the mapping from now on (`mapping` is moved from), and its seed the evidence's (the mapping's
  // own lexicon for an induced seed).
  void adopt_fit(SeedFit fit, Mapping& mapping);
  // The composition options of compose for `terms` of a side: closed compounds split as in align(), decided on
  // config().input's term list of that side (read once per path) or, without one, on `terms`.
  CompositionOptions composition_for(const std::vector<std::string>& terms, Side side);
  struct ListTerms {
    std::string path, signature;  // file_signature when read
    std::vector<std::string> terms;
  };
  ListTerms source_list_, target_list_;
};

// Loads, maps, composes and scores; keeps each source term's top_m targets by CSLS (and mutual_m), plus its
// orthographic neighbours when configured. With `full_evidence` (or a re-ranker in the configuration) every field
// of the evidence is filled; with orthography, the spelling fields. Rescored candidates are not cut at the cap
// yet. In a group of processes (util/distributed.h) the scoring is shared out and rank 0 gets the candidates
// of one process; the other ranks get empty evidence.
// With a `cache`, the vector files are read through it (VectorCache: each distinct load once over several runs).
// Aligner(config, cache).candidates(full_evidence, summary, group).
CandidateSet generate_candidates(const AlignConfig& config, bool full_evidence,
                                 AlignmentSummary* summary = nullptr, const ProcessGroup& group = single_process(),
                                 VectorCache* cache = nullptr);

// The final score of each candidate: the re-ranker's logit when one is configured, else CSLS plus the
// orthographic weight times the orthographic similarity.
Eigen::VectorXd candidate_scores(const CandidateSet& candidates, const AlignConfig& config);

// Orders by score (ties by source id, then target id), keeps each source term's best `per_source` pairs and cuts
// at the cap: the final list, by the terms' places in candidates.source_terms and target_terms. Sorted on
// `threads` threads (0: all cores); the list is the same for any number.
std::vector<RankedIndex> rank_candidate_indices(const CandidateSet& candidates, const Eigen::VectorXd& scores,
                                                int threads = 1);
// The same list with the terms' strings, copied on `threads` threads (0: OpenMP's default).
std::vector<RankedPair> rank_candidates(const CandidateSet& candidates, const Eigen::VectorXd& scores,
                                        int threads = 1);

// The final list of align_terms from its candidates: candidate_scores, then rank_candidate_indices.
std::vector<RankedIndex> final_ranking(const CandidateSet& candidates, const AlignConfig& config);

// Runs the pipeline (Aligner(config, cache).align) and returns the ranked, capped pairs (the best first). Writes
// nothing but what the configuration asks besides the submission: the mapping (output.save_mapping) and the mapped
// vectors (output.save_mapped_vectors); large word vectors may wait in a temporary file during the scoring
// (scoring.spill_mb: beside output.out, else in the temporary folder), removed after it.
std::vector<RankedPair> align_terms(const AlignConfig& config, AlignmentSummary* summary = nullptr,
                                    const ProcessGroup& group = single_process(), VectorCache* cache = nullptr);

// align_terms, then writes (Aligner::run) the submission, the optional score list and the resolved configuration
// (`<out>.config.toml`), each atomically. In a group only rank 0 writes.
AlignmentSummary run_align(const AlignConfig& config, const ProcessGroup& group = single_process(),
                           VectorCache* cache = nullptr);

}  // namespace termalign
