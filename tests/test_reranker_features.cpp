// The re-ranker's features: the feature table, the features' invariance and agreement with brute force, the
// first stage's columns and a two-stage model over them (the learners and model files: test_reranker.cpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "pipeline/explain.h"
#include "pipeline/reranker_training.h"
#include "rerank/boosted_trees.h"
#include "rerank/features.h"
#include "rerank/reranker.h"
#include "termalign/evaluation.h"

using namespace termalign;

namespace {

// Candidate i's target rank, spelling identity, word counts and lengths: fixed patterns of its index.
void add_term_sizes(CandidateEvidence& evidence, std::size_t i) {
  evidence.reverse_rank.push_back(static_cast<float>(i % 12));
  evidence.identical.push_back(i % 50 == 0);
  evidence.source_words.push_back(static_cast<std::uint16_t>(1 + i % 3));
  evidence.target_words.push_back(static_cast<std::uint16_t>(1 + i % 2));
  evidence.source_length.push_back(static_cast<std::uint16_t>(5 + i % 9));
  evidence.target_length.push_back(static_cast<std::uint16_t>(6 + i % 7));
}

// `n` candidates of distinct pairs over a few terms with every evidence column the features read (the corpus
// columns with `corpora`, the dictionary's with `dictionary`), at random in [-0.2, 0.8].
CandidateEvidence full_evidence(std::size_t n, std::uint32_t seed, bool corpora, bool dictionary = false) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-0.2f, 0.8f);
  CandidateEvidence evidence;
  for (std::size_t i = 0; i < n; ++i) {
    evidence.source.push_back(static_cast<std::uint32_t>(i % 37));
    evidence.target.push_back(static_cast<std::uint32_t>(i % 41));
    for (auto* column : {&evidence.csls, &evidence.cosine, &evidence.word_alignment, &evidence.one_to_one,
                         &evidence.translated_share, &evidence.edge_agreement, &evidence.seed_share,
                         &evidence.seed_conflict, &evidence.orthographic})
      column->push_back(uniform(generator));
    if (corpora) {
      for (auto* column :
           {&evidence.source_log_frequency, &evidence.target_log_frequency, &evidence.source_log_sentences,
            &evidence.target_log_sentences, &evidence.source_frequency_z, &evidence.target_frequency_z,
            &evidence.context_similarity})
        column->push_back(uniform(generator));
    }
    if (dictionary) {
      for (auto* column : {&evidence.dictionary_entry, &evidence.dictionary_share, &evidence.dictionary_conflict})
        column->push_back(uniform(generator));
    }
    add_term_sizes(evidence, i);
  }
  return evidence;
}

}  // namespace

