// The `align` pipeline as an object whose stages take and return in-memory data, and which keeps what it loaded
// for the runs after (a grid, a notebook, the Python module).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "termalign/align.h"
#include "termalign/composition.h"
#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/lexicon.h"
#include "termalign/mapping.h"
#include "termalign/ranking.h"
#include "termalign/scoring.h"
#include "termalign/vector_cache.h"

namespace termalign {

enum class Side { source, target };

// Holds a configuration and the vectors loaded for it. Every stage reads the configuration as it is when called
// (config() may change between runs); the vectors are read once per distinct load (VectorCache).
//   load_vectors / set_vectors -> fit_mapping / set_mapping -> compose -> score -> rank
// align() runs the whole pipeline (align_terms, byte for byte the CLI's list) with the same kept vectors.
class Aligner {
 public:
  explicit Aligner(AlignConfig config = {});

  AlignConfig& config() { return config_; }
  const AlignConfig& config() const { return config_; }

  // The vectors of config().input as a run with its term lists and seed loads them (raw, before normalisation),
  // read on the first call and kept; or, after set_vectors, those.
  const Embeddings& vectors(Side side);
  // Vectors given in memory, used from now on instead of the files (both languages, the same dimension).
  void set_vectors(Embeddings source, Embeddings target);

  // Normalises both sides' vectors (copies) as configured and fits the mapping on the seed pairs both know:
  // `seed`, or config().input.seed when it is null. Kept as the mapping of the stages below.
  const Mapping& fit_mapping(const PairList* seed = nullptr);
  void set_mapping(Mapping mapping);
  const Mapping& mapping() const;

  // The terms' unit vectors in the shared space (composed from the normalised vectors, mapped). Closed compounds
  // are split as align() splits those of config()'s term list of that side, or (no list) as `terms` ask
  // (closed_compounds_for).
  ComposedTerms compose(const std::vector<std::string>& terms, Side side);
  // CSLS over X (n1 x d') and Z (n2 x d'): neighbourhood means and each row's candidates (config().scoring and
  // ranking's top_m, mutual_m). The neighbourhoods are taken within X and Z (neighbourhood "vocabulary" is a usage
  // error here: align() has it), and without align()'s memory guard, which sizes the tiles to the memory limit.
  CslsSelection score(const Matrix& X, const Matrix& Z) const;
  // The final list of scored candidates: ids in the term lists of `source_ids`/`target_ids` (ComposedTerms'
  // term_ids), each source's best top_m, cut at the BUCC cap of lists of these sizes (or config's cap).
  std::vector<RankedIndex> rank(const CslsSelection& scored, const std::vector<std::uint32_t>& source_ids,
                                const std::vector<std::uint32_t>& target_ids, std::size_t source_terms,
                                std::size_t target_terms) const;

  // The whole pipeline on config()'s inputs with the kept vectors: align_terms' list.
  std::vector<RankedPair> align(AlignmentSummary* summary = nullptr);
  // run_align: align() and its files.
  AlignmentSummary run();
  // Vector files read so far (a grid over one dataset reads each once).
  std::size_t files_read() const { return cache_.files_read(); }

 private:
  void load();
  AlignConfig config_;
  VectorCache cache_;
  bool given_ = false;  // set_vectors was called
  Embeddings source_, target_;
  bool loaded_ = false;
  std::string loaded_for_;  // the inputs source_ and target_ were loaded for (reloaded when they change)
  Embeddings normalised_source_, normalised_target_;
  Mapping mapping_;
  bool has_mapping_ = false;
  // The composition options of compose for `terms` of a side: closed compounds split as in align(), decided on
  // config().input's term list of that side (read once per path) or, without one, on `terms`.
  CompositionOptions composition_for(const std::vector<std::string>& terms, Side side);
  struct ListTerms {
    std::string path, signature;  // file_signature when read
    std::vector<std::string> terms;
  };
  ListTerms source_list_, target_list_;
};

}  // namespace termalign
