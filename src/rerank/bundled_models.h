// The re-ranker models of models/ built into the library (the assembler's .incbin), so that the default needs no
// file at run time and an installed binary has them; and the choice of the model a run applies.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rerank/reranker.h"

namespace termalign::detail {

// models/reranker-enfr-corpus.txt (with_corpora) or models/reranker-enfr.txt, as built; their -seedless variants
// (trained on enfr/train with a seed induced from the vectors) when `seedless`; their -dict variants (trained with
// a bilingual dictionary, the dictionary features among theirs) when `dictionary`, seedless or not (a run with a
// dictionary and no seed lexicon fits its mapping on the dictionary). And that file's name.
std::string_view bundled_model_text(bool with_corpora, bool seedless = false, bool dictionary = false);
const char* bundled_model_name(bool with_corpora, bool seedless = false, bool dictionary = false);

// The model input.reranker names (not kNoReranker): the bundled one for kDefaultReranker, with corpora when
// `names` (the run's feature columns) hold the corpus features, the dictionary variant when they hold the
// dictionary's, else the seedless variant when the run's seed is induced (`seedless`); else the file.
Reranker configured_model(const std::string& setting, const std::vector<std::string>& names, bool seedless);
// What names that model in messages: its file, or the bundled model's.
std::string configured_origin(const std::string& setting, const std::vector<std::string>& names, bool seedless);

}  // namespace termalign::detail
