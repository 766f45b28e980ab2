// The Aligner: the pipeline's stages as methods over in-memory data, and the runs (align, run) that schedule them.
#include "termalign/aligner.h"

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "evidence/corpus_evidence.h"
#include "io/corpus.h"
#include "io/io.h"
#include "mapping/seed.h"
#include "mapping/seed_stage.h"
#include "pipeline/explain.h"
#include "pipeline/fusion.h"
#include "pipeline/ranking.h"
#include "pipeline/stages.h"
#include "rerank/reranker.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign {

namespace {

// The names vectors given in memory stand for in the configuration (and in messages).
constexpr const char* kGivenSource = "(source vectors given in memory)";
constexpr const char* kGivenTarget = "(target vectors given in memory)";

// The seed's words of one side (empty without a seed file: the mapping is loaded, or the seed is induced).
std::vector<std::string> seed_words(const PairList& seed, bool source) {
  std::vector<std::string> words;
  for (const auto& [s, t] : seed.pairs) words.push_back(source ? s : t);
  return words;
}

PairList configured_seed(const AlignConfig& config) {
  if (config.input.seed.empty() || is_induced_seed(config.input.seed)) return {};
  return read_pairs(config.input.seed, PairFileKind::seed_lexicon);
}

// Terms given in memory as a list: the configured file's name when there is one (for messages), each term's id
// its first place.
TermList term_list(const std::vector<std::string>& terms, const std::string& path, const char* side) {
  TermList list;
  list.path = path.empty() ? std::string("(") + side + " terms given in memory)" : path;
  list.terms = terms;
  for (std::size_t id = 0; id < terms.size(); ++id) list.ids.emplace(terms[id], static_cast<std::uint32_t>(id));
  return list;
}

// The best `pairs` pairs of `ranking`, as (source, target) ids in turn: a ranked round's seed.
std::vector<std::uint32_t> best_pair_ids(const std::vector<RankedIndex>& ranking, std::size_t pairs) {
  std::vector<std::uint32_t> ids;
  for (std::size_t r = 0; r < ranking.size() && r < pairs; ++r) {
    ids.push_back(ranking[r].source);
    ids.push_back(ranking[r].target);
  }
  return ids;
}

// Ranked round `round`'s seed: the term pairs of `ids` (best_pair_ids) in `last`'s lists, split into word pairs
// under `mapping`, the last run's.
RankedSeed ranked_seed_of(const CandidateSet& last, const std::vector<std::uint32_t>& ids,
                          std::shared_ptr<const Mapping> mapping, std::size_t round) {
  RankedSeed ranked;
  ranked.mapping = std::move(mapping);
  ranked.round = round;
  for (std::size_t i = 0; i + 1 < ids.size(); i += 2)
    ranked.term_pairs.emplace_back(last.source_terms.terms[ids[i]], last.target_terms.terms[ids[i + 1]]);
  return ranked;
}

}  // namespace

Aligner::Aligner(AlignConfig config)
    : config_(std::move(config)), cache_(&own_cache_), history_(std::make_shared<pipeline::RunHistory>()) {}

Aligner::Aligner(AlignConfig config, VectorCache* cache)
    : config_(std::move(config)), cache_(cache), history_(std::make_shared<pipeline::RunHistory>()) {}

