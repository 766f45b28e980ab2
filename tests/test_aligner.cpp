// The Aligner's stages against its scheduled run, the final ranking and the explanation of a list.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "aligner_steps.h"
#include "captured_log.h"
#include "pipeline/explain.h"
#include "rerank/reranker.h"
#include "shared_data.h"
#include "termalign/aligner.h"
#include "termalign/lexicon.h"
#include "text/spelling.h"

using namespace termalign;
using termalign_tests::require_same_list;
using termalign_tests::run_stages;

namespace {

// The sample's inputs, every other option at its default (the bundled re-ranker, orthography on).
AlignConfig sample_inputs() {
  AlignConfig config = termalign_tests::sample_inputs();
  config.scoring.threads = 2;
  return config;
}

// Two source and three target terms with hand-set evidence: a CandidateSet for the ranking's unit tests.
CandidateSet small_candidates() {
  CandidateSet candidates;
  candidates.source_terms.terms = {"barre d'outils", "fichier"};
  candidates.target_terms.terms = {"barre d'outils", "fichier", "dossier"};
  CandidateEvidence& evidence = candidates.evidence;
  evidence.source = {0, 0, 1, 1};
  evidence.target = {0, 2, 1, 2};
  evidence.csls = {0.30f, 0.35f, 0.50f, 0.20f};
  evidence.cosine = {0.60f, 0.55f, 0.70f, 0.45f};
  evidence.orthographic = {1.0f, 0.1f, 0.0f, 0.2f};
  candidates.cap = 10;
  candidates.per_source = 0;
  candidates.source_means = {0.4f, std::numeric_limits<float>::quiet_NaN()};
  candidates.target_means = {0.5f, 0.45f, 0.3f};
  return candidates;
}

AlignConfig unsupervised(double orthographic_weight) {
  AlignConfig config;
  config.input.reranker = kNoReranker;
  config.orthography.weight = orthographic_weight;
  return config;
}

}  // namespace

TEST_CASE("The Aligner's stages with the default options give align()'s list pair for pair", "[align][aligner]") {
  Aligner aligner(sample_inputs());
  const std::vector<RankedPair> stages = run_stages(aligner);
  REQUIRE(stages.size() > 100);
  require_same_list(stages, aligner.align());
  // And without the re-ranker and the orthography, where the list is another.
  aligner.config().input.reranker = kNoReranker;
  aligner.config().orthography.weight = 0;
  aligner.config().orthography.candidates = 0;
  const std::vector<RankedPair> plain = run_stages(aligner);
  require_same_list(plain, aligner.align());
  const auto pairs_of = [](const std::vector<RankedPair>& list) {
    std::vector<std::string> pairs;
    for (const RankedPair& pair : list) pairs.push_back(pair.source + "\t" + pair.target);
    return pairs;
  };
  CHECK(pairs_of(plain) != pairs_of(stages));
}

TEST_CASE("The stages give the re-ranker its evidence, and the plain run none of it", "[align][aligner]") {
  Aligner aligner(sample_inputs());
  const std::vector<std::string> sources = read_term_list(aligner.config().input.src_terms).terms;
  const std::vector<std::string> targets = read_term_list(aligner.config().input.tgt_terms).terms;
  aligner.fit_mapping();
  const ComposedTerms X = aligner.compose(sources, Side::source);
  const ComposedTerms Z = aligner.compose(targets, Side::target);
  CslsSelection scored = aligner.score(X.vectors, Z.vectors);
  REQUIRE(scored.has_reverse);  // the re-ranker reads each target's best sources
  const std::size_t selected = scored.candidates.size();
  const CandidateSet full = aligner.collect_evidence(sources, targets, X, Z, scored);
  CHECK(full.evidence.size() > selected);  // the targets' own and the orthographic candidates
  CHECK(full.evidence.reverse_rank.size() == full.evidence.size());
  CHECK(full.evidence.orthographic.size() == full.evidence.size());
  CHECK(full.evidence.one_to_one.size() == full.evidence.size());
  CHECK(full.evidence.source_parts.size() == sources.size());
  CHECK(full.cap == submission_cap(sources.size(), targets.size()));
  CHECK(full.per_source == aligner.config().ranking.top_m);
  REQUIRE(full.source_means.size() == sources.size());
  CHECK(full.source_means[X.term_ids[0]] == scored.means.source(0));

  aligner.config().input.reranker = kNoReranker;
  aligner.config().orthography.weight = 0;
  aligner.config().orthography.candidates = 0;
  aligner.config().ranking.cap = 100;
  CslsSelection plain_scored = aligner.score(X.vectors, Z.vectors);
  CHECK_FALSE(plain_scored.has_reverse);
  const std::size_t plain_selected = plain_scored.candidates.size();
  const CandidateSet plain = aligner.collect_evidence(sources, targets, X, Z, std::move(plain_scored));
  CHECK(plain.evidence.size() == plain_selected);
  CHECK(plain.evidence.reverse_rank.empty());
  CHECK(plain.evidence.orthographic.empty());
  CHECK(plain.cap == 100);
  CHECK(aligner.rank(plain).size() == 100);
}

