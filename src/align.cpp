#include "termalign/align.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "termalign/composition.h"
#include "termalign/corpus_evidence.h"
#include "termalign/distributed.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "termalign/explain.h"
#include "termalign/io.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"
#include "termalign/mapping.h"
#include "termalign/orthography.h"
#include "termalign/parallel.h"
#include "termalign/resources.h"
#include "termalign/sanity.h"
#include "termalign/scoring.h"
#include "termalign/seed.h"

namespace termalign {

namespace {

// What one side loads: the words composing `lists` may look up (collect_word_set), and the frequent ones.
LoadOptions side_options(std::initializer_list<const std::vector<std::string>*> lists, const AlignConfig& config) {
  LoadOptions options;
  options.restrict_words = true;
  options.wanted = collect_word_set(lists);
  options.most_frequent = config.input.most_frequent;
  options.threads = config.scoring.threads;
  return options;
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

// Seed pairs whose two sides are composed from known words only (as written or lower-cased), as rows of Xs, Zt,
// in the lexicon's order. Both sides are composed as two lists (compose_lists, on `threads` threads); a pair is
// kept when both of its sides are usable.
std::size_t seed_matrices(const PairList& seed, const Embeddings& source, const Embeddings& target,
                          const Mapping& mapping, int threads, Matrix& Xs, Matrix& Zt) {
  CompositionOptions known_only;
  known_only.split_compounds = false;
  known_only.subword_oov = false;
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

// Both languages' vectors, which must have the same dimension.
void load_pair(const std::string& source_path, const std::string& target_path, const LoadOptions& source_options,
               const LoadOptions& target_options, Embeddings& source, Embeddings& target) {
  source = load_embeddings(source_path, source_options);
  target = load_embeddings(target_path, target_options);
  if (source.dim() != target.dim()) {
    throw_input_error(target_path, 0,
                      "the vectors have dimension " + std::to_string(target.dim()) + " but the source vectors (" +
                          source_path + ") have dimension " + std::to_string(source.dim()) +
                          "; both languages need vectors of the same dimension.");
  }
}

// A mapping whose normalisers are fitted on both sides, which they normalise in place; its transforms are still to
// be fitted (fit_seed_transforms).
Mapping normalise_pair(const AlignConfig& config, Embeddings& source, Embeddings& target) {
  Mapping mapping;
  mapping.source.kind = mapping.target.kind = config.mapping.normalization;
  mapping.source.fit_apply(source.vectors, config.scoring.threads);
  mapping.target.fit_apply(target.vectors, config.scoring.threads);
  return mapping;
}

// Fits the mapping's transforms on the seed pairs both normalised sides know. The products over the pairs and the
// refinement's iterations use the threads; the d x d decompositions that finish the fit (serial) are returned as a
// step still to run, which compose_mapped runs beside the composition (it needs only the normalisers).
std::function<void()> fit_seed_transforms(const PairList& seed, const AlignConfig& config, const Embeddings& source,
                                          const Embeddings& target, Mapping& mapping, std::size_t& usable) {
  const int threads = config.scoring.threads;
  Matrix Xs, Zt;
  usable = seed_matrices(seed, source, target, mapping, threads, Xs, Zt);
  logger().info("{} of {} seed pairs have both sides in {} and {}", usable, seed.pairs.size(), source.path,
                target.path);
  warn_if_low_seed_coverage(seed.path, usable, seed.pairs.size(), source.path, target.path);
  if (usable < config.mapping.min_seed_pairs) {
    throw_input_error(config.input.seed, 0,
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

// Both lists' unit term vectors in the shared space. `finish_fit`, when given, is the rest of the mapping's fit
// (fit_seed_transforms): one thread runs it while the others compose.
void compose_mapped(const TermList& source_terms, const TermComposer& source_composer,
                    const TermList& target_terms, const TermComposer& target_composer, const Mapping& mapping,
                    const std::function<void()>& finish_fit, const AlignConfig& config, ComposedTerms& X,
                    ComposedTerms& Z) {
  const int threads = config.scoring.threads;
  std::vector<ComposedTerms> composed = compose_lists(
      {{source_terms.terms, source_composer}, {target_terms.terms, target_composer}}, threads, finish_fit);
  transform_rows(composed[0].vectors, mapping.source_transform, threads);
  transform_rows(composed[1].vectors, mapping.target_transform, threads);
  X = std::move(composed[0]);
  Z = std::move(composed[1]);
}

// Side by side: (sqrt(1 - w) general row, sqrt(w) corpus row), renormalised, for every term usable in either
// space, so that the dot product of two terms known in both is (1 - w) general cosine + w corpus cosine. A space
// that does not know a term leaves a zero block.
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

// The first n rows of the (file-ordered) vectors, mapped into the shared space, unit rows.
Matrix frequent_rows(const Embeddings& embeddings, std::size_t n, const Matrix& transform, int threads) {
  const Eigen::Index rows = static_cast<Eigen::Index>(std::min(n, embeddings.size()));
  Matrix frequent = embeddings.vectors.topRows(rows) * transform;
  normalize_rows(frequent, threads);
  return frequent;
}

bool uses_orthography(const AlignConfig& config) {
  return config.orthography.weight > 0 || config.orthography.candidates > 0;
}

std::uint64_t pair_key(std::uint32_t source, std::uint32_t target) {
  return (static_cast<std::uint64_t>(source) << 32) | target;
}

// Selects each target's m best sources by CSLS (the same scores, transposed), adds the pairs not yet present, and
// returns the rank (1 = best) of every such pair among its target's sources.
// In a group, every process scores its share of the targets and rank 0 does the rest (the others return nothing).
std::unordered_map<std::uint64_t, float> add_reverse_candidates(const ComposedTerms& X, const ComposedTerms& Z,
                                                                const NeighbourhoodMeans& means, std::size_t m,
                                                                const TileOptions& tiles,
                                                                const ProcessGroup& group,
                                                                std::vector<Candidate>& candidates) {
  SelectionOptions reverse_selection;
  reverse_selection.top_m = m;
  const NeighbourhoodMeans swapped{means.target, means.source};
  std::vector<Candidate> reverse =
      select_csls_candidates(Z.vectors, X.vectors, swapped, reverse_selection, tiles, group);
  if (!group.is_root()) return {};
  std::stable_sort(reverse.begin(), reverse.end(),
                   [](const Candidate& a, const Candidate& b) { return a.source < b.source; });
  std::unordered_set<std::uint64_t> present;
  for (const auto& candidate : candidates) present.insert(pair_key(candidate.source, candidate.target));
  std::unordered_map<std::uint64_t, float> rank;
  std::size_t added = 0;
  for (std::size_t i = 0; i < reverse.size(); ++i) {
    const Candidate& pair = reverse[i];  // source: a target row; target: a source row
    const bool first_of_target = i == 0 || reverse[i - 1].source != pair.source;
    const float position =
        first_of_target ? 1.0f : rank[pair_key(reverse[i - 1].target, reverse[i - 1].source)] + 1;
    const std::uint64_t key = pair_key(pair.target, pair.source);
    rank[key] = position;
    if (present.insert(key).second) {
      candidates.push_back({pair.score, pair.cosine, pair.target, pair.source});
      ++added;
    }
  }
  logger().debug("{} candidates added from the target side", added);
  return rank;
}

// What the orthographic candidates and evidence need of every term of a list, computed once, on the threads.
struct Spellings {
  std::vector<std::string> latin;     // Latin spelling
  std::vector<NgramProfile> profile;  // its n-gram profile
  std::vector<std::uint16_t> words;   // words in the term
};

Spellings term_spellings(const TermList& list, bool transliterate, int threads) {
  Spellings spellings;
  spellings.latin.resize(list.size());
  spellings.profile.resize(list.size());
  spellings.words.resize(list.size());
  parallel_for(list.size(), threads, [&](std::size_t i) {
    spellings.latin[i] = latin_spelling(list.terms[i], transliterate);
    spellings.profile[i] = ngram_profile(spellings.latin[i]);
    spellings.words[i] =
        static_cast<std::uint16_t>(std::min<std::size_t>(split_words(list.terms[i]).size(), 65535));
  });
  return spellings;
}

// Adds each source term's closest spellings among the targets, scored by CSLS like the others. In a group, every
// process searches for its share of the sources and rank 0 adds them all (the others add nothing).
void add_orthographic_candidates(const ComposedTerms& X, const ComposedTerms& Z, const NeighbourhoodMeans& means,
                                 const Spellings& source_spellings, const Spellings& target_spellings,
                                 std::size_t m, int threads, const ProcessGroup& group,
                                 std::vector<Candidate>& candidates) {
  auto profiles = [threads](const ComposedTerms& composed, std::size_t begin, std::size_t end,
                            const Spellings& spellings) {
    std::vector<NgramProfile> usable(end - begin);
    parallel_for(usable.size(), threads,
                 [&](std::size_t row) { usable[row] = spellings.profile[composed.term_ids[begin + row]]; });
    return usable;
  };
  const auto [first, last] = row_share(X.term_ids.size(), group.rank(), group.size());
  const auto matches =
      orthographic_neighbours(profiles(X, first, last, source_spellings),
                              profiles(Z, 0, Z.term_ids.size(), target_spellings), m, 0.3, threads);
  std::vector<Candidate> found;
  found.reserve(matches.size());
  for (const auto& match : matches) {
    const auto source = static_cast<std::uint32_t>(first + match.source);
    const float cosine = X.vectors.row(source).dot(Z.vectors.row(match.target));
    found.push_back(
        {2 * cosine - means.source(source) - means.target(match.target), cosine, source, match.target});
  }
  if (group.size() > 1) found = group.gather(found);
  if (!group.is_root()) return;
  std::unordered_set<std::uint64_t> present;
  for (const auto& candidate : candidates) present.insert(pair_key(candidate.source, candidate.target));
  std::size_t added = 0;
  for (const Candidate& candidate : found) {
    if (!present.insert(pair_key(candidate.source, candidate.target)).second) continue;
    candidates.push_back(candidate);
    ++added;
  }
  logger().info("{} orthographic candidates added", added);
}

// Every process of a group must have composed the same term vectors, or their shares would not fit together.
void require_same_terms(const ComposedTerms& X, const ComposedTerms& Z, const ProcessGroup& group) {
  if (group.size() == 1) return;
  std::uint64_t fingerprint = fingerprint_bytes(X.vectors.data(), sizeof(float) * X.vectors.size());
  fingerprint = fingerprint_bytes(Z.vectors.data(), sizeof(float) * Z.vectors.size(), fingerprint);
  fingerprint = fingerprint_bytes(X.term_ids.data(), sizeof(X.term_ids[0]) * X.term_ids.size(), fingerprint);
  fingerprint = fingerprint_bytes(Z.term_ids.data(), sizeof(Z.term_ids[0]) * Z.term_ids.size(), fingerprint);
  group.require_same(fingerprint, "the mapped term vectors");
}

// Orthographic similarity, identity and sizes of each candidate's two terms.
void add_term_evidence(const Spellings& source, const Spellings& target, int threads,
                       CandidateEvidence& evidence) {
  const std::size_t n = evidence.size();
  evidence.orthographic.resize(n);
  evidence.identical.resize(n);
  evidence.source_words.resize(n);
  evidence.target_words.resize(n);
  evidence.source_length.resize(n);
  evidence.target_length.resize(n);
  constexpr std::size_t kBlock = 4096;
  parallel_for((n + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    for (std::size_t i = block * kBlock; i < std::min(n, (block + 1) * kBlock); ++i) {
      const std::uint32_t s = evidence.source[i], t = evidence.target[i];
      evidence.orthographic[i] = static_cast<float>(ngram_similarity(source.profile[s], target.profile[t]));
      evidence.identical[i] = source.latin[s] == target.latin[t];
      evidence.source_words[i] = source.words[s];
      evidence.target_words[i] = target.words[t];
      evidence.source_length[i] = static_cast<std::uint16_t>(std::min<std::size_t>(source.latin[s].size(), 65535));
      evidence.target_length[i] = static_cast<std::uint16_t>(std::min<std::size_t>(target.latin[t].size(), 65535));
    }
  });
}

// Soft word alignment of each candidate: for each word its best cosine on the other side, averaged over the words
// of each term, the two directions averaged. Multi-word terms whose words translate one by one score high.
void add_word_alignment(const TermList& source_terms, const TermList& target_terms, const TermComposer& source,
                        const TermComposer& target, const Mapping& mapping, int threads,
                        CandidateEvidence& evidence) {
  std::unordered_map<std::uint32_t, Matrix> source_tokens, target_tokens;
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    source_tokens.try_emplace(evidence.source[i]);
    target_tokens.try_emplace(evidence.target[i]);
  }
  auto fill = [threads](std::unordered_map<std::uint32_t, Matrix>& tokens, const TermList& list,
                        const TermComposer& composer, const Matrix& transform) {
    std::vector<std::pair<const std::uint32_t, Matrix>*> entries;
    for (auto& entry : tokens) entries.push_back(&entry);
    parallel_for(entries.size(), threads, [&](std::size_t i) {
      Matrix mapped = composer.token_vectors(list.terms[entries[i]->first]) * transform;
      normalize_rows(mapped);
      entries[i]->second = std::move(mapped);
    });
  };
  fill(source_tokens, source_terms, source, mapping.source_transform);
  fill(target_tokens, target_terms, target, mapping.target_transform);
  evidence.word_alignment.resize(evidence.size());
  parallel_for(evidence.size(), threads, [&](std::size_t i) {
    const Matrix& a = source_tokens.at(evidence.source[i]);
    const Matrix& b = target_tokens.at(evidence.target[i]);
    if (a.rows() == 0 || b.rows() == 0) {
      evidence.word_alignment[i] = 0;
      return;
    }
    const Matrix similarities = a * b.transpose();
    evidence.word_alignment[i] =
        0.5f * (similarities.rowwise().maxCoeff().mean() + similarities.colwise().maxCoeff().mean());
  });
}

// The inputs checked against the loaded vectors (sanity.h); with `--seed identical`, the seed made from them.
void check_inputs_against_vectors(const AlignConfig& config, bool fit, const TermList& source_terms,
                                  const TermList& target_terms, const Embeddings& source, const Embeddings& target,
                                  PairList& seed) {
  if (fit && config.input.seed == kIdenticalSeed) {
    seed = identical_seed(source, target);
  } else if (fit) {
    check_seed_against_vectors(seed, source, target, config.input.allow_reversed);
  }
  check_terms_against_vectors(source_terms, target_terms, source, target);
}

// Both loaded vocabularies in the shared space (normalised, mapped), as PREFIX.src.vec and PREFIX.tgt.vec.
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

// r_T and r_S of every usable term, by its place in its list (NaN for a term without a vector), for --explain.
void keep_neighbourhood_means(const ComposedTerms& X, const ComposedTerms& Z, const NeighbourhoodMeans& means,
                              CandidateSet& result) {
  const auto by_term = [](const ComposedTerms& composed, const Eigen::VectorXf& row_means, std::size_t terms) {
    std::vector<float> values(terms, std::numeric_limits<float>::quiet_NaN());
    for (std::size_t row = 0; row < composed.term_ids.size() && row < static_cast<std::size_t>(row_means.size());
         ++row) {
      values[composed.term_ids[row]] = row_means(static_cast<Eigen::Index>(row));
    }
    return values;
  };
  result.source_means = by_term(X, means.source, result.source_terms.size());
  result.target_means = by_term(Z, means.target, result.target_terms.size());
}

}  // namespace

CandidateSet generate_candidates(const AlignConfig& config, bool full_evidence, AlignmentSummary* summary,
                                 const ProcessGroup& group) {
  config.validate();
  scoring_memory_limit();  // a malformed TERMALIGN_MAX_MEMORY_MB is a usage error before any work, not minutes in
  const auto start = std::chrono::steady_clock::now();
  AlignmentSummary local;
  AlignmentSummary& stats = summary ? *summary : local;

  CandidateSet result;
  const bool fit = config.output.mapping.empty();
  PairList seed;
  std::exception_ptr seed_error;  // reported after the term lists' errors
  std::exception_ptr kernel_error;  // a malformed TERMALIGN_TILE_KERNEL: a usage error, before the lists' errors
  // Each language's list (and the seed lexicon), then the words each side may look up, both sides at once. The
  // similarity kernel (whose check of OpenBLAS's rounding takes a few ms) is chosen beside the target list, which
  // has no seed lexicon to read.
  try {
    run_both(
        [&] {
          result.source_terms = read_term_list(config.input.src_terms);
          try {
            if (fit && config.input.seed != kIdenticalSeed) {
              seed = read_pairs(config.input.seed, PairFileKind::seed_lexicon);
            }
          } catch (...) {
            seed_error = std::current_exception();
          }
        },
        [&] {
          try {
            logger().debug("similarity tiles: {}", similarity_kernel());
          } catch (...) {
            kernel_error = std::current_exception();
          }
          result.target_terms = read_term_list(config.input.tgt_terms);
        },
        config.scoring.threads);
  } catch (...) {
    if (!kernel_error) throw;
  }
  if (kernel_error) std::rethrow_exception(kernel_error);
  const TermList& source_terms = result.source_terms;
  const TermList& target_terms = result.target_terms;
  for (const TermList* list : {&source_terms, &target_terms}) {
    if (list->size() == 0) throw_input_error(list->path, 0, "the term list is empty.");
  }
  if (seed_error) std::rethrow_exception(seed_error);
  stats.source_terms = source_terms.size();
  stats.target_terms = target_terms.size();
  std::vector<std::string> seed_sources, seed_targets;
  for (const auto& [source, target] : seed.pairs) {
    seed_sources.push_back(source);
    seed_targets.push_back(target);
  }
  LoadOptions source_options, target_options;
  run_both(
      [&] {
        source_options = side_options({&source_terms.terms, &seed_sources}, config);
      },
      [&] {
        target_options = side_options({&target_terms.terms, &seed_targets}, config);
      },
      config.scoring.threads);

  Embeddings source, target;
  load_pair(config.input.src_vectors, config.input.tgt_vectors, source_options, target_options, source, target);
  check_inputs_against_vectors(config, fit, source_terms, target_terms, source, target, seed);

  Mapping mapping;
  std::function<void()> finish_fit;
  if (fit) {
    stats.seed_pairs = seed.pairs.size();
    mapping = normalise_pair(config, source, target);
    finish_fit = fit_seed_transforms(seed, config, source, target, mapping, stats.seed_pairs_usable);
  } else {
    mapping = load_mapping(config.output.mapping);
    if (mapping.source_transform.rows() != source.dim()) {
      throw_input_error(config.output.mapping, 2,
                        "the mapping has dimension " + std::to_string(mapping.source_transform.rows()) +
                            " but the vectors have " + std::to_string(source.dim()) + ".");
    }
    mapping.source.apply_rows(source.vectors, config.scoring.threads);
    mapping.target.apply_rows(target.vectors, config.scoring.threads);
    logger().info("loaded the mapping {} (normalisation {})", config.output.mapping,
                  to_string(mapping.source.kind));
  }

  const int threads = config.scoring.threads;
  const TermComposer source_composer(source, mapping.source, config.composition);
  const TermComposer target_composer(target, mapping.target, config.composition);
  ComposedTerms X, Z;
  compose_mapped(source_terms, source_composer, target_terms, target_composer, mapping, finish_fit, config, X, Z);
  if (fit && !config.output.save_mapping.empty()) save_mapping(config.output.save_mapping, mapping);
  if (!config.output.save_mapped_vectors.empty()) {
    save_mapped_vectors(config.output.save_mapped_vectors, source, target, mapping, threads);
  }
  if (!config.input.src_corpus_vectors.empty()) {
    // The corpus-trained vectors: their own normalisation and mapping from the same seed, then side by side.
    Embeddings corpus_source, corpus_target;
    load_pair(config.input.src_corpus_vectors, config.input.tgt_corpus_vectors, source_options, target_options,
              corpus_source, corpus_target);
    std::size_t usable = 0;
    Mapping corpus_mapping = normalise_pair(config, corpus_source, corpus_target);
    const TermComposer corpus_source_composer(corpus_source, corpus_mapping.source, config.composition);
    const TermComposer corpus_target_composer(corpus_target, corpus_mapping.target, config.composition);
    ComposedTerms corpus_X, corpus_Z;
    compose_mapped(source_terms, corpus_source_composer, target_terms, corpus_target_composer, corpus_mapping,
                   fit_seed_transforms(seed, config, corpus_source, corpus_target, corpus_mapping, usable), config,
                   corpus_X, corpus_Z);
    X = combine_spaces(X, corpus_X, source_terms.size(), config.input.corpus_weight);
    Z = combine_spaces(Z, corpus_Z, target_terms.size(), config.input.corpus_weight);
    logger().info("combined with the corpus vectors (weight {}): {} source and {} target terms usable",
                  config.input.corpus_weight, X.term_ids.size(), Z.term_ids.size());
  }
  // The word sets (tens of thousands of strings each) are freed now, one on each thread, not on one at the end.
  run_both([&] { source_options = {}; }, [&] { target_options = {}; }, threads);
  logger().debug("composed {} source and {} target term vectors", X.term_ids.size(), Z.term_ids.size());
  log_unusable("source", source_terms, X);
  log_unusable("target", target_terms, Z);
  stats.source_usable = X.term_ids.size();
  stats.target_usable = Z.term_ids.size();
  require_same_terms(X, Z, group);
  // The re-ranker needs every piece of evidence; the orthographic bonus only the spellings. Reverse ranks and word
  // alignments cost a scoring pass and token matrices: they are computed only for the re-ranker.
  full_evidence = full_evidence || uses_reranker(config);
  if (!full_evidence && config.scoring.neighbourhood == Neighbourhood::terms) {
    // Nothing after this point needs the word vectors or a .bin model's subword vectors: freeing them before the
    // scoring lowers its peak memory (by gigabytes with .bin models).
    for (Embeddings* side : {&source, &target}) {
      side->vectors = Matrix();
      side->subwords.reset();
    }
  }

  TileOptions tiles;
  tiles.rows = config.scoring.tile_rows;
  tiles.cols = config.scoring.tile_cols;
  tiles.threads = threads;
  guard_scoring_memory(X.vectors, Z.vectors, config, tiles);  // smaller tiles, or a resources error (exit 5)
  result.cap = submission_cap(source_terms.size(), target_terms.size());
  if (config.ranking.cap > 0) result.cap = std::min(result.cap, config.ranking.cap);
  stats.cap = result.cap;
  result.per_source = config.ranking.top_m;
  const bool orthographic = full_evidence || uses_orthography(config);
  SelectionOptions selection;
  selection.top_m = config.ranking.top_m;
  selection.mutual_m = config.ranking.mutual_m;
  selection.limit = orthographic && selection.top_m > 0 ? 0 : result.cap;  // rescoring may reorder: cut later

  NeighbourhoodMeans means;
  std::vector<Candidate> candidates;
  if (config.scoring.neighbourhood == Neighbourhood::terms) {
    // Neighbourhoods and selection in one pass over the similarities where the selection allows it.
    CslsSelection scored = csls_select(X.vectors, Z.vectors, config.scoring.k, selection, tiles,
                                       config.scoring.candidate_pool, group);
    means = std::move(scored.means);
    candidates = std::move(scored.candidates);
  } else {
    const std::size_t n = config.scoring.neighbourhood_words;
    means.source = knn_mean_similarity(X.vectors, frequent_rows(target, n, mapping.target_transform, threads),
                                       config.scoring.k, tiles, group);
    means.target = knn_mean_similarity(Z.vectors, frequent_rows(source, n, mapping.source_transform, threads),
                                       config.scoring.k, tiles, group);
    candidates = select_csls_candidates(X.vectors, Z.vectors, means, selection, tiles, group);
  }
  // Each target term's own best sources: candidates from the other direction, and their rank as evidence.
  std::unordered_map<std::uint64_t, float> reverse_rank;
  if (full_evidence && selection.top_m > 0) {
    reverse_rank = add_reverse_candidates(X, Z, means, selection.top_m, tiles, group, candidates);
  }
  Spellings source_spellings, target_spellings;
  if (orthographic) {
    source_spellings = term_spellings(source_terms, config.orthography.transliterate, threads);
    target_spellings = term_spellings(target_terms, config.orthography.transliterate, threads);
  }
  if (orthographic && config.orthography.candidates > 0) {
    add_orthographic_candidates(X, Z, means, source_spellings, target_spellings, config.orthography.candidates,
                                threads, group, candidates);
  }
  if (!group.is_root()) {  // its share is with rank 0, which finishes alone
    result.evidence = {};
    return result;
  }
  keep_neighbourhood_means(X, Z, means, result);

  CandidateEvidence& evidence = result.evidence;
  for (const Candidate& candidate : candidates) {
    evidence.source.push_back(X.term_ids[candidate.source]);
    evidence.target.push_back(Z.term_ids[candidate.target]);
    evidence.csls.push_back(candidate.score);
    evidence.cosine.push_back(candidate.cosine);
    if (full_evidence) {
      const auto found = reverse_rank.find(pair_key(candidate.source, candidate.target));
      evidence.reverse_rank.push_back(found == reverse_rank.end() ? 0.0f : found->second);
    }
  }
  if (orthographic) add_term_evidence(source_spellings, target_spellings, threads, evidence);
  if (full_evidence) {
    add_word_alignment(source_terms, target_terms, source_composer, target_composer, mapping, threads, evidence);
    add_evidence_beyond_embeddings(config, source_terms, target_terms, source_composer, target_composer, mapping,
                                   seed, evidence);
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  logger().info("{} candidate pairs from {} x {} usable terms in {:.2f} s", evidence.size(), stats.source_usable,
                stats.target_usable, stats.seconds);
  return result;
}

Eigen::VectorXd candidate_scores(const CandidateSet& candidates, const AlignConfig& config) {
  const CandidateEvidence& evidence = candidates.evidence;
  if (uses_reranker(config)) return rerank(evidence, config);
  Eigen::VectorXd scores(static_cast<Eigen::Index>(evidence.size()));
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    const double orthographic = config.orthography.weight > 0 ? evidence.orthographic[i] : 0.0;
    scores(static_cast<Eigen::Index>(i)) = evidence.csls[i] + config.orthography.weight * orthographic;
  }
  return scores;
}

std::vector<RankedIndex> rank_candidate_indices(const CandidateSet& candidates, const Eigen::VectorXd& scores) {
  const CandidateEvidence& evidence = candidates.evidence;
  std::vector<std::size_t> order(evidence.size());
  std::iota(order.begin(), order.end(), 0);
  const auto ranked_before = [&](std::size_t a, std::size_t b) {  // the indices' pairs in ranks_before's order
    const auto ia = static_cast<Eigen::Index>(a), ib = static_cast<Eigen::Index>(b);
    if (scores(ia) != scores(ib)) return scores(ia) > scores(ib);
    if (evidence.source[a] != evidence.source[b]) return evidence.source[a] < evidence.source[b];
    return evidence.target[a] < evidence.target[b];
  };
  // Without other evidence the scoring already returns its candidates in this order: one pass checks it.
  if (!std::is_sorted(order.begin(), order.end(), ranked_before))
    std::sort(order.begin(), order.end(), ranked_before);
  std::vector<RankedIndex> ranked;
  ranked.reserve(std::min(order.size(), candidates.cap));
  std::vector<std::size_t> kept_per_source(candidates.per_source > 0 ? candidates.source_terms.size() : 0, 0);
  for (const std::size_t i : order) {
    if (ranked.size() == candidates.cap) break;
    if (candidates.per_source > 0 && ++kept_per_source[evidence.source[i]] > candidates.per_source) continue;
    ranked.push_back(
        {evidence.source[i], evidence.target[i], static_cast<float>(scores(static_cast<Eigen::Index>(i)))});
  }
  return ranked;
}

namespace {

// The ranked pairs' strings, copied on `threads` threads.
std::vector<RankedPair> ranked_pairs(const CandidateSet& candidates, const std::vector<RankedIndex>& indices,
                                     int threads) {
  std::vector<RankedPair> ranked(indices.size());
  constexpr std::size_t kBlock = 16384;
  parallel_for((indices.size() + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    for (std::size_t r = block * kBlock; r < std::min(indices.size(), (block + 1) * kBlock); ++r) {
      ranked[r] = {candidates.source_terms.terms[indices[r].source],
                   candidates.target_terms.terms[indices[r].target], indices[r].score};
    }
  });
  return ranked;
}

// The final list of align_terms and run_align: the candidates by their final scores.
std::vector<RankedIndex> final_ranking(const CandidateSet& candidates, const AlignConfig& config) {
  std::vector<RankedIndex> ranked = rank_candidate_indices(candidates, candidate_scores(candidates, config));
  logger().info("ranked {} pairs (cap {})", ranked.size(), candidates.cap);
  return ranked;
}

}  // namespace

std::vector<RankedPair> rank_candidates(const CandidateSet& candidates, const Eigen::VectorXd& scores,
                                        int threads) {
  return ranked_pairs(candidates, rank_candidate_indices(candidates, scores), threads);
}

std::vector<RankedPair> align_terms(const AlignConfig& config, AlignmentSummary* summary,
                                    const ProcessGroup& group) {
  const CandidateSet candidates = generate_candidates(config, false, summary, group);
  if (!group.is_root()) return {};
  return ranked_pairs(candidates, final_ranking(candidates, config), config.scoring.threads);
}

AlignmentSummary run_align(const AlignConfig& config, const ProcessGroup& group) {
  if (config.output.out.empty()) throw_usage_error("An output file is needed: give --out.");
  // Every output is written to its temporary file first and renamed only when all are complete, so a failure
  // (a full disk, an interruption) leaves every previous output as it was. The temporary files are created before
  // any work, so an output folder that is missing or cannot be written stops the run at once, not at its end.
  std::unique_ptr<AtomicFile> submission, scores, resolved_config, explanation;
  const std::string resolved = config.output.out + ".config.toml";
  if (group.is_root()) {  // only rank 0 writes
    submission = std::make_unique<AtomicFile>(config.output.out);
    if (!config.output.scores.empty()) scores = std::make_unique<AtomicFile>(config.output.scores);
    if (!config.output.explain.empty()) explanation = std::make_unique<AtomicFile>(config.output.explain);
    resolved_config = std::make_unique<AtomicFile>(resolved);
  }
  AlignmentSummary summary;
  CandidateSet candidates = generate_candidates(config, false, &summary, group);
  if (!group.is_root()) return summary;
  // align_terms' list, formatted straight from the term lists (no pair's strings copied).
  const int threads = config.scoring.threads;
  const std::vector<RankedIndex> ranked = final_ranking(candidates, config);
  const std::vector<std::string>& sources = candidates.source_terms.terms;
  const std::vector<std::string>& targets = candidates.target_terms.terms;
  const std::string submission_text = format_ranked(ranked, sources, targets, false, threads);
  const std::string scores_text = scores ? format_ranked(ranked, sources, targets, true, threads) : std::string();
  const std::string explanation_text =
      explanation ? format_explanation(candidates, ranked, config) : std::string();
  // One thread writes while another frees the candidates (tens of thousands of strings and their indexes): the
  // writing, which is the kernel's copying and fsync, is serial.
  run_both(
      [&] {
        submission->write(submission_text);
        if (scores) scores->write(scores_text);
        if (explanation) explanation->write(explanation_text);
        resolved_config->write(to_toml(config));
        submission->commit();
        if (scores) scores->commit();
        if (explanation) explanation->commit();
        resolved_config->commit();
      },
      [&] { candidates = CandidateSet(); }, threads);
  logger().info("wrote {} and {}", config.output.out, resolved);
  return summary;
}

}  // namespace termalign
