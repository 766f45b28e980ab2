#include "rerank/bundled_models.h"

#include "termalign/error.h"

// TERMALIGN_MODELS_DIR is the repository's models/ (CMake); CMake rebuilds this file when a model changes.

__asm__(
    ".section .rodata\n"
    ".balign 16\n"
    ".globl termalign_model_plain_begin, termalign_model_plain_end\n"
    ".globl termalign_model_corpus_begin, termalign_model_corpus_end\n"
    ".globl termalign_model_plain_seedless_begin, termalign_model_plain_seedless_end\n"
    ".globl termalign_model_corpus_seedless_begin, termalign_model_corpus_seedless_end\n"
    ".hidden termalign_model_plain_begin, termalign_model_plain_end\n"
    ".hidden termalign_model_corpus_begin, termalign_model_corpus_end\n"
    ".hidden termalign_model_plain_seedless_begin, termalign_model_plain_seedless_end\n"
    ".hidden termalign_model_corpus_seedless_begin, termalign_model_corpus_seedless_end\n"
    "termalign_model_plain_begin:\n"
    ".incbin \"" TERMALIGN_MODELS_DIR
    "/reranker-enfr.txt\"\n"
    "termalign_model_plain_end:\n"
    ".balign 16\n"
    "termalign_model_corpus_begin:\n"
    ".incbin \"" TERMALIGN_MODELS_DIR
    "/reranker-enfr-corpus.txt\"\n"
    "termalign_model_corpus_end:\n"
    ".balign 16\n"
    "termalign_model_plain_seedless_begin:\n"
    ".incbin \"" TERMALIGN_MODELS_DIR
    "/reranker-enfr-seedless.txt\"\n"
    "termalign_model_plain_seedless_end:\n"
    ".balign 16\n"
    "termalign_model_corpus_seedless_begin:\n"
    ".incbin \"" TERMALIGN_MODELS_DIR
    "/reranker-enfr-corpus-seedless.txt\"\n"
    "termalign_model_corpus_seedless_end:\n"
    ".previous\n");

extern "C" {
extern const char termalign_model_plain_begin[], termalign_model_plain_end[];
extern const char termalign_model_corpus_begin[], termalign_model_corpus_end[];
extern const char termalign_model_plain_seedless_begin[], termalign_model_plain_seedless_end[];
extern const char termalign_model_corpus_seedless_begin[], termalign_model_corpus_seedless_end[];
}

namespace termalign {

namespace detail {

std::string_view bundled_model_text(bool with_corpora, bool seedless) {
  const auto text = [](const char* begin, const char* end) {
    return std::string_view(begin, static_cast<std::size_t>(end - begin));
  };
  if (seedless) {
    return with_corpora ? text(termalign_model_corpus_seedless_begin, termalign_model_corpus_seedless_end)
                        : text(termalign_model_plain_seedless_begin, termalign_model_plain_seedless_end);
  }
  return with_corpora ? text(termalign_model_corpus_begin, termalign_model_corpus_end)
                      : text(termalign_model_plain_begin, termalign_model_plain_end);
}

const char* bundled_model_name(bool with_corpora, bool seedless) {
  if (seedless) return with_corpora ? "reranker-enfr-corpus-seedless.txt" : "reranker-enfr-seedless.txt";
  return with_corpora ? "reranker-enfr-corpus.txt" : "reranker-enfr.txt";
}

namespace {

std::string bundled_origin(bool with_corpora, bool seedless) {
  return std::string("bundled models/") + bundled_model_name(with_corpora, seedless);
}

// Whether the run computed the corpus groups (it had both corpora): the bundled corpus model applies.
bool has_corpus_features(const std::vector<std::string>& names) { return first_corpus_feature(names) != nullptr; }

}  // namespace

Reranker configured_model(const std::string& setting, const std::vector<std::string>& names, bool seedless) {
  TERMALIGN_CHECK(setting != kNoReranker, "a re-ranker is configured");
  if (setting != kDefaultReranker) return load_reranker(setting);
  return bundled_reranker(has_corpus_features(names), seedless);
}

std::string configured_origin(const std::string& setting, const std::vector<std::string>& names, bool seedless) {
  return setting == kDefaultReranker ? bundled_origin(has_corpus_features(names), seedless) : setting;
}

}  // namespace detail

Reranker bundled_reranker(bool with_corpora, bool seedless) {
  return parse_reranker(std::string(detail::bundled_model_text(with_corpora, seedless)),
                        detail::bundled_origin(with_corpora, seedless));
}

Reranker configured_reranker(const std::string& setting, const FeatureTable& table, bool seedless) {
  return detail::configured_model(setting, table.names, seedless);
}

std::string reranker_origin(const std::string& setting, const FeatureTable& table, bool seedless) {
  return detail::configured_origin(setting, table.names, seedless);
}

}  // namespace termalign