TEST_CASE("The stages refuse candidates without term ids and a seed they cannot fit on", "[align][aligner]") {
  Aligner aligner(sample_inputs());
  aligner.fit_mapping();
  const ComposedTerms X = aligner.compose({"file", "folder"}, Side::source);
  const ComposedTerms Z = aligner.compose({"fichier", "dossier"}, Side::target);
  CslsSelection scored = aligner.score(X.vectors, Z.vectors);
  REQUIRE_FALSE(scored.candidates.empty());
  scored.candidates.front().source = static_cast<std::uint32_t>(X.term_ids.size());
  CHECK_THROWS_WITH(aligner.collect_evidence({"file", "folder"}, {"fichier", "dossier"}, X, Z, scored),
                    Catch::Contains("no term id"));
  // A seed the vectors mostly do not know: the stage warns about it as align() does, and too few pairs are an
  // error naming the seed.
  PairList seed = read_pairs(aligner.config().input.seed, PairFileKind::seed_lexicon);
  const std::size_t known = seed.pairs.size();
  for (std::size_t i = 0; i < 4 * known; ++i)
    seed.pairs.emplace_back("qqx" + std::to_string(i), "zzy" + std::to_string(i));
  seed.path = "mostly-unknown.txt";
  {
    CapturedLog log;
    aligner.fit_mapping(&seed);
    CHECK(log.warnings_with("mostly-unknown.txt: only") == 1);
  }
  aligner.config().mapping.min_seed_pairs = seed.pairs.size();
  CHECK_THROWS_WITH(aligner.fit_mapping(&seed),
                    Catch::Contains("mostly-unknown.txt") && Catch::Contains("min_seed_pairs"));
}

TEST_CASE("Without a re-ranker the final score is CSLS plus the orthographic bonus", "[ranking]") {
  const CandidateSet candidates = small_candidates();
  const Eigen::VectorXd weighted = candidate_scores(candidates, unsupervised(0.5));
  REQUIRE(weighted.size() == 4);
  for (Eigen::Index i = 0; i < 4; ++i) {
    const auto c = static_cast<std::size_t>(i);
    CHECK(weighted(i) == Approx(candidates.evidence.csls[c] + 0.5 * candidates.evidence.orthographic[c]));
  }
  // Weight 0 leaves out the orthographic similarity, even where there is none to read.
  CandidateSet without_spelling = candidates;
  without_spelling.evidence.orthographic.clear();
  const Eigen::VectorXd plain = candidate_scores(without_spelling, unsupervised(0));
  for (Eigen::Index i = 0; i < 4; ++i) CHECK(plain(i) == candidates.evidence.csls[static_cast<std::size_t>(i)]);
}

