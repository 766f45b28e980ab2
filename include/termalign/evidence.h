// What is known of each candidate pair: the evidence columns the pipeline fills and the re-ranker's features read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace termalign {

// One entry per candidate in every vector (the nested terms' lists excepted, which are by term id).
struct CandidateEvidence {
  std::vector<std::uint32_t> source, target;  // term ids in the two lists
  std::vector<float> csls, cosine;            // in the mapped space
  std::vector<float> reverse_rank;            // rank of the source among the target's best sources (0: not there)
  std::vector<float> orthographic;            // n-gram Dice of the Latin spellings
  std::vector<float> word_alignment;          // mean best word-to-word cosine, both directions averaged
  std::vector<std::uint8_t> identical;        // same Latin spelling
  std::vector<std::uint16_t> source_words, target_words;    // words per term
  std::vector<std::uint16_t> source_length, target_length;  // bytes per Latin spelling
  // Compositional evidence (compositional.h), with the full evidence: one-to-one word alignment, share of words
  // with a translation in the other term, agreement of the edge (head) words, share of words with a seed
  // translation (forms of a seed word included) in the other term, share of words whose seed translations are
  // all missing from it.
  std::vector<float> one_to_one, translated_share, edge_agreement, seed_share, seed_conflict;
  // Corpus evidence (corpus_evidence.h), only with both corpora: log relative frequency and sentence frequency of
  // each term in its corpus, their z-scores within their term list, and the context vectors' cosine.
  std::vector<float> source_log_frequency, target_log_frequency, source_log_sentences, target_log_sentences;
  std::vector<float> source_frequency_z, target_frequency_z, context_similarity;
  // Nested terms, with the full evidence (by term id; empty otherwise): the ids of the list's terms that are
  // another of its terms' words in a row (`barre d'outils` in `barre d'outils standard`).
  std::vector<std::vector<std::uint32_t>> source_parts, target_parts;
  std::size_t size() const { return source.size(); }
};

}  // namespace termalign
