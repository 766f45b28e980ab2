#include "rerank/bundled_models.h"

#include "termalign/error.h"

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

namespace termalign {

namespace detail {

std::string_view bundled_model_text(bool with_corpora) {
  if (with_corpora) {
    return {termalign_model_corpus_begin,
            static_cast<std::size_t>(termalign_model_corpus_end - termalign_model_corpus_begin)};
  }
  return {termalign_model_plain_begin,
          static_cast<std::size_t>(termalign_model_plain_end - termalign_model_plain_begin)};
}

namespace {

const char* bundled_origin(bool with_corpora) {
  return with_corpora ? "bundled models/reranker-enfr-corpus.txt" : "bundled models/reranker-enfr.txt";
}

// Whether the run computed the corpus groups (it had both corpora): the bundled corpus model applies.
bool has_corpus_features(const std::vector<std::string>& names) { return first_corpus_feature(names) != nullptr; }

}  // namespace

Reranker configured_model(const std::string& setting, const std::vector<std::string>& names) {
  TERMALIGN_CHECK(setting != kNoReranker, "a re-ranker is configured");
  if (setting != kDefaultReranker) return load_reranker(setting);
  return bundled_reranker(has_corpus_features(names));
}

std::string configured_origin(const std::string& setting, const std::vector<std::string>& names) {
  return setting == kDefaultReranker ? bundled_origin(has_corpus_features(names)) : setting;
}

}  // namespace detail

Reranker bundled_reranker(bool with_corpora) {
  return parse_reranker(std::string(detail::bundled_model_text(with_corpora)),
                        detail::bundled_origin(with_corpora));
}

Reranker configured_reranker(const std::string& setting, const FeatureTable& table) {
  return detail::configured_model(setting, table.names);
}

std::string reranker_origin(const std::string& setting, const FeatureTable& table) {
  return detail::configured_origin(setting, table.names);
}

}  // namespace termalign
