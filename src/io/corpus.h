// Statistics of a term list in a monolingual corpus: occurrence counts and PPMI-weighted context vectors, gathered
// in one streaming, parallel pass over the corpus.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace termalign {

struct CorpusOptions {
  int window = 5;               // context words on each side of a term occurrence
  int threads = 0;              // 0 = all cores; never changes the result
  std::size_t chunk_bytes = 0;  // the corpus is read in pieces of about this size (0 = 4 MiB); tests use tiny ones
};

// A sparse vector: (word id, value), sorted by word id.
using SparseVector = std::vector<std::pair<std::uint32_t, float>>;

struct CorpusStatistics {
  std::string path;
  std::size_t sentences = 0, tokens = 0;  // non-empty lines, tokens (punctuation included)
  // Per term of the list: occurrences (every start position where its token sequence is found, overlaps
  // included) and sentences holding at least one occurrence.
  std::vector<std::uint64_t> term_count, term_sentences;
  // The context words (those with a positive PPMI for some term): id -> word, and their corpus counts.
  std::vector<std::string> words;
  std::vector<std::uint64_t> word_count;
  std::unordered_map<std::string, std::uint32_t> word_ids;
  // Per term: its context vector, the words within `window` tokens of its occurrences (punctuation skipped)
  // weighted by positive PMI with the context distribution smoothed to the power 0.75 (Levy et al. 2015).
  std::vector<SparseVector> context;
};

// One pass over `path` (one sentence per line, UTF-8), in NFC, lower-cased and tokenised as `train-vectors` does
// (tokenize()); `terms` are found as token sequences, lower-cased alike (`Drop-down Menu` as `drop-down menu`). A
// missing or unreadable corpus, or invalid UTF-8 (file:line), is an input error. Logs its progress (bytes read)
// when it lasts.
CorpusStatistics gather_corpus_statistics(const std::string& path, const std::vector<std::string>& terms,
                                          const CorpusOptions& options = {});

// The warning of a corpus (`path`) of which `lines` lines were not in NFC and were read in NFC (the corpus
// evidence and train-vectors alike).
void warn_read_in_nfc(const std::string& path, std::size_t lines);

// Cosine of two sparse vectors (0 when either is empty).
double sparse_cosine(const SparseVector& a, const SparseVector& b);

}  // namespace termalign
