#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "captured_log.h"
#include "scratch_file.h"
#include "term_lists.h"
#include "io/corpus.h"
#include "evidence/corpus_evidence.h"
#include "termalign/error.h"

using namespace termalign;
using termalign_tests::scratch_file;
using termalign_tests::term_list;

namespace {

// Two corpora, the second the first translated word for word (one target word per source word, the terms'
// words swapped in place): 21 tokens each (punctuation included), 4 sentences and an empty line. Every sentence
// is shorter than the window, so each occurrence's context is the rest of its sentence.
const char* kSourceCorpus =
    "The red file opens now .\n"
    "the red file closes .\n"
    "\n"
    "a blue menu opens .\n"
    "the blue menu closes now\n";
const char* kTargetCorpus =
    "Le fichier rouge ouvre aussitôt .\n"
    "le fichier rouge ferme .\n"
    "\n"
    "un menu bleu ouvre .\n"
    "le menu bleu ferme aussitôt\n";
constexpr double kTokens = 21, kSentences = 4;

const std::vector<std::string> kSourceWords = {"the", "red",  "file", "opens", "now",   "closes",
                                               "a",   "blue", "menu", "green", "window"};
const std::vector<std::string> kTargetWords = {"le", "rouge", "fichier", "ouvre", "aussitôt", "ferme",
                                               "un", "bleu",  "menu",    "vert",  "fenêtre"};

// Each word of `words` on an axis of its own (row i: axis axes[i]).
Embeddings axis_embeddings(const std::vector<std::string>& words, const std::vector<int>& axes) {
  Embeddings embeddings;
  embeddings.words = words;
  embeddings.vectors =
      Matrix::Zero(static_cast<Eigen::Index>(words.size()), static_cast<Eigen::Index>(words.size()));
  for (std::size_t i = 0; i < words.size(); ++i) {
    embeddings.vectors(static_cast<Eigen::Index>(i), axes[i]) = 1.0f;
    embeddings.rows[words[i]] = i;
  }
  return embeddings;
}

std::vector<int> identity_axes() {
  std::vector<int> axes(kSourceWords.size());
  for (std::size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int>(i);
  return axes;
}

// Both languages' vectors and composers, and the identity map between them.
struct Languages {
  explicit Languages(const std::vector<int>& target_axes)
      : source(axis_embeddings(kSourceWords, identity_axes())),
        target(axis_embeddings(kTargetWords, target_axes)) {
    const auto dim = static_cast<Eigen::Index>(kSourceWords.size());
    mapping.source_transform = mapping.target_transform = Matrix::Identity(dim, dim);
  }
  Embeddings source, target;
  Normalizer none{Normalization::none, {}};
  TermComposer source_composer{source, none, CompositionOptions{}};
  TermComposer target_composer{target, none, CompositionOptions{}};
  Mapping mapping;
};

const TermList kSourceTerms = term_list({"red file", "blue menu", "green window"});
const TermList kTargetTerms = term_list({"fichier rouge", "menu bleu", "fenêtre verte"});

// Every pair of the two lists, in an order that is not the lists'.
CandidateEvidence all_pairs() {
  CandidateEvidence evidence;
  for (std::uint32_t t = 0; t < 3; ++t) {
    for (std::uint32_t s = 3; s-- > 0;) {
      evidence.source.push_back(s);
      evidence.target.push_back(t);
    }
  }
  return evidence;
}

CorpusEvidenceOptions corpora(const std::string& source_text, const std::string& target_text) {
  CorpusEvidenceOptions options;
  options.source_corpus = scratch_file("test_corpus_evidence", "source.txt", source_text);
  options.target_corpus = scratch_file("test_corpus_evidence", "target.txt", target_text);
  options.threads = 1;
  return options;
}

CandidateEvidence evidence_of(const CorpusEvidenceOptions& options, const Languages& languages,
                              const PairList& seed, CandidateEvidence evidence = all_pairs()) {
  add_corpus_evidence(options, kSourceTerms, kTargetTerms, languages.source_composer, languages.target_composer,
                      languages.mapping, seed, evidence);
  return evidence;
}

// Source context word -> its target words and their weights.
using Translations = std::map<std::string, std::vector<std::pair<std::string, double>>>;

// The context similarity by brute force, over words: the source term's context vector (gather_corpus_statistics,
// tested against brute force in test_corpus.cpp) translated by `translations`, against the target term's.
double expected_similarity(const CorpusStatistics& source, const CorpusStatistics& target, std::uint32_t s,
                           std::uint32_t t, const Translations& translations) {
  std::map<std::string, double> translated, target_context;
  for (const auto& [id, value] : source.context[s])
    for (const auto& [word, weight] : translations.at(source.words[id])) translated[word] += value * weight;
  for (const auto& [id, value] : target.context[t]) target_context[target.words[id]] = value;
  double dot = 0, translated_norm = 0, target_norm = 0;
  for (const auto& [word, value] : translated) {
    translated_norm += value * value;
    const auto found = target_context.find(word);
    if (found != target_context.end()) dot += value * found->second;
  }
  for (const auto& entry : target_context) target_norm += entry.second * entry.second;
  return dot == 0 ? 0 : dot / std::sqrt(translated_norm * target_norm);
}

// Each context similarity of `evidence` against expected_similarity.
void check_similarities(const CandidateEvidence& evidence, const CorpusEvidenceOptions& options,
                        const Translations& translations) {
  const CorpusStatistics source = gather_corpus_statistics(options.source_corpus, kSourceTerms.terms);
  const CorpusStatistics target = gather_corpus_statistics(options.target_corpus, kTargetTerms.terms);
  // The premise of the hand-made translations: these are all the context words, on either side.
  std::vector<std::string> source_words = source.words;
  std::sort(source_words.begin(), source_words.end());
  CHECK(source_words == std::vector<std::string>{"a", "closes", "now", "opens", "the"});
  for (const auto& entry : translations)
    for (const auto& translation : entry.second) REQUIRE(target.word_ids.count(translation.first) == 1);
  REQUIRE(evidence.context_similarity.size() == evidence.size());
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    CAPTURE(evidence.source[i], evidence.target[i]);
    CHECK(evidence.context_similarity[i] ==
          Approx(expected_similarity(source, target, evidence.source[i], evidence.target[i], translations))
              .margin(1e-6));
  }
}

float similarity_of(const CandidateEvidence& evidence, std::uint32_t s, std::uint32_t t) {
  for (std::size_t i = 0; i < evidence.size(); ++i)
    if (evidence.source[i] == s && evidence.target[i] == t) return evidence.context_similarity[i];
  FAIL("no candidate " << s << ", " << t);
  return 0;
}

const Translations kWordForWord = {{"the", {{"le", 1.0}}},
                                   {"opens", {{"ouvre", 1.0}}},
                                   {"now", {{"aussitôt", 1.0}}},
                                   {"closes", {{"ferme", 1.0}}},
                                   {"a", {{"un", 1.0}}}};

}  // namespace