TEST_CASE("the feature table: unique names, each computed in its group, and the columns explain writes",
          "[reranker]") {
  std::set<std::string_view> names;
  std::vector<std::string> evidence_names, stage_names;
  for (const detail::Feature& feature : detail::feature_list()) {
    INFO(feature.name);
    CHECK(names.insert(feature.name).second);
    CHECK(feature_group(std::string(feature.name)) == detail::to_string(feature.group));
    (feature.group == detail::FeatureGroup::first_stage ? stage_names : evidence_names).emplace_back(feature.name);
  }
  CHECK(feature_group("csls").empty());
  // The full evidence gives every feature but the first stage's, in the table's order; the first stage gives the
  // rest. Without the corpora, no corpus feature; without the dictionary, none of its features; without the
  // compositional evidence, the base group alone.
  CandidateEvidence evidence = full_evidence(300, 3, true, true);
  CHECK(candidate_feature_table(evidence, 2).names == evidence_names);
  for (const std::string& name : candidate_feature_table(full_evidence(300, 3, true), 2).names)
    CHECK(feature_group(name) != "dictionary");
  CHECK(stage_feature_names() == stage_names);
  evidence = full_evidence(300, 3, false);
  const FeatureTable table = candidate_feature_table(evidence, 2);
  CHECK(first_corpus_feature(table.names) == nullptr);
  CHECK(table.has("comp_seed_conflict"));
  CandidateEvidence base = evidence;
  base.one_to_one.clear();
  for (const std::string& name : candidate_feature_table(base, 1).names) CHECK(feature_group(name) == "base");
  // Explain writes, for each feature of the model (the bundled one without corpora), its table column's value.
  CandidateSet candidates;
  for (std::uint32_t term = 0; term < 41; ++term) {
    candidates.source_terms.terms.push_back("source " + std::to_string(term));
    candidates.target_terms.terms.push_back("target " + std::to_string(term));
  }
  candidates.evidence = evidence;
  std::vector<RankedIndex> ranked;
  for (std::size_t i = 0; i < evidence.size(); i += 7)
    ranked.push_back({evidence.source[i], evidence.target[i], static_cast<float>(i)});
  const AlignConfig config;
  const Explanation explanation = explain_ranking(candidates, ranked, config);
  const Reranker model = bundled_reranker(false);
  const FeatureTable columns = with_stage_features(model, evidence, table, "bundled", 1);
  const auto first = std::find(explanation.columns.begin(), explanation.columns.end(), "reranker_bias");
  REQUIRE(first != explanation.columns.end());
  const auto at = static_cast<std::size_t>(first - explanation.columns.begin()) + 1;
  REQUIRE(explanation.columns.size() == at + 2 * model.features.size() + 1);
  CHECK(explanation.columns.back() == "form_order_shift");
  for (std::size_t j = 0; j < model.features.size(); ++j) {
    const std::string& name = model.features[j];
    INFO(name);
    REQUIRE(detail::find_feature(name) != nullptr);
    CHECK(explanation.columns[at + 2 * j] == "feature:" + name);
    CHECK(explanation.columns[at + 2 * j + 1] == "contribution:" + name);
    const auto column = std::find(columns.names.begin(), columns.names.end(), name) - columns.names.begin();
    for (std::size_t r = 0; r < ranked.size(); ++r)
      CHECK(explanation.values(Eigen::Index(r), Eigen::Index(at + 2 * j)) ==
            columns.values(Eigen::Index(7 * r), column));
  }
}

