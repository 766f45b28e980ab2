// The private scheduler of Aligner::align(): the stages of stages.h, overlapped as fast as they go.
#include <chrono>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>

#include "evidence/corpus_evidence.h"
#include "io/corpus.h"
#include "io/io.h"
#include "pipeline/stages.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/parallel.h"
#include "util/resources.h"
#include "util/spilled_matrix.h"

namespace termalign::pipeline {

namespace {

// Every process of a group must have composed the same term vectors, or their shares would not fit together.
void require_same_terms(const ComposedTerms& X, const ComposedTerms& Z, const ProcessGroup& group) {
  if (group.size() == 1) return;
  std::uint64_t fingerprint = fingerprint_bytes(X.vectors.data(), sizeof(float) * X.vectors.size());
  fingerprint = fingerprint_bytes(Z.vectors.data(), sizeof(float) * Z.vectors.size(), fingerprint);
  fingerprint = fingerprint_bytes(X.term_ids.data(), sizeof(X.term_ids[0]) * X.term_ids.size(), fingerprint);
  fingerprint = fingerprint_bytes(Z.term_ids.data(), sizeof(Z.term_ids[0]) * Z.term_ids.size(), fingerprint);
  group.require_same(fingerprint, "the mapped term vectors");
}

// One run of the pipeline, stage by stage (scheduled_candidates calls them in order). The run owns what the stages
// pass on: its inputs, the loaded vectors, the mapping, the term vectors and the scored candidates. The overlaps
// that make a run fast are scheduled here and nowhere else: the target list is read beside the source list and the
// seed, each side's word set is built on its own thread, the mapping's serial decompositions run beside the
// composition (map_and_compose), and the word sets are freed on two threads.
class Scheduler {
 public:
  Scheduler(const AlignConfig& config, RunDecisions& decisions, bool full_evidence, AlignmentSummary& stats,
            const ProcessGroup& group, VectorCache* cache, const RankedSeed* ranked, SharedCorpora* corpora)
      : config_(config),
        decisions_(decisions),
        threads_(config.scoring.threads),
        fit_(config.input.saved_mapping.empty()),
        full_evidence_(full_evidence || uses_reranker(config)),
        stats_(stats),
        group_(group),
        cache_(cache),
        ranked_(ranked),
        corpora_(corpora) {}

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
    decisions_ = kept->decisions;
    logger().info("term vectors of an earlier run with the same inputs, mapping and composition reused");
    return true;
  }
  void keep_mapped_terms() {
    if (!reusable()) return;
    cache_->keep_state(mapped_terms_key(), std::make_shared<const MappedTerms>(MappedTerms{
                                               result_.source_terms, result_.target_terms, X_, Z_,
                                               stats_.seed_pairs, stats_.seed_pairs_usable, decisions_}));
  }

