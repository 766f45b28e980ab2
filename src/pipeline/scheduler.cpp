#include "termalign/align.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>

#include "detail/align_steps.h"
#include "detail/compose_alongside.h"
#include "detail/key_groups.h"
#include "detail/spilled_matrix.h"
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
#include "termalign/reranker.h"
#include "termalign/resources.h"
#include "termalign/sanity.h"
#include "termalign/scoring.h"
#include "termalign/seed.h"
#include "termalign/vector_cache.h"

namespace termalign {

namespace {

// What one side loads: the words composing `lists` may look up (collect_word_set), and the frequent ones.
LoadOptions side_options(std::initializer_list<const std::vector<std::string>*> lists, const AlignConfig& config) {
  LoadOptions options;
  options.restrict_words = true;
  options.wanted = collect_word_set(lists);
  options.most_frequent = config.input.most_frequent;
  options.fold_case = config.composition.lowercase_fallback;
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

// Both languages' vectors, which must have the same dimension; through `cache` when given (each distinct load
// once).
void load_pair(const std::string& source_path, const std::string& target_path, const LoadOptions& source_options,
               const LoadOptions& target_options, VectorCache* cache, Embeddings& source, Embeddings& target) {
  source = cache ? cache->load(source_path, source_options) : load_embeddings(source_path, source_options);
  target = cache ? cache->load(target_path, target_options) : load_embeddings(target_path, target_options);
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
  std::vector<ComposedTerms> composed = detail::compose_lists_alongside(
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

// The candidates grouped by source row (detail::group_by_key): finding a pair scans its source's few candidates,
// where a hash set of millions of pairs would cost seconds and a few hundred megabytes at scale.
class CandidatesBySource {
 public:
  CandidatesBySource(const std::vector<Candidate>& candidates, std::size_t sources)
      : candidates_(candidates),
        groups_(detail::group_by_key(candidates.size(), sources,
                                     [&](std::size_t i) { return candidates[i].source; })) {}

  // The index of the candidate (source, target), or npos.
  std::size_t find(std::uint32_t source, std::uint32_t target) const {
    for (std::size_t k = groups_.begin(source); k < groups_.end(source); ++k)
      if (candidates_[groups_.order[k]].target == target) return groups_.order[k];
    return npos;
  }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

 private:
  const std::vector<Candidate>& candidates_;
  detail::KeyGroups groups_;
};

// Where each of `pairs` is among `candidates` (CandidatesBySource::npos: not there), looked up on the threads.
std::vector<std::size_t> find_candidates(const std::vector<Candidate>& pairs, const std::vector<Candidate>& candidates,
                                         std::size_t sources, int threads) {
  const CandidatesBySource index(candidates, sources);
  std::vector<std::size_t> found(pairs.size());
  constexpr std::size_t kBlock = 65536;
  parallel_for((pairs.size() + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    for (std::size_t i = block * kBlock; i < std::min(pairs.size(), (block + 1) * kBlock); ++i)
      found[i] = index.find(pairs[i].source, pairs[i].target);
  });
  return found;
}

// Each target's m best sources by CSLS (the same scores, transposed), by a second pass over the similarities: the
// reverse lists of csls_select's fused pass where it did not run. Grouped by target, each group best first; on
// rank 0 of a group only.
std::vector<Candidate> reverse_lists_by_second_pass(const ComposedTerms& X, const ComposedTerms& Z,
                                                    const NeighbourhoodMeans& means, std::size_t m,
                                                    const TileOptions& tiles, const ProcessGroup& group) {
  SelectionOptions reverse_selection;
  reverse_selection.top_m = m;
  const NeighbourhoodMeans swapped{means.target, means.source};
  std::vector<Candidate> reverse =
      select_csls_candidates(Z.vectors, X.vectors, swapped, reverse_selection, tiles, group);
  std::stable_sort(reverse.begin(), reverse.end(),
                   [](const Candidate& a, const Candidate& b) { return a.source < b.source; });
  for (Candidate& pair : reverse) std::swap(pair.source, pair.target);  // source: a row of X again
  return reverse;
}

// Adds the pairs of the targets' lists (grouped by target, each group best first) not yet among the candidates,
// and returns, for every candidate, the rank (1 = best) of its source among its target's listed sources (0: not
// listed). `sources`: the rows of X.
std::vector<float> add_reverse_candidates(const std::vector<Candidate>& reverse, std::vector<Candidate>& candidates,
                                          std::size_t sources, int threads) {
  const std::vector<std::size_t> found = find_candidates(reverse, candidates, sources, threads);
  std::vector<float> rank(candidates.size(), 0.0f);
  std::size_t added = 0;
  float position = 0;
  for (std::size_t i = 0, group = 0; i < reverse.size(); ++i) {
    const Candidate& pair = reverse[i];
    if (i == 0 || reverse[i - 1].target != pair.target) group = i;
    position = i == group ? 1.0f : position + 1;
    // A target lists each source once; a repeat (which would be a bug upstream) keeps its first rank.
    bool repeated = false;
    for (std::size_t j = group; j < i && !repeated; ++j) repeated = reverse[j].source == pair.source;
    if (repeated) continue;
    if (found[i] != CandidatesBySource::npos) {
      rank[found[i]] = position;
    } else {
      candidates.push_back(pair);
      rank.push_back(position);
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

static_assert(OrthographyOptions{}.work_bound == kOrthographicBudget, "one default work bound");

// Adds each source term's closest spellings among the targets, scored by CSLS like the others. In a group, every
// process searches for its share of the sources and rank 0 adds them all (the others add nothing).
void add_orthographic_candidates(const ComposedTerms& X, const ComposedTerms& Z, const NeighbourhoodMeans& means,
                                 const Spellings& source_spellings, const Spellings& target_spellings,
                                 std::size_t m, std::size_t work_bound, int threads, const ProcessGroup& group,
                                 std::vector<Candidate>& candidates) {
  auto profiles = [threads](const ComposedTerms& composed, std::size_t begin, std::size_t end,
                            const Spellings& spellings) {
    std::vector<NgramProfile> usable(end - begin);
    parallel_for(usable.size(), threads,
                 [&](std::size_t row) { usable[row] = spellings.profile[composed.term_ids[begin + row]]; });
    return usable;
  };
  const auto [first, last] = row_share(X.term_ids.size(), group.rank(), group.size());
  const auto matches = orthographic_neighbours(
      profiles(X, first, last, source_spellings), profiles(Z, 0, Z.term_ids.size(), target_spellings), m, 0.3,
      threads, work_bound > 0 ? work_bound : std::numeric_limits<std::size_t>::max());
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
  // Each source's closest spellings are distinct targets: only the candidates before them can repeat them.
  const std::vector<std::size_t> present = find_candidates(found, candidates, X.term_ids.size(), threads);
  std::size_t added = 0;
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (present[i] != CandidatesBySource::npos) continue;
    candidates.push_back(found[i]);
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
  Progress progress("spelling evidence, candidates", n);
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
    progress.advance(std::min(n, (block + 1) * kBlock) - block * kBlock);
  });
  progress.finish();
}

// The inputs checked against the loaded vectors (sanity.h); with `--seed identical`, the seed made from them.
// `*_compounds`: whether each list's closed compounds are split (closed_compounds_for), so count as known words.
void check_inputs_against_vectors(const AlignConfig& config, bool fit, const TermList& source_terms,
                                  const TermList& target_terms, const Embeddings& source, const Embeddings& target,
                                  PairList& seed, bool source_compounds, bool target_compounds) {
  if (fit && config.input.seed == kIdenticalSeed) {
    seed = identical_seed(source, target);
  } else if (fit) {
    check_seed_against_vectors(seed, source, target, config.input.allow_reversed);
  }
  check_terms_against_vectors(source_terms, target_terms, source, target, source_compounds, target_compounds);
}

// What can be found wrong before any work, rather than after the scoring: a missing folder of an output written
// early (the mapping, the mapped vectors), and a re-ranker file that is no model, or a corpus model without the
// corpora (the complete check of its features is FeatureTable::select's, once the run's features are known).
void check_before_work(const AlignConfig& config) {
  if (uses_reranker(config) && config.orthography.weight != OrthographyOptions{}.weight) {
    logger().warn(
        "orthography.weight ({}) weighs the spelling in the unsupervised score only (reranker none): the "
        "re-ranker '{}' weighs the spelling evidence itself, so the weight changes nothing here",
        config.orthography.weight, config.input.reranker);
  }
  for (const std::string* path : {&config.output.save_mapping, &config.output.save_mapped_vectors}) {
    if (path->empty()) continue;
    const std::filesystem::path folder = std::filesystem::path(*path).parent_path();
    std::error_code error;
    if (!folder.empty() && !std::filesystem::is_directory(folder, error))
      throw_output_error(*path, "its folder " + folder.string() + " does not exist");
  }
  if (!uses_reranker(config) || config.input.reranker == kDefaultReranker) return;
  const Reranker model = load_reranker(config.input.reranker);
  const bool corpora = !config.input.src_corpus.empty() && !config.input.tgt_corpus.empty();
  if (corpora) return;
  for (const Reranker* stage = &model; stage; stage = stage->first_stage.get()) {
    if (const std::string* name = first_corpus_feature(stage->features)) {
      throw_input_error(config.input.reranker, 0,
                        "the model uses the corpus feature '" + *name +
                            "', and this run has no corpora: give --src-corpus and --tgt-corpus, or use a model "
                            "trained without them.");
    }
  }
}

// Each file a run writes is its own and none is one of its inputs: outputs of one path would be renamed over each
// other (--scores s.tsv --out s.tsv left the scores), and an output over an input would replace it.
void check_outputs_distinct(const AlignConfig& config) {
  struct Named {
    std::string name, path;  // name: "`key`" (the CLI shows its flag)
    std::filesystem::path canonical;
    Named(std::string name_, std::string path_) : name(std::move(name_)), path(std::move(path_)) {
      std::error_code ignored;
      canonical = std::filesystem::weakly_canonical(path, ignored);
    }
  };
  const auto same_file = [](const Named& a, const Named& b) { return a.canonical == b.canonical; };
  const OutputOptions& output = config.output;
  std::vector<Named> outputs{{"`out`", output.out},
                             {"the resolved configuration of `out`", output.out + ".config.toml"}};
  if (!output.scores.empty()) outputs.push_back({"`scores`", output.scores});
  if (!output.explain.empty()) outputs.push_back({"`explain`", output.explain});
  if (!output.save_mapping.empty()) outputs.push_back({"`save_mapping`", output.save_mapping});
  if (!output.save_mapped_vectors.empty()) {
    outputs.push_back({"`save_mapped_vectors`", output.save_mapped_vectors + ".src.vec"});
    outputs.push_back({"`save_mapped_vectors`", output.save_mapped_vectors + ".tgt.vec"});
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (!same_file(outputs[i], outputs[j])) continue;
      throw_usage_error(outputs[j].name + " and " + outputs[i].name + " name the same file (" + outputs[i].path +
                        "): each output needs a file of its own.");
    }
  }
  const InputOptions& input = config.input;
  std::vector<Named> inputs{{"`src_vectors`", input.src_vectors},
                            {"`tgt_vectors`", input.tgt_vectors},
                            {"`src_terms`", input.src_terms},
                            {"`tgt_terms`", input.tgt_terms},
                            {"`src_corpus`", input.src_corpus},
                            {"`tgt_corpus`", input.tgt_corpus},
                            {"`src_corpus_vectors`", input.src_corpus_vectors},
                            {"`tgt_corpus_vectors`", input.tgt_corpus_vectors}};
  if (input.seed != kIdenticalSeed) inputs.push_back({"`seed`", input.seed});
  if (input.reranker != kDefaultReranker && input.reranker != kNoReranker)
    inputs.push_back({"`reranker`", input.reranker});
  for (const Named& read : inputs) {
    if (read.path.empty()) continue;
    for (const Named& written : outputs) {
      if (!same_file(read, written)) continue;
      throw_usage_error("The output " + written.name + " is the input " + read.name + " (" + read.path +
                        "): writing it would replace it.");
    }
  }
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

// One run of the pipeline, stage by stage (generate_candidates calls them in order). The run owns what the stages
// pass on: its inputs, the loaded vectors, the mapping, the term vectors and the scored candidates. The overlaps
// that make a run fast are scheduled here and nowhere else: the target list is read beside the source list and the
// seed, each side's word set is built on its own thread, the mapping's serial decompositions run beside the
// composition (map_and_compose), and the word sets are freed on two threads.
class PipelineRun {
 public:
  PipelineRun(const AlignConfig& config, bool full_evidence, AlignmentSummary& stats, const ProcessGroup& group,
              VectorCache* cache)
      : config_(config), threads_(config.scoring.threads), fit_(config.output.mapping.empty()),
        full_evidence_(full_evidence || uses_reranker(config)), stats_(stats), group_(group),
        cache_(cache) {}

  // With a cache, the term lists and mapped term vectors of an earlier run with the same inputs, mapping and
  // composition (a grid's runs that vary the scoring, ranking or orthography): true when they were found, and the
  // stages up to add_corpus_vectors are skipped. Not with outputs of those stages, the vocabulary neighbourhoods
  // or the full evidence (they need the word vectors), nor in a group.
  bool reuse_mapped_terms() {
    if (!reusable()) return false;
    const auto kept = std::static_pointer_cast<const MappedTerms>(cache_->find_state(mapped_terms_key()));
    if (!kept) return false;
    result_.source_terms = kept->source_terms;
    result_.target_terms = kept->target_terms;
    X_ = kept->X;
    Z_ = kept->Z;
    stats_.source_terms = result_.source_terms.size();
    stats_.target_terms = result_.target_terms.size();
    stats_.seed_pairs = kept->seed_pairs;
    stats_.seed_pairs_usable = kept->seed_pairs_usable;
    logger().info("term vectors of an earlier run with the same inputs, mapping and composition reused");
    return true;
  }
  void keep_mapped_terms() {
    if (!reusable()) return;
    cache_->keep_state(mapped_terms_key(), std::make_shared<const MappedTerms>(
                                               MappedTerms{result_.source_terms, result_.target_terms, X_, Z_,
                                                           stats_.seed_pairs, stats_.seed_pairs_usable}));
  }

  // The term lists and the seed lexicon (a malformed TERMALIGN_TILE_KERNEL choice first, then the lists' errors,
  // then the seed's).
  void read_inputs() {
    std::exception_ptr seed_error;    // reported after the term lists' errors
    std::exception_ptr kernel_error;  // a usage error, before the lists' errors
    // The similarity kernel (whose check of OpenBLAS's rounding takes a few ms) is chosen beside the target list,
    // which has no seed lexicon to read.
    try {
      run_both(
          [&] {
            result_.source_terms = read_term_list(config_.input.src_terms);
            try {
              // With a saved mapping the seed lexicon, when given, is still evidence for the re-ranker (its
              // words' translations).
              if (!config_.input.seed.empty() && config_.input.seed != kIdenticalSeed) {
                seed_ = read_pairs(config_.input.seed, PairFileKind::seed_lexicon);
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
            result_.target_terms = read_term_list(config_.input.tgt_terms);
          },
          threads_);
    } catch (...) {
      if (!kernel_error) throw;
    }
    if (kernel_error) std::rethrow_exception(kernel_error);
    for (const TermList* list : {&result_.source_terms, &result_.target_terms}) {
      if (list->size() == 0) throw_input_error(list->path, 0, "the term list is empty.");
    }
    if (seed_error) std::rethrow_exception(seed_error);
    stats_.source_terms = result_.source_terms.size();
    stats_.target_terms = result_.target_terms.size();
  }

  // Each side's vectors: the words its terms and seed words may look up, and the frequent ones; then the inputs
  // checked against them (and the `identical` seed made from them).
  void load_vectors() {
    std::vector<std::string> seed_sources, seed_targets;
    for (const auto& [source, target] : seed_.pairs) {
      seed_sources.push_back(source);
      seed_targets.push_back(target);
    }
    run_both([&] { source_options_ = side_options({&result_.source_terms.terms, &seed_sources}, config_); },
             [&] { target_options_ = side_options({&result_.target_terms.terms, &seed_targets}, config_); },
             threads_);
    load_pair(config_.input.src_vectors, config_.input.tgt_vectors, source_options_, target_options_, cache_,
              source_, target_);
    run_both(
        [&] {
          source_composition_ = closed_compounds_for(result_.source_terms.path, result_.source_terms.terms,
                                                     source_, config_.composition);
        },
        [&] {
          target_composition_ = closed_compounds_for(result_.target_terms.path, result_.target_terms.terms,
                                                     target_, config_.composition);
        },
        threads_);
    check_inputs_against_vectors(config_, fit_, result_.source_terms, result_.target_terms, source_, target_,
                                 seed_, source_composition_.split_closed_compounds,
                                 target_composition_.split_closed_compounds);
  }

  // The mapping (fitted on the seed, or loaded) and both lists' term vectors in the shared space; the fit's
  // serial decompositions run on one thread while the others compose.
  void map_and_compose() {
    std::function<void()> finish_fit;
    if (fit_) {
      stats_.seed_pairs = seed_.pairs.size();
      mapping_ = normalise_pair(config_, source_, target_);
      finish_fit = fit_seed_transforms(seed_, config_, source_, target_, mapping_, stats_.seed_pairs_usable);
    } else {
      load_fixed_mapping();
    }
    const TermComposer source_composer(source_, mapping_.source, source_composition_);
    const TermComposer target_composer(target_, mapping_.target, target_composition_);
    compose_mapped(result_.source_terms, source_composer, result_.target_terms, target_composer, mapping_,
                   finish_fit, config_, X_, Z_);
    if (fit_ && !config_.output.save_mapping.empty()) save_mapping(config_.output.save_mapping, mapping_);
    if (!config_.output.save_mapped_vectors.empty()) {
      save_mapped_vectors(config_.output.save_mapped_vectors, source_, target_, mapping_, threads_);
    }
  }

  // With corpus-trained vectors: their own normalisation and mapping from the same seed, then side by side.
  void add_corpus_vectors() {
    if (config_.input.src_corpus_vectors.empty()) return;
    Embeddings corpus_source, corpus_target;
    load_pair(config_.input.src_corpus_vectors, config_.input.tgt_corpus_vectors, source_options_, target_options_,
              cache_, corpus_source, corpus_target);
    std::size_t usable = 0;
    Mapping corpus_mapping = normalise_pair(config_, corpus_source, corpus_target);
    // A list's closed compounds split or not as over the general vectors: a property of its language.
    const TermComposer corpus_source_composer(corpus_source, corpus_mapping.source, source_composition_);
    const TermComposer corpus_target_composer(corpus_target, corpus_mapping.target, target_composition_);
    ComposedTerms corpus_X, corpus_Z;
    compose_mapped(result_.source_terms, corpus_source_composer, result_.target_terms, corpus_target_composer,
                   corpus_mapping,
                   fit_seed_transforms(seed_, config_, corpus_source, corpus_target, corpus_mapping, usable),
                   config_, corpus_X, corpus_Z);
    X_ = combine_spaces(X_, corpus_X, result_.source_terms.size(), config_.input.corpus_weight);
    Z_ = combine_spaces(Z_, corpus_Z, result_.target_terms.size(), config_.input.corpus_weight);
    logger().info("combined with the corpus vectors (weight {}): {} source and {} target terms usable",
                  config_.input.corpus_weight, X_.term_ids.size(), Z_.term_ids.size());
  }

  // What the scoring does not need is freed before it: the word sets (tens of thousands of strings each, one on
  // each thread) and, unless the evidence or the vocabulary neighbourhoods need them, the word vectors and a .bin
  // model's subword vectors (gigabytes with .bin models).
  void release_for_scoring() {
    run_both([&] { source_options_ = {}; }, [&] { target_options_ = {}; }, threads_);
    logger().debug("composed {} source and {} target term vectors", X_.term_ids.size(), Z_.term_ids.size());
    log_unusable("source", result_.source_terms, X_);
    log_unusable("target", result_.target_terms, Z_);
    stats_.source_usable = X_.term_ids.size();
    stats_.target_usable = Z_.term_ids.size();
    require_same_terms(X_, Z_, group_);
    keeps_word_vectors_ = full_evidence_ || config_.scoring.neighbourhood != Neighbourhood::terms;
    if (!keeps_word_vectors_) {
      for (Embeddings* side : {&source_, &target_}) {
        side->vectors = Matrix();
        side->subwords.reset();
      }
    }
    // The evidence needs the word vectors only after the scoring, whose lists are then freed: large ones wait on
    // disk meanwhile (at 130k x 290k terms, 226 MiB of the peak).
    const std::size_t word_bytes = sizeof(float) * static_cast<std::size_t>(source_.vectors.size() +
                                                                           target_.vectors.size());
    if (keeps_word_vectors_ && config_.scoring.neighbourhood == Neighbourhood::terms &&
        config_.scoring.spill_mb > 0 && word_bytes > config_.scoring.spill_mb * (std::size_t{1} << 20)) {
      // Beside the output; without one (a library or Python call), in the temporary folder ($TMPDIR), not in
      // whatever the current folder is.
      std::string folder = std::filesystem::path(config_.output.out).parent_path().string();
      if (config_.output.out.empty()) {
        std::error_code error;
        folder = std::filesystem::temp_directory_path(error).string();
      }
      if (folder.empty()) folder = ".";
      if (source_spill_.spill(source_.vectors, folder, "the source word vectors") &&
          target_spill_.spill(target_.vectors, folder, "the target word vectors"))
        logger().info("the word vectors ({}) wait in a temporary file in {} during the scoring (spill_mb {})",
                      format_bytes(word_bytes), folder, config_.scoring.spill_mb);
    }
  }

  // CSLS over the term vectors: the neighbourhood means and each source term's candidates (tiles sized to the
  // memory there is, the cap, the selection).
  void score() {
    tiles_.rows = config_.scoring.tile_rows;
    tiles_.cols = config_.scoring.tile_cols;
    tiles_.threads = threads_;
    tiles_.precision = resolve_precision(config_.scoring.precision);
    logger().info("similarity tiles in {}", describe_precision(config_.scoring.precision));
    // Smaller tiles, or a resources error (exit 5).
    guard_scoring_memory(X_.vectors, Z_.vectors, config_, tiles_, full_evidence_ ? config_.ranking.top_m : 0);
    result_.cap = submission_cap(result_.source_terms.size(), result_.target_terms.size());
    if (config_.ranking.cap > result_.cap && group_.is_root()) {
      logger().warn("cap {} is above the BUCC cap of these lists, 10 x ({} + {}) / 2 = {}: the list stops there",
                    config_.ranking.cap, result_.source_terms.size(), result_.target_terms.size(), result_.cap);
    }
    if (config_.ranking.cap > 0) result_.cap = std::min(result_.cap, config_.ranking.cap);
    stats_.cap = result_.cap;
    result_.per_source = config_.ranking.top_m;
    orthographic_ = full_evidence_ || uses_orthography(config_);
    selection_.top_m = config_.ranking.top_m;
    selection_.mutual_m = config_.ranking.mutual_m;
    selection_.limit = orthographic_ && selection_.top_m > 0 ? 0 : result_.cap;  // rescoring may reorder: cut later
    if (config_.scoring.neighbourhood == Neighbourhood::terms) {
      // Neighbourhoods and selection in one pass over the similarities where the selection allows it.
      // With the full evidence, the targets' lists of their best sources come from the same pass.
      CslsSelection scored = csls_select(X_.vectors, Z_.vectors, config_.scoring.k, selection_, tiles_,
                                         config_.scoring.candidate_pool, group_,
                                         full_evidence_ ? selection_.top_m : 0);
      means_ = std::move(scored.means);
      candidates_ = std::move(scored.candidates);
      has_reverse_ = scored.has_reverse;
      reverse_ = std::move(scored.reverse);
    } else {
      const std::size_t n = config_.scoring.neighbourhood_words;
      means_.source = knn_mean_similarity(X_.vectors, frequent_rows(target_, n, mapping_.target_transform, threads_),
                                          config_.scoring.k, tiles_, group_);
      means_.target = knn_mean_similarity(Z_.vectors, frequent_rows(source_, n, mapping_.source_transform, threads_),
                                          config_.scoring.k, tiles_, group_);
      candidates_ = select_csls_candidates(X_.vectors, Z_.vectors, means_, selection_, tiles_, group_);
    }
  }

  // Candidates from the target side (with the full evidence) and from the spellings (orthographic candidates).
  void add_other_candidates() {
    if (full_evidence_ && selection_.top_m > 0) {
      if (!has_reverse_)
        reverse_ = reverse_lists_by_second_pass(X_, Z_, means_, selection_.top_m, tiles_, group_);
      if (group_.is_root())
        reverse_rank_ = add_reverse_candidates(reverse_, candidates_, X_.term_ids.size(), threads_);
      reverse_ = {};
    }
    if (orthographic_) {
      source_spellings_ = term_spellings(result_.source_terms, config_.orthography.transliterate, threads_);
      target_spellings_ = term_spellings(result_.target_terms, config_.orthography.transliterate, threads_);
    }
    if (orthographic_ && config_.orthography.candidates > 0) {
      add_orthographic_candidates(X_, Z_, means_, source_spellings_, target_spellings_,
                                  config_.orthography.candidates, config_.orthography.work_bound, threads_, group_,
                                  candidates_);
    }
  }

  // The candidates by term ids with their evidence: CSLS and cosine always, the rest as configured.
  CandidateSet collect_evidence() {
    keep_neighbourhood_means(X_, Z_, means_, result_);
    CandidateEvidence& evidence = result_.evidence;
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      const Candidate& candidate = candidates_[i];
      evidence.source.push_back(X_.term_ids[candidate.source]);
      evidence.target.push_back(Z_.term_ids[candidate.target]);
      evidence.csls.push_back(candidate.score);
      evidence.cosine.push_back(candidate.cosine);
      // The orthographic candidates came after the targets' lists: not in them.
      if (full_evidence_) evidence.reverse_rank.push_back(i < reverse_rank_.size() ? reverse_rank_[i] : 0.0f);
    }
    // What the rest of the evidence does not need goes first: at 130k x 290k terms the term vectors alone are half
    // a gigabyte, and the candidates and their target ranks a few hundred megabytes more.
    X_.vectors = Matrix();
    Z_.vectors = Matrix();
    candidates_ = std::vector<Candidate>();
    reverse_rank_ = std::vector<float>();
    if (orthographic_) add_term_evidence(source_spellings_, target_spellings_, threads_, evidence);
    if (full_evidence_) {
      // The word vectors are kept for the full evidence (release_for_scoring).
      TERMALIGN_CHECK(keeps_word_vectors_, "the word-level evidence needs the word vectors");
      source_spill_.restore(source_.vectors);
      target_spill_.restore(target_.vectors);
      const TermComposer source_composer(source_, mapping_.source, source_composition_);
      const TermComposer target_composer(target_, mapping_.target, target_composition_);
      add_evidence_beyond_embeddings(config_, result_.source_terms, result_.target_terms, source_composer,
                                     target_composer, mapping_, seed_, evidence);
      evidence.source_parts = nested_terms(result_.source_terms);
      evidence.target_parts = nested_terms(result_.target_terms);
    }
    return std::move(result_);
  }

 // A rank of a group other than 0: the term lists, no candidates.
  CandidateSet without_evidence() { return std::move(result_); }

 private:
  struct MappedTerms {
    TermList source_terms, target_terms;
    ComposedTerms X, Z;
    std::size_t seed_pairs = 0, seed_pairs_usable = 0;
  };

  bool reusable() const {
    return cache_ != nullptr && group_.size() == 1 && !full_evidence_ &&
           config_.scoring.neighbourhood == Neighbourhood::terms && config_.output.save_mapping.empty() &&
           config_.output.save_mapped_vectors.empty();
  }

  // What decides the term vectors: the inputs as they are now (a file rewritten since is another input), the
  // mapping and the composition options (the rest at defaults).
  std::string mapped_terms_key() const {
    AlignConfig key;
    key.input = config_.input;
    key.output.mapping = config_.output.mapping;
    key.mapping = config_.mapping;
    key.composition = config_.composition;
    std::string text = to_toml(key);
    for (const std::string* path :
         {&config_.input.src_vectors, &config_.input.tgt_vectors, &config_.input.src_terms,
          &config_.input.tgt_terms, &config_.input.seed, &config_.output.mapping})
      text += "\n# " + file_signature(*path);
    return text;
  }

  void load_fixed_mapping() {
    mapping_ = load_mapping(config_.output.mapping);
    if (mapping_.source_transform.rows() != source_.dim()) {
      throw_input_error(config_.output.mapping, 2,
                        "the mapping has dimension " + std::to_string(mapping_.source_transform.rows()) +
                            " but the vectors have " + std::to_string(source_.dim()) + ".");
    }
    mapping_.source.apply_rows(source_.vectors, threads_);
    mapping_.target.apply_rows(target_.vectors, threads_);
    logger().info("loaded the mapping {} (normalisation {})", config_.output.mapping,
                  to_string(mapping_.source.kind));
  }

  const AlignConfig& config_;
  const int threads_;
  const bool fit_, full_evidence_;
  AlignmentSummary& stats_;
  const ProcessGroup& group_;
  VectorCache* cache_;
  CandidateSet result_;
  PairList seed_;
  LoadOptions source_options_, target_options_;
  // config_.composition for each list over its vectors (closed_compounds_for), set by load_vectors.
  CompositionOptions source_composition_, target_composition_;
  Embeddings source_, target_;
  Mapping mapping_;
  ComposedTerms X_, Z_;
  bool keeps_word_vectors_ = true, orthographic_ = false;
  TileOptions tiles_;
  SelectionOptions selection_;
  NeighbourhoodMeans means_;
  std::vector<Candidate> candidates_;
  bool has_reverse_ = false;
  std::vector<Candidate> reverse_;  // the targets' lists of their best sources (full evidence)
  std::vector<float> reverse_rank_;  // by candidate: its source's rank among its target's best sources
  Spellings source_spellings_, target_spellings_;
  detail::SpilledMatrix source_spill_, target_spill_;  // the word vectors during the scoring, when large
};

}  // namespace

CandidateSet generate_candidates(const AlignConfig& config, bool full_evidence, AlignmentSummary* summary,
                                 const ProcessGroup& group, VectorCache* cache) {
  config.validate();
  check_before_work(config);
  const auto start = std::chrono::steady_clock::now();
  AlignmentSummary local;
  AlignmentSummary& stats = summary ? *summary : local;
  PipelineRun run(config, full_evidence, stats, group, cache);
  if (!run.reuse_mapped_terms()) {
    run.read_inputs();
    run.load_vectors();
    run.map_and_compose();
    run.add_corpus_vectors();
    run.keep_mapped_terms();
  }
  run.release_for_scoring();
  run.score();
  run.add_other_candidates();
  if (!group.is_root()) return run.without_evidence();  // its share is with rank 0, which finishes alone
  CandidateSet result = run.collect_evidence();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  logger().info("{} candidate pairs from {} x {} usable terms in {:.2f} s", result.evidence.size(),
                stats.source_usable, stats.target_usable, stats.seconds);
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

std::vector<RankedIndex> rank_candidate_indices(const CandidateSet& candidates, const Eigen::VectorXd& scores,
                                                int threads) {
  const CandidateEvidence& evidence = candidates.evidence;
  const std::size_t n = evidence.size();
  // The sort keys side by side (an indirect sort reads three arrays at random: at 3.5M candidates, most of a
  // second), in ranks_before's order: score descending, then source and target ids (a pair is one candidate).
  struct Key {
    double score;
    std::uint32_t source, target;
    bool operator<(const Key& other) const {
      if (score != other.score) return score > other.score;
      return source != other.source ? source < other.source : target < other.target;
    }
  };
  std::vector<Key> keys(n);
  constexpr std::size_t kBlock = 65536;
  parallel_for((n + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    for (std::size_t i = block * kBlock; i < std::min(n, (block + 1) * kBlock); ++i)
      keys[i] = {scores(static_cast<Eigen::Index>(i)), evidence.source[i], evidence.target[i]};
  });
  // NaN is ordered against nothing: the sort's result would be undefined.
  const auto nan = std::find_if(keys.begin(), keys.end(), [](const Key& key) { return std::isnan(key.score); });
  if (nan != keys.end()) {
    throw_usage_error("The score of candidate " + std::to_string(nan - keys.begin()) + " (source term " +
                      std::to_string(nan->source) + ", target term " + std::to_string(nan->target) +
                      ") is NaN: candidates are ranked by scores that are numbers.");
  }
  // Without other evidence the scoring already returns its candidates in this order: one pass checks it.
  // Otherwise each thread sorts a slice and the slices are merged in pairs (each level's merges in parallel).
  if (!std::is_sorted(keys.begin(), keys.end())) {
    std::size_t slices = 1;
    while (slices * 2 <= static_cast<std::size_t>(resolve_threads(threads)) && n / (slices * 2) >= kBlock)
      slices *= 2;
    const auto bound = [&](std::size_t slice) {
      return keys.begin() + static_cast<std::ptrdiff_t>(n * slice / slices);
    };
    parallel_for(slices, threads, [&](std::size_t slice) { std::sort(bound(slice), bound(slice + 1)); });
    for (std::size_t width = 1; width < slices; width *= 2) {
      parallel_for(slices / (2 * width), threads, [&](std::size_t pair) {
        const std::size_t first = 2 * width * pair;
        std::inplace_merge(bound(first), bound(first + width), bound(first + 2 * width));
      });
    }
  }
  std::vector<RankedIndex> ranked;
  ranked.reserve(std::min(n, candidates.cap));
  std::vector<std::size_t> kept_per_source(candidates.per_source > 0 ? candidates.source_terms.size() : 0, 0);
  for (const Key& key : keys) {
    if (ranked.size() == candidates.cap) break;
    if (candidates.per_source > 0 && ++kept_per_source[key.source] > candidates.per_source) continue;
    ranked.push_back({key.source, key.target, static_cast<float>(key.score)});
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

}  // namespace

std::vector<RankedIndex> final_ranking(const CandidateSet& candidates, const AlignConfig& config) {
  std::vector<RankedIndex> ranked =
      rank_candidate_indices(candidates, candidate_scores(candidates, config), config.scoring.threads);
  logger().info("ranked {} pairs (cap {})", ranked.size(), candidates.cap);
  return ranked;
}

std::vector<RankedPair> rank_candidates(const CandidateSet& candidates, const Eigen::VectorXd& scores,
                                        int threads) {
  return ranked_pairs(candidates, rank_candidate_indices(candidates, scores, threads), threads);
}

std::vector<RankedPair> align_terms(const AlignConfig& config, AlignmentSummary* summary,
                                    const ProcessGroup& group, VectorCache* cache) {
  const CandidateSet candidates = generate_candidates(config, false, summary, group, cache);
  if (!group.is_root()) return {};
  return ranked_pairs(candidates, final_ranking(candidates, config), config.scoring.threads);
}

AlignmentSummary run_align(const AlignConfig& config, const ProcessGroup& group, VectorCache* cache) {
  if (config.output.out.empty()) throw_usage_error("An output file is needed: give `out`.");
  // Every output is written to its temporary file first and renamed only when all are complete, so a failure
  // (a full disk, an interruption) leaves every previous output as it was. The temporary files are created before
  // any work, so an output folder that is missing or cannot be written stops the run at once, not at its end.
  check_outputs_distinct(config);
  std::unique_ptr<AtomicFile> submission, scores, resolved_config, explanation;
  const std::string resolved = config.output.out + ".config.toml";
  if (group.is_root()) {  // only rank 0 writes
    submission = std::make_unique<AtomicFile>(config.output.out);
    if (!config.output.scores.empty()) scores = std::make_unique<AtomicFile>(config.output.scores);
    if (!config.output.explain.empty()) explanation = std::make_unique<AtomicFile>(config.output.explain);
    resolved_config = std::make_unique<AtomicFile>(resolved);
  }
  AlignmentSummary summary;
  CandidateSet candidates = generate_candidates(config, false, &summary, group, cache);
  if (!group.is_root()) return summary;
  // align_terms' list, formatted straight from the term lists (no pair's strings copied).
  const int threads = config.scoring.threads;
  const std::vector<RankedIndex> ranked = final_ranking(candidates, config);
  const std::vector<std::string>& sources = candidates.source_terms.terms;
  const std::vector<std::string>& targets = candidates.target_terms.terms;
  const std::string submission_text = format_ranked(ranked, sources, targets, false, threads);
  const std::string scores_text = scores ? format_ranked(ranked, sources, targets, true, threads) : std::string();
  const std::string explanation_text =
      explanation ? format_explanation(explain_ranking(candidates, ranked, config)) : std::string();
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
  std::string written = config.output.out;
  for (const std::string* path : {&config.output.scores, &config.output.explain}) {
    if (!path->empty()) written += ", " + *path;
  }
  logger().info("wrote {} and {}", written, resolved);
  return summary;
}

}  // namespace termalign

namespace termalign::detail {

LoadOptions run_load_options(const AlignConfig& config, const std::vector<std::string>& terms,
                             const std::vector<std::string>& seed_words) {
  return side_options({&terms, &seed_words}, config);
}

std::size_t seed_pair_matrices(const PairList& seed, const Embeddings& source, const Embeddings& target,
                               const Mapping& mapping, int threads, Matrix& Xs, Matrix& Zt) {
  return seed_matrices(seed, source, target, mapping, threads, Xs, Zt);
}

}  // namespace termalign::detail
