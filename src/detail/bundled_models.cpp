#include "detail/bundled_models.h"

// TERMALIGN_MODELS_DIR is the repository's models/ (CMake); CMake rebuilds this file when a model changes.

__asm__(
    ".section .rodata\n"
    ".balign 16\n"
    ".globl termalign_model_plain_begin, termalign_model_plain_end\n"
    ".globl termalign_model_corpus_begin, termalign_model_corpus_end\n"
    ".hidden termalign_model_plain_begin, termalign_model_plain_end\n"
    ".hidden termalign_model_corpus_begin, termalign_model_corpus_end\n"
    "termalign_model_plain_begin:\n"
    ".incbin \"" TERMALIGN_MODELS_DIR
    "/reranker-enfr.txt\"\n"
    "termalign_model_plain_end:\n"
    ".balign 16\n"
    "termalign_model_corpus_begin:\n"
    ".incbin \"" TERMALIGN_MODELS_DIR
    "/reranker-enfr-corpus.txt\"\n"
    "termalign_model_corpus_end:\n"
    ".previous\n");

extern "C" {
extern const char termalign_model_plain_begin[], termalign_model_plain_end[];
extern const char termalign_model_corpus_begin[], termalign_model_corpus_end[];
}

namespace termalign::detail {

std::string_view bundled_model_text(bool with_corpora) {
  if (with_corpora) {
    return {termalign_model_corpus_begin,
            static_cast<std::size_t>(termalign_model_corpus_end - termalign_model_corpus_begin)};
  }
  return {termalign_model_plain_begin,
          static_cast<std::size_t>(termalign_model_plain_end - termalign_model_plain_begin)};
}

}  // namespace termalign::detail