TEST_CASE("The final ranking orders by score, keeps per_source pairs per source and stops at the cap",
          "[ranking]") {
  CandidateSet candidates = small_candidates();
  const AlignConfig config = unsupervised(0.5);
  // Scores 0.80, 0.40, 0.50, 0.30: the orthographic bonus puts the identical pair first.
  std::vector<RankedIndex> ranked = final_ranking(candidates, config);
  REQUIRE(ranked.size() == 4);
  CHECK((ranked[0].source == 0 && ranked[0].target == 0));
  CHECK((ranked[1].source == 1 && ranked[1].target == 1));
  CHECK((ranked[2].source == 0 && ranked[2].target == 2));
  CHECK((ranked[3].source == 1 && ranked[3].target == 2));
  CHECK(ranked[0].score == Approx(0.8f));
  candidates.per_source = 1;
  ranked = final_ranking(candidates, config);
  REQUIRE(ranked.size() == 2);
  CHECK((ranked[1].source == 1 && ranked[1].target == 1));
  candidates.per_source = 0;
  candidates.cap = 3;
  CHECK(final_ranking(candidates, config).size() == 3);
  // Tied scores: by source id, then target id, whatever the order of the candidates.
  Eigen::VectorXd tied = Eigen::VectorXd::Constant(4, 0.25);
  candidates.cap = 10;
  ranked = rank_candidate_indices(candidates, tied, 2);
  REQUIRE(ranked.size() == 4);
  for (std::size_t i = 1; i < ranked.size(); ++i) {
    CHECK((ranked[i - 1].source < ranked[i].source ||
           (ranked[i - 1].source == ranked[i].source && ranked[i - 1].target < ranked[i].target)));
  }
  tied(2) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(rank_candidate_indices(candidates, tied),
                    Catch::Contains("candidate 2") && Catch::Contains("is NaN"));
}

TEST_CASE("An explanation gives each ranked pair the parts of its score", "[explain]") {
  CandidateSet candidates = small_candidates();
  const AlignConfig config = unsupervised(0.5);
  const std::vector<RankedIndex> ranked = final_ranking(candidates, config);
  const Explanation explanation = explain_ranking(candidates, ranked, config);
  const std::vector<std::string> columns{
      "score", "csls", "cosine", "r_T", "r_S", "orthographic", "orthographic_bonus"};
  CHECK(explanation.columns == columns);
  REQUIRE(explanation.values.rows() == static_cast<Eigen::Index>(ranked.size()));
  for (std::size_t r = 0; r < ranked.size(); ++r) {
    INFO("rank " << r + 1);
    const auto row = explanation.values.row(static_cast<Eigen::Index>(r));
    CHECK(explanation.sources[r] == candidates.source_terms.terms[ranked[r].source]);
    CHECK(explanation.targets[r] == candidates.target_terms.terms[ranked[r].target]);
    CHECK(row(0) == ranked[r].score);
    CHECK(row(0) == Approx(row(1) + row(6)));  // score = CSLS + bonus
    CHECK(row(6) == Approx(0.5 * row(5)));
    CHECK(row(4) == candidates.target_means[ranked[r].target]);
    CHECK(std::isnan(row(3)) == (ranked[r].source == 1));  // the source without a vector
  }
  // Without the spelling evidence the orthographic similarity is computed from the two terms.
  CandidateSet without_spelling = candidates;
  without_spelling.evidence.orthographic.clear();
  const Explanation computed = explain_ranking(without_spelling, ranked, config);
  CHECK(computed.values(0, 5) == static_cast<float>(orthographic_similarity("barre d'outils", "barre d'outils",
                                                                            config.orthography.transliterate)));
  const std::string text = format_explanation(explanation);
  CHECK(text.rfind("rank\tsource\ttarget\tscore\tcsls\tcosine\tr_T\tr_S\torthographic\torthographic_bonus\n", 0) ==
        0);
  CHECK(text.find("\n1\tbarre d'outils\tbarre d'outils\t0.8\t0.3\t0.6\t0.4\t0.5\t1\t0.5\n") != std::string::npos);
  CHECK(text.find("\tnan\t") != std::string::npos);
}

TEST_CASE("An explanation with the re-ranker: the bias plus the contributions is the score", "[explain]") {
  Aligner aligner(sample_inputs());
  const CandidateSet candidates = aligner.candidates();
  const std::vector<RankedIndex> ranked = aligner.rank(candidates);
  const Explanation explanation = explain_ranking(candidates, ranked, aligner.config());
  REQUIRE(explanation.columns.size() > 8);
  CHECK(explanation.columns[7] == "reranker_bias");
  CHECK(explanation.columns.back() == "form_order_shift");
  for (Eigen::Index r = 0; r < std::min<Eigen::Index>(explanation.values.rows(), 50); ++r) {
    const auto row = explanation.values.row(r);
    double sum = row(7) + row(row.size() - 1);  // the bias, the agreement order's shift
    for (Eigen::Index j = 9; j + 1 < row.size(); j += 2) sum += row(j);
    CHECK(sum == Approx(row(0)).margin(1e-4));
    CHECK(row(6) == 0);  // the re-ranker weighs the spelling itself
  }
}
