// One run, one answer: for a seed lexicon, an induced seed (its ranked rounds and their mean), a dictionary
// without a seed lexicon and gzipped fastText models with corpora, align()'s list is the Aligner's steps' list,
// every --explain score is the list's, and the configuration a run writes gives its bytes again. (The Python
// module's list: python/tests/test_termalign.py; MPI runs on 2 and 3 ranks: scripts/test_mpi.sh.)
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "aligner_steps.h"
#include "captured_log.h"
#include "pipeline/fusion.h"
#include "scratch_file.h"
#include "shared_data.h"
#include "termalign/aligner.h"
#include "termalign/lexicon.h"

using namespace termalign;

namespace {

const std::string kWaysRoot = TERMALIGN_SOURCE_DIR;

std::string ways_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `from` gzipped into `to` (the gzip command, as a participant's download is made).
void ways_gzip_copy(const std::string& from, const std::string& to) {
  REQUIRE(std::system(("gzip -c '" + from + "' > '" + to + "'").c_str()) == 0);
}

// The four ways the seed and the vectors come: a seed lexicon; induced (--seed auto: the ranked rounds and their
// mean); the sample's seed lexicon read as a dictionary, without a seed lexicon (its frequent pairs seed the map,
// its entries are evidence); gzipped .bin models with the sample's corpora (read before the one pass).
struct RunWay {
  std::string name;
  AlignConfig config;
};

std::vector<RunWay> running_ways(const std::string& scratch) {
  AlignConfig lexicon = termalign_tests::sample_inputs();
  lexicon.scoring.threads = 2;
  AlignConfig induced = lexicon;
  induced.input.seed = kAutoSeed;
  AlignConfig dictionary = induced;
  dictionary.input.dictionary = {kWaysRoot + "/data/sample/seed-en-fr.txt"};
  AlignConfig gzipped = lexicon;
  ways_gzip_copy(kWaysRoot + "/models/sample/en.bin", scratch + "/en.bin.gz");
  ways_gzip_copy(kWaysRoot + "/models/sample/fr.bin", scratch + "/fr.bin.gz");
  gzipped.input.src_vectors = scratch + "/en.bin.gz";
  gzipped.input.tgt_vectors = scratch + "/fr.bin.gz";
  gzipped.input.src_corpus = kWaysRoot + "/data/sample/corpus-en.txt";
  gzipped.input.tgt_corpus = kWaysRoot + "/data/sample/corpus-fr.txt";
  return {{"seed lexicon", lexicon}, {"induced seed", induced}, {"dictionary", dictionary}, {"bin.gz", gzipped}};
}

// The lines of a TSV file, each split at its tabs.
std::vector<std::vector<std::string>> ways_tsv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(ways_file_bytes(path));
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields;
    std::istringstream parts(line);
    for (std::string field; std::getline(parts, field, '\t');) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

}  // namespace

TEST_CASE("Every way of running gives align()'s list: the steps, --explain and the written configuration",
          "[align][aligner][explain]") {
  const std::string scratch =
      std::filesystem::path(termalign_tests::scratch_file("run-ways", ".kept", "")).parent_path().string();
  for (RunWay& way : running_ways(scratch)) {
    SECTION(way.name) {
      INFO(way.name);
      AlignConfig config = way.config;
      const std::vector<RankedPair> aligned = align_terms(config);
      REQUIRE(aligned.size() > 100);

      // The steps.
      Aligner steps(config);
      std::size_t runs = 0;
      const std::vector<RankedPair> stepped = termalign_tests::run_stages(steps, &runs);
      CHECK(runs == (way.name == "induced seed" ? 3 : 1));
      termalign_tests::require_same_list(stepped, aligned);

      // The written run: its scores and --explain's.
      config.output.out = scratch + "/" + way.name + ".tsv";
      config.output.scores = scratch + "/" + way.name + ".scores.tsv";
      config.output.explain = scratch + "/" + way.name + ".explain.tsv";
      run_align(config);
      const auto scores = ways_tsv_rows(config.output.scores), explained = ways_tsv_rows(config.output.explain);
      REQUIRE(scores.size() == aligned.size());
      REQUIRE(explained.size() == aligned.size() + 1);  // a header
      REQUIRE(explained[0][3] == "score");
      const bool fused = way.name == "induced seed";
      CHECK((explained[0][4] == "run_score:1") == fused);
      // The re-ranker's bias and contributions, and the agreement order's shift: they sum to the last run's own
      // score.
      std::vector<std::size_t> parts;
      for (std::size_t column = 0; column < explained[0].size(); ++column) {
        const std::string& name = explained[0][column];
        if (name == "reranker_bias" || name.rfind("contribution:", 0) == 0 || name == "form_order_shift")
          parts.push_back(column);
      }
      REQUIRE(parts.size() > 10);
      const std::size_t own = fused ? 6 : 3;  // run_score:3, or score
      CHECK(explained[0][own] == (fused ? "run_score:3" : "score"));
      for (std::size_t i = 0; i < aligned.size(); ++i) {
        INFO("pair " << i);
        REQUIRE(explained[i + 1][1] == aligned[i].source);
        REQUIRE(explained[i + 1][2] == aligned[i].target);
        // The list's score, as the list has it (the shortest text that reads back to the float).
        CHECK(std::strtof(explained[i + 1][3].c_str(), nullptr) == aligned[i].score);
        CHECK(std::abs(std::strtod(scores[i][2].c_str(), nullptr) - aligned[i].score) <= 5e-7);
        double sum = 0;
        for (const std::size_t column : parts) sum += std::strtod(explained[i + 1][column].c_str(), nullptr);
        CHECK(sum == Approx(std::strtod(explained[i + 1][own].c_str(), nullptr)).margin(1e-4));
        if (fused) {  // the mean of the three runs' own scores
          const double mean = (std::strtod(explained[i + 1][4].c_str(), nullptr) +
                               std::strtod(explained[i + 1][5].c_str(), nullptr) +
                               std::strtod(explained[i + 1][6].c_str(), nullptr)) /
                              3;
          CHECK(mean == Approx(aligned[i].score).margin(1e-5));
        }
      }
      // The resolved configuration: what the run decided at its end, and the same bytes again.
      const std::string resolved = ways_file_bytes(config.output.out + ".config.toml");
      CHECK_THAT(resolved, Catch::Contains("# What the run decided"));
      if (way.name == "dictionary") CHECK_THAT(resolved, Catch::Contains("# seed = \"dictionary\""));
      if (fused) CHECK_THAT(resolved, Catch::Contains("# ranked_rounds = 2"));
      AlignConfig reloaded;
      load_config(config.output.out + ".config.toml", reloaded);
      reloaded.output.out = scratch + "/" + way.name + ".again.tsv";
      reloaded.output.scores.clear();
      reloaded.output.explain.clear();
      run_align(reloaded);
      CHECK(ways_file_bytes(reloaded.output.out) == ways_file_bytes(config.output.out));
    }
  }
}

TEST_CASE("A dictionary's seed: its models and seed evidence as its features decide, one decision for all stages",
          "[align][dictionary]") {
  // The sample's seed lexicon as a dictionary, without a seed lexicon: its frequent pairs seed the map, and the
  // seed evidence reads them. With its features (it translates 49 % of the source terms' words) the dictionary
  // models rank the run; left out (a coverage asked of 100 %), the seedless ones. align() and the steps decide
  // alike.
  for (const double min_coverage : {0.25, 1.0}) {
    AlignConfig config = termalign_tests::sample_inputs();
    config.scoring.threads = 2;
    config.input.seed = kAutoSeed;
    config.input.dictionary = {kWaysRoot + "/data/sample/seed-en-fr.txt"};
    config.input.dictionary_min_coverage = min_coverage;
    const bool features = min_coverage < 0.5;
    INFO("dictionary_min_coverage " << min_coverage);
    CapturedLog log;
    const CandidateSet candidates = Aligner(config).candidates();
    CHECK(candidates.decisions.seed == RunDecisions::Seed::dictionary);
    CHECK(candidates.decisions.dictionary_coverage == Approx(0.49).margin(0.01));
    CHECK(candidates.decisions.dictionary_features == features);
    CHECK(candidates.decisions.seedless_models == !features);
    CHECK(candidates.decisions.reranker ==
          (features ? "bundled models/reranker-enfr-dict.txt" : "bundled models/reranker-enfr-seedless.txt"));
    CHECK(log.lines_with("info", "the seed evidence reads").empty());  // not the mapping's own lexicon
    Aligner steps(config);
    termalign_tests::require_same_list(termalign_tests::run_stages(steps), align_terms(config));
  }
}

TEST_CASE("The mean over the runs: a run that lacked a candidate counts its lowest score for the source term",
          "[align][fusion]") {
  // Two earlier runs and the last one, over two source and three target terms.
  const auto run = [](std::vector<std::uint32_t> sources, std::vector<std::uint32_t> targets) {
    CandidateSet candidates;
    candidates.source_terms.terms = {"a", "b"};
    candidates.target_terms.terms = {"x", "y", "z"};
    candidates.evidence.source = std::move(sources);
    candidates.evidence.target = std::move(targets);
    return candidates;
  };
  pipeline::RunHistory history;
  const CandidateSet first = run({0, 0, 1}, {0, 1, 2});  // (a,x) 3, (a,y) 1, (b,z) -2
  Eigen::VectorXd first_scores(3);
  first_scores << 3, 1, -2;
  history.add(first, first_scores);
  const CandidateSet second = run({0}, {2});  // (a,z) 0.5; nothing for b
  Eigen::VectorXd second_scores(1);
  second_scores << 0.5;
  history.add(second, second_scores);
  CandidateSet last = run({0, 0, 1}, {0, 2, 1});  // (a,x), (a,z), (b,y)
  history.attach(last, 2);
  REQUIRE(last.earlier_scores.size() == 2);
  // The first run: (a,x) its own 3; (a,z) lacked: a's lowest there, 1; (b,y) lacked: b's lowest, -2.
  CHECK(last.earlier_scores[0] == std::vector<float>{3, 1, -2});
  // The second: (a,x) lacked: a's lowest, 0.5; (a,z) its own 0.5; (b,y): b had none, the run's lowest, 0.5.
  CHECK(last.earlier_scores[1] == std::vector<float>{0.5f, 0.5f, 0.5f});
  // The final score is the mean with the last run's own (here the unsupervised score: CSLS).
  AlignConfig config;
  config.input.reranker = kNoReranker;
  config.orthography.weight = 0;
  last.evidence.csls = {0.0f, 3.5f, -1.0f};
  last.evidence.cosine = {0, 0, 0};
  const Eigen::VectorXd fused = candidate_scores(last, config);
  CHECK(fused(0) == Approx((3 + 0.5 + 0.0) / 3));
  CHECK(fused(1) == Approx((1 + 0.5 + 3.5) / 3));
  CHECK(fused(2) == Approx((-2 + 0.5 - 1.0) / 3));
}
