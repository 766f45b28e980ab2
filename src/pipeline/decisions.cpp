// What a run decides on the way (RunDecisions): the part its configuration fixes before any work, and the text
// that writes all of it with the run.
#include <sstream>

#include "pipeline/stages.h"
#include "rerank/reranker.h"
#include "termalign/logging.h"

namespace termalign {

const char* to_string(RunDecisions::Seed seed) {
  switch (seed) {
    case RunDecisions::Seed::lexicon:
      return "lexicon";
    case RunDecisions::Seed::saved_mapping:
      return "saved mapping";
    case RunDecisions::Seed::induced:
      return "induced";
    case RunDecisions::Seed::dictionary:
      return "dictionary";
  }
  return "?";
}

namespace pipeline {

RunDecisions planned_decisions(const AlignConfig& config) {
  RunDecisions decisions;
  const InputOptions& in = config.input;
  if (!in.saved_mapping.empty()) {
    decisions.seed = RunDecisions::Seed::saved_mapping;
  } else if (is_induced_seed(in.seed)) {
    decisions.seed = RunDecisions::Seed::induced;
  } else if (in.seed.empty() && !in.dictionary.empty()) {
    decisions.seed = RunDecisions::Seed::dictionary;
  }
  decisions.dictionary = !in.dictionary.empty();
  // The ranked rounds read the seed off the run's own re-ranked list; a dictionary's runs fit on its pairs.
  if (decisions.seed == RunDecisions::Seed::induced && uses_reranker(config) && !decisions.dictionary)
    decisions.ranked_rounds = config.mapping.seed_ranked_rounds;
  decisions.fusion = decisions.ranked_rounds > 0 && config.mapping.seed_ranked_fusion;
  decisions.seedless_models = decisions.seed == RunDecisions::Seed::induced;
  return decisions;
}

void decide_dictionary_seed(RunDecisions& decisions) {
  decisions.seed = RunDecisions::Seed::dictionary;
  decisions.seedless_models = !decisions.dictionary_features;
}

void decide_dictionary_features(RunDecisions& decisions, double coverage, double min_coverage) {
  decisions.dictionary_coverage = coverage;
  decisions.dictionary_features = coverage >= min_coverage;
  if (decisions.dictionary_features) {
    // No dictionary model is trained without a seed lexicon: the dictionary's models rank the run.
    if (decisions.seedless_models)
      logger().info(
          "the dictionaries' features rank the run: the models trained with a dictionary (and a seed "
          "lexicon) apply, not the seedless ones");
    decisions.seedless_models = false;
  }
}

bool reads_own_lexicon(const RunDecisions& decisions) { return decisions.seed == RunDecisions::Seed::induced; }

std::string format_decisions(const RunDecisions& decisions) {
  std::ostringstream text;
  text << "\n# What the run decided (not options: the same configuration on the same inputs decides the same)\n"
       << "# seed = \"" << to_string(decisions.seed) << "\"\n"
       << "# ranked_rounds = " << decisions.ranked_rounds << "\n"
       << "# mean_over_runs = " << (decisions.fusion ? "true" : "false") << "\n";
  if (decisions.dictionary && decisions.dictionary_coverage >= 0) {
    text << "# dictionary_coverage = " << decisions.dictionary_coverage << "\n"
         << "# dictionary_features = " << (decisions.dictionary_features ? "true" : "false") << "\n";
  }
  if (!decisions.reranker.empty()) text << "# reranker = \"" << decisions.reranker << "\"\n";
  return text.str();
}

}  // namespace pipeline
}  // namespace termalign