TEST_CASE("features do not change when a vector space scores on another scale", "[reranker]") {
  // Two runs whose similarities differ by an increasing affine map (another vector space, another scale) give the
  // same features: quantiles among the candidates, margins in units of the spread, ranks.
  std::mt19937 generator(7);
  std::uniform_real_distribution<float> uniform(-0.2f, 0.8f);
  std::uniform_int_distribution<std::uint32_t> term(0, 40);
  CandidateEvidence evidence;
  const std::size_t n = 500;
  for (std::size_t i = 0; i < n; ++i) {
    evidence.source.push_back(term(generator));
    evidence.target.push_back(term(generator));
    for (auto* column : {&evidence.csls, &evidence.cosine, &evidence.word_alignment, &evidence.one_to_one,
                         &evidence.translated_share, &evidence.edge_agreement, &evidence.seed_share,
                         &evidence.seed_conflict, &evidence.orthographic})
      column->push_back(uniform(generator));
    evidence.csls.back() = std::round(evidence.csls.back() * 20) / 20;  // ties share their quantile
    add_term_sizes(evidence, i);
  }
  CandidateEvidence rescaled = evidence;
  for (auto* column : {&rescaled.csls, &rescaled.cosine, &rescaled.word_alignment, &rescaled.one_to_one})
    for (float& value : *column) value = 0.25f * value + 0.5f;  // exact in binary: the same order and ties
  const FeatureTable table = candidate_feature_table(evidence), other = candidate_feature_table(rescaled);
  REQUIRE(table.names == other.names);
  CHECK(table.has("csls_q"));
  CHECK(table.has("comp_one_to_one_below_source_best_s"));
  CHECK_FALSE(table.has("csls"));
  for (Eigen::Index j = 0; j < table.values.cols(); ++j) {
    INFO(table.names[static_cast<std::size_t>(j)]);
    CHECK((table.values.col(j) - other.values.col(j)).cwiseAbs().maxCoeff() < 1e-5f);
  }
  // The quantiles span [0, 1] (cosine: no ties) and follow the values' order; equal values share one (csls).
  const auto column = [&](const char* name) {
    return std::find(table.names.begin(), table.names.end(), name) - table.names.begin();
  };
  CHECK(table.values.col(column("cosine_q")).minCoeff() == 0.0f);
  CHECK(table.values.col(column("cosine_q")).maxCoeff() == 1.0f);
  const Eigen::Index q = column("csls_q");
  for (std::size_t a = 0; a < n; a += 7) {
    for (std::size_t b = 0; b < n; b += 11) {
      const float qa = table.values(static_cast<Eigen::Index>(a), q),
                  qb = table.values(static_cast<Eigen::Index>(b), q);
      if (evidence.csls[a] < evidence.csls[b]) CHECK(qa < qb);
      if (evidence.csls[a] == evidence.csls[b]) CHECK(qa == qb);
    }
  }
  // The bundled model's first stage reads this table; scored in blocks of 7 rows (a last block of 3), the scores
  // are the same.
  const Reranker bundled = bundled_reranker(false);
  REQUIRE(bundled.stages() == 2);
  const Reranker& model = *bundled.first_stage;
  const Eigen::VectorXd whole = model.score(table, "bundled", 1);
  const Eigen::VectorXd blocks = model.score(table, "bundled", 2, 7);
  REQUIRE(blocks.size() == static_cast<Eigen::Index>(n));
  CHECK((whole - blocks).cwiseAbs().maxCoeff() == 0.0);
  CHECK(whole.maxCoeff() > whole.minCoeff());
  // Both stages give the rescaled run the same scores: the first stage's columns are as scale-free as its inputs.
  const Eigen::VectorXd both = score_candidates(bundled, evidence, "bundled", 2);
  CHECK((both - score_candidates(bundled, rescaled, "bundled", 2)).cwiseAbs().maxCoeff() < 1e-4);
  CHECK((both - whole).cwiseAbs().maxCoeff() > 0);  // the second stage changes them
}

