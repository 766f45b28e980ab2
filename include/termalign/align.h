// The whole `align` pipeline as functions: each runs an Aligner (termalign/aligner.h), the one pipeline.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "termalign/config.h"
#include "termalign/distributed.h"
#include "termalign/lexicon.h"
#include "termalign/ranking.h"
#include "termalign/reranker.h"

namespace termalign {

class VectorCache;  // termalign/vector_cache.h

struct AlignmentSummary {
  std::size_t source_terms = 0, target_terms = 0;     // listed
  std::size_t source_usable = 0, target_usable = 0;   // with a vector
  std::size_t seed_pairs = 0, seed_pairs_usable = 0;  // 0 usable when the mapping was loaded
  std::size_t cap = 0;
  double seconds = 0;
};

// Candidate pairs and their evidence, before the final ranking.
struct CandidateSet {
  TermList source_terms, target_terms;
  CandidateEvidence evidence;  // csls and cosine always; the rest only when asked for
  std::size_t cap = 0;
  std::size_t per_source = 0;  // the final list keeps each source term's best `per_source` pairs (0 = all)
  // r_T and r_S of CSLS (mean similarity to the k nearest terms of the other side) by term id; NaN: no vector.
  std::vector<float> source_means, target_means;
};

// Loads, maps, composes and scores; keeps each source term's top_m targets by CSLS (and mutual_m), plus its
// orthographic neighbours when configured. With `full_evidence` (or a re-ranker in the configuration) every field
// of the evidence is filled; with orthography, the spelling fields. Rescored candidates are not cut at the cap
// yet. In a group of processes (termalign/distributed.h) the scoring is shared out and rank 0 gets the candidates
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
