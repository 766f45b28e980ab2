// Checks of a run's inputs and outputs, before any work and against the loaded vectors.
#include <spdlog/fmt/fmt.h>

#include <filesystem>

#include "io/sanity.h"
#include "mapping/composition.h"
#include "pipeline/stages.h"
#include "rerank/reranker.h"
#include "termalign/error.h"
#include "termalign/logging.h"

namespace termalign::pipeline {

namespace {

// Warns when under half of a term list's terms are made of the vectors' words, naming the likely cause: the lists
// swapped (their words are more often the other language's) or vectors of another language.
// `*_compounds`: whether closed compounds of known words count as known in that list (those it splits).
void check_terms_against_vectors(const TermList& source_terms, const TermList& target_terms,
                                 const Embeddings& source, const Embeddings& target, bool source_compounds,
                                 bool target_compounds) {
  struct Side {
    const char* name;
    const TermList& terms;
    const Embeddings& own;
    const Embeddings& other;
    bool compounds;
  };
  for (const Side& side : {Side{"source", source_terms, source, target, source_compounds},
                           Side{"target", target_terms, target, source, target_compounds}}) {
    const double own = known_term_share(side.terms, side.own, kKnownShareSample, side.compounds);
    if (own >= 0.5) continue;
    const double other = known_term_share(side.terms, side.other, kKnownShareSample, side.compounds);
    // Swapped lists: the other vectors know most of the terms, and clearly more of them.
    const bool swapped = other >= 0.5 && other > 2 * own;
    const std::string cause =
        swapped ? fmt::format(
                      "their words are more often words of the other language's vectors {} ({:.0f} %): "
                      "are --src-terms and --tgt-terms swapped?",
                      side.other.path, 100 * other)
        : side.own.has_subwords()
            ? fmt::format(
                  "the others get vectors from their character n-grams ({} is a .bin model), weaker ones: "
                  "are these vectors of the term list's language (and of its case)?",
                  side.own.path)
            : fmt::format("are the vectors {} of the term list's language (and of its case)?", side.own.path);
    logger().warn("{}: only {:.0f} % of the {} terms are made of words of the vectors {}; {}", side.terms.path,
                  100 * own, side.name, side.own.path, cause);
  }
}

}  // namespace

// The inputs checked against the loaded vectors (sanity.h, and the term lists above); an induced seed is made
// later, from the normalised vectors (seed_stage). `*_compounds`: whether each list's closed compounds are split
// (closed_compounds_for), so count as known words.
void check_inputs_against_vectors(const RunDecisions& decisions, bool fit, bool allow_reversed,
                                  const TermList& source_terms, const TermList& target_terms,
                                  const Embeddings& source, const Embeddings& target, const PairList& seed,
                                  bool source_compounds, bool target_compounds) {
  if (fit && decisions.seed != RunDecisions::Seed::induced)
    check_seed_against_vectors(seed, source, target, allow_reversed);
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
  if (!is_induced_seed(input.seed)) inputs.push_back({"`seed`", input.seed});
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

}  // namespace termalign::pipeline