void Aligner::load() {
  if (given_) {
    config_.input.src_vectors = kGivenSource;
    config_.input.tgt_vectors = kGivenTarget;
    return;
  }
  const InputOptions& in = config_.input;
  // The files as they are now: one rewritten since the last load is loaded again.
  std::string key = std::to_string(in.most_frequent) + '\n' + in.reranker;
  for (const std::string* path :
       {&in.src_vectors, &in.tgt_vectors, &in.src_terms, &in.tgt_terms, &in.seed, &in.src_corpus, &in.tgt_corpus})
    key += '\n' + *path + '\t' + file_signature(*path);
  if (loaded_ && key == loaded_for_) return;
  if (in.src_vectors.empty() || in.tgt_vectors.empty())
    throw_usage_error("Both vector files are needed: give src_vectors and tgt_vectors.");
  // What a run of this configuration loads (its terms' and seed's words and the frequent ones, and with a
  // gzipped model and corpora their context words), so that align() finds the same loads kept.
  const TermList source_terms = in.src_terms.empty() ? TermList{} : read_term_list(in.src_terms);
  const TermList target_terms = in.tgt_terms.empty() ? TermList{} : read_term_list(in.tgt_terms);
  const PairList seed = config_.input.saved_mapping.empty() ? configured_seed(config_) : PairList{};
  const std::vector<std::string> source_seed = seed_words(seed, true), target_seed = seed_words(seed, false);
  LoadOptions source_options = pipeline::side_options({&source_terms.terms, &source_seed}, config_);
  LoadOptions target_options = pipeline::side_options({&target_terms.terms, &target_seed}, config_);
  source_corpus_.reset();
  target_corpus_.reset();
  if (uses_reranker(config_) && !source_terms.terms.empty() && !target_terms.terms.empty()) {
    const CorpusEvidenceOptions options = corpus_evidence_options(config_);
    pipeline::ask_gzipped_models_for_corpus_words(
        config_,
        [&](Side side) -> const CorpusStatistics& {
          const bool source = side == Side::source;
          auto& kept = source ? source_corpus_ : target_corpus_;
          kept = pipeline::side_corpus_statistics(options, side, (source ? source_terms : target_terms).terms);
          return *kept;
        },
        source_options, target_options);
    // The statistics are those of config()'s lists: collect_evidence takes them for these lists only.
    corpora_terms_ = {source_terms.terms, target_terms.terms};
  }
  pipeline::load_pair(in.src_vectors, in.tgt_vectors, source_options, target_options, cache_, source_, target_);
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
  if (!cache_) cache_ = &own_cache_;  // align() finds the given vectors by their names in the cache
  cache_->provide(kGivenSource, source);
  cache_->provide(kGivenTarget, target);
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
  start_run();
  PairList given;
  if (seed) {  // a seed lexicon given here, whatever config() says
    given = *seed;
    decisions_.seed = RunDecisions::Seed::lexicon;
    decisions_.ranked_rounds = 0;
    decisions_.fusion = decisions_.seedless_models = false;
  } else if (decisions_.seed == RunDecisions::Seed::lexicon) {
    given = configured_seed(config_);
  }
  // config()'s term lists, read once: the dictionaries' coverage and the induced seed's rounds read them.
  const TermList source_list =
      config_.input.src_terms.empty() ? TermList{} : read_term_list(config_.input.src_terms);
  const TermList target_list =
      config_.input.tgt_terms.empty() ? TermList{} : read_term_list(config_.input.tgt_terms);
  // As align() does: the dictionaries' share of config()'s source terms' words decides whether their features
  // rank the run, and so what the seed evidence reads.
  if (!config_.input.dictionary.empty() && uses_reranker(config_) && !config_.input.src_terms.empty())
    pipeline::decide_dictionary_features(decisions_, pipeline::dictionary_coverage(dictionary(), source_list),
                                         config_.input.dictionary_min_coverage);
  normalised_source_ = source_;
  normalised_target_ = target_;
  Mapping mapping = pipeline::normalise_pair(config_, normalised_source_, normalised_target_);
  // As align() does: without a seed lexicon, the dictionaries' frequent pairs, when there are enough, are the
  // seed; an induced seed is read off config()'s term lists, when it has both.
  if (!seed && !config_.input.dictionary.empty() &&
      (decisions_.seed == RunDecisions::Seed::induced || decisions_.seed == RunDecisions::Seed::dictionary)) {
    if (std::optional<PairList> pairs =
            pipeline::seed_from_dictionary(config_, decisions_, dictionary(), source_, target_))
      given = std::move(*pairs);
  }
  if (decisions_.seed == RunDecisions::Seed::lexicon && given.pairs.empty())
    throw_usage_error("A seed lexicon is needed to fit a mapping: give seed.");
  std::optional<CompositionOptions> source_composition, target_composition;
  std::optional<SeedTerms> terms;
  if (!config_.input.src_terms.empty() && !config_.input.tgt_terms.empty()) {
    source_composition = composition_for(source_list.terms, Side::source);
    target_composition = composition_for(target_list.terms, Side::target);
    terms.emplace(SeedTerms{source_list.terms, target_list.terms, *source_composition, *target_composition});
  }
  adopt_fit(seed_stage(config_, decisions_, std::move(given), normalised_source_, normalised_target_, mapping,
                       terms ? &*terms : nullptr),
            mapping);
  has_mapping_ = true;
  return mapping_;
}

