#include "evidence/corpus_evidence.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "evidence/word_translation.h"
#include "io/io.h"
#include "io/sanity.h"
#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign {

namespace {

// Each term's log count, as a z-score among the list's terms: how frequent it is for its corpus, whatever the
// corpus's size.
std::vector<float> frequency_z_scores(const std::vector<std::uint64_t>& counts) {
  std::vector<double> logs(counts.size());
  for (std::size_t t = 0; t < counts.size(); ++t) logs[t] = std::log1p(static_cast<double>(counts[t]));
  const double mean = logs.empty() ? 0 : std::accumulate(logs.begin(), logs.end(), 0.0) / logs.size();
  double variance = 0;
  for (const double value : logs) variance += (value - mean) * (value - mean);
  const double deviation = logs.empty() ? 1 : std::sqrt(variance / logs.size());
  std::vector<float> z(counts.size());
  for (std::size_t t = 0; t < counts.size(); ++t)
    z[t] = deviation > 0 ? static_cast<float>((logs[t] - mean) / deviation) : 0.0f;
  return z;
}

// The ids of the `limit` most frequent words of `statistics` (ties by id).
std::vector<std::uint32_t> most_frequent_words(const CorpusStatistics& statistics, std::size_t limit) {
  std::vector<std::uint32_t> ids(statistics.words.size());
  std::iota(ids.begin(), ids.end(), 0u);
  const std::size_t kept = std::min(limit, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(kept), ids.end(),
                    [&](std::uint32_t a, std::uint32_t b) {
                      return statistics.word_count[a] != statistics.word_count[b]
                                 ? statistics.word_count[a] > statistics.word_count[b]
                                 : a < b;
                    });
  ids.resize(kept);
  return ids;
}

// Source context word id -> (target context word id, weight): its seed translations found among the target
// context words, plus its nearest mapped neighbour among the most frequent target context words.
std::vector<SparseVector> translate_context_words(const CorpusEvidenceOptions& options,
                                                  const CorpusStatistics& source_corpus,
                                                  const CorpusStatistics& target_corpus,
                                                  const TermComposer& source, const TermComposer& target,
                                                  const Mapping& mapping, const PairList& seed) {
  std::vector<SparseVector> translations(source_corpus.words.size());
  // The corpora's words are in NFC (gather_corpus_statistics): so are the seed's looked up among them.
  for (const auto& [word, targets] : seed_translations(seed, false)) {
    const auto s = source_corpus.word_ids.find(to_nfc(word));
    if (s == source_corpus.word_ids.end()) continue;
    for (const std::string& target_word : targets) {
      const auto t = target_corpus.word_ids.find(to_nfc(target_word));
      if (t != target_corpus.word_ids.end()) translations[s->second].emplace_back(t->second, 1.0f);
    }
  }
  const std::vector<std::uint32_t> source_ids = most_frequent_words(source_corpus, options.translated_words);
  const std::vector<std::uint32_t> target_ids = most_frequent_words(target_corpus, options.translated_words);
  std::vector<std::string> source_words, target_words;
  for (const std::uint32_t id : source_ids) source_words.push_back(source_corpus.words[id]);
  for (const std::uint32_t id : target_ids) target_words.push_back(target_corpus.words[id]);
  const WordVectors source_vectors =
      mapped_word_vectors(source_words, source, mapping.source_transform, options.threads);
  const WordVectors target_vectors =
      mapped_word_vectors(target_words, target, mapping.target_transform, options.threads);
  const auto nearest = nearest_rows(source_vectors, target_vectors, 1, options.threads);
  for (std::size_t i = 0; i < source_ids.size(); ++i) {
    if (nearest[i].empty()) continue;
    SparseVector& list = translations[source_ids[i]];
    const std::uint32_t neighbour = target_ids[nearest[i].front()];
    if (std::none_of(list.begin(), list.end(), [&](const auto& entry) { return entry.first == neighbour; }))
      list.emplace_back(neighbour, 1.0f);
  }
  for (SparseVector& list : translations) {
    for (auto& entry : list) entry.second = 1.0f / static_cast<float>(list.size());
  }
  return translations;
}

SparseVector translate(const SparseVector& context, const std::vector<SparseVector>& translations) {
  SparseVector translated;
  for (const auto& [word, value] : context)
    for (const auto& [target_word, weight] : translations[word])
      translated.emplace_back(target_word, value * weight);
  std::sort(translated.begin(), translated.end());
  SparseVector merged;  // one entry per target word
  for (const auto& entry : translated) {
    if (!merged.empty() && merged.back().first == entry.first) {
      merged.back().second += entry.second;
    } else {
      merged.push_back(entry);
    }
  }
  return merged;
}

}  // namespace

