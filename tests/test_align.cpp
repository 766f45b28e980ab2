#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "captured_log.h"
#include "io/io.h"
#include "pipeline/ranking.h"
#include "rerank/reranker.h"
#include "scoring/scoring.h"
#include "shared_data.h"
#include "termalign/aligner.h"
#include "termalign/evaluation.h"
#include "termalign/lexicon.h"

using namespace termalign;

namespace {
using termalign_tests::kSource;
const std::string kOutputs = std::string(TERMALIGN_BINARY_DIR) + "/test_align_outputs";
// The published figures (docs/accuracy.md): the sample's AP with the default (bundled) re-ranker, without the
// corpora and with none; enfr/train's AP with the bundled models, without and with the corpora (on the data they
// were trained on), and unsupervised.
constexpr double kSampleDefaultAp = 0.924471, kSampleNoCorporaAp = 0.914782, kSampleUnsupervisedAp = 0.762886;
constexpr double kSampleBinAp = 0.413275;
constexpr double kTrainDefaultAp = 0.840255, kTrainCorpusAp = 0.869774, kTrainUnsupervisedAp = 0.565340;
// The margin of every AP pinned here, on any x86-64 host and in every build flavour. Measured: builds (gcc -O3
// native, clang -O1 generic, clang -O1 with sanitizers), tile kernels and CPUs (Zen 3, Zen 4, Sapphire Rapids)
// round the scores differently in their last bits, which moves enfr/train's AP by up to 1e-4 (the trees turn
// last-bit differences into swapped pairs); multiplying the target vectors by (1 + 1e-4 N(0,1)) moves the
// sample's AP by up to 7.2e-4, by 1e-5 not at all. 1e-3 is ten times the spread between builds.
constexpr double kFigureMargin = 1e-3;

AlignConfig sample_config(const std::string& vectors_extension, const std::string& out_name) {
  std::filesystem::create_directories(kOutputs);
  AlignConfig config = termalign_tests::sample_inputs(vectors_extension);
  config.output.out = kOutputs + "/" + out_name;
  return config;
}

// Two TAB-separated columns, only listed terms, no repeated pair, within the BUCC cap. Returns the line count.
std::size_t check_valid_submission(const AlignConfig& config) {
  const TermList source = read_term_list(config.input.src_terms), target = read_term_list(config.input.tgt_terms);
  const std::string text = read_file(config.output.out);
  std::set<std::string> seen;
  std::size_t lines = 0, start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    REQUIRE(end != std::string::npos);  // every line ends with LF
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++lines;
    const auto tab = line.find('\t');
    REQUIRE(tab != std::string::npos);
    REQUIRE(line.find('\t', tab + 1) == std::string::npos);
    CHECK(source.contains(line.substr(0, tab)));
    CHECK(target.contains(line.substr(tab + 1)));
    CHECK(seen.insert(line).second);
  }
  CHECK(lines <= submission_cap(source.size(), target.size()));
  return lines;
}

double average_precision(const AlignConfig& config, const std::string& gold_path) {
  const PairList gold = read_pairs(gold_path, PairFileKind::gold);
  const PairList predictions = read_pairs(config.output.out, PairFileKind::submission);
  const TermList source = read_term_list(config.input.src_terms), target = read_term_list(config.input.tgt_terms);
  return evaluate(gold, predictions, &source, &target, EvaluationOptions{}).ap;
}
}  // namespace

TEST_CASE("align writes a valid submission on the bundled sample, with .vec and .bin vectors", "[align]") {
  for (const std::string extension : {"vec", "bin"}) {
    AlignConfig config = sample_config(extension, "sample-" + extension + ".tsv");
    config.output.scores = config.output.out + ".scores";
    const AlignmentSummary summary = run_align(config);
    CAPTURE(extension);
    CHECK(summary.seed_pairs_usable >= config.mapping.min_seed_pairs);
    const std::size_t lines = check_valid_submission(config);
    CHECK(lines > 0);
    const double ap = average_precision(config, kSource + "/data/sample/terms-en-fr.txt");
    // The sample's .bin models were trained on its 3000 sentences only, to exercise the reader and the subword
    // code: they map far worse than the general .vec vectors.
    CHECK(ap == Approx(extension == "vec" ? kSampleNoCorporaAp : kSampleBinAp).margin(kFigureMargin));
    CHECK(std::filesystem::exists(config.output.out + ".config.toml"));
  }
}

