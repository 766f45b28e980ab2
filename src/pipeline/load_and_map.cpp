// Load and map: each side's vectors, the mapping fitted on the seed, the terms composed in the shared space.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "io/gzip_stream.h"
#include "io/io.h"
#include "io/sanity.h"
#include "mapping/compose_alongside.h"
#include "mapping/seed.h"
#include "pipeline/stages.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign::pipeline {

namespace {

// Seed pairs whose two sides are composed from known words only (as written or lower-cased), as rows of Xs, Zt,
// in the lexicon's order. Both sides are composed as two lists (compose_lists, on `threads` threads); a pair is
// kept when both of its sides are usable.
std::size_t seed_matrices(const PairList& seed, const Embeddings& source, const Embeddings& target,
                          const Mapping& mapping, int threads, Matrix& Xs, Matrix& Zt) {
  CompositionOptions known_only;
  known_only.split_compounds = false;
  known_only.subword_oov = false;
  known_only.split_closed_compounds = false;
  const TermComposer source_composer(source, mapping.source, known_only);
  const TermComposer target_composer(target, mapping.target, known_only);
  std::vector<std::string> sources, targets;
  sources.reserve(seed.pairs.size());
  targets.reserve(seed.pairs.size());
  for (const auto& [source_entry, target_entry] : seed.pairs) {
    sources.push_back(source_entry);
    targets.push_back(target_entry);
  }
  std::vector<ComposedTerms> sides =
      compose_lists({{sources, source_composer}, {targets, target_composer}}, threads);
  // Each side's rows are its usable entries in order; the kept pairs' rows move up in place.
  Xs = std::move(sides[0].vectors);
  Zt = std::move(sides[1].vectors);
  const std::vector<std::uint32_t>& source_ids = sides[0].term_ids;
  const std::vector<std::uint32_t>& target_ids = sides[1].term_ids;
  Eigen::Index rows = 0;
  for (std::size_t s = 0, t = 0; s < source_ids.size() && t < target_ids.size();) {
    if (source_ids[s] < target_ids[t]) {
      ++s;
    } else if (target_ids[t] < source_ids[s]) {
      ++t;
    } else {
      Xs.row(rows) = Xs.row(static_cast<Eigen::Index>(s++));
      Zt.row(rows) = Zt.row(static_cast<Eigen::Index>(t++));
      ++rows;
    }
  }
  Xs.conservativeResize(rows, Eigen::NoChange);
  Zt.conservativeResize(rows, Eigen::NoChange);
  return static_cast<std::size_t>(rows);
}

}  // namespace

LoadOptions side_options(std::initializer_list<const std::vector<std::string>*> lists, const AlignConfig& config) {
  LoadOptions options;
  options.restrict_words = true;
  options.wanted = collect_word_set(lists);
  options.most_frequent = config.input.most_frequent;
  options.fold_case = config.composition.lowercase_fallback;
  options.threads = config.scoring.threads;
  return options;
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
  mapping.source.kind = mapping.target.kind = config.mapping.normalization;
  mapping.source.fit_apply(source.vectors, config.scoring.threads);
  mapping.target.fit_apply(target.vectors, config.scoring.threads);
  return mapping;
}