TEST_CASE("feature ranks and quantiles agree with brute force, on any thread count", "[reranker]") {
  // Enough candidates for several of the table's row blocks (65,536 rows), few groups, many ties: the ranks within
  // a source's and a target's candidates (ties by candidate order), the margins below the group's best and the run
  // quantiles (ties share their mean rank), counted pair by pair on a sample of rows.
  std::mt19937 generator(11);
  std::uniform_int_distribution<std::uint32_t> source(0, 900), target(0, 2500), level(0, 60);
  CandidateEvidence evidence;
  const std::size_t n = 150000;
  for (std::size_t i = 0; i < n; ++i) {
    evidence.source.push_back(source(generator));
    evidence.target.push_back(target(generator));
    evidence.csls.push_back(static_cast<float>(level(generator)) / 64 - 0.4f);  // exact, many ties
    // Signed: a level of 0 gives +0 and -0, which tie.
    evidence.cosine.push_back((i % 2 ? 1.0f : -1.0f) * static_cast<float>(level(generator)) / 32);
    evidence.word_alignment.push_back(static_cast<float>(level(generator)) / 16);
    evidence.orthographic.push_back(static_cast<float>(level(generator)) / 60);
    add_term_sizes(evidence, i);
  }
  const FeatureTable one = candidate_feature_table(evidence, 1), two = candidate_feature_table(evidence, 2);
  REQUIRE(one.names == two.names);
  CHECK(one.values == two.values);
  const auto column = [&](const char* name) {
    const auto found = std::find(one.names.begin(), one.names.end(), name);
    REQUIRE(found != one.names.end());
    return found - one.names.begin();
  };
  const Eigen::Index source_rank = column("source_rank"), target_rank = column("target_rank"),
                     below = column("ortho_below_source_best"), csls_q = column("csls_q"),
                     cosine_q = column("cosine_q");
  for (std::size_t i = 0; i < n; i += 997) {
    std::size_t by_source = 1, by_target = 1, csls_below = 0, csls_equal = 0, cosine_below = 0, cosine_equal = 0;
    float best_spelling = evidence.orthographic[i];
    for (std::size_t j = 0; j < n; ++j) {
      const bool before = evidence.csls[j] > evidence.csls[i] || (evidence.csls[j] == evidence.csls[i] && j < i);
      by_source += evidence.source[j] == evidence.source[i] && before;
      by_target += evidence.target[j] == evidence.target[i] && before;
      if (evidence.source[j] == evidence.source[i])
        best_spelling = std::max(best_spelling, evidence.orthographic[j]);
      csls_below += evidence.csls[j] < evidence.csls[i];
      csls_equal += evidence.csls[j] == evidence.csls[i];
      cosine_below += evidence.cosine[j] < evidence.cosine[i];
      cosine_equal += evidence.cosine[j] == evidence.cosine[i];  // -0 equals +0
    }
    const auto row = static_cast<Eigen::Index>(i);
    INFO("candidate " << i);
    CHECK(one.values(row, source_rank) == 1.0f / static_cast<float>(by_source));
    CHECK(one.values(row, target_rank) == 1.0f / static_cast<float>(by_target));
    CHECK(one.values(row, below) == evidence.orthographic[i] - best_spelling);
    // Mean 0-based rank of the tied run over n - 1.
    const auto quantile = [&](std::size_t below_count, std::size_t equal_count) {
      return static_cast<float>(0.5 * static_cast<double>(2 * below_count + equal_count - 1) /
                                static_cast<double>(n - 1));
    };
    CHECK(one.values(row, csls_q) == quantile(csls_below, csls_equal));
    CHECK(one.values(row, cosine_q) == quantile(cosine_below, cosine_equal));
  }
}

TEST_CASE("the first stage's columns agree with brute force", "[reranker]") {
  // Small groups with ties: 1 / rank within the source's and the target's candidates (ties by candidate order),
  // the margin below the group's best, and the margin over the best other candidate (0 for a candidate alone).
  std::mt19937 generator(5);
  std::uniform_int_distribution<std::uint32_t> source(0, 60), target(0, 3000), level(0, 20);
  CandidateEvidence evidence;
  const std::size_t n = 3000;
  Eigen::VectorXd scores(static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i) {
    evidence.source.push_back(source(generator));
    evidence.target.push_back(target(generator));
    scores(static_cast<Eigen::Index>(i)) = static_cast<double>(level(generator)) / 4 - 2;  // exact, many ties
  }
  const FeatureTable table = stage_feature_table(evidence, scores, 2);
  REQUIRE(table.names == stage_feature_names());
  CHECK(stage_feature_table(evidence, scores, 1).values == table.values);
  const auto column = [&](const std::string& name) {
    return std::find(table.names.begin(), table.names.end(), name) - table.names.begin();
  };
  std::size_t alone = 0;
  for (const auto& [group, name] :
       {std::pair{&evidence.source, "source"}, std::pair{&evidence.target, "target"}}) {
    for (std::size_t i = 0; i < n; ++i) {
      const double s = scores(static_cast<Eigen::Index>(i));
      std::size_t rank = 1;
      double best = s, best_other = -1e9;
      for (std::size_t j = 0; j < n; ++j) {
        if ((*group)[j] != (*group)[i]) continue;
        const double t = scores(static_cast<Eigen::Index>(j));
        rank += t > s || (t == s && j < i);
        best = std::max(best, t);
        if (j != i) best_other = std::max(best_other, t);
      }
      alone += best_other == -1e9;
      const auto row = static_cast<Eigen::Index>(i);
      INFO(name << " of candidate " << i);
      CHECK(table.values(row, column("stage1_score")) == static_cast<float>(s));
      CHECK(table.values(row, column(std::string("stage1_") + name + "_rank")) == 1.0f / static_cast<float>(rank));
      CHECK(table.values(row, column(std::string("stage1_below_") + name + "_best")) ==
            static_cast<float>(s - best));
      CHECK(table.values(row, column(std::string("stage1_above_") + name + "_other")) ==
            (best_other == -1e9 ? 0.0f : static_cast<float>(s - best_other)));
    }
  }
  CHECK(alone > 0);  // targets with one candidate are among them
}