TEST_CASE("align re-ranks with the bundled model by default, and --reranker none is the unsupervised score",
          "[align]") {
  // scripts/run_sample.sh's configuration (configs/sample.toml) and the README's figures for it.
  AlignConfig config;
  load_config(kSource + "/configs/sample.toml", config);
  std::filesystem::create_directories(kOutputs);
  config.output.out = kOutputs + "/sample-default.tsv";
  config.output.scores.clear();
  const std::string gold = kSource + "/data/sample/terms-en-fr.txt";
  run_align(config);
  const double by_default = average_precision(config, gold);
  CHECK(by_default == Approx(kSampleDefaultAp).margin(kFigureMargin));
  // The same list as the model file given by name.
  AlignConfig named = config;
  named.input.reranker = kSource + (config.input.src_corpus.empty() ? "/models/reranker-enfr.txt"
                                                                    : "/models/reranker-enfr-corpus.txt");
  named.output.out = kOutputs + "/sample-named.tsv";
  run_align(named);
  CHECK(read_file(named.output.out) == read_file(config.output.out));
  AlignConfig none = config;
  none.input.reranker = "none";
  none.input.src_corpus.clear();
  none.input.tgt_corpus.clear();
  none.output.out = kOutputs + "/sample-none.tsv";
  run_align(none);
  CHECK(average_precision(none, gold) == Approx(kSampleUnsupervisedAp).margin(kFigureMargin));
  CHECK(by_default > average_precision(none, gold));
}

TEST_CASE("With both corpora the default re-ranker is the corpus model", "[align]") {
  AlignConfig config = sample_config("vec", "sample-corpora.tsv");
  config.input.src_corpus = kSource + "/data/sample/corpus-en.txt";
  config.input.tgt_corpus = kSource + "/data/sample/corpus-fr.txt";
  config.output.explain = kOutputs + "/sample-corpora.explain.tsv";
  run_align(config);
  const std::string header =
      read_file(config.output.explain).substr(0, read_file(config.output.explain).find('\n'));
  CHECK_THAT(header, Catch::Contains("feature:context_cosine") && Catch::Contains("feature:comp_one_to_one"));
  config.input.src_corpus.clear();
  config.input.tgt_corpus.clear();
  run_align(config);
  const std::string plain =
      read_file(config.output.explain).substr(0, read_file(config.output.explain).find('\n'));
  CHECK_THAT(plain, !Catch::Contains("feature:context_cosine"));
  config.input.tgt_corpus = kSource + "/data/sample/corpus-fr.txt";
  CHECK_THROWS_WITH(run_align(config), Catch::Contains("src_corpus"));
}

TEST_CASE("Options that cannot act as asked get a warning: a cap above the BUCC cap, a weight a re-ranker ignores",
          "[align]") {
  AlignConfig config = sample_config("vec", "inert-options.tsv");
  config.mapping.refine_iterations = 0;
  config.ranking.cap = 100000;
  config.orthography.weight = 0.3;
  std::vector<RankedPair> pairs;
  {
    const CapturedLog log;
    pairs = align_terms(config);
    // 181 x 533 usable terms of 184 x 552 listed: the cap counts the lists.
    CHECK(log.warnings_with("cap 100000 is above the BUCC cap of these lists, 10 x (184 + 552) / 2 = 3680") == 1);
    CHECK(log.warnings_with("orthography.weight (0.3) weighs the spelling in the unsupervised score only") == 1);
  }
  config.orthography.weight = 0.1;
  config.ranking.cap = 0;
  {
    const CapturedLog log;
    const std::vector<RankedPair> again = align_terms(config);  // the weight and the cap changed nothing
    REQUIRE(again.size() == pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      CHECK(again[i].source == pairs[i].source);
      CHECK(again[i].target == pairs[i].target);
      CHECK(again[i].score == pairs[i].score);
    }
    CHECK(log.warnings_with("above the BUCC cap") == 0);
    CHECK(log.warnings_with("orthography.weight") == 0);
  }
  config.input.reranker = "none";
  config.orthography.weight = 0.3;
  const CapturedLog log;
  align_terms(config);
  CHECK(log.warnings_with("orthography.weight") == 0);
}

