// Steps of align.cpp that the Aligner's stages (aligner.cpp) share with the pipeline, so that both load and fit
// alike.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/lexicon.h"
#include "termalign/mapping.h"

namespace termalign::detail {

// What a run loads of one side's vectors: the words its terms and seed words may look up, and the frequent ones.
LoadOptions run_load_options(const AlignConfig& config, const std::vector<std::string>& terms,
                             const std::vector<std::string>& seed_words);

// The seed pairs whose two sides are composed from known words (normalised with the mapping's normalisers), as
// rows of Xs and Zt in the lexicon's order; returns their number.
std::size_t seed_pair_matrices(const PairList& seed, const Embeddings& source, const Embeddings& target,
                               const Mapping& mapping, int threads, Matrix& Xs, Matrix& Zt);

}  // namespace termalign::detail
