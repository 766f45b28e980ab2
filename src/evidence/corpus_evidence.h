// Corpus evidence of candidate pairs, from two comparable corpora: the terms' frequencies and the similarity of
// their contexts (Fung 1998; Rapp 1999; Morin, Daille et al.), the source contexts carried to the target language
// through the seed lexicon and nearest neighbours in the mapped space.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/corpus.h"
#include "mapping/composition.h"
#include "mapping/mapping.h"
#include "termalign/config.h"
#include "termalign/lexicon.h"
#include "termalign/types.h"

namespace termalign {

struct CorpusEvidenceOptions {
  std::string source_corpus, target_corpus;
  int window = 5;                        // context words on each side of an occurrence
  std::size_t translated_words = 10000;  // the most frequent context words of each side given a mapped neighbour
  // When under kLowCorpusCoverage of a list's terms occur in its corpus (sanity.h), leave the corpus fields empty,
  // so that the bundled model trained without corpora ranks the run: such corpora mislead it (swapped corpora
  // on the sample: 0.887 with the corpus model, 0.910 without).
  bool leave_out_when_low = false;
  int threads = 0;
  // The corpora's statistics when already gathered (gather_corpus_statistics of each list's terms with
  // statistics_options); null: add_corpus_evidence gathers them.
  std::shared_ptr<const CorpusStatistics> source_statistics, target_statistics;
};

// The options the corpus evidence gathers the corpora's statistics with.
CorpusOptions statistics_options(const CorpusEvidenceOptions& options);

// The context words of `statistics` that the corpus evidence maps (the `translated_words` most frequent): the
// words whose vectors it asks for.
std::vector<std::string> translated_context_words(const CorpusStatistics& statistics, std::size_t translated_words);

// Gathers both corpora's statistics (gather_corpus_statistics, one pass each; or takes the options' own) and
// fills the corpus fields of `evidence` for every candidate:
// - source_log_frequency, target_log_frequency: log((count + 1) / (tokens + 1)) of each term in its corpus;
// - source_log_sentences, target_log_sentences: log((sentences with it + 1) / (sentences + 1));
// - source_frequency_z, target_frequency_z: the z-score of log(count + 1) among its list's terms (scale-free);
// - context_similarity: cosine of the target term's context vector and the source term's, translated word by word
//   (each context word to its seed translations plus its nearest mapped neighbour among the target context words,
//   its weight shared among them).
void add_corpus_evidence(const CorpusEvidenceOptions& options, const TermList& source_terms,
                         const TermList& target_terms, const TermComposer& source, const TermComposer& target,
                         const Mapping& mapping, const PairList& seed, CandidateEvidence& evidence);

// The corpus evidence's options as `config` sets them (its corpora, window and threads; the corpus fields left out
// when low only under the bundled model).
CorpusEvidenceOptions corpus_evidence_options(const AlignConfig& config);

}  // namespace termalign