TEST_CASE("The output does not depend on threads or tile sizes", "[align]") {
  AlignConfig one = sample_config("vec", "threads-1.tsv");
  one.scoring.threads = 1;
  run_align(one);
  AlignConfig two = sample_config("vec", "threads-2.tsv");
  two.scoring.threads = 2;
  two.scoring.tile_rows = 7;
  two.scoring.tile_cols = 13;
  run_align(two);
  CHECK(read_file(one.output.out) == read_file(two.output.out));
}

TEST_CASE("Ranking and formatting many pairs give the serial result on any thread count", "[align]") {
  // Past the blocks of 16384 pairs that format_pairs shares out and the 4 slices of 65536 candidates that
  // rank_candidate_indices sorts apart and merges, with tied scores; each source keeps at most 120 of its pairs
  // (per_source).
  CandidateSet candidates;
  for (int i = 0; i < 3000; ++i) candidates.source_terms.terms.push_back("source term " + std::to_string(i));
  for (int i = 0; i < 2000; ++i) candidates.target_terms.terms.push_back("cible " + std::to_string(i));
  CandidateEvidence& evidence = candidates.evidence;
  constexpr std::uint32_t n = 270000;
  Eigen::VectorXd scores(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    evidence.source.push_back((i * 2654435761u) % 3000);
    evidence.target.push_back((i * 7) % 2000);
    scores(i) = static_cast<double>((i * 37) % 1000) / 1000.0;
  }
  candidates.cap = 300000;
  candidates.per_source = 80;
  const std::vector<RankedPair> serial = rank_candidates(candidates, scores, 1);
  // Brute force: the candidates by score, then source, then target; each source's first 80, up to the cap.
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::make_tuple(-scores(a), evidence.source[a], evidence.target[a]) <
           std::make_tuple(-scores(b), evidence.source[b], evidence.target[b]);
  });
  std::vector<std::size_t> kept(3000, 0);
  std::size_t brute_force = 0;
  for (const std::uint32_t i : order) {
    if (++kept[evidence.source[i]] > 80) continue;
    REQUIRE(brute_force < serial.size());
    REQUIRE(serial[brute_force].source == candidates.source_terms.terms[evidence.source[i]]);
    REQUIRE(serial[brute_force].target == candidates.target_terms.terms[evidence.target[i]]);
    REQUIRE(serial[brute_force].score == static_cast<float>(scores(i)));
    ++brute_force;
  }
  REQUIRE(serial.size() == brute_force);
  candidates.cap = brute_force - 1000;  // the cap cuts the list
  const std::vector<RankedPair> capped = rank_candidates(candidates, scores, 2);
  REQUIRE(capped.size() == candidates.cap);
  CHECK(std::equal(capped.begin(), capped.end(), serial.begin(), [](const RankedPair& a, const RankedPair& b) {
    return a.source == b.source && a.target == b.target && a.score == b.score;
  }));
  candidates.cap = 300000;
  std::map<std::string, int> per_source;
  for (const RankedPair& pair : serial) ++per_source[pair.source];
  CHECK(per_source.size() == 3000);
  for (const auto& [source, count] : per_source) CHECK(count <= 80);
  std::string expected, expected_scores;
  for (std::size_t i = 0; i < serial.size(); ++i) {
    if (i > 0) REQUIRE(serial[i - 1].score >= serial[i].score);
    expected += serial[i].source + "\t" + serial[i].target + "\n";
    char score[32];
    std::snprintf(score, sizeof score, "%.6f", static_cast<double>(serial[i].score));
    expected_scores += serial[i].source + "\t" + serial[i].target + "\t" + score + "\n";
  }
  for (const int threads : {1, 2, 3, 4}) {
    INFO("threads " << threads);
    const std::vector<RankedPair> ranked = rank_candidates(candidates, scores, threads);
    REQUIRE(ranked.size() == serial.size());
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      REQUIRE(ranked[i].source == serial[i].source);
      REQUIRE(ranked[i].target == serial[i].target);
      REQUIRE(ranked[i].score == serial[i].score);
    }
    CHECK(format_pairs(ranked, false, threads) == expected);
    CHECK(format_pairs(ranked, true, threads) == expected_scores);
    // The same list by the terms' places, formatted straight from the lists (what run_align writes).
    const std::vector<termalign::RankedIndex> indices =
        termalign::rank_candidate_indices(candidates, scores, threads);
    REQUIRE(indices.size() == serial.size());
    const auto& sources = candidates.source_terms.terms;
    const auto& targets = candidates.target_terms.terms;
    CHECK(format_ranked(indices, sources, targets, false, threads) == expected);
    CHECK(format_ranked(indices, sources, targets, true, threads) == expected_scores);
  }
  CHECK(format_ranked({}, {}, {}, true, 2).empty());
}