CorpusOptions statistics_options(const CorpusEvidenceOptions& options) {
  CorpusOptions corpus_options;
  corpus_options.window = options.window;
  corpus_options.threads = options.threads;
  return corpus_options;
}

std::vector<std::string> translated_context_words(const CorpusStatistics& statistics, std::size_t translated_words) {
  std::vector<std::string> words;
  for (const std::uint32_t id : most_frequent_words(statistics, translated_words))
    words.push_back(statistics.words[id]);
  return words;
}

void add_corpus_evidence(const CorpusEvidenceOptions& options, const TermList& source_terms,
                         const TermList& target_terms, const TermComposer& source, const TermComposer& target,
                         const Mapping& mapping, const PairList& seed, CandidateEvidence& evidence) {
  const auto started = std::chrono::steady_clock::now();
  const CorpusOptions corpus_options = statistics_options(options);
  std::shared_ptr<const CorpusStatistics> source_statistics = options.source_statistics,
                                          target_statistics = options.target_statistics;
  if (!source_statistics)
    source_statistics = std::make_shared<const CorpusStatistics>(
        gather_corpus_statistics(options.source_corpus, source_terms.terms, corpus_options));
  if (!target_statistics)
    target_statistics = std::make_shared<const CorpusStatistics>(
        gather_corpus_statistics(options.target_corpus, target_terms.terms, corpus_options));
  const CorpusStatistics& source_corpus = *source_statistics;
  const CorpusStatistics& target_corpus = *target_statistics;
  const auto found = [](const CorpusStatistics& corpus) {
    return static_cast<std::size_t>(std::count_if(corpus.term_count.begin(), corpus.term_count.end(),
                                                  [](std::uint64_t count) { return count > 0; }));
  };
  const bool low = check_terms_in_corpora(source_terms, found(source_corpus), options.source_corpus, target_terms,
                                          found(target_corpus), options.target_corpus);
  if (low && options.leave_out_when_low) {
    logger().warn(
        "the corpus evidence is left out: the bundled model trained without corpora ranks this run, as without "
        "the corpora (a --reranker model of your own would use them)");
    return;
  }
  const std::vector<SparseVector> translations =
      translate_context_words(options, source_corpus, target_corpus, source, target, mapping, seed);

  // The translated context of each source term among the candidates.
  std::vector<std::uint32_t> sources(evidence.source.begin(), evidence.source.end());
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  std::vector<SparseVector> translated(source_terms.size());
  parallel_for(sources.size(), options.threads, [&](std::size_t i) {
    translated[sources[i]] = translate(source_corpus.context[sources[i]], translations);
  });

  const std::vector<float> source_z = frequency_z_scores(source_corpus.term_count);
  const std::vector<float> target_z = frequency_z_scores(target_corpus.term_count);
  const auto log_share = [](std::uint64_t count, std::size_t total) {
    return static_cast<float>(std::log((static_cast<double>(count) + 1.0) / (static_cast<double>(total) + 1.0)));
  };
  const std::size_t n = evidence.size();
  for (auto* field : {&evidence.source_log_frequency, &evidence.target_log_frequency,
                      &evidence.source_log_sentences, &evidence.target_log_sentences, &evidence.source_frequency_z,
                      &evidence.target_frequency_z, &evidence.context_similarity})
    field->assign(n, 0.0f);
  parallel_for(n, options.threads, [&](std::size_t i) {
    const std::uint32_t s = evidence.source[i], t = evidence.target[i];
    evidence.source_log_frequency[i] = log_share(source_corpus.term_count[s], source_corpus.tokens);
    evidence.target_log_frequency[i] = log_share(target_corpus.term_count[t], target_corpus.tokens);
    evidence.source_log_sentences[i] = log_share(source_corpus.term_sentences[s], source_corpus.sentences);
    evidence.target_log_sentences[i] = log_share(target_corpus.term_sentences[t], target_corpus.sentences);
    evidence.source_frequency_z[i] = source_z[s];
    evidence.target_frequency_z[i] = target_z[t];
    evidence.context_similarity[i] = static_cast<float>(sparse_cosine(translated[s], target_corpus.context[t]));
  });
  logger().info("corpus evidence for {} candidates in {:.2f} s", n,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

CorpusEvidenceOptions corpus_evidence_options(const AlignConfig& config) {
  CorpusEvidenceOptions options;
  options.source_corpus = config.input.src_corpus;
  options.target_corpus = config.input.tgt_corpus;
  options.window = config.input.corpus_window;
  options.threads = config.scoring.threads;
  options.leave_out_when_low = config.input.reranker == kDefaultReranker;
  return options;
}

}  // namespace termalign