TEST_CASE("the first stage's nested-term columns agree with brute force", "[reranker]") {
  // Distinct candidates over few terms, each term with random parts (other terms of its list): a candidate's
  // `parts` column is the best score of a candidate pairing a part of its source with a part of its target, its
  // `wholes` column the best of a candidate whose terms hold its two; the sentinel where there is none.
  std::mt19937 generator(11);
  constexpr std::uint32_t kSources = 40, kTargets = 50;
  std::uniform_int_distribution<std::uint32_t> source(0, kSources - 1), target(0, kTargets - 1), count(0, 3),
      level(0, 40);
  CandidateEvidence evidence;
  const auto random_parts = [&](std::uint32_t terms) {
    std::vector<std::vector<std::uint32_t>> parts(terms);
    std::uniform_int_distribution<std::uint32_t> term(0, terms - 1);
    for (std::uint32_t t = 0; t < terms; ++t) {
      for (std::uint32_t k = count(generator); k > 0; --k) {
        const std::uint32_t part = term(generator);
        if (part != t && std::find(parts[t].begin(), parts[t].end(), part) == parts[t].end())
          parts[t].push_back(part);
      }
    }
    return parts;
  };
  evidence.source_parts = random_parts(kSources);
  evidence.target_parts = random_parts(kTargets);
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  std::vector<double> values;
  while (seen.size() < 900) {
    const std::uint32_t s = source(generator), t = target(generator);
    if (!seen.insert({s, t}).second) continue;
    evidence.source.push_back(s);
    evidence.target.push_back(t);
    values.push_back(static_cast<double>(level(generator)) / 8 - 2);
  }
  const std::size_t n = values.size();
  const Eigen::VectorXd scores = Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(n));
  const FeatureTable table = stage_feature_table(evidence, scores, 2);
  REQUIRE(table.names == stage_feature_names());
  const auto column = [&](const std::string& name) {
    return std::find(table.names.begin(), table.names.end(), name) - table.names.begin();
  };
  const auto holds = [](const std::vector<std::uint32_t>& parts, std::uint32_t term) {
    return std::find(parts.begin(), parts.end(), term) != parts.end();
  };
  std::size_t with_parts = 0, with_wholes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float parts = -20.0f, wholes = -20.0f;
    for (std::size_t j = 0; j < n; ++j) {
      if (holds(evidence.source_parts[evidence.source[i]], evidence.source[j]) &&
          holds(evidence.target_parts[evidence.target[i]], evidence.target[j]))
        parts = std::max(parts, static_cast<float>(values[j]));
      if (holds(evidence.source_parts[evidence.source[j]], evidence.source[i]) &&
          holds(evidence.target_parts[evidence.target[j]], evidence.target[i]))
        wholes = std::max(wholes, static_cast<float>(values[j]));
    }
    with_parts += parts > -20.0f;
    with_wholes += wholes > -20.0f;
    INFO("candidate " << i);
    CHECK(table.values(static_cast<Eigen::Index>(i), column("stage1_nested_parts_best")) == parts);
    CHECK(table.values(static_cast<Eigen::Index>(i), column("stage1_nested_wholes_best")) == wholes);
  }
  CHECK(with_parts > 20);
  CHECK(with_wholes > 20);
  // Without the lists' parts (a run without the full evidence) the columns hold the sentinel only.
  evidence.source_parts.clear();
  const FeatureTable none = stage_feature_table(evidence, scores, 1);
  CHECK((none.values.col(column("stage1_nested_parts_best")).array() == -20.0f).all());
}

