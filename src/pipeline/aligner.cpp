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

#include "evaluation/explain.h"
#include "io/io.h"
#include "mapping/seed.h"
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

// The run of ranked round `round` after `last` (a run whose seed was induced) and its `ranking`, best first: its
// seed the word pairs of the ranking's seed_ranked_pairs best pairs (ranked_seed); its seconds added to stats'
// (the rest of stats becomes this run's).
CandidateSet ranked_round(const AlignConfig& config, const CandidateSet& last,
                          const std::vector<RankedIndex>& ranking, std::size_t round, bool full_evidence,
                          AlignmentSummary& stats, const ProcessGroup& group, VectorCache* cache,
                          pipeline::SharedCorpora& corpora) {
  TERMALIGN_CHECK(last.mapping != nullptr, "a ranked round follows a run whose seed was induced");
  pipeline::RankedSeed ranked;
  ranked.mapping = last.mapping;
  ranked.round = round;
  for (const RankedIndex& pair : ranking) {
    if (ranked.term_pairs.size() == config.mapping.seed_ranked_pairs) break;
    ranked.term_pairs.emplace_back(last.source_terms.terms[pair.source], last.target_terms.terms[pair.target]);
  }
  const double seconds = stats.seconds;
  CandidateSet next =
      pipeline::scheduled_candidates(config, full_evidence, stats, group, cache, &ranked, &corpora);
  stats.seconds += seconds;
  return next;
}

// A run's scores by candidate pair (source id in the high half of the key), sorted by pair, and the lowest.
struct RunScores {
  std::vector<std::pair<std::uint64_t, float>> by_pair;
  float lowest = 0;
};

std::uint64_t pair_key(const CandidateEvidence& evidence, std::size_t i) {
  return static_cast<std::uint64_t>(evidence.source[i]) << 32 | evidence.target[i];
}

RunScores run_scores(const CandidateSet& candidates, const Eigen::VectorXd& scores) {
  RunScores run;
  run.by_pair.reserve(candidates.evidence.size());
  for (std::size_t i = 0; i < candidates.evidence.size(); ++i)
    run.by_pair.emplace_back(pair_key(candidates.evidence, i),
                             static_cast<float>(scores(static_cast<Eigen::Index>(i))));
  std::sort(run.by_pair.begin(), run.by_pair.end());
  if (scores.size() > 0) run.lowest = static_cast<float>(scores.minCoeff());
  return run;
}

// The earlier runs' scores of each candidate of the last run, summed (the lowest of a run without it): the final
// ranking averages them with the candidate's own (candidate_scores).
void add_earlier_scores(CandidateSet& last, const std::vector<RunScores>& runs, int threads) {
  const CandidateEvidence& evidence = last.evidence;
  last.earlier_scores.assign(evidence.size(), 0.0f);
  last.earlier_runs = runs.size();
  constexpr std::size_t kBlock = 16384;
  parallel_for((evidence.size() + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    for (std::size_t i = block * kBlock; i < std::min(evidence.size(), (block + 1) * kBlock); ++i) {
      const std::uint64_t key = pair_key(evidence, i);
      for (const RunScores& run : runs) {
        const std::pair<std::uint64_t, float> first(key, std::numeric_limits<float>::lowest());
        const auto found = std::lower_bound(run.by_pair.begin(), run.by_pair.end(), first);
        last.earlier_scores[i] += found != run.by_pair.end() && found->first == key ? found->second : run.lowest;
      }
    }
  });
  logger().info("the final list ranks each candidate by its mean score over the {} runs (seed_ranked_fusion)",
                runs.size() + 1);
}

// How many ranked rounds a run of `config` makes after its first run (Aligner::candidates): seed_ranked_rounds
// when its seed is induced, fitted and re-ranked, without a dictionary (whose runs fit on its pairs), in one
// process; else none.
std::size_t ranked_rounds(const AlignConfig& config, const ProcessGroup& group) {
  if (!is_induced_seed(config.input.seed) || !config.input.saved_mapping.empty() || !uses_reranker(config) ||
      !config.input.dictionary.empty())
    return 0;
  if (group.size() > 1 && config.mapping.seed_ranked_rounds > 0) {
    logger().warn("seed_ranked_rounds: the ranked rounds run in one process only; this group of {} runs none",
                  group.size());
    return 0;
  }
  return config.mapping.seed_ranked_rounds;
}

}  // namespace

Aligner::Aligner(AlignConfig config) : config_(std::move(config)), cache_(&own_cache_) {}