TEST_CASE("corpus evidence: the frequencies and their z-scores of each term in its corpus", "[corpus_evidence]") {
  const Languages languages(identity_axes());
  const CorpusEvidenceOptions options = corpora(kSourceCorpus, kTargetCorpus);
  const CandidateEvidence evidence = evidence_of(options, languages, PairList{});
  REQUIRE(evidence.size() == 9);
  // Each side's terms occur 2, 2 and 0 times, in as many sentences (the empty line is none).
  const double counts[3] = {2, 2, 0};
  // The z-scores of log(1 + count) = ln 3, ln 3, 0: mean 2 ln 3 / 3, standard deviation ln 3 sqrt(2) / 3.
  const double z[3] = {1 / std::sqrt(2.0), 1 / std::sqrt(2.0), -std::sqrt(2.0)};
  for (auto* column :
       {&evidence.source_log_frequency, &evidence.target_log_frequency, &evidence.source_log_sentences,
        &evidence.target_log_sentences, &evidence.source_frequency_z, &evidence.target_frequency_z})
    REQUIRE(column->size() == 9);
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    const std::uint32_t s = evidence.source[i], t = evidence.target[i];
    CAPTURE(s, t);
    CHECK(evidence.source_log_frequency[i] == Approx(std::log((counts[s] + 1) / (kTokens + 1))));
    CHECK(evidence.target_log_frequency[i] == Approx(std::log((counts[t] + 1) / (kTokens + 1))));
    CHECK(evidence.source_log_sentences[i] == Approx(std::log((counts[s] + 1) / (kSentences + 1))));
    CHECK(evidence.target_log_sentences[i] == Approx(std::log((counts[t] + 1) / (kSentences + 1))));
    CHECK(evidence.source_frequency_z[i] == Approx(z[s]));
    CHECK(evidence.target_frequency_z[i] == Approx(z[t]));
  }

  // The z-scores are among the list's terms, whichever the candidates.
  CandidateEvidence one;
  one.source = {2};
  one.target = {0};
  one = evidence_of(options, languages, PairList{}, one);
  REQUIRE(one.source_frequency_z.size() == 1);
  CHECK(one.source_frequency_z[0] == Approx(z[2]));
  CHECK(one.target_frequency_z[0] == Approx(z[0]));
}