TEST_CASE("The resolved configuration alone reproduces the run; a saved mapping gives the same list", "[align]") {
  AlignConfig config = sample_config("vec", "first.tsv");
  config.scoring.k = 5;
  config.ranking.top_m = 3;
  config.output.save_mapping = kOutputs + "/first.mapping";
  run_align(config);
  const std::string first = read_file(config.output.out);

  AlignConfig reloaded;
  load_config(config.output.out + ".config.toml", reloaded);
  reloaded.output.out = kOutputs + "/second.tsv";  // same run, another file to compare with
  run_align(reloaded);
  CHECK(read_file(reloaded.output.out) == first);

  AlignConfig mapped = config;
  mapped.output.save_mapping.clear();
  mapped.input.saved_mapping = kOutputs + "/first.mapping";
  mapped.output.out = kOutputs + "/third.tsv";
  run_align(mapped);  // the seed lexicon stays: the default re-ranker's evidence reads its translations
  CHECK(read_file(mapped.output.out) == first);
  {
    // Without it the re-ranker's seed evidence is 0 for every candidate: a warning says so.
    AlignConfig seedless = mapped;
    seedless.input.seed.clear();
    seedless.output.out = kOutputs + "/seedless.tsv";
    CapturedLog log;
    run_align(seedless);
    CHECK(log.warnings_with("no seed lexicon: the re-ranker's seed evidence") == 1);
  }
  // Without it the mapping alone is enough for the unsupervised score.
  for (AlignConfig* run : {&config, &mapped}) run->input.reranker = "none";
  config.output.out = kOutputs + "/fourth.tsv";
  run_align(config);
  mapped.input.seed.clear();
  mapped.output.out = kOutputs + "/fifth.tsv";
  run_align(mapped);
  CHECK(read_file(mapped.output.out) == read_file(config.output.out));
}

TEST_CASE("Options change the list as they should", "[align]") {
  AlignConfig config = sample_config("vec", "top1.tsv");
  config.ranking.top_m = 1;
  run_align(config);
  const TermList source = read_term_list(config.input.src_terms);
  const std::size_t lines = check_valid_submission(config);
  CHECK(lines <= source.size());  // one target per source term at most
  config.output.out = kOutputs + "/cap.tsv";
  config.ranking.cap = 25;
  run_align(config);
  CHECK(check_valid_submission(config) == 25);
}