void Aligner::adopt_fit(SeedFit fit, Mapping& mapping) {
  if (fit.finish_fit) fit.finish_fit();  // it writes `mapping`'s transforms: before the mapping moves
  mapping_ = std::move(mapping);
  // As align() does: an induced seed's evidence reads the mapping's own lexicon.
  seed_ = pipeline::reads_own_lexicon(decisions_) && uses_reranker(config_)
              ? induced_lexicon(config_, std::move(fit.seed), normalised_source_, normalised_target_, mapping_)
              : std::move(fit.seed);
}

std::size_t Aligner::ranked_rounds() const { return pipeline::planned_decisions(config_).ranked_rounds; }

const Mapping& Aligner::fit_ranked_round(const CandidateSet& last) {
  mapping();  // a mapping was fitted
  if (decisions_.seed != RunDecisions::Seed::induced)
    throw_usage_error(
        "A ranked round reads the seed off a run whose seed was induced (seed \"auto\", "
        "\"identical\" or \"transliterated\", without a dictionary's pairs).");
  const Eigen::VectorXd scores = pipeline::run_scores(last, config_);
  const std::vector<RankedIndex> ranking = pipeline::ranking_by(last, scores, config_);
  if (decisions_.fusion) history_->add(last, scores);
  const RankedSeed ranked = ranked_seed_of(last, best_pair_ids(ranking, config_.mapping.seed_ranked_pairs),
                                           std::make_shared<const Mapping>(mapping_), ++ranked_rounds_done_);
  Mapping mapping = mapping_;  // its normalisers, fitted on the loaded vectors as before
  adopt_fit(seed_stage(config_, decisions_, PairList(), normalised_source_, normalised_target_, mapping, nullptr,
                       &ranked),
            mapping);
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
  seed_ = configured_seed(config_);
  start_run();
  has_mapping_ = true;
}

void Aligner::start_run() {
  decisions_ = pipeline::planned_decisions(config_);
  history_->clear();
  ranked_rounds_done_ = 0;
}

const Dictionary& Aligner::dictionary() {
  std::string key = config_.input.pair;
  for (const std::string& path : config_.input.dictionary) key += '\n' + path + '\t' + file_signature(path);
  if (!dictionary_ || key != dictionary_key_) {
    dictionary_ = std::make_shared<const Dictionary>(
        read_dictionaries(config_.input.dictionary, config_.input.pair, config_.scoring.threads));
    dictionary_key_ = key;
  }
  return *dictionary_;
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
  check_neighbourhood_k(config_.scoring.k);  // before any work: the scoring would check it only then
  if (config_.scoring.neighbourhood != Neighbourhood::terms) {
    throw_usage_error(
        "Aligner::score takes the CSLS neighbourhoods within X and Z (`neighbourhood` \"terms\"); with "
        "\"vocabulary\" they need the vocabularies' frequent words: run align() instead.");
  }
  return pipeline::score_terms(X, Z, config_, uses_reranker(config_), 0, pipeline::scoring_tiles(config_),
                               single_process());
}