Aligner::Aligner(AlignConfig config, VectorCache* cache) : config_(std::move(config)), cache_(cache) {}

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
  const PairList seed = config_.input.saved_mapping.empty() ? configured_seed(config_) : PairList{};
  const std::vector<std::string> source_seed = seed_words(seed, true), target_seed = seed_words(seed, false);
  pipeline::load_pair(
      in.src_vectors, in.tgt_vectors, pipeline::side_options({&source_terms.terms, &source_seed}, config_),
      pipeline::side_options({&target_terms.terms, &target_seed}, config_), cache_, source_, target_);
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
  const bool induced = !seed && is_induced_seed(config_.input.seed);
  PairList pairs = seed ? *seed : (induced ? PairList{} : configured_seed(config_));
  if (!induced && pairs.pairs.empty()) throw_usage_error("A seed lexicon is needed to fit a mapping: give seed.");
  normalised_source_ = source_;
  normalised_target_ = target_;
  Mapping mapping = pipeline::normalise_pair(config_, normalised_source_, normalised_target_);
  std::size_t usable = 0;
  std::function<void()> finish_fit;
  if (induced) {
    // As align() does: the seed read off config()'s term lists, when it has both.
    std::optional<pipeline::InducedSeed> made;
    if (!config_.input.src_terms.empty() && !config_.input.tgt_terms.empty()) {
      const std::vector<std::string> source_terms = read_term_list(config_.input.src_terms).terms;
      const std::vector<std::string> target_terms = read_term_list(config_.input.tgt_terms).terms;
      const CompositionOptions source_composition = composition_for(source_terms, Side::source);
      const CompositionOptions target_composition = composition_for(target_terms, Side::target);
      const pipeline::SeedTerms terms{source_terms, target_terms, source_composition, target_composition};
      made = pipeline::induced_seed(config_, normalised_source_, normalised_target_, mapping, &terms);
    } else {
      made = pipeline::induced_seed(config_, normalised_source_, normalised_target_, mapping, nullptr);
    }
    pairs = std::move(made->seed);
    if (made->transforms) {
      pipeline::set_transforms(std::move(*made->transforms), mapping);
      finish_fit = [] {};  // fitted already
    }
  }
  const std::string seed_name = induced              ? config_.input.seed
                                : pairs.path.empty() ? "the seed lexicon given"
                                                     : pairs.path;
  if (!finish_fit)
    finish_fit = pipeline::fit_seed_transforms(pairs, seed_name, config_, normalised_source_, normalised_target_,
                                               mapping, usable);
  finish_fit();
  mapping_ = std::move(mapping);
  // As align() does: an induced seed's evidence reads the mapping's own lexicon.
  seed_ =
      induced && uses_reranker(config_)
          ? pipeline::induced_lexicon(config_, std::move(pairs), normalised_source_, normalised_target_, mapping_)
          : std::move(pairs);
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
  seed_ = configured_seed(config_);
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
  // The dictionaries, read for each call (the stages keep no state of their own).
  const Dictionary dictionary = config_.input.dictionary.empty()
                                    ? Dictionary()
                                    : read_dictionaries(config_.input.dictionary, config_.input.pair,
                                                        config_.scoring.threads);
  const Dictionary* given_dictionary = config_.input.dictionary.empty() ? nullptr : &dictionary;
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
  pipeline::collect_evidence(config_, full_evidence, X, Z, scored, other, words, result);
  return result;
}

std::vector<RankedIndex> Aligner::rank(const CandidateSet& candidates) const {
  return final_ranking(candidates, config_);
}

CandidateSet Aligner::candidates(bool full_evidence, AlignmentSummary* summary, const ProcessGroup& group) {
  if (given_) load();  // the configuration names the given vectors
  AlignmentSummary local;
  AlignmentSummary& stats = summary ? *summary : local;
  const std::size_t rounds = ranked_rounds(config_, group);
  // The ranked rounds load the same vectors again: kept for them when no cache keeps them.
  VectorCache rounds_cache;
  VectorCache* cache = cache_ || rounds == 0 ? cache_ : &rounds_cache;
  // The mapping and the mapped vectors are written by the last run only.
  AlignConfig earlier = config_;
  earlier.output.save_mapping.clear();
  earlier.output.save_mapped_vectors.clear();
  pipeline::SharedCorpora corpora;  // read once for all the runs
  CandidateSet scored = pipeline::scheduled_candidates(rounds > 0 ? earlier : config_, full_evidence, stats, group,
                                                       cache, nullptr, rounds > 0 ? &corpora : nullptr);
  std::vector<RunScores> runs;  // the earlier runs' scores, for the final list's mean (seed_ranked_fusion)
  for (std::size_t round = 1; round <= rounds && scored.mapping; ++round) {
    const Eigen::VectorXd scores = candidate_scores(scored, config_);
    const std::vector<RankedIndex> ranking = pipeline::ranking_by(scored, scores, config_);
    if (config_.mapping.seed_ranked_fusion) runs.push_back(run_scores(scored, scores));
    scored = ranked_round(round == rounds ? config_ : earlier, scored, ranking, round, full_evidence, stats, group,
                          cache, corpora);
  }
  if (!runs.empty()) add_earlier_scores(scored, runs, config_.scoring.threads);
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