TEST_CASE("Without a seed lexicon, ranked rounds read the seed off the run's own ranking", "[align][seed]") {
  AlignConfig config = sample_config("vec", "ranked.tsv");
  config.input.seed = kAutoSeed;
  config.input.src_corpus = kSource + "/data/sample/corpus-en.txt";
  config.input.tgt_corpus = kSource + "/data/sample/corpus-fr.txt";
  config.output.save_mapping = kOutputs + "/ranked.mapping";
  CapturedLog log;
  run_align(config);
  check_valid_submission(config);
  // Each corpus is read once for the three runs.
  CHECK(log.lines_with("info", " sentences, ").size() == 2);
  // Two ranked rounds by default, each after a ranking by the seedless model: three runs ranked.
  const std::vector<std::string> rounds = log.lines_with("info", "seed ranked round ");
  REQUIRE(rounds.size() == 2);
  CHECK_THAT(rounds[0], Catch::StartsWith("seed ranked round 1: the ") &&
                            Catch::Contains(" best pairs of the last ranked list give "));
  CHECK_THAT(rounds[1], Catch::StartsWith("seed ranked round 2: the "));
  const std::vector<std::string> rankings = log.lines_with("info", "re-ranking ");
  REQUIRE(rankings.size() == 3);
  for (const std::string& ranking : rankings) CHECK_THAT(ranking, Catch::Contains("seedless"));
  const std::string ranked = read_file(config.output.out);

  // Without them: the first run's list, another one.
  AlignConfig first = config;
  first.mapping.seed_ranked_rounds = 0;
  first.output.save_mapping = kOutputs + "/unranked.mapping";
  first.output.out = kOutputs + "/unranked.tsv";
  CapturedLog first_log;
  run_align(first);
  CHECK(first_log.lines_with("info", "seed ranked round ").empty());
  CHECK(first_log.lines_with("info", "re-ranking ").size() == 1);
  CHECK(read_file(first.output.out) != ranked);
  // The mapping written with the rounds is the last run's, not the first's.
  CHECK(read_file(config.output.save_mapping) != read_file(first.output.save_mapping));
  // The unsupervised score has no ranking to read a seed off.
  AlignConfig none = first;
  none.output.save_mapping.clear();
  none.mapping.seed_ranked_rounds = 2;
  none.input.reranker = kNoReranker;
  CapturedLog none_log;
  run_align(none);
  CHECK(none_log.lines_with("info", "seed ranked round ").empty());
  // A ranked round of no pairs is a usage error that names the option.
  AlignConfig zero = config;
  zero.mapping.seed_ranked_pairs = 0;
  CHECK_THROWS_WITH(run_align(zero), Catch::Contains("seed_ranked_pairs"));
}

// Each run of a self-learning run ranks its pairs somewhat differently; the final list ranks by their mean.
TEST_CASE("After ranked rounds, each pair's final score is its mean score over the runs", "[align][seed]") {
  AlignConfig config = sample_config("vec", "fused.tsv");
  config.input.seed = kAutoSeed;
  // The list of a run with `rounds` ranked rounds, by pair.
  const auto scores_of = [&](std::size_t rounds, bool fusion) {
    AlignConfig run = config;
    run.mapping.seed_ranked_rounds = rounds;
    run.mapping.seed_ranked_fusion = fusion;
    std::map<std::pair<std::string, std::string>, float> scores;
    for (const RankedPair& pair : align_terms(run)) scores[{pair.source, pair.target}] = pair.score;
    return scores;
  };
  // Each run's own list: the first run's, the first round's and the second round's.
  const auto first = scores_of(0, true), round1 = scores_of(1, false), round2 = scores_of(2, false);
  CapturedLog log;
  const auto fused = scores_of(2, true);
  CHECK(log.lines_with("info", "by its mean score over the 3 runs").size() == 1);
  std::size_t compared = 0;
  for (const auto& [pair, score] : fused) {
    const auto a = first.find(pair), b = round1.find(pair), c = round2.find(pair);
    if (a == first.end() || b == round1.end() || c == round2.end()) continue;
    CHECK(score == Approx((a->second + b->second + c->second) / 3).epsilon(1e-5));
    ++compared;
  }
  CHECK(compared > fused.size() / 2);
  CHECK(fused != round2);
}