CandidateSet Aligner::collect_evidence(const std::vector<std::string>& source_terms,
                                       const std::vector<std::string>& target_terms, ComposedTerms X,
                                       ComposedTerms Z, CslsSelection scored) {
  const bool full_evidence = uses_reranker(config_);
  const auto rows = [](const ComposedTerms& composed) {
    return static_cast<std::size_t>(composed.vectors.rows());
  };
  if (X.term_ids.size() != rows(X) || Z.term_ids.size() != rows(Z))
    throw_usage_error("X and Z need one term id per row: give compose's term vectors with their term_ids.");
  for (const Candidate& candidate : scored.candidates) {
    if (candidate.source >= X.term_ids.size() || candidate.target >= Z.term_ids.size() ||
        X.term_ids[candidate.source] >= source_terms.size() || Z.term_ids[candidate.target] >= target_terms.size())
      throw_usage_error("A candidate's row has no term id: give the term_ids of the lists that were scored.");
  }
  if (full_evidence) mapping();  // the word-level evidence composes with it
  CandidateSet result;
  result.source_terms = term_list(source_terms, config_.input.src_terms, "source");
  result.target_terms = term_list(target_terms, config_.input.tgt_terms, "target");
  result.cap = pipeline::final_cap(config_, source_terms.size(), target_terms.size(), true);
  result.per_source = config_.ranking.top_m;
  result.decisions = decisions_;
  const Dictionary* given_dictionary = config_.input.dictionary.empty() ? nullptr : &dictionary();
  pipeline::OtherCandidates other =
      pipeline::add_other_candidates(config_, full_evidence, result.source_terms, result.target_terms, X, Z,
                                     scored, pipeline::scoring_tiles(config_), single_process(), given_dictionary);
  const CompositionOptions source_composition =
      full_evidence ? composition_for(source_terms, Side::source) : config_.composition;
  const CompositionOptions target_composition =
      full_evidence ? composition_for(target_terms, Side::target) : config_.composition;
  TermWords source_words, target_words;
  if (full_evidence) {
    const int threads = config_.scoring.threads;
    source_words = term_words(source_terms);
    target_words = term_words(target_terms);
    source_words.vectors = mapped_word_vectors(
        source_words.words, TermComposer(normalised_source_, mapping_.source, source_composition),
        mapping_.source_transform, threads);
    target_words.vectors = mapped_word_vectors(
        target_words.words, TermComposer(normalised_target_, mapping_.target, target_composition),
        mapping_.target_transform, threads);
  }
  pipeline::WordEvidenceInputs words{source_words,       target_words,       seed_,
                                     normalised_source_, normalised_target_, mapping_,
                                     source_composition, target_composition};
  words.dictionary = given_dictionary;
  if (corpora_terms_.first == source_terms && corpora_terms_.second == target_terms) {
    words.source_corpus = source_corpus_;  // gathered before a gzipped model was read (load)
    words.target_corpus = target_corpus_;
  }
  pipeline::collect_evidence(config_, full_evidence, X, Z, scored, other, words, result);
  decisions_ = result.decisions;  // and what the evidence decided (the dictionary's role)
  if (history_->size() > 0) history_->attach(result, config_.scoring.threads);
  return result;
}

std::vector<RankedIndex> Aligner::rank(const CandidateSet& candidates) const {
  return final_ranking(candidates, config_);
}

CandidateSet Aligner::candidates(bool full_evidence, AlignmentSummary* summary, const ProcessGroup& group) {
  if (given_) load();  // the configuration names the given vectors
  AlignmentSummary local;
  AlignmentSummary& stats = summary ? *summary : local;
  RunDecisions decisions = pipeline::planned_decisions(config_);
  const std::size_t rounds = decisions.ranked_rounds;
  // The ranked rounds load the same vectors again: kept for them when no cache keeps them.
  VectorCache rounds_cache;
  VectorCache* cache = cache_ || rounds == 0 ? cache_ : &rounds_cache;
  // The mapping and the mapped vectors are written by the last run only.
  AlignConfig earlier = config_;
  earlier.output.save_mapping.clear();
  earlier.output.save_mapped_vectors.clear();
  pipeline::SharedCorpora corpora;  // read once for all the runs
  CandidateSet scored =
      pipeline::scheduled_candidates(rounds > 0 ? earlier : config_, decisions, full_evidence, stats, group, cache,
                                     nullptr, rounds > 0 ? &corpora : nullptr);
  pipeline::RunHistory history;  // the earlier runs' scores, for the final list's mean (seed_ranked_fusion)
  for (std::size_t round = 1; round <= rounds; ++round) {
    TERMALIGN_CHECK(scored.mapping != nullptr, "a ranked round follows a run whose seed was induced");
    // Rank 0 ranks the run (the others hold no evidence) and hands every rank the same seed.
    std::vector<std::uint32_t> best;
    if (group.is_root()) {
      const Eigen::VectorXd scores = pipeline::run_scores(scored, config_);
      best = best_pair_ids(pipeline::ranking_by(scored, scores, config_), config_.mapping.seed_ranked_pairs);
      if (decisions.fusion) history.add(scored, scores);
    }
    group.broadcast(best);
    const RankedSeed ranked = ranked_seed_of(scored, best, scored.mapping, round);
    const double seconds = stats.seconds;
    scored = pipeline::scheduled_candidates(round == rounds ? config_ : earlier, decisions, full_evidence, stats,
                                            group, cache, &ranked, &corpora);
    stats.seconds += seconds;
  }
  // The last run's candidates carry the earlier runs' scores (the runs before it rank by their own).
  if (history.size() > 0 && group.is_root()) history.attach(scored, config_.scoring.threads);
  return scored;
}

