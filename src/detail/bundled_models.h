// The re-ranker models of models/ built into the library (the assembler's .incbin), so that the default needs no
// file at run time and an installed binary has them.
#pragma once

#include <string_view>

namespace termalign::detail {

// models/reranker-enfr-corpus.txt (with_corpora) or models/reranker-enfr.txt, as built.
std::string_view bundled_model_text(bool with_corpora);

}  // namespace termalign::detail