TEST_CASE("Too few usable seed pairs is an error that says so", "[align]") {
  AlignConfig config = sample_config("vec", "no-seed.tsv");
  config.mapping.min_seed_pairs = 100000;
  CHECK_THROWS_WITH(run_align(config), Catch::Contains("seed-en-fr.txt") && Catch::Contains("min_seed_pairs"));
  CHECK_FALSE(std::filesystem::exists(config.output.out));
}

// The README's figures on enfr/train (Accuracy): the default (the bundled re-ranker, measured on its own training
// data), the same with the corpora (the corpus model), and the unsupervised score (--reranker none).
TEST_CASE("Default configuration on the training data: the README's AP", "[align][shared]") {
  if (!termalign_tests::shared_file_or_skip("enfr/train/terms-en.txt")) return;
  const std::string shared = termalign_tests::shared_data();
  std::filesystem::create_directories(kOutputs);
  std::string gold;
  AlignConfig config = termalign_tests::dataset_config(shared + "/vectors", "bin", shared + "/enfr/train", gold);
  config.output.out = kOutputs + "/train.tsv";
  run_align(config);
  CHECK(check_valid_submission(config) > 0);
  CHECK(average_precision(config, gold) == Approx(kTrainDefaultAp).margin(kFigureMargin));
  config = termalign_tests::dataset_config(shared + "/vectors", "bin", shared + "/enfr/train", gold, true);
  REQUIRE_THAT(config.input.src_corpus, Catch::EndsWith("enfr/train/corpus-en.txt"));
  config.output.out = kOutputs + "/train.tsv";
  run_align(config);
  CHECK(average_precision(config, gold) == Approx(kTrainCorpusAp).margin(kFigureMargin));
  config.input.reranker = "none";
  run_align(config);
  CHECK(average_precision(config, gold) == Approx(kTrainUnsupervisedAp).margin(kFigureMargin));
}

// The seedless run's goal on the pairs the bundled models never saw (docs/accuracy.md, Without a seed lexicon):
// each folder aligned as the task ships it (no seed lexicon, corpora) within 0.03 AP of the same folder with its
// seed lexicon. A self-learning run is chaotic: its AP moves with the refinement's held-out split
// (refine_split_seed) and with the compiler's rounding alike. Measured over split seeds 0-7, on the native gcc
// build and on the generic clang one, each against the seeded run of its seed: mean gaps +0.003 / +0.004 on en-de,
// -0.021 / -0.024 on en-ru, worst -0.030; the seedless en-ru AP's sd 0.008-0.009. One run is checked here, so
// within 0.05: the goal and two of those sd.
TEST_CASE("Without a seed lexicon, en-de and en-ru come within 0.05 AP of their seeded runs in one run",
          "[align][shared][seed]") {
  for (const std::string language : {"de", "ru"}) {
    if (!termalign_tests::shared_file_or_skip("en" + language + "/train/seed-en-" + language + ".txt")) return;
    const std::string shared = termalign_tests::shared_data();
    std::filesystem::create_directories(kOutputs);
    const auto ap = [&](const std::string& seed) {
      AlignConfig config;
      config.input.src_vectors = shared + "/vectors/en.bin";
      config.input.tgt_vectors = shared + "/vectors/" + language + ".bin";
      config.input.data_dir = shared + "/en" + language + "/train";
      config.input.pair = "en-" + language;
      config.input.dataset_corpora = true;
      config.input.seed = seed;
      const std::string gold = resolve_dataset(config);
      config.output.out = kOutputs + "/en" + language + "-" + (seed.empty() ? "seeded" : seed) + ".tsv";
      run_align(config);
      return average_precision(config, gold);
    };
    const double seeded = ap(""), seedless = ap(kAutoSeed);
    CAPTURE(language, seeded, seedless);
    CHECK(seedless >= seeded - 0.05);
  }
}

TEST_CASE("A failing second output leaves the previous submission as it was", "[align]") {
  AlignConfig config = sample_config("vec", "kept.tsv");
  write_file_atomically(config.output.out, "previous\tsubmission\n");
  config.output.scores = kOutputs + "/no-such-folder/scores.tsv";
  CHECK_THROWS_WITH(run_align(config), Catch::Contains("no-such-folder"));
  CHECK(read_file(config.output.out) == "previous\tsubmission\n");
  CHECK_FALSE(std::filesystem::exists(config.output.out + ".config.toml"));
  for (const auto& entry : std::filesystem::directory_iterator(kOutputs)) {  // the temporary files are gone
    CHECK(entry.path().filename().string().rfind("kept.tsv.tmp", 0) == std::string::npos);
  }
}