TEST_CASE("a two-stage model scores candidates as its stages do in turn, and reads back", "[reranker]") {
  std::mt19937 generator(9);
  std::uniform_real_distribution<float> uniform(0, 1);
  std::uniform_int_distribution<std::uint32_t> term(0, 80);
  CandidateEvidence evidence;
  const std::size_t n = 2000;
  std::vector<std::uint8_t> labels;
  for (std::size_t i = 0; i < n; ++i) {
    evidence.source.push_back(term(generator));
    evidence.target.push_back(term(generator));
    for (auto* column : {&evidence.csls, &evidence.cosine, &evidence.word_alignment, &evidence.orthographic})
      column->push_back(uniform(generator));
    add_term_sizes(evidence, i);
    labels.push_back(evidence.csls.back() + 0.3f * uniform(generator) > 0.8f);
  }
  const FeatureTable table = candidate_feature_table(evidence, 2);
  auto first = std::make_shared<const Reranker>(train_logistic(table.values, table.names, labels));
  const Eigen::VectorXd first_scores = first->score(table, "(first)");
  const FeatureTable stage = stage_feature_table(evidence, first_scores, 2);
  Matrix joined(table.values.rows(), table.values.cols() + stage.values.cols());
  joined << table.values, stage.values;
  std::vector<std::string> names = table.names;
  names.insert(names.end(), stage.names.begin(), stage.names.end());
  for (const Learner learner : {Learner::logistic, Learner::trees}) {
    INFO(to_string(learner));
    Reranker model;
    if (learner == Learner::logistic) {
      model = train_logistic(joined, names, labels);
    } else {
      model.learner = learner;
      model.features = names;
      BoostedTreesOptions options;
      options.rounds = 20;
      model.booster = train_boosted_trees(joined, labels, options);
    }
    const Eigen::VectorXd expected = model.score(joined, 1);
    model.first_stage = first;
    CHECK(model.stages() == 2);
    const Eigen::VectorXd scores = score_candidates(model, evidence, "(test)", 2);
    CHECK((scores - expected).cwiseAbs().maxCoeff() < 1e-9);
    const FeatureTable with_stage = with_stage_features(model, evidence, table, "(test)", 2);
    CHECK(with_stage.names == names);
    CHECK(with_stage.values == joined);
    // The text holds both stages: read back, it scores the same.
    const std::string text = format_reranker(model);
    const Reranker loaded = parse_reranker(text, "(two)");
    REQUIRE(loaded.stages() == 2);
    CHECK(format_reranker(loaded) == text);
    CHECK((score_candidates(loaded, evidence, "(two)", 1) - scores).cwiseAbs().maxCoeff() < 1e-9);
    // The second stage alone cannot score a table without the first stage's columns; the first stage can.
    CHECK_THROWS_WITH(model.score(table, "two.txt"), Catch::Contains("two.txt") && Catch::Contains("first stage"));
    CHECK((score_candidates(*first, evidence, "(first)", 2) - first_scores).cwiseAbs().maxCoeff() < 1e-9);
    // A file without the line between the stages, or with a third stage, names itself.
    const std::string header = text.substr(0, text.find('\n') + 1);
    CHECK_THROWS_WITH(parse_reranker(header + format_reranker(*first), "cut.txt"),
                      Catch::Contains("cut.txt") && Catch::Contains("second stage"));
    CHECK_THROWS_WITH(parse_reranker(header + format_reranker(*first) + "second stage\n" + text, "deep.txt"),
                      Catch::Contains("deep.txt") && Catch::Contains("two stages"));
  }
}
