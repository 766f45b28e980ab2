// Load and map: each side's vectors, the mapping fitted on the seed, the terms composed in the shared space.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include "evidence/corpus_evidence.h"
#include "io/gzip_stream.h"
#include "io/io.h"
#include "io/sanity.h"
#include "mapping/compose_alongside.h"
#include "pipeline/stages.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "termalign/interrupt.h"
#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign::pipeline {

LoadOptions side_options(std::initializer_list<const std::vector<std::string>*> lists, const AlignConfig& config) {
  LoadOptions options;
  options.restrict_words = true;
  options.wanted = collect_word_set(lists);
  options.most_frequent = config.input.most_frequent;
  options.fold_case = config.composition.lowercase_fallback;
  options.threads = config.scoring.threads;
  return options;
}

std::shared_ptr<const CorpusStatistics> side_corpus_statistics(const CorpusEvidenceOptions& options, Side side,
                                                               const std::vector<std::string>& terms) {
  return std::make_shared<const CorpusStatistics>(gather_corpus_statistics(
      side == Side::source ? options.source_corpus : options.target_corpus, terms, statistics_options(options)));
}

void ask_gzipped_models_for_corpus_words(const AlignConfig& config,
                                         const std::function<const CorpusStatistics&(Side)>& statistics,
                                         LoadOptions& source, LoadOptions& target) {
  if (config.input.src_corpus.empty()) return;
  const bool source_gzipped = is_gzipped_fasttext_model(config.input.src_vectors);
  const bool target_gzipped = is_gzipped_fasttext_model(config.input.tgt_vectors);
  if (!source_gzipped && !target_gzipped) return;
  const std::size_t translated_words = corpus_evidence_options(config).translated_words;
  const auto ask = [&](Side side, bool gzipped, LoadOptions& load) {
    const CorpusStatistics& gathered = statistics(side);  // gathered for both sides: the evidence reads them
    if (gzipped) {  // the words the composer may look up for them (compound pieces too), as for the terms
      const std::vector<std::string> words = translated_context_words(gathered, translated_words);
      load.subword_wanted = collect_word_set({&words});
    }
  };
  ask(Side::source, source_gzipped, source);
  ask(Side::target, target_gzipped, target);
  logger().info(
      "a gzipped model is read in one pass: the corpora were read first, for the subword vectors of "
      "their most frequent context words ({} and {} words and parts of words)",
      source.subword_wanted.size(), target.subword_wanted.size());
}

std::optional<PairList> seed_from_dictionary(const AlignConfig& config, RunDecisions& decisions,
                                             const Dictionary& dictionary, const Embeddings& source,
                                             const Embeddings& target) {
  PairList pairs = dictionary_seed(dictionary, source, target, config.input.most_frequent,
                                   config.input.dictionary_seed_translations);
  if (pairs.pairs.size() >= config.mapping.min_seed_pairs) {
    logger().info("the mapping's seed: {} single-word pairs of the dictionary among the {} most frequent words",
                  pairs.pairs.size(), config.input.most_frequent);
    decide_dictionary_seed(decisions);  // no longer induced, though the term lists may add to it
    return pairs;
  }
  if (!is_induced_seed(config.input.seed)) {
    throw_input_error(config.input.dictionary.front(), 0,
                      "the dictionaries give " + std::to_string(pairs.pairs.size()) +
                          " single-word pairs among the frequent words, fewer than min_seed_pairs (" +
                          std::to_string(config.mapping.min_seed_pairs) +
                          "): give a seed lexicon, or --seed auto to induce one from the vectors.");
  }
  logger().warn(
      "the dictionaries give {} single-word pairs among the frequent words, fewer than min_seed_pairs "
      "({}): the seed is induced from the vectors ({})",
      pairs.pairs.size(), config.mapping.min_seed_pairs, config.input.seed);
  return std::nullopt;
}

void log_unusable(const char* side, const std::vector<std::string>& terms, const ComposedTerms& composed) {
  if (composed.unusable.empty()) return;
  std::string examples;
  for (std::size_t i = 0; i < composed.unusable.size() && i < 5; ++i) {
    examples += (i ? ", '" : "'") + terms[composed.unusable[i]] + "'";
  }
  logger().warn("{} of {} {} terms have no usable word and are left out of the ranking (e.g. {})",
                composed.unusable.size(), terms.size(), side, examples);
}

void load_pair(const std::string& source_path, const std::string& target_path, const LoadOptions& source_options,
               const LoadOptions& target_options, VectorCache* cache, Embeddings& source, Embeddings& target) {
  const auto dimension_error = [&](int source_dim, int target_dim) {
    throw_input_error(target_path, 0,
                      "the vectors have dimension " + std::to_string(target_dim) + " but the source vectors (" +
                          source_path + ") have dimension " + std::to_string(source_dim) +
                          "; both languages need vectors of the same dimension.");
  };
  // The headers first: neither file is read in full when the two cannot go together.
  const auto source_dim = vector_file_dimension(source_path), target_dim = vector_file_dimension(target_path);
  if (source_dim && target_dim && *source_dim != *target_dim) dimension_error(*source_dim, *target_dim);
  // One memory budget for both sides.
  LoadOptions source_load = source_options, target_load = target_options;
  source_load.shared_charge = target_load.shared_charge = std::make_shared<std::atomic<std::size_t>>(0);
  const auto load_source = [&] {
    source = cache ? cache->load(source_path, source_load) : load_embeddings(source_path, source_load);
  };
  const auto load_target = [&] {
    target = cache ? cache->load(target_path, target_load) : load_embeddings(target_path, target_load);
  };
  // A gzip file inflates on one thread: the two sides load at once. Otherwise each uses all the threads.
  if (detail::has_gzip_magic(source_path) || detail::has_gzip_magic(target_path)) {
    run_both(load_source, load_target, source_options.threads);
  } else {
    load_source();
    load_target();
  }
  if (source.dim() != target.dim()) dimension_error(source.dim(), target.dim());
}

