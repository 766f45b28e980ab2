#include "termalign/aligner.h"

#include <Eigen/Core>
#include <algorithm>

#include "detail/align_steps.h"
#include "termalign/error.h"
#include "termalign/io.h"
#include "termalign/logging.h"
#include "termalign/seed.h"

namespace termalign {

namespace {

// The names vectors given in memory stand for in the configuration (and in messages).
constexpr const char* kGivenSource = "(source vectors given in memory)";
constexpr const char* kGivenTarget = "(target vectors given in memory)";

// The seed's words of one side (empty without a seed file: the mapping is loaded, or the seed is `identical`).
std::vector<std::string> seed_words(const PairList& seed, bool source) {
  std::vector<std::string> words;
  for (const auto& [s, t] : seed.pairs) words.push_back(source ? s : t);
  return words;
}

PairList configured_seed(const AlignConfig& config) {
  if (config.input.seed.empty() || config.input.seed == kIdenticalSeed) return {};
  return read_pairs(config.input.seed, PairFileKind::seed_lexicon);
}

}  // namespace

Aligner::Aligner(AlignConfig config) : config_(std::move(config)) {}

void Aligner::load() {
  if (given_) {
    config_.input.src_vectors = kGivenSource;
    config_.input.tgt_vectors = kGivenTarget;
    return;
  }
  const InputOptions& in = config_.input;
  // The files as they are now: one rewritten since the last load is loaded again.
  std::string key = std::to_string(in.most_frequent);
  for (const std::string* path : {&in.src_vectors, &in.tgt_vectors, &in.src_terms, &in.tgt_terms, &in.seed})
    key += '\n' + *path + '\t' + file_signature(*path);
  if (loaded_ && key == loaded_for_) return;
  if (in.src_vectors.empty() || in.tgt_vectors.empty())
    throw_usage_error("Both vector files are needed: give src_vectors and tgt_vectors.");
  // What a run of this configuration loads (its terms' and seed's words and the frequent ones), so that align()
  // finds the same loads kept.
  const TermList source_terms = in.src_terms.empty() ? TermList{} : read_term_list(in.src_terms);
  const TermList target_terms = in.tgt_terms.empty() ? TermList{} : read_term_list(in.tgt_terms);
  const PairList seed = config_.output.mapping.empty() ? configured_seed(config_) : PairList{};
  source_ =
      cache_.load(in.src_vectors, detail::run_load_options(config_, source_terms.terms, seed_words(seed, true)));
  target_ =
      cache_.load(in.tgt_vectors, detail::run_load_options(config_, target_terms.terms, seed_words(seed, false)));
  if (source_.dim() != target_.dim()) {
    throw_input_error(in.tgt_vectors, 0,
                      "the vectors have dimension " + std::to_string(target_.dim()) +
                          " but the source vectors have " + std::to_string(source_.dim()) +
                          "; both languages need vectors of the same dimension.");
  }
  loaded_ = true;
  loaded_for_ = key;
  has_mapping_ = false;
}

const Embeddings& Aligner::vectors(Side side) {
  load();
  return side == Side::source ? source_ : target_;
}

void Aligner::set_vectors(Embeddings source, Embeddings target) {
  if (source.dim() != target.dim()) {
    throw_usage_error("The source vectors have dimension " + std::to_string(source.dim()) +
                      " and the target vectors " + std::to_string(target.dim()) +
                      ": give vectors of one dimension.");
  }
  for (Embeddings* side : {&source, &target}) {
    if (side->rows.size() != side->words.size()) {
      side->rows.clear();
      for (std::size_t row = 0; row < side->words.size(); ++row) {
        if (!side->rows.emplace(side->words[row], row).second)
          throw_usage_error("The word '" + side->words[row] + "' is given twice in the vectors.");
      }
    }
    if (static_cast<std::size_t>(side->vectors.rows()) != side->words.size())
      throw_usage_error("The vectors need one row per word (" + std::to_string(side->words.size()) + " words, " +
                        std::to_string(side->vectors.rows()) + " rows).");
  }
  cache_.provide(kGivenSource, source);
  cache_.provide(kGivenTarget, target);
  source_ = std::move(source);
  target_ = std::move(target);
  source_.path = kGivenSource;
  target_.path = kGivenTarget;
  given_ = true;
  loaded_ = true;
  has_mapping_ = false;
  load();
}

const Mapping& Aligner::fit_mapping(const PairList* seed) {
  load();
  const int threads = config_.scoring.threads;
  const PairList configured =
      seed ? PairList{}
           : (config_.input.seed == kIdenticalSeed ? identical_seed(source_, target_) : configured_seed(config_));
  const PairList& pairs = seed ? *seed : configured;
  if (pairs.pairs.empty()) throw_usage_error("A seed lexicon is needed to fit a mapping: give seed.");
  Mapping mapping;
  mapping.source.kind = mapping.target.kind = config_.mapping.normalization;
  normalised_source_ = source_;
  normalised_target_ = target_;
  mapping.source.fit_apply(normalised_source_.vectors, threads);
  mapping.target.fit_apply(normalised_target_.vectors, threads);
  Matrix Xs, Zt;
  const std::size_t usable =
      detail::seed_pair_matrices(pairs, normalised_source_, normalised_target_, mapping, threads, Xs, Zt);
  logger().info("{} of {} seed pairs have both sides in the vectors", usable, pairs.pairs.size());
  if (usable < config_.mapping.min_seed_pairs) {
    throw_input_error(pairs.path, 0,
                      "only " + std::to_string(usable) + " of " + std::to_string(pairs.pairs.size()) +
                          " seed pairs have both words in the vectors; at least " +
                          std::to_string(config_.mapping.min_seed_pairs) + " are needed (min_seed_pairs).");
  }
  Mapping fitted = termalign::fit_mapping(Xs, Zt, normalised_source_.vectors, normalised_target_.vectors,
                                          config_.mapping, threads);
  mapping.source_transform = std::move(fitted.source_transform);
  mapping.target_transform = std::move(fitted.target_transform);
  mapping_ = std::move(mapping);
  has_mapping_ = true;
  return mapping_;
}

void Aligner::set_mapping(Mapping mapping) {
  load();
  if (mapping.source_transform.rows() != source_.dim() || mapping.target_transform.rows() != target_.dim() ||
      mapping.source_transform.cols() != mapping.target_transform.cols()) {
    throw_usage_error("The mapping's transforms must have " + std::to_string(source_.dim()) +
                      " rows (the vectors' dimension) and the same number of columns.");
  }
  const int threads = config_.scoring.threads;
  normalised_source_ = source_;
  normalised_target_ = target_;
  mapping.source.apply_rows(normalised_source_.vectors, threads);
  mapping.target.apply_rows(normalised_target_.vectors, threads);
  mapping_ = std::move(mapping);
  has_mapping_ = true;
}

CompositionOptions Aligner::composition_for(const std::vector<std::string>& terms, Side side) {
  const bool source = side == Side::source;
  const Embeddings& vectors = source ? normalised_source_ : normalised_target_;
  const std::string& path = source ? config_.input.src_terms : config_.input.tgt_terms;
  if (path.empty()) return closed_compounds_for("the terms given", terms, vectors, config_.composition);
  ListTerms& kept = source ? source_list_ : target_list_;
  if (std::string signature = file_signature(path); kept.path != path || kept.signature != signature)
    kept = {path, std::move(signature), read_term_list(path).terms};
  return closed_compounds_for(path, kept.terms, vectors, config_.composition);
}

const Mapping& Aligner::mapping() const {
  if (!has_mapping_) throw_usage_error("No mapping yet: call fit_mapping or set_mapping first.");
  return mapping_;
}

ComposedTerms Aligner::compose(const std::vector<std::string>& terms, Side side) {
  load();
  const Mapping& fitted = mapping();
  const bool source = side == Side::source;
  const Embeddings& vectors = source ? normalised_source_ : normalised_target_;
  const TermComposer composer(vectors, source ? fitted.source : fitted.target, composition_for(terms, side));
  ComposedTerms composed = compose_terms(terms, composer, config_.scoring.threads);
  transform_rows(composed.vectors, source ? fitted.source_transform : fitted.target_transform,
                 config_.scoring.threads);
  return composed;
}

CslsSelection Aligner::score(const Matrix& X, const Matrix& Z) const {
  if (X.cols() != Z.cols())
    throw_usage_error("X and Z need the same number of columns (got " + std::to_string(X.cols()) + " and " +
                      std::to_string(Z.cols()) + ").");
  if (config_.scoring.k < 1) throw_usage_error("Option k must be at least 1.");
  if (config_.scoring.neighbourhood != Neighbourhood::terms) {
    throw_usage_error(
        "Aligner::score takes the CSLS neighbourhoods within X and Z (`neighbourhood` \"terms\"); with "
        "\"vocabulary\" they need the vocabularies' frequent words: run align() instead.");
  }
  TileOptions tiles;
  tiles.rows = config_.scoring.tile_rows;
  tiles.cols = config_.scoring.tile_cols;
  tiles.threads = config_.scoring.threads;
  tiles.precision = resolve_precision(config_.scoring.precision);
  SelectionOptions selection;
  selection.top_m = config_.ranking.top_m;
  selection.mutual_m = config_.ranking.mutual_m;
  return csls_select(X, Z, config_.scoring.k, selection, tiles, config_.scoring.candidate_pool);
}

std::vector<RankedIndex> Aligner::rank(const CslsSelection& scored, const std::vector<std::uint32_t>& source_ids,
                                       const std::vector<std::uint32_t>& target_ids, std::size_t source_terms,
                                       std::size_t target_terms) const {
  CandidateSet set;
  set.source_terms.terms.resize(source_terms);
  set.target_terms.terms.resize(target_terms);
  set.cap = submission_cap(source_terms, target_terms);
  if (config_.ranking.cap > 0) set.cap = std::min(set.cap, config_.ranking.cap);
  set.per_source = config_.ranking.top_m;
  Eigen::VectorXd scores(static_cast<Eigen::Index>(scored.candidates.size()));
  for (std::size_t i = 0; i < scored.candidates.size(); ++i) {
    const Candidate& candidate = scored.candidates[i];
    if (candidate.source >= source_ids.size() || candidate.target >= target_ids.size() ||
        source_ids[candidate.source] >= source_terms || target_ids[candidate.target] >= target_terms) {
      throw_usage_error("A candidate's row has no term id: give the term_ids of the lists that were scored.");
    }
    set.evidence.source.push_back(source_ids[candidate.source]);
    set.evidence.target.push_back(target_ids[candidate.target]);
    set.evidence.csls.push_back(candidate.score);
    set.evidence.cosine.push_back(candidate.cosine);
    scores(static_cast<Eigen::Index>(i)) = candidate.score;
  }
  return rank_candidate_indices(set, scores, config_.scoring.threads);
}

std::vector<RankedPair> Aligner::align(AlignmentSummary* summary) {
  load();
  return align_terms(config_, summary, single_process(), &cache_);
}

AlignmentSummary Aligner::run() {
  load();
  return run_align(config_, single_process(), &cache_);
}

}  // namespace termalign
