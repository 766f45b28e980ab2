#include "termalign/align.h"

#include <algorithm>
#include <chrono>
#include <unordered_set>

#include "termalign/composition.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "termalign/io.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"
#include "termalign/mapping.h"
#include "termalign/scoring.h"

namespace termalign {

namespace {

Embeddings load_side(const std::string& path, const std::vector<std::string>& needed_words,
                     const AlignConfig& config) {
  LoadOptions options;
  options.restrict_words = true;
  options.wanted.insert(needed_words.begin(), needed_words.end());
  options.most_frequent = config.input.most_frequent;
  options.threads = config.scoring.threads;
  return load_embeddings(path, options);
}

void log_unusable(const char* side, const TermList& list, const ComposedTerms& composed) {
  if (composed.unusable.empty()) return;
  std::string examples;
  for (std::size_t i = 0; i < composed.unusable.size() && i < 5; ++i) {
    examples += (i ? ", '" : "'") + list.terms[composed.unusable[i]] + "'";
  }
  logger().warn("{} of {} {} terms have no usable word and are left out of the ranking (e.g. {})",
                composed.unusable.size(), list.size(), side, examples);
}

// Seed pairs whose two sides are composed from known words only (as written or lower-cased), as rows of Xs, Zt.
std::size_t seed_matrices(const PairList& seed, const Embeddings& source, const Embeddings& target,
                          const Mapping& mapping, Matrix& Xs, Matrix& Zt) {
  CompositionOptions known_only;
  known_only.split_compounds = false;
  known_only.subword_oov = false;
  const TermComposer source_composer(source, mapping.source, known_only);
  const TermComposer target_composer(target, mapping.target, known_only);
  Xs.resize(static_cast<Eigen::Index>(seed.pairs.size()), source.dim());
  Zt.resize(static_cast<Eigen::Index>(seed.pairs.size()), target.dim());
  Eigen::Index usable = 0;
  RowVector x, z;
  for (const auto& [source_entry, target_entry] : seed.pairs) {
    if (source_composer.compose(source_entry, x) && target_composer.compose(target_entry, z)) {
      Xs.row(usable) = x;
      Zt.row(usable) = z;
      ++usable;
    }
  }
  Xs.conservativeResize(usable, Eigen::NoChange);
  Zt.conservativeResize(usable, Eigen::NoChange);
  return static_cast<std::size_t>(usable);
}

// The first n rows of the (file-ordered) vectors, mapped into the shared space, unit rows.
Matrix frequent_rows(const Embeddings& embeddings, std::size_t n, const Matrix& transform) {
  const Eigen::Index rows = static_cast<Eigen::Index>(std::min(n, embeddings.size()));
  Matrix frequent = embeddings.vectors.topRows(rows) * transform;
  normalize_rows(frequent);
  return frequent;
}

}  // namespace

std::vector<RankedPair> align_terms(const AlignConfig& config, AlignmentSummary* summary) {
  config.validate();
  const auto start = std::chrono::steady_clock::now();
  AlignmentSummary local;
  AlignmentSummary& stats = summary ? *summary : local;

  const TermList source_terms = read_term_list(config.input.src_terms);
  const TermList target_terms = read_term_list(config.input.tgt_terms);
  for (const TermList* list : {&source_terms, &target_terms}) {
    if (list->size() == 0) throw_input_error(list->path, 0, "the term list is empty.");
  }
  stats.source_terms = source_terms.size();
  stats.target_terms = target_terms.size();

  const bool fit = config.output.mapping.empty();
  PairList seed;
  std::vector<std::string> source_words, target_words;
  collect_words(source_terms.terms, source_words);
  collect_words(target_terms.terms, target_words);
  if (fit) {
    seed = read_pairs(config.input.seed, PairFileKind::seed_lexicon);
    std::vector<std::string> seed_sources, seed_targets;
    for (const auto& [source, target] : seed.pairs) {
      seed_sources.push_back(source);
      seed_targets.push_back(target);
    }
    collect_words(seed_sources, source_words);
    collect_words(seed_targets, target_words);
  }

  Embeddings source = load_side(config.input.src_vectors, source_words, config);
  Embeddings target = load_side(config.input.tgt_vectors, target_words, config);
  if (source.dim() != target.dim()) {
    throw_input_error(config.input.tgt_vectors, 0,
                      "the vectors have dimension " + std::to_string(target.dim()) + " but the source vectors (" +
                          config.input.src_vectors + ") have dimension " + std::to_string(source.dim()) +
                          "; both languages need vectors of the same dimension.");
  }

  Mapping mapping;
  if (fit) {
    mapping.source.kind = mapping.target.kind = config.mapping.normalization;
    mapping.source.fit_apply(source.vectors);
    mapping.target.fit_apply(target.vectors);
    Matrix Xs, Zt;
    stats.seed_pairs = seed.pairs.size();
    stats.seed_pairs_usable = seed_matrices(seed, source, target, mapping, Xs, Zt);
    logger().info("{} of {} seed pairs have both sides in the vectors", stats.seed_pairs_usable, stats.seed_pairs);
    if (stats.seed_pairs_usable < config.mapping.min_seed_pairs) {
      throw_input_error(config.input.seed, 0,
                        "only " + std::to_string(stats.seed_pairs_usable) + " of " +
                            std::to_string(stats.seed_pairs) +
                            " seed pairs have both words in the vectors; at least " +
                            std::to_string(config.mapping.min_seed_pairs) +
                            " are needed (min_seed_pairs). Check that the seed lexicon and the vectors are of "
                            "the two languages, in that order.");
    }
    Mapping fitted = fit_mapping(Xs, Zt, source.vectors, target.vectors, config.mapping, config.scoring.threads);
    mapping.source_transform = std::move(fitted.source_transform);
    mapping.target_transform = std::move(fitted.target_transform);
    if (!config.output.save_mapping.empty()) save_mapping(config.output.save_mapping, mapping);
  } else {
    mapping = load_mapping(config.output.mapping);
    if (mapping.source_transform.rows() != source.dim()) {
      throw_input_error(config.output.mapping, 2,
                        "the mapping has dimension " + std::to_string(mapping.source_transform.rows()) +
                            " but the vectors have " + std::to_string(source.dim()) + ".");
    }
    mapping.source.apply_rows(source.vectors);
    mapping.target.apply_rows(target.vectors);
    logger().info("loaded the mapping {} (normalisation {})", config.output.mapping,
                  to_string(mapping.source.kind));
  }

  const int threads = config.scoring.threads;
  ComposedTerms X =
      compose_terms(source_terms.terms, TermComposer(source, mapping.source, config.composition), threads);
  ComposedTerms Z =
      compose_terms(target_terms.terms, TermComposer(target, mapping.target, config.composition), threads);
  log_unusable("source", source_terms, X);
  log_unusable("target", target_terms, Z);
  X.vectors = X.vectors * mapping.source_transform;
  Z.vectors = Z.vectors * mapping.target_transform;
  normalize_rows(X.vectors);
  normalize_rows(Z.vectors);
  stats.source_usable = X.term_ids.size();
  stats.target_usable = Z.term_ids.size();

  TileOptions tiles;
  tiles.rows = config.scoring.tile_rows;
  tiles.cols = config.scoring.tile_cols;
  tiles.threads = threads;
  NeighbourhoodMeans means;
  if (config.scoring.neighbourhood == Neighbourhood::terms) {
    means = neighbourhood_means(X.vectors, Z.vectors, config.scoring.k, tiles);
  } else {
    const std::size_t n = config.scoring.neighbourhood_words;
    means.source = knn_mean_similarity(X.vectors, frequent_rows(target, n, mapping.target_transform),
                                       config.scoring.k, tiles);
    means.target = knn_mean_similarity(Z.vectors, frequent_rows(source, n, mapping.source_transform),
                                       config.scoring.k, tiles);
  }

  stats.cap = submission_cap(source_terms.size(), target_terms.size());
  if (config.ranking.cap > 0) stats.cap = std::min(stats.cap, config.ranking.cap);
  SelectionOptions selection;
  selection.top_m = config.ranking.top_m;
  selection.mutual_m = config.ranking.mutual_m;
  selection.limit = stats.cap;
  const auto candidates = select_csls_candidates(X.vectors, Z.vectors, means, selection, tiles);

  std::vector<RankedPair> ranked;
  ranked.reserve(candidates.size());
  for (const auto& candidate : candidates) {
    ranked.push_back({source_terms.terms[X.term_ids[candidate.source]],
                      target_terms.terms[Z.term_ids[candidate.target]], candidate.score});
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  logger().info("ranked {} pairs (cap {}) from {} x {} usable terms in {:.2f} s", ranked.size(), stats.cap,
                stats.source_usable, stats.target_usable, stats.seconds);
  return ranked;
}

AlignmentSummary run_align(const AlignConfig& config) {
  if (config.output.out.empty()) throw_usage_error("An output file is needed: give --out.");
  AlignmentSummary summary;
  const auto pairs = align_terms(config, &summary);
  write_pairs(config.output.out, pairs, false);
  if (!config.output.scores.empty()) write_pairs(config.output.scores, pairs, true);
  const std::string resolved = config.output.out + ".config.toml";
  write_file_atomically(resolved, to_toml(config));
  logger().info("wrote {} and {}", config.output.out, resolved);
  return summary;
}

}  // namespace termalign
