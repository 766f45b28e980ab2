#include "rerank/bundled_models.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "termalign/error.h"
#include "termalign/version.h"
#include "util/distributed.h"

// TERMALIGN_MODELS_DIR is the repository's models/ (CMake); CMake rebuilds this file when a model changes.

__asm__(
    ".section .rodata\n"
    ".balign 16\n"
    ".globl termalign_model_plain_begin, termalign_model_plain_end\n"
    ".globl termalign_model_corpus_begin, termalign_model_corpus_end\n"
    ".globl termalign_model_plain_seedless_begin, termalign_model_plain_seedless_end\n"
    ".globl termalign_model_corpus_seedless_begin, termalign_model_corpus_seedless_end\n"
    ".globl termalign_model_plain_dict_begin, termalign_model_plain_dict_end\n"
    ".globl termalign_model_corpus_dict_begin, termalign_model_corpus_dict_end\n"
    ".hidden termalign_model_plain_begin, termalign_model_plain_end\n"
    ".hidden termalign_model_corpus_begin, termalign_model_corpus_end\n"
    ".hidden termalign_model_plain_seedless_begin, termalign_model_plain_seedless_end\n"
    ".hidden termalign_model_corpus_seedless_begin, termalign_model_corpus_seedless_end\n"
    ".hidden termalign_model_plain_dict_begin, termalign_model_plain_dict_end\n"
    ".hidden termalign_model_corpus_dict_begin, termalign_model_corpus_dict_end\n"
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
    ".balign 16\n"
    "termalign_model_plain_dict_begin:\n"
    ".incbin \"" TERMALIGN_MODELS_DIR
    "/reranker-enfr-dict.txt\"\n"
    "termalign_model_plain_dict_end:\n"
    ".balign 16\n"
    "termalign_model_corpus_dict_begin:\n"
    ".incbin \"" TERMALIGN_MODELS_DIR
    "/reranker-enfr-corpus-dict.txt\"\n"
    "termalign_model_corpus_dict_end:\n"
    ".previous\n");

extern "C" {
extern const char termalign_model_plain_begin[], termalign_model_plain_end[];
extern const char termalign_model_corpus_begin[], termalign_model_corpus_end[];
extern const char termalign_model_plain_seedless_begin[], termalign_model_plain_seedless_end[];
extern const char termalign_model_corpus_seedless_begin[], termalign_model_corpus_seedless_end[];
extern const char termalign_model_plain_dict_begin[], termalign_model_plain_dict_end[];
extern const char termalign_model_corpus_dict_begin[], termalign_model_corpus_dict_end[];
}

namespace termalign {

namespace detail {

std::string_view bundled_model_text(bool with_corpora, bool seedless, bool dictionary) {
  const auto text = [](const char* begin, const char* end) {
    return std::string_view(begin, static_cast<std::size_t>(end - begin));
  };
  if (dictionary) {
    return with_corpora ? text(termalign_model_corpus_dict_begin, termalign_model_corpus_dict_end)
                        : text(termalign_model_plain_dict_begin, termalign_model_plain_dict_end);
  }
  if (seedless) {
    return with_corpora ? text(termalign_model_corpus_seedless_begin, termalign_model_corpus_seedless_end)
                        : text(termalign_model_plain_seedless_begin, termalign_model_plain_seedless_end);
  }
  return with_corpora ? text(termalign_model_corpus_begin, termalign_model_corpus_end)
                      : text(termalign_model_plain_begin, termalign_model_plain_end);
}

const char* bundled_model_name(bool with_corpora, bool seedless, bool dictionary) {
  if (dictionary) return with_corpora ? "reranker-enfr-corpus-dict.txt" : "reranker-enfr-dict.txt";
  if (seedless) return with_corpora ? "reranker-enfr-corpus-seedless.txt" : "reranker-enfr-seedless.txt";
  return with_corpora ? "reranker-enfr-corpus.txt" : "reranker-enfr.txt";
}

namespace {

std::string bundled_origin(bool with_corpora, bool seedless, bool dictionary) {
  return std::string("bundled models/") + bundled_model_name(with_corpora, seedless, dictionary);
}

// Whether the run computed the corpus groups (it had both corpora): the bundled corpus model applies.
bool has_corpus_features(const std::vector<std::string>& names) { return first_corpus_feature(names) != nullptr; }

// Whether the run computed the dictionary's group (it had a dictionary): the bundled dictionary models apply.
bool has_dictionary_features(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(),
                     [](const std::string& name) { return feature_group(name) == "dictionary"; });
}

}  // namespace

Reranker configured_model(const std::string& setting, const std::vector<std::string>& names, bool seedless) {
  TERMALIGN_CHECK(setting != kNoReranker, "a re-ranker is configured");
  if (setting != kDefaultReranker) return load_reranker(setting);
  return bundled_reranker(has_corpus_features(names), seedless, has_dictionary_features(names));
}

std::string configured_origin(const std::string& setting, const std::vector<std::string>& names, bool seedless) {
  return setting == kDefaultReranker
             ? bundled_origin(has_corpus_features(names), seedless, has_dictionary_features(names))
             : setting;
}

}  // namespace detail

std::string bundled_models_id() {
  // The models are built in and never change: hashed once. fingerprint_bytes (FNV-1a) over all six, chained.
  static const std::string id = [] {
    const std::string_view plain = detail::bundled_model_text(false), corpus = detail::bundled_model_text(true);
    std::uint64_t hash = fingerprint_bytes(plain.data(), plain.size());
    hash = fingerprint_bytes(corpus.data(), corpus.size(), hash ^ plain.size());
    for (const bool with_corpora : {false, true}) {
      const std::string_view seedless = detail::bundled_model_text(with_corpora, true);
      hash = fingerprint_bytes(seedless.data(), seedless.size(), hash ^ seedless.size());
    }
    for (const bool with_corpora : {false, true}) {
      const std::string_view dictionary = detail::bundled_model_text(with_corpora, false, true);
      hash = fingerprint_bytes(dictionary.data(), dictionary.size(), hash ^ dictionary.size());
    }
    char digits[17];
    std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(hash));
    return std::string("fnv1a64:") + digits;
  }();
  return id;
}

Reranker bundled_reranker(bool with_corpora, bool seedless, bool dictionary) {
  return parse_reranker(std::string(detail::bundled_model_text(with_corpora, seedless, dictionary)),
                        detail::bundled_origin(with_corpora, seedless, dictionary));
}

Reranker configured_reranker(const std::string& setting, const FeatureTable& table, bool seedless) {
  return detail::configured_model(setting, table.names, seedless);
}

std::string reranker_origin(const std::string& setting, const FeatureTable& table, bool seedless) {
  return detail::configured_origin(setting, table.names, seedless);
}

}  // namespace termalign