TEST_CASE("corpus evidence: context similarity of word-for-word translated corpora", "[corpus_evidence]") {
  const Languages languages(identity_axes());
  CorpusEvidenceOptions options = corpora(kSourceCorpus, kTargetCorpus);

  SECTION("each context word translated by its nearest mapped neighbour") {
    const CandidateEvidence evidence = evidence_of(options, languages, PairList{});
    check_similarities(evidence, options, kWordForWord);
    // The translated pairs share their contexts exactly; a term absent from its corpus has none.
    CHECK(similarity_of(evidence, 0, 0) == Approx(1.0));
    CHECK(similarity_of(evidence, 1, 1) == Approx(1.0));
    CHECK(similarity_of(evidence, 0, 1) > 0.0f);
    CHECK(similarity_of(evidence, 0, 1) < 0.99f);
    for (std::uint32_t other = 0; other < 3; ++other) {
      CHECK(similarity_of(evidence, 2, other) == 0.0f);
      CHECK(similarity_of(evidence, other, 2) == 0.0f);
    }
    // The threads change nothing.
    options.threads = 2;
    const CandidateEvidence on_two = evidence_of(options, languages, PairList{});
    CHECK(on_two.context_similarity == evidence.context_similarity);
    CHECK(on_two.source_frequency_z == evidence.source_frequency_z);
  }
  SECTION("by the seed lexicon alone, whatever its case and Unicode normal form") {
    options.translated_words = 0;  // no neighbours
    PairList seed;
    seed.pairs = {{"The", "Le"},       {"opens", "ouvre"}, {"now", "aussito\xCC\x82t"},  // ô decomposed (NFD)
                  {"closes", "ferme"}, {"a", "un"},        {"red", "rouge"}};            // red: no context word
    const CandidateEvidence evidence = evidence_of(options, languages, seed);
    check_similarities(evidence, options, kWordForWord);
    CHECK(similarity_of(evidence, 0, 0) == Approx(1.0));
    CHECK(similarity_of(evidence, 1, 1) == Approx(1.0));
  }
  SECTION("with neither neighbours nor seed, nothing is translated") {
    options.translated_words = 0;
    const CandidateEvidence evidence = evidence_of(options, languages, PairList{});
    REQUIRE(evidence.context_similarity.size() == 9);
    for (const float similarity : evidence.context_similarity) CHECK(similarity == 0.0f);
  }
}

TEST_CASE("corpus evidence: a word's weight is shared among its seed translations and its neighbour",
          "[corpus_evidence]") {
  // `ouvre` and `ferme` swap vectors: the nearest mapped neighbour of `opens` is `ferme`, that of `closes`
  // `ouvre`; the seed gives `opens` its translation `ouvre` too.
  std::vector<int> axes = identity_axes();
  std::swap(axes[3], axes[5]);
  const Languages languages(axes);
  const CorpusEvidenceOptions options = corpora(kSourceCorpus, kTargetCorpus);
  PairList seed;
  seed.pairs = {{"opens", "ouvre"}};
  const CandidateEvidence evidence = evidence_of(options, languages, seed);
  const Translations shared = {{"the", {{"le", 1.0}}},
                               {"opens", {{"ouvre", 0.5}, {"ferme", 0.5}}},
                               {"now", {{"aussitôt", 1.0}}},
                               {"closes", {{"ouvre", 1.0}}},
                               {"a", {{"un", 1.0}}}};
  check_similarities(evidence, options, shared);
  CHECK(similarity_of(evidence, 0, 0) < 0.99f);  // the contexts no longer match word for word
  CHECK(similarity_of(evidence, 0, 0) > 0.5f);
}

TEST_CASE("corpus evidence: left out when few terms occur, if asked; a corpus of empty lines is an error",
          "[corpus_evidence]") {
  const Languages languages(identity_axes());
  SECTION("a corpus where under half the source terms occur") {
    CorpusEvidenceOptions options = corpora("the green window\n", kTargetCorpus);  // one term of three
    options.leave_out_when_low = true;
    CapturedLog log;
    const CandidateEvidence left_out = evidence_of(options, languages, PairList{});
    CHECK(left_out.size() == 9);
    CHECK(left_out.source_log_frequency.empty());
    CHECK(left_out.target_frequency_z.empty());
    CHECK(left_out.context_similarity.empty());
    CHECK(log.warnings_with("corpus evidence is left out") == 1);

    options.leave_out_when_low = false;
    const CandidateEvidence kept = evidence_of(options, languages, PairList{});
    CHECK(kept.source_log_frequency.size() == 9);
    CHECK(kept.context_similarity.size() == 9);
    CHECK(similarity_of(kept, 0, 0) == 0.0f);        // `red file` is not in its corpus
    for (std::size_t i = 0; i < kept.size(); ++i) {  // 3 tokens, 1 sentence; `green window` once
      CHECK(kept.source_log_frequency[i] == Approx(std::log((kept.source[i] == 2 ? 2.0 : 1.0) / 4)));
      CHECK(kept.source_log_sentences[i] == Approx(std::log((kept.source[i] == 2 ? 2.0 : 1.0) / 2)));
    }
  }
  SECTION("a source corpus of empty lines is an input error naming it") {
    const CorpusEvidenceOptions options = corpora("\n\n\n", kTargetCorpus);
    try {
      evidence_of(options, languages, PairList{});
      FAIL("no error");
    } catch (const Error& error) {
      CHECK(error.kind() == ErrorKind::input);
      CHECK_THAT(error.what(), Catch::Contains(options.source_corpus));
    }
  }
}
