#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "termalign/align.h"
#include "termalign/evaluation.h"
#include "termalign/io.h"
#include "termalign/lexicon.h"

using namespace termalign;

namespace {
const std::string kSource = TERMALIGN_SOURCE_DIR;
const std::string kOutputs = std::string(TERMALIGN_BINARY_DIR) + "/test_align_outputs";

AlignConfig sample_config(const std::string& vectors_extension, const std::string& out_name) {
  std::filesystem::create_directories(kOutputs);
  AlignConfig config;
  config.input.src_vectors = kSource + "/models/sample/en." + vectors_extension;
  config.input.tgt_vectors = kSource + "/models/sample/fr." + vectors_extension;
  config.input.seed = kSource + "/data/sample/seed-en-fr.txt";
  config.input.src_terms = kSource + "/data/sample/terms-en.txt";
  config.input.tgt_terms = kSource + "/data/sample/terms-fr.txt";
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
    WARN("sample AP with ." << extension << " vectors: " << ap);
    // A random ranking of 184 x 552 terms scores about 0.001. The sample's .bin models were trained on 3000
    // sentences only, to exercise the reader and subword code, and do not map well: no bar for them.
    if (extension == "vec") CHECK(ap > 0.3);
    CHECK(std::filesystem::exists(config.output.out + ".config.toml"));
  }
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
  // Past the blocks of 16384 pairs that rank_candidates and format_pairs share out, with tied scores; each source
  // keeps at most 120 of its pairs (per_source).
  CandidateSet candidates;
  for (int i = 0; i < 300; ++i) candidates.source_terms.terms.push_back("source term " + std::to_string(i));
  for (int i = 0; i < 200; ++i) candidates.target_terms.terms.push_back("cible " + std::to_string(i));
  CandidateEvidence& evidence = candidates.evidence;
  Eigen::VectorXd scores(40000);
  for (std::uint32_t i = 0; i < 40000; ++i) {
    evidence.source.push_back(i % 300);
    evidence.target.push_back((i * 7) % 200);
    scores(i) = static_cast<double>((i * 37) % 1000) / 1000.0;
  }
  candidates.cap = 35000;
  candidates.per_source = 120;
  const std::vector<RankedPair> serial = rank_candidates(candidates, scores, 1);
  REQUIRE(serial.size() == 35000);
  std::map<std::string, int> per_source;
  for (const RankedPair& pair : serial) ++per_source[pair.source];
  CHECK(per_source.size() == 300);
  for (const auto& [source, count] : per_source) CHECK(count <= 120);
  std::string expected, expected_scores;
  for (std::size_t i = 0; i < serial.size(); ++i) {
    if (i > 0) REQUIRE(serial[i - 1].score >= serial[i].score);
    expected += serial[i].source + "\t" + serial[i].target + "\n";
    char score[32];
    std::snprintf(score, sizeof score, "%.6f", static_cast<double>(serial[i].score));
    expected_scores += serial[i].source + "\t" + serial[i].target + "\t" + score + "\n";
  }
  for (const int threads : {1, 2, 3}) {
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
    const std::vector<termalign::RankedIndex> indices = termalign::rank_candidate_indices(candidates, scores);
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
  mapped.output.mapping = kOutputs + "/first.mapping";
  mapped.input.seed.clear();
  mapped.output.out = kOutputs + "/third.tsv";
  run_align(mapped);
  CHECK(read_file(mapped.output.out) == first);
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

TEST_CASE("Too few usable seed pairs is an error that says so", "[align]") {
  AlignConfig config = sample_config("vec", "no-seed.tsv");
  config.mapping.min_seed_pairs = 100000;
  CHECK_THROWS_WITH(run_align(config), Catch::Contains("seed-en-fr.txt") && Catch::Contains("min_seed_pairs"));
  CHECK_FALSE(std::filesystem::exists(config.output.out));
}

TEST_CASE("Default configuration on the training data reaches the NumPy baseline's AP", "[align][shared]") {
  const std::string shared = kSource + "/../shared/data";
  if (!std::filesystem::exists(shared + "/enfr/train/terms-en.txt")) {
    WARN("skipped: " << shared << " is not there");
    return;
  }
  std::filesystem::create_directories(kOutputs);
  AlignConfig config;
  config.input.src_vectors = shared + "/vectors/en.bin";
  config.input.tgt_vectors = shared + "/vectors/fr.bin";
  config.input.seed = shared + "/enfr/train/seed-en-fr.txt";
  config.input.src_terms = shared + "/enfr/train/terms-en.txt";
  config.input.tgt_terms = shared + "/enfr/train/terms-fr.txt";
  config.output.out = kOutputs + "/train.tsv";
  run_align(config);
  CHECK(check_valid_submission(config) > 0);
  const double ap = average_precision(config, shared + "/enfr/train/terms-en-fr.txt");
  WARN("enfr/train AP with en.bin/fr.bin and the default configuration: " << ap);
  CHECK(ap >= 0.377);
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
  general.mapping.refine_iterations = 0;  // the weighting is under test, not the refinement: three runs, kept short
  run_align(general);
  const double general_ap = average_precision(general, kSource + "/data/sample/terms-en-fr.txt");

  AlignConfig combined = sample_config("vec", "corpus-combined.tsv");
  combined.mapping.refine_iterations = 0;
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