Mapping normalise_pair(const AlignConfig& config, Embeddings& source, Embeddings& target) {
  Mapping mapping;
  mapping.source.kind = mapping.target.kind = resolved_normalization(config);
  if (config.mapping.normalization == Normalization::automatic)
    logger().info("normalization auto: {} ({})", to_string(mapping.source.kind),
                  mapping.source.kind == Normalization::center ? "the seed is a lexicon or a dictionary's"
                                                               : "the seed is induced from the vectors");
  mapping.source.fit_apply(source.vectors, config.scoring.threads);
  mapping.target.fit_apply(target.vectors, config.scoring.threads);
  return mapping;
}

void compose_mapped(const std::vector<std::string>& source_terms, const TermComposer& source_composer,
                    const std::vector<std::string>& target_terms, const TermComposer& target_composer,
                    const Mapping& mapping, const std::function<void()>& finish_fit, int threads, ComposedTerms& X,
                    ComposedTerms& Z, const std::function<void()>& source_composed) {
  X = std::move(detail::compose_lists_alongside({{source_terms, source_composer}}, threads, finish_fit)[0]);
  if (source_composed) source_composed();
  Z = std::move(detail::compose_lists_alongside({{target_terms, target_composer}}, threads, {})[0]);
  transform_rows(X.vectors, mapping.source_transform, threads);
  transform_rows(Z.vectors, mapping.target_transform, threads);
}

ComposedTerms combine_spaces(const ComposedTerms& general, const ComposedTerms& corpus, std::size_t terms,
                             double corpus_weight) {
  constexpr std::int64_t kAbsent = -1;
  std::vector<std::int64_t> general_row(terms, kAbsent), corpus_row(terms, kAbsent);
  for (std::size_t r = 0; r < general.term_ids.size(); ++r)
    general_row[general.term_ids[r]] = static_cast<std::int64_t>(r);
  for (std::size_t r = 0; r < corpus.term_ids.size(); ++r)
    corpus_row[corpus.term_ids[r]] = static_cast<std::int64_t>(r);
  const Eigen::Index general_dim = general.vectors.cols(), corpus_dim = corpus.vectors.cols();
  const float general_scale = static_cast<float>(std::sqrt(1.0 - corpus_weight));
  const float corpus_scale = static_cast<float>(std::sqrt(corpus_weight));
  ComposedTerms combined;
  combined.vectors = Matrix::Zero(static_cast<Eigen::Index>(terms), general_dim + corpus_dim);
  Eigen::Index rows = 0;
  for (std::size_t id = 0; id < terms; ++id) {
    auto row = combined.vectors.row(rows);
    if (general_row[id] != kAbsent)
      row.head(general_dim) = general_scale * general.vectors.row(static_cast<Eigen::Index>(general_row[id]));
    if (corpus_row[id] != kAbsent)
      row.tail(corpus_dim) = corpus_scale * corpus.vectors.row(static_cast<Eigen::Index>(corpus_row[id]));
    const float norm = row.norm();
    if (norm > 0) {
      row /= norm;
      combined.term_ids.push_back(static_cast<std::uint32_t>(id));
      ++rows;
    } else {
      row.setZero();
      combined.unusable.push_back(static_cast<std::uint32_t>(id));
    }
  }
  combined.vectors.conservativeResize(rows, Eigen::NoChange);
  return combined;
}

Matrix frequent_rows(const Embeddings& embeddings, std::size_t n, const Matrix& transform, int threads) {
  const Eigen::Index rows = static_cast<Eigen::Index>(std::min(n, embeddings.size()));
  Matrix frequent = embeddings.vectors.topRows(rows) * transform;
  normalize_rows(frequent, threads);
  return frequent;
}

void save_mapped_vectors(const std::string& prefix, const Embeddings& source, const Embeddings& target,
                         const Mapping& mapping, int threads) {
  AtomicFile source_file(prefix + ".src.vec"), target_file(prefix + ".tgt.vec");
  source_file.write(format_vec(source.words, source.vectors * mapping.source_transform, threads));
  target_file.write(format_vec(target.words, target.vectors * mapping.target_transform, threads));
  source_file.commit();
  target_file.commit();
  logger().info("wrote the mapped vectors {}.src.vec ({} words) and {}.tgt.vec ({} words)", prefix, source.size(),
                prefix, target.size());
}

}  // namespace termalign::pipeline