  // The term lists, the seed lexicon and the dictionaries (a malformed TERMALIGN_TILE_KERNEL choice first, then
  // the lists' errors, the seed's, the dictionaries'). The dictionaries are read beside the target list, one after
  // the other (read_dictionaries' own threads are nested in run_both's).
  void read_inputs() {
    std::exception_ptr seed_error;    // reported after the term lists' errors
    std::exception_ptr kernel_error;  // a usage error, before the lists' errors
    std::exception_ptr dictionary_error;  // reported after the seed's
    // The similarity kernel (whose check of OpenBLAS's rounding takes a few ms) is chosen beside the target list,
    // which has no seed lexicon to read.
    try {
      run_both(
          [&] {
            result_.source_terms = read_term_list(config_.input.src_terms);
            try {
              // With a saved mapping the seed lexicon, when given, is still evidence for the re-ranker (its
              // words' translations).
              if (!config_.input.seed.empty() && !is_induced_seed(config_.input.seed)) {
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
            try {
              if (!config_.input.dictionary.empty()) {
                dictionary_ = std::make_shared<const Dictionary>(
                    read_dictionaries(config_.input.dictionary, config_.input.pair, threads_));
              }
            } catch (...) {
              dictionary_error = std::current_exception();
            }
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
    if (dictionary_error) std::rethrow_exception(dictionary_error);
    stats_.source_terms = result_.source_terms.size();
    stats_.target_terms = result_.target_terms.size();
    // Whether the dictionaries' features rank the run decides what the seed evidence reads, before the mapping.
    if (dictionary_ && full_evidence_ && decisions_.dictionary_coverage < 0)
      decide_dictionary_features(decisions_, dictionary_coverage(*dictionary_, result_.source_terms),
                                 config_.input.dictionary_min_coverage);
  }

  // Each side's vectors: the words its terms and seed words may look up, and the frequent ones; then the inputs
  // checked against them (and an induced seed made from them).
  void load_vectors() {
    std::vector<std::string> seed_sources, seed_targets;
    for (const auto& [source, target] : seed_.pairs) {
      seed_sources.push_back(source);
      seed_targets.push_back(target);
    }
    run_both(
        [&] {
          source_options_ = side_options({&result_.source_terms.terms, &seed_sources}, config_);
        },
        [&] {
          target_options_ = side_options({&result_.target_terms.terms, &seed_targets}, config_);
        },
        threads_);
    gather_corpora_for_gzipped_models();
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
    if (dictionary_ && fit_ && !ranked_ &&
        (decisions_.seed == RunDecisions::Seed::induced || decisions_.seed == RunDecisions::Seed::dictionary))
      seed_from_dictionary();
    check_inputs_against_vectors(
        decisions_, fit_, config_.input.allow_reversed, result_.source_terms, result_.target_terms, source_,
        target_, seed_, source_composition_.split_closed_compounds, target_composition_.split_closed_compounds);
  }

  // A gzipped model is read in one pass, so the words whose subword vectors the corpus evidence will ask of it
  // (its most frequent context words) must be known before: with a .bin.gz and corpora, the corpora's statistics
  // are gathered here, before the vectors, and the evidence takes them. With a .bin they are gathered after the
  // scoring, when the vectors' memory is freed.
  void gather_corpora_for_gzipped_models() {
    if (!full_evidence_) return;
    const CorpusEvidenceOptions options = corpus_evidence_options(config_);
    ask_gzipped_models_for_corpus_words(
        config_, [&](Side side) -> const CorpusStatistics& { return *corpus_statistics(side, options); },
        source_options_, target_options_);
  }

  // Without a seed lexicon, the dictionary's frequent single-word pairs are the seed (seed_from_dictionary).
  void seed_from_dictionary() {
    if (std::optional<PairList> pairs =
            pipeline::seed_from_dictionary(config_, decisions_, *dictionary_, source_, target_))
      seed_ = std::move(*pairs);
  }

  // What names the seed in messages: its file, or what made it.
  const std::string& seed_name() const {
    return config_.input.seed.empty() || decisions_.seed == RunDecisions::Seed::dictionary ? seed_.path
                                                                                           : config_.input.seed;
  }
  bool induced() const { return decisions_.seed == RunDecisions::Seed::induced; }
  bool own_lexicon() const { return reads_own_lexicon(decisions_); }

  // The mapping (fitted on the seed, or loaded) and both lists' term vectors in the shared space; the fit's
  // serial decompositions run on one thread while the others compose.
  void map_and_compose() {
    std::function<void()> finish_fit;
    if (fit_) {
      mapping_ = normalise_pair(config_, source_, target_);
      const SeedTerms terms{result_.source_terms.terms, result_.target_terms.terms, source_composition_,
                            target_composition_};
      SeedFit seed =
          seed_stage(config_, decisions_, std::move(seed_), source_, target_, mapping_, &terms, ranked_);
      seed_ = std::move(seed.seed);
      stats_.seed_pairs = seed_.pairs.size();
      stats_.seed_pairs_usable = seed.usable;
      finish_fit = std::move(seed.finish_fit);
    } else {
      load_fixed_mapping();
    }
    const TermComposer source_composer(source_, mapping_.source, source_composition_);
    const TermComposer target_composer(target_, mapping_.target, target_composition_);
    choose_word_vectors_fate();
    // The word sets that chose the rows loaded: only corpus vectors, loaded later, need them again.
    if (config_.input.src_corpus_vectors.empty()) {
      run_both([&] { source_options_ = {}; }, [&] { target_options_ = {}; }, threads_);
    }
    // The mapped vocabularies, written below, need both sides' words after the composition.
    const bool release_early = config_.output.save_mapped_vectors.empty();
    compose_mapped(result_.source_terms.terms, source_composer, result_.target_terms.terms, target_composer,
                   mapping_, finish_fit, threads_, X_, Z_, [&] {
                     // The mapping is complete: the word-level evidence's words and an induced seed's lexicon,
                     // while the vectors are here.
                     if (fit_ && full_evidence_ && own_lexicon())
                       seed_ = induced_lexicon(config_, std::move(seed_), source_, target_, mapping_);
                     if (full_evidence_) map_term_words(source_composer, target_composer, release_early);
                     if (release_early) release_word_vectors(source_, source_spill_, "the source word vectors");
                   });
    if (fit_ && induced())  // what a ranked round after this run reads
      result_.mapping = std::make_shared<const Mapping>(mapping_);
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
    compose_mapped(result_.source_terms.terms, corpus_source_composer, result_.target_terms.terms,
                   corpus_target_composer, corpus_mapping,
                   fit_seed_transforms(seed_, seed_name(), config_, corpus_source, corpus_target,
                                       corpus_mapping, usable),
                   threads_, corpus_X, corpus_Z);
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
    log_unusable("source", result_.source_terms.terms, X_);
    log_unusable("target", result_.target_terms.terms, Z_);
    stats_.source_usable = X_.term_ids.size();
    stats_.target_usable = Z_.term_ids.size();
    require_same_terms(X_, Z_, group_);
    if (!fate_chosen_) choose_word_vectors_fate();  // mapped terms reused: nothing was composed
    release_word_vectors(source_, source_spill_, "the source word vectors");
    release_word_vectors(target_, target_spill_, "the target word vectors");
    if (source_spill_.spilled() && target_spill_.spilled()) {
      logger().info("the word vectors wait in a temporary file in {} during the scoring (spill_mb {})",
                    spill_folder(), config_.scoring.spill_mb);
    }
    if (source_words_spill_.spilled() && target_words_spill_.spilled()) {
      logger().info(
          "the terms' words' vectors ({}) wait in a temporary file in {} during the scoring (spill_mb {})",
          format_bytes(term_words_bytes()), spill_folder(), config_.scoring.spill_mb);
    }
  }

  // What becomes of each side's word vectors once its terms are composed: kept when the vocabulary
  // neighbourhoods read them during the scoring; kept, or spilled to a temporary file when large, when the corpus
  // evidence reads them after the scoring; freed otherwise (with a .bin model's subword vectors). The word-level
  // evidence reads only the terms' words, mapped before the vectors go (term_words).
  enum class WordVectors { keep, spill, free };
  void choose_word_vectors_fate() {
    fate_chosen_ = true;
    const bool corpus_evidence = full_evidence_ && !config_.input.src_corpus.empty();
    const std::size_t word_bytes =
        sizeof(float) * static_cast<std::size_t>(source_.vectors.size() + target_.vectors.size());
    if (config_.scoring.neighbourhood != Neighbourhood::terms) {
      fate_ = WordVectors::keep;
    } else if (!corpus_evidence) {
      fate_ = WordVectors::free;
    } else {
      fate_ = spills(word_bytes) ? WordVectors::spill : WordVectors::keep;
    }
  }
  // Whether `bytes` wait on disk during the scoring (above spill_mb).
  bool spills(std::size_t bytes) const {
    return config_.scoring.spill_mb > 0 && bytes > config_.scoring.spill_mb * (std::size_t{1} << 20);
  }
  std::size_t term_words_bytes() const {
    return sizeof(float) * (source_words_.words.size() + target_words_.words.size()) *
           static_cast<std::size_t>(mapping_.source_transform.cols());
  }
  // Beside the output; without one (a library or Python call), in the temporary folder ($TMPDIR), not in whatever
  // the current folder is.
  std::string spill_folder() const {
    std::string folder = std::filesystem::path(config_.output.out).parent_path().string();
    if (config_.output.out.empty()) {
      std::error_code error;
      folder = std::filesystem::temp_directory_path(error).string();
    }
    return folder.empty() ? "." : folder;
  }
  // Applies the fate to one side, once: a side already spilled is left as it is.
  void release_word_vectors(Embeddings& side, detail::SpilledMatrix& spill, const char* what) {
    if (fate_ == WordVectors::free) {
      side.vectors = Matrix();
      side.subwords.reset();
    } else if (fate_ == WordVectors::spill && !spill.spilled() && side.vectors.size() > 0) {
      spill.spill(side.vectors, spill_folder(), what);
    }
  }
  // The word-level evidence's words of both lists, mapped one side at a time; when the two would take more than
  // spill_mb, each waits on disk during the scoring from when it is made. With `release_source`, the source word
  // vectors go before the target side's words are mapped.
  void map_term_words(const TermComposer& source_composer, const TermComposer& target_composer,
                      bool release_source) {
    run_both([&] { source_words_ = term_words(result_.source_terms.terms); },
             [&] { target_words_ = term_words(result_.target_terms.terms); }, threads_);
    const bool spill = spills(term_words_bytes());
    source_words_.vectors =
        mapped_word_vectors(source_words_.words, source_composer, mapping_.source_transform, threads_);
    if (spill) source_words_spill_.spill(source_words_.vectors.vectors, spill_folder(), "the source terms' words");
    if (release_source) release_word_vectors(source_, source_spill_, "the source word vectors");
    target_words_.vectors =
        mapped_word_vectors(target_words_.words, target_composer, mapping_.target_transform, threads_);
    if (spill) target_words_spill_.spill(target_words_.vectors.vectors, spill_folder(), "the target terms' words");
  }

  // CSLS over the term vectors: the neighbourhood means and each source term's candidates (tiles sized to the
  // memory there is, the cap, the selection).
  void score() {
    tiles_ = scoring_tiles(config_);
    logger().info("similarity tiles in {}", describe_precision(config_.scoring.precision));
    // Smaller tiles, or a resources error (exit 5), within what the word vectors kept for it leave of the budget.
    const std::size_t held =
        sizeof(float) * static_cast<std::size_t>(source_.vectors.size() + target_.vectors.size());
    guard_scoring_memory(X_.vectors, Z_.vectors, config_, tiles_, full_evidence_ ? config_.ranking.top_m : 0,
                         held);
    result_.cap = final_cap(config_, result_.source_terms.size(), result_.target_terms.size(), group_.is_root());
    stats_.cap = result_.cap;
    result_.per_source = config_.ranking.top_m;
    // Rescoring may reorder: cut later.
    const std::size_t limit =
        uses_orthography(config_, full_evidence_) && config_.ranking.top_m > 0 ? 0 : result_.cap;
    if (config_.scoring.neighbourhood == Neighbourhood::terms) {
      // Neighbourhoods and selection in one pass over the similarities where the selection allows it.
      scored_ = score_terms(X_.vectors, Z_.vectors, config_, full_evidence_, limit, tiles_, group_);
    } else {
      const std::size_t n = config_.scoring.neighbourhood_words;
      NeighbourhoodMeans& means = scored_.means;
      means.source =
          knn_mean_similarity(X_.vectors, frequent_rows(target_, n, mapping_.target_transform, threads_),
                              config_.scoring.k, tiles_, group_);
      means.target =
          knn_mean_similarity(Z_.vectors, frequent_rows(source_, n, mapping_.source_transform, threads_),
                              config_.scoring.k, tiles_, group_);
      SelectionOptions selection;
      selection.top_m = config_.ranking.top_m;
      selection.mutual_m = config_.ranking.mutual_m;
      selection.limit = limit;
      scored_.candidates = select_csls_candidates(X_.vectors, Z_.vectors, means, selection, tiles_, group_);
    }
  }

  // Candidates from the target side (with the full evidence) and from the spellings (orthographic candidates).
  void add_other_candidates() {
    other_ = pipeline::add_other_candidates(config_, full_evidence_, result_.source_terms, result_.target_terms,
                                            X_, Z_, scored_, tiles_, group_, dictionary_.get(),
                                            corpora_ ? &corpora_->forms : nullptr);
  }

  // The candidates by term ids with their evidence: CSLS and cosine always, the rest as configured. What the
  // word-level and corpus evidence read comes back from disk when it was spilled.
  CandidateSet collect_evidence() {
    TERMALIGN_CHECK(!full_evidence_ || config_.input.src_corpus.empty() || fate_ != WordVectors::free,
                    "the corpus evidence needs the word vectors");
    share_corpora();
    WordEvidenceInputs words{source_words_,       target_words_,      seed_, source_, target_, mapping_,
                             source_composition_, target_composition_};
    words.restore_term_words = [this] {
      source_words_spill_.restore(source_words_.vectors.vectors);
      target_words_spill_.restore(target_words_.vectors.vectors);
    };
    words.dictionary = dictionary_.get();
    words.source_corpus = std::move(source_corpus_);
    words.target_corpus = std::move(target_corpus_);
    words.restore_word_vectors = [this] {
      source_spill_.restore(source_.vectors);
      target_spill_.restore(target_.vectors);
    };
    result_.decisions = decisions_;
    pipeline::collect_evidence(config_, full_evidence_, X_, Z_, scored_, other_, words, result_);
    decisions_ = result_.decisions;  // and what the evidence decided (the dictionary's role)
    return std::move(result_);
  }

  // With runs after this one (the ranked rounds), the corpora's statistics are gathered once: those of the runs
  // before, else gathered here (the corpus evidence would gather them itself) and kept for the runs after.
  void share_corpora() {
    if (!corpora_ || !full_evidence_ || config_.input.src_corpus.empty()) return;
    const CorpusEvidenceOptions options = corpus_evidence_options(config_);
    run_both([&] { corpus_statistics(Side::source, options); }, [&] { corpus_statistics(Side::target, options); },
             threads_);
  }

  // One side's corpus statistics: those this run holds, else those an earlier run of the same align() kept in
  // corpora_, else gathered now; kept in corpora_ for the runs after.
  const std::shared_ptr<const CorpusStatistics>& corpus_statistics(Side side,
                                                                   const CorpusEvidenceOptions& options) {
    const bool source = side == Side::source;
    std::shared_ptr<const CorpusStatistics>& statistics = source ? source_corpus_ : target_corpus_;
    std::shared_ptr<const CorpusStatistics>* kept =
        corpora_ ? &(source ? corpora_->source : corpora_->target) : nullptr;
    if (!statistics && kept) statistics = *kept;
    if (!statistics)
      statistics =
          side_corpus_statistics(options, side, (source ? result_.source_terms : result_.target_terms).terms);
    if (kept) *kept = statistics;
    return statistics;
  }

  // A rank of a group other than 0: the term lists, no candidates.
  CandidateSet without_evidence() {
    result_.decisions = decisions_;
    return std::move(result_);
  }

 private:
  struct MappedTerms {
    TermList source_terms, target_terms;
    ComposedTerms X, Z;
    std::size_t seed_pairs = 0, seed_pairs_usable = 0;
    RunDecisions decisions;
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
    key.mapping = config_.mapping;
    key.composition = config_.composition;
    std::string text = to_toml(key);
    for (const std::string* path :
         {&config_.input.src_vectors, &config_.input.tgt_vectors, &config_.input.src_terms,
          &config_.input.tgt_terms, &config_.input.seed, &config_.input.saved_mapping})
      text += "\n# " + file_signature(*path);
    return text;
  }

  void load_fixed_mapping() {
    mapping_ = load_mapping(config_.input.saved_mapping);
    if (mapping_.source_transform.rows() != source_.dim()) {
      throw_input_error(config_.input.saved_mapping, 2,
                        "the mapping has dimension " + std::to_string(mapping_.source_transform.rows()) +
                            " but the vectors have " + std::to_string(source_.dim()) + ".");
    }
    mapping_.source.apply_rows(source_.vectors, threads_);
    mapping_.target.apply_rows(target_.vectors, threads_);
    logger().info("loaded the mapping {} (normalisation {})", config_.input.saved_mapping,
                  to_string(mapping_.source.kind));
  }

  const AlignConfig& config_;
  RunDecisions& decisions_;  // what the run decided (the first run of an align(): the runs after read it)
  const int threads_;
  const bool fit_, full_evidence_;
  AlignmentSummary& stats_;
  const ProcessGroup& group_;
  VectorCache* cache_;
  const RankedSeed* ranked_;  // a ranked round's seed, else null
  SharedCorpora*
      corpora_;  // the corpora's statistics and the word forms of all the runs of one align(), else null
  CandidateSet result_;
  PairList seed_;
  std::shared_ptr<const Dictionary> dictionary_;  // --dictionary, read with the inputs
  // The corpora's statistics gathered before the vectors (gather_corpora_for_gzipped_models), else null.
  std::shared_ptr<const CorpusStatistics> source_corpus_, target_corpus_;
  LoadOptions source_options_, target_options_;
  // config_.composition for each list over its vectors (closed_compounds_for), set by load_vectors.
  CompositionOptions source_composition_, target_composition_;
  Embeddings source_, target_;
  Mapping mapping_;
  ComposedTerms X_, Z_;
  bool fate_chosen_ = false;
  WordVectors fate_ = WordVectors::keep;
  TermWords source_words_, target_words_;  // with the full evidence, from map_and_compose
  TileOptions tiles_;
  CslsSelection scored_;
  OtherCandidates other_;
  detail::SpilledMatrix source_spill_, target_spill_;  // the word vectors during the scoring, when large
  detail::SpilledMatrix source_words_spill_, target_words_spill_;  // the term words' vectors, likewise
};

}  // namespace

CandidateSet scheduled_candidates(const AlignConfig& config, RunDecisions& decisions, bool full_evidence,
                                  AlignmentSummary& stats, const ProcessGroup& group, VectorCache* cache,
                                  const RankedSeed* ranked, SharedCorpora* corpora) {
  config.validate();
  check_before_work(config);
  const auto start = std::chrono::steady_clock::now();
  Scheduler run(config, decisions, full_evidence, stats, group, cache, ranked, corpora);
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

}  // namespace termalign::pipeline