std::function<void()> fit_seed_transforms(const PairList& seed, const std::string& seed_name,
                                          const AlignConfig& config, const Embeddings& source,
                                          const Embeddings& target, Mapping& mapping, std::size_t& usable) {
  const int threads = config.scoring.threads;
  Matrix Xs, Zt;
  usable = seed_matrices(seed, source, target, mapping, threads, Xs, Zt);
  logger().info("{} of {} seed pairs have both sides in {} and {}", usable, seed.pairs.size(), source.path,
                target.path);
  warn_if_low_seed_coverage(seed.path, usable, seed.pairs.size(), source.path, target.path);
  if (usable < config.mapping.min_seed_pairs) {
    throw_input_error(seed_name, 0,
                      "only " + std::to_string(usable) + " of " + std::to_string(seed.pairs.size()) +
                          " seed pairs have both words in the vectors; at least " +
                          std::to_string(config.mapping.min_seed_pairs) +
                          " are needed (min_seed_pairs). Check that the seed lexicon and the vectors are of "
                          "the two languages, in that order.");
  }
  const auto take_transforms = [&mapping](Mapping&& fitted) {
    mapping.source_transform = std::move(fitted.source_transform);
    mapping.target_transform = std::move(fitted.target_transform);
  };
  // The refinement's iterations use the threads; its final products, like the seed's without refinement, are
  // decomposed beside the composition.
  auto products = std::make_shared<const SeedProducts>(
      refined_seed_products(Xs, Zt, source.vectors, target.vectors, config.mapping, threads));
  return [products, &options = config.mapping, take_transforms] {
    take_transforms(mapping_from_products(*products, options));
  };
}

PairList induced_seed(const AlignConfig& config, const Embeddings& source, const Embeddings& target) {
  const MappingOptions& options = config.mapping;
  const int threads = config.scoring.threads;
  if (config.input.seed == kIdenticalSeed) return identical_seed(source, target);
  PairList transliterated = transliterated_seed(source, target, options.seed_spelling_similarity, threads);
  if (config.input.seed == kTransliteratedSeed) return transliterated;
  std::vector<PairList> starts;
  starts.push_back(identical_seed(source, target));
  if (transliterated.pairs == starts.front().pairs) {
    logger().info("seed auto: no word pairs by spelling beyond the identical words, which are the seed");
    return std::move(starts.front());
  }
  starts.push_back(std::move(transliterated));
  // Each start's refined mapping, fitted as the run would fit it, scored on the frequent words.
  double best_score = -std::numeric_limits<double>::infinity();
  std::size_t best = 0;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    Embeddings normalised_source = source, normalised_target = target;
    const Mapping normalisers = normalise_pair(config, normalised_source, normalised_target);
    Matrix Xs, Zt;
    const std::size_t usable =
        seed_matrices(starts[i], normalised_source, normalised_target, normalisers, threads, Xs, Zt);
    if (usable < options.min_seed_pairs) {
      logger().info("seed auto: the start '{}' has {} usable pairs, fewer than min_seed_pairs ({})",
                    starts[i].path, usable, options.min_seed_pairs);
      continue;
    }
    const Mapping fitted = mapping_from_products(
        refined_seed_products(Xs, Zt, normalised_source.vectors, normalised_target.vectors, options, threads),
        options);
    const double score = mean_nearest_csls(normalised_source.vectors, normalised_target.vectors, fitted,
                                           options.seed_selection_words, threads);
    logger().info(
        "seed auto: the start '{}' ({} pairs, {} usable) maps the {} most frequent words of each side with a "
        "mean CSLS of {:.4f} to their nearest translation",
        starts[i].path, starts[i].pairs.size(), usable, options.seed_selection_words, score);
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  logger().info("seed auto: the run starts from the seed '{}' ({} pairs), the start whose mapping scores best",
                starts[best].path, starts[best].pairs.size());
  return std::move(starts[best]);
}

PairList induced_lexicon(const AlignConfig& config, PairList start, const Embeddings& source,
                         const Embeddings& target, const Mapping& mapping) {
  const std::size_t words = config.mapping.seed_lexicon_words;
  if (words == 0) return start;
  PairList lexicon;
  lexicon.path = start.path;
  for (const auto& [s, t] :
       mutual_nearest_words(source.vectors, target.vectors, mapping, words, config.scoring.threads)) {
    lexicon.pairs.emplace_back(source.words[s], target.words[t]);
    lexicon.lines.push_back(lexicon.pairs.size());
  }
  logger().info(
      "the seed evidence reads {} word pairs, mutual CSLS nearest neighbours among the {} most frequent words of "
      "each side under the mapping from the seed '{}'",
      lexicon.pairs.size(), words, start.path);
  return lexicon;
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