std::vector<RankedPair> Aligner::align(AlignmentSummary* summary, const ProcessGroup& group) {
  const CandidateSet scored = candidates(false, summary, group);
  if (!group.is_root()) return {};
  return pipeline::ranked_pairs(scored, rank(scored), config_.scoring.threads);
}

AlignmentSummary Aligner::run(const ProcessGroup& group) {
  const AlignConfig& config = config_;
  if (config.output.out.empty()) throw_usage_error("An output file is needed: give `out`.");
  // Every output is written to its temporary file first and renamed only when all are complete, so a failure
  // (a full disk, an interruption) leaves every previous output as it was. The temporary files are created before
  // any work, so an output folder that is missing or cannot be written stops the run at once, not at its end.
  pipeline::check_outputs_distinct(config);
  std::unique_ptr<AtomicFile> submission, scores, resolved_config, explanation;
  const std::string resolved = config.output.out + ".config.toml";
  if (group.is_root()) {  // only rank 0 writes
    submission = std::make_unique<AtomicFile>(config.output.out);
    if (!config.output.scores.empty()) scores = std::make_unique<AtomicFile>(config.output.scores);
    if (!config.output.explain.empty()) explanation = std::make_unique<AtomicFile>(config.output.explain);
    resolved_config = std::make_unique<AtomicFile>(resolved);
  }
  AlignmentSummary summary;
  CandidateSet scored = candidates(false, &summary, group);
  if (!group.is_root()) return summary;
  // align()'s list, formatted straight from the term lists (no pair's strings copied).
  const int threads = config.scoring.threads;
  const std::vector<RankedIndex> ranked = rank(scored);
  const std::vector<std::string>& sources = scored.source_terms.terms;
  const std::vector<std::string>& targets = scored.target_terms.terms;
  const std::string submission_text = format_ranked(ranked, sources, targets, false, threads);
  const std::string scores_text = scores ? format_ranked(ranked, sources, targets, true, threads) : std::string();
  const std::string explanation_text =
      explanation ? format_explanation(explain_ranking(scored, ranked, config)) : std::string();
  const std::string resolved_text = to_toml(config) + pipeline::format_decisions(scored.decisions);
  // One thread writes while another frees the candidates (tens of thousands of strings and their indexes): the
  // writing, which is the kernel's copying and fsync, is serial.
  run_both(
      [&] {
        submission->write(submission_text);
        if (scores) scores->write(scores_text);
        if (explanation) explanation->write(explanation_text);
        resolved_config->write(resolved_text);
        submission->commit();
        if (scores) scores->commit();
        if (explanation) explanation->commit();
        resolved_config->commit();
      },
      [&] { scored = CandidateSet(); }, threads);
  std::string written = config.output.out;
  for (const std::string* path : {&config.output.scores, &config.output.explain}) {
    if (!path->empty()) written += ", " + *path;
  }
  logger().info("wrote {} and {}", written, resolved);
  return summary;
}

CandidateSet generate_candidates(const AlignConfig& config, bool full_evidence, AlignmentSummary* summary,
                                 const ProcessGroup& group, VectorCache* cache) {
  return Aligner(config, cache).candidates(full_evidence, summary, group);
}

std::vector<RankedPair> align_terms(const AlignConfig& config, AlignmentSummary* summary,
                                    const ProcessGroup& group, VectorCache* cache) {
  return Aligner(config, cache).align(summary, group);
}

AlignmentSummary run_align(const AlignConfig& config, const ProcessGroup& group, VectorCache* cache) {
  return Aligner(config, cache).run(group);
}

}  // namespace termalign
