// The mapping's seed stage: what a run's transforms are fitted on (RunDecisions::seed) and the fit. A seed
// lexicon, or a dictionary's frequent pairs, is fitted as given; an induced seed starts from the words spelt alike
// and is read off the term lists round after round (term_seed.h); a ranked round's seed is read off the last run's
// ranked list. The pipeline's scheduler and the Aligner's fit_mapping both call seed_stage, so that every way of
// running termalign fits the same map.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/dictionary.h"
#include "mapping/composition.h"
#include "mapping/mapping.h"
#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/lexicon.h"
#include "termalign/types.h"

namespace termalign {

// Fits the mapping's transforms on the seed pairs both normalised sides know (`usable` of them; too few is an
// input error naming `seed_name`). The d x d decompositions that finish the fit (serial) are returned as a step
// still to run (`mapping` must outlive it), which the scheduler runs beside the composition.
std::function<void()> fit_seed_transforms(const PairList& seed, const std::string& seed_name,
                                          const AlignConfig& config, const Embeddings& source,
                                          const Embeddings& target, Mapping& mapping, std::size_t& usable);

// The term lists an induced seed is read off, and how each is composed. References: they must outlive the call.
struct SeedTerms {
  const std::vector<std::string>& source;
  const std::vector<std::string>& target;
  const CompositionOptions& source_composition;
  const CompositionOptions& target_composition;
};

// An induced seed and its fit, which the run reuses rather than fitting or decomposing it again.
struct InducedSeed {
  PairList seed;
  std::optional<Mapping> transforms;  // the fitted transforms (no normalisers); none when too few are usable
  std::size_t usable = 0;             // seed pairs both sides know
  bool from_terms = false;            // read off the term lists (else the start itself)
  MappingOptions options;  // what the transforms were fitted with: the run's, unwhitened for too few pairs
};

// `mapping` with `fitted`'s transforms (its normalisers kept).
void set_transforms(Mapping fitted, Mapping& mapping);

// The seed an induced `seed` (is_induced_seed) makes from the loaded vectors, normalised by `normalisers`
// (normalise_pair): identical_seed, or transliterated_seed (kTransliteratedSeed and kAutoSeed); or, given, `start`
// (a dictionary's pairs; moved from); fitted once. Then, with `terms` and seed_term_rounds, that many rounds of
// reading the seed off the term lists (term_word_pairs of the confident_term_pairs under the last fit), each
// round's fit the next's start; the start is kept unless the first round's fit maps the terms better. A seed too
// small to whiten (the pairs its refinement's first fit sees, no more than the dimensions: their covariance would
// be singular) is fitted without whitening; the next round's is whitened again when it has enough pairs.
InducedSeed induced_seed(const AlignConfig& config, const Embeddings& source, const Embeddings& target,
                         const Mapping& normalisers, const SeedTerms* terms, PairList* start = nullptr);

// A ranked round's input (Aligner::candidates): the best pairs of the last run's re-ranked list, best first, and
// that run's mapping, under which they are split into word pairs.
struct RankedSeed {
  std::vector<std::pair<std::string, std::string>> term_pairs;
  std::shared_ptr<const Mapping> mapping;
  std::size_t round = 1;
};

// A ranked round's seed: the word pairs of `ranked`'s term pairs (term_word_pairs under its mapping's transforms,
// the vectors normalised by `normalisers` as that run's were), the whole seed of one fit (refined as the term
// rounds' are). No transforms when fewer than min_seed_pairs of the word pairs are usable.
InducedSeed ranked_seed(const AlignConfig& config, const Embeddings& source, const Embeddings& target,
                        const Mapping& normalisers, const RankedSeed& ranked);

// The mapping's seed from a dictionary, for a run without a seed lexicon: its clean single-word pairs (letters
// only, hyphens inside) whose two words are among the `frequent` most frequent of their vectors, each source word
// with at most `translations` translations (the most frequent), as the vectors spell the words.
PairList dictionary_seed(const Dictionary& dictionary, const Embeddings& source, const Embeddings& target,
                         std::size_t frequent, std::size_t translations);

// With an induced seed, the lexicon the word-level evidence reads in its place
// (MappingOptions::seed_lexicon_words): the mutual CSLS nearest words under the fitted mapping of the normalised
// vectors; `start` when that is 0.
PairList induced_lexicon(const AlignConfig& config, PairList start, const Embeddings& source,
                         const Embeddings& target, const Mapping& mapping);

// What seed_stage gives a run: the seed the transforms are fitted on (the evidence reads it, or, induced, the
// mapping's own lexicon: induced_lexicon), how many of its pairs both sides know, and the rest of the fit.
struct SeedFit {
  PairList seed;
  std::size_t usable = 0;
  // The fit's last, serial step (fit_seed_transforms), still to run; `mapping` must outlive it. Empty when the
  // transforms are fitted already.
  std::function<void()> finish_fit;
};

// One run's seed and fit, as `decisions.seed` says: `given` (a seed lexicon, or the dictionary's pairs:
// dictionary_seed) fitted as it is, or, induced, induced_seed (with `terms`), or, with `ranked`, that ranked
// round's seed (ranked_seed; the last run's mapping is kept when too few of its pairs are usable). A dictionary's
// pairs start the term lists' rounds when seed_term_rounds > 0. `mapping` holds the normalisers (fitted on
// `source` and `target`, which they normalised); its transforms are set, or set by finish_fit.
SeedFit seed_stage(const AlignConfig& config, const RunDecisions& decisions, PairList given,
                   const Embeddings& source, const Embeddings& target, Mapping& mapping, const SeedTerms* terms,
                   const RankedSeed* ranked = nullptr);

}  // namespace termalign