TEST_CASE("Corpus vectors are combined with the general ones by their weight", "[align]") {
  // The "corpus" vectors are the sample's own words with their vectors shuffled among them: a space that knows
  // every word but says nothing. At weight 0 the list is the general one's; at weight 1 the noise alone ranks.
  const std::string scratch = kOutputs + "/corpus-vectors";
  std::filesystem::create_directories(scratch);
  const auto shuffled_copy = [&](const std::string& language) {
    const std::string text = read_file(kSource + "/models/sample/" + language + ".vec");
    std::vector<std::string> words, values;
    std::size_t start = text.find('\n') + 1;
    while (start < text.size()) {
      const std::size_t end = text.find('\n', start), space = text.find(' ', start);
      words.push_back(text.substr(start, space - start));
      values.push_back(text.substr(space, end - space));
      start = end + 1;
    }
    std::rotate(values.begin(), values.begin() + 7, values.end());  // every word gets another word's vector
    std::string shuffled = text.substr(0, text.find('\n') + 1);
    for (std::size_t i = 0; i < words.size(); ++i) shuffled += words[i] + values[i] + "\n";
    const std::string path = scratch + "/" + language + ".vec";
    write_file_atomically(path, shuffled);
    return path;
  };
  AlignConfig general = sample_config("vec", "corpus-general.tsv");
  general.mapping.refine_iterations =
      0;  // the weighting is under test, not the refinement: three runs, kept short
  // Nor the re-ranker, whose spelling and seed evidence rank without any vectors.
  general.input.reranker = kNoReranker;
  run_align(general);
  const double general_ap = average_precision(general, kSource + "/data/sample/terms-en-fr.txt");

  AlignConfig combined = sample_config("vec", "corpus-combined.tsv");
  combined.mapping.refine_iterations = 0;
  combined.input.reranker = kNoReranker;
  combined.input.src_corpus_vectors = shuffled_copy("en");
  combined.input.tgt_corpus_vectors = shuffled_copy("fr");
  combined.mapping.min_seed_pairs = 1;  // the shuffled space's fit is meaningless, but possible
  combined.input.corpus_weight = 0.0;
  run_align(combined);
  check_valid_submission(combined);
  CHECK(average_precision(combined, kSource + "/data/sample/terms-en-fr.txt") == Approx(general_ap).margin(0.005));
  combined.input.corpus_weight = 1.0;
  run_align(combined);
  check_valid_submission(combined);
  CHECK(average_precision(combined, kSource + "/data/sample/terms-en-fr.txt") < 0.5 * general_ap);

  SECTION("both languages or neither") {
    combined.input.tgt_corpus_vectors.clear();
    CHECK_THROWS_WITH(run_align(combined), Catch::Contains("`tgt_corpus_vectors`"));
  }
}

namespace {
// Runs `config` with spill_mb 0 and 1 (the second writing into a folder of its own): both give the same list, the
// second says once that `what` waited in a temporary file there, and leaves no file behind.
void check_spill(const AlignConfig& config, const std::string& name, const std::string& what) {
  AlignConfig kept = config;
  kept.output.out = kOutputs + "/" + name + "-kept.tsv";
  kept.scoring.spill_mb = 0;
  run_align(kept);
  const std::string folder = kOutputs + "/" + name;
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  AlignConfig spilled = config;
  spilled.output.out = folder + "/spilled.tsv";
  spilled.scoring.spill_mb = 1;
  {
    const CapturedLog log;
    run_align(spilled);
    CHECK(log.lines_with("info", what + " wait in a temporary file in " + folder).size() == 1);
  }
  CHECK(read_file(spilled.output.out) == read_file(kept.output.out));
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) files.insert(entry.path().filename());
  CHECK(files == std::set<std::string>{"spilled.tsv", "spilled.tsv.config.toml"});
}
}  // namespace

TEST_CASE("Word vectors spilled to disk during the scoring give the same list and leave no file", "[align]") {
  SECTION("the word vectors the corpus evidence reads") {
    AlignConfig config = sample_config("vec", "unused.tsv");  // the sample's word vectors take 3.2 MiB
    config.input.src_corpus = kSource + "/data/sample/corpus-en.txt";
    config.input.tgt_corpus = kSource + "/data/sample/corpus-fr.txt";
    check_spill(config, "spill-corpus", "the word vectors");
  }
  SECTION("the terms' words, mapped for the word-level evidence") {
    // 3000 words a side, each in one two-word term: 1.1 MiB of mapped word vectors a side (the sample's take
    // 0.4 MiB). Target words are the source words' vectors plus noise, so that the seed's map finds them.
    const std::string folder = kOutputs + "/spill-words-input";
    std::filesystem::create_directories(folder);
    constexpr int kWords = 3000, kDim = 100;
    std::mt19937 generator(7);
    std::normal_distribution<float> normal;
    std::string source_vec = std::to_string(kWords) + " " + std::to_string(kDim) + "\n", target_vec = source_vec;
    std::string source_terms, target_terms, seed;
    for (int w = 0; w < kWords; ++w) {
      source_vec += "s" + std::to_string(w);
      target_vec += "t" + std::to_string(w);
      for (int d = 0; d < kDim; ++d) {
        const float value = normal(generator);
        source_vec += " " + std::to_string(value);
        target_vec += " " + std::to_string(value + 0.3f * normal(generator));
      }
      source_vec += "\n";
      target_vec += "\n";
      if (w % 2 == 1) {
        source_terms += "s" + std::to_string(w - 1) + " s" + std::to_string(w) + "\n";
        target_terms += "t" + std::to_string(w - 1) + " t" + std::to_string(w) + "\n";
      }
      if (w < 600) seed += "s" + std::to_string(w) + "\tt" + std::to_string(w) + "\n";
    }
    const std::vector<std::pair<std::string, const std::string*>> files = {
        {"en.vec", &source_vec}, {"fr.vec", &target_vec}, {"terms-en.txt", &source_terms},
        {"terms-fr.txt", &target_terms}, {"seed.txt", &seed}};
    for (const auto& [name, text] : files) write_file_atomically(folder + "/" + name, *text);
    AlignConfig config;
    config.input.src_vectors = folder + "/en.vec";
    config.input.tgt_vectors = folder + "/fr.vec";
    config.input.src_terms = folder + "/terms-en.txt";
    config.input.tgt_terms = folder + "/terms-fr.txt";
    config.input.seed = folder + "/seed.txt";
    check_spill(config, "spill-words", "the terms' words' vectors (2.3 MiB)");
  }
}

TEST_CASE("The orthographic work bound is an option: 0 searches exactly, a reached bound is logged", "[align]") {
  AlignConfig exact = sample_config("vec", "work-bound-exact.tsv");
  exact.input.reranker = "none";  // the spelling candidates reach the list through the unsupervised score
  exact.orthography.work_bound = 0;
  {
    const CapturedLog log;
    run_align(exact);
    CHECK(log.lines_with("info", "reached the work bound").empty());
  }
  AlignConfig bounded = exact;
  bounded.output.out = kOutputs + "/work-bound-8.tsv";
  bounded.orthography.work_bound = 8;  // a few postings: most source terms stop before their rarest n-grams end
  {
    const CapturedLog log;
    run_align(bounded);
    CHECK(log.lines_with("info", "reached the work bound (8 postings counted").size() == 1);
  }
  check_valid_submission(bounded);
  CHECK(read_file(bounded.output.out) != read_file(exact.output.out));
  // The resolved configuration written beside the output names the bound, so that it reproduces the run.
  CHECK(read_file(bounded.output.out + ".config.toml").find("work_bound = 8") != std::string::npos);
}
