#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "captured_log.h"
#include "io/io.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/version.h"
#include "util/distributed.h"

using namespace termalign;

namespace {
std::string write_temporary(const std::string& name, const std::string& text) {
  const std::string path = std::string(TERMALIGN_BINARY_DIR) + "/" + name;
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("A configuration file sets options and keeps the others", "[config]") {
  const std::string path = write_temporary("test_config_partial.toml",
                                           "[scoring]\nk = 5\nneighbourhood = \"vocabulary\"\n"
                                           "[mapping]\nnormalization = \"center\"\n"
                                           "[composition]\nsubword_oov = false\n"
                                           "[input]\nseed = \"seed.tsv\"\n");
  AlignConfig config;
  load_config(path, config);
  CHECK(config.scoring.k == 5);
  CHECK(config.scoring.neighbourhood == Neighbourhood::vocabulary);
  CHECK(config.mapping.normalization == Normalization::center);
  CHECK_FALSE(config.composition.subword_oov);
  CHECK(config.composition.split_compounds);                                    // default kept
  CHECK(config.ranking.top_m == RankingOptions{}.top_m);                        // default kept
  CHECK(config.input.seed == std::string(TERMALIGN_BINARY_DIR) + "/seed.tsv");  // relative to the file
  std::remove(path.c_str());
}

TEST_CASE("Normalisation auto: unit-center-unit for a seed induced from the vectors alone, else center",
          "[config]") {
  AlignConfig config;
  REQUIRE(config.mapping.normalization == Normalization::automatic);  // the default
  config.input.seed = "seed.tsv";
  CHECK(resolved_normalization(config) == Normalization::center);
  for (const char* induced : {kAutoSeed, kIdenticalSeed, kTransliteratedSeed}) {
    config.input.seed = induced;
    CHECK(resolved_normalization(config) == Normalization::unit_center_unit);
  }
  config.input.dictionary = {"freedict-eng-rus"};  // a dictionary seeds the map: as a seed lexicon
  CHECK(resolved_normalization(config) == Normalization::center);
  config.input.dictionary.clear();
  config.mapping.normalization = Normalization::unit;  // a choice given is kept
  CHECK(resolved_normalization(config) == Normalization::unit);
  CHECK(parse_normalization("auto") == Normalization::automatic);
  CHECK(std::string(to_string(Normalization::automatic)) == "auto");
}

TEST_CASE("The resolved configuration reproduces every option", "[config]") {
  AlignConfig config;
  config.input.src_vectors = "/data/en.bin";
  config.input.tgt_vectors = "/data/fr.vec";
  config.input.seed = "/data/seed.tsv";
  config.input.src_terms = "/data/en.txt";
  config.input.tgt_terms = "/data/fr \"quoted\".txt";
  config.input.most_frequent = 1234;
  config.output.out = "/out/sub.tsv";
  config.mapping.normalization = Normalization::none;
  config.mapping.min_seed_pairs = 7;
  config.composition.lowercase_fallback = false;
  config.scoring.k = 3;
  config.scoring.neighbourhood = Neighbourhood::vocabulary;
  config.scoring.neighbourhood_words = 99;
  config.scoring.tile_rows = 17;
  config.scoring.tile_cols = 19;
  config.scoring.threads = 2;
  config.ranking.top_m = 4;
  config.ranking.mutual_m = 6;
  config.ranking.cap = 100;
  const std::string text = to_toml(config);
  const std::string path = write_temporary("test_config_resolved.toml", text);
  AlignConfig loaded;
  load_config(path, loaded);
  CHECK(to_toml(loaded) == text);
  CHECK(loaded.input.tgt_terms == "/data/fr \"quoted\".txt");
  CHECK(loaded.scoring.tile_cols == 19);
  CHECK(loaded.ranking.mutual_m == 6);
  std::remove(path.c_str());
}

TEST_CASE("changed_options lists the options off their defaults, without the files", "[config]") {
  AlignConfig config;
  CHECK(changed_options(config).empty());
  config.input.src_terms = "/data/en.txt";
  config.output.out = "/out/sub.tsv";
  config.input.seed = "identical";  // a keyword of the seed option, still a file option
  config.scoring.k = ScoringOptions{}.k + 4;
  config.mapping.normalization = Normalization::none;
  config.input.pair = "en-de";
  CHECK(changed_options(config) == std::vector<std::string>{"input.pair = 'en-de'",
                                                            "mapping.normalization = 'none'",
                                                            "scoring.k = " + std::to_string(config.scoring.k)});
}

TEST_CASE("file_fingerprint hashes a file's bytes as fingerprint_bytes does, across its read blocks", "[config]") {
  std::string contents;
  for (std::size_t i = 0; contents.size() < (std::size_t(5) << 19) + 3; ++i)
    contents += std::to_string(i * i) + " ";
  const std::string path = write_temporary("test_config_fingerprint.bin", contents);
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx",
                static_cast<unsigned long long>(fingerprint_bytes(contents.data(), contents.size())));
  CHECK(file_fingerprint(path) == std::string("fnv1a64:") + digits);
  std::ofstream(path) << contents.substr(0, contents.size() - 1);
  CHECK(file_fingerprint(path) != std::string("fnv1a64:") + digits);
  std::remove(path.c_str());
  CHECK_THROWS_WITH(file_fingerprint(path), Catch::Contains(path));
  // A named pipe is not read (with no writer, opening it would wait for ever): no fingerprint.
  const std::string pipe = std::string(TERMALIGN_BINARY_DIR) + "/test_config_fingerprint.fifo";
  std::remove(pipe.c_str());
  REQUIRE(::mkfifo(pipe.c_str(), 0600) == 0);
  CHECK(file_fingerprint(pipe).empty());
  std::remove(pipe.c_str());
}

TEST_CASE("A resolved configuration says what wrote it, and a build with other bundled models warns", "[config]") {
  const std::string text = to_toml(AlignConfig{});
  CHECK_THAT(text, Catch::EndsWith("\n[provenance]\ntermalign = '" + std::string(version()) +
                                   "'\nbundled_models = '" + bundled_models_id() + "'\n"));
  CHECK(bundled_models_id().size() == std::string("fnv1a64:").size() + 16);
  const std::string marker = "with other bundled re-ranker models";
  const auto load = [](const std::string& name, const std::string& contents) {
    CapturedLog log;
    AlignConfig loaded;
    const std::string path = write_temporary(name, contents);
    load_config(path, loaded);
    std::remove(path.c_str());
    return log.lines_with("warning", "with other bundled re-ranker models");
  };
  // This build's own file: nothing to say.
  CHECK(load("test_config_same.toml", text).empty());
  // Another build's models under the default re-ranker: one warning naming the file and both identities.
  const std::string other = "[provenance]\ntermalign = '0.0.9'\nbundled_models = 'fnv1a64:0123456789abcdef'\n";
  const auto warned = load("test_config_other.toml", other);
  REQUIRE(warned.size() == 1);
  CHECK_THAT(warned[0], Catch::Contains("test_config_other.toml: written by termalign 0.0.9"));
  CHECK_THAT(warned[0], Catch::Contains("fnv1a64:0123456789abcdef") && Catch::Contains(bundled_models_id()));
  CHECK(warned[0].find(marker) != std::string::npos);
  // A run that does not use the bundled models ranks the same whatever they are.
  CHECK(load("test_config_none.toml", "[input]\nreranker = 'none'\n" + other).empty());
  // The section holds these two strings only.
  AlignConfig config;
  const std::string unknown = write_temporary("test_config_provenance.toml", "[provenance]\nbuilt = 'today'\n");
  CHECK_THROWS_WITH(load_config(unknown, config), Catch::Contains("test_config_provenance.toml:2") &&
                                                      Catch::Contains("unknown key 'provenance.built'"));
  const std::string number =
      write_temporary("test_config_provenance_number.toml", "[provenance]\ntermalign = 1\n");
  CHECK_THROWS_WITH(load_config(number, config), Catch::Contains("'provenance.termalign' must be a string"));
  std::remove(unknown.c_str());
  std::remove(number.c_str());
}

TEST_CASE("A retired option in an older resolved configuration is ignored with a warning naming it",
          "[config]") {
  CapturedLog log;
  AlignConfig config;
  const std::string path = write_temporary("test_config_retired.toml",
                                           "[mapping]\nrefine_words = 2000\nseed_selection_words = 10000\n");
  REQUIRE_NOTHROW(load_config(path, config));
  std::remove(path.c_str());
  CHECK(config.mapping.refine_words == 2000);  // the file's other options still apply
  const auto warned = log.lines_with("warning", "is no longer an option");
  REQUIRE(warned.size() == 1);
  CHECK_THAT(warned[0], Catch::Contains("test_config_retired.toml:3") &&
                            Catch::Contains("'mapping.seed_selection_words'") && Catch::Contains("transliterated"));
  // A key that never was one stays an error.
  const std::string typo = write_temporary("test_config_typo.toml", "[mapping]\nseed_selection_word = 1\n");
  CHECK_THROWS_WITH(load_config(typo, config), Catch::Contains("unknown key 'mapping.seed_selection_word'"));
  std::remove(typo.c_str());
}

TEST_CASE("Bad configuration files are errors naming the file, line and key", "[config]") {
  AlignConfig config;
  SECTION("unknown key") {
    const std::string path = write_temporary("test_config_unknown.toml", "[scoring]\nk = 5\ncsls_k = 3\n");
    CHECK_THROWS_WITH(load_config(path, config),
                      Catch::Contains("test_config_unknown.toml:3") && Catch::Contains("scoring.csls_k"));
  }
  SECTION("unknown section") {
    const std::string path = write_temporary("test_config_section.toml", "[scorign]\nk = 5\n");
    CHECK_THROWS_WITH(load_config(path, config), Catch::Contains("scorign.k"));
  }
  SECTION("wrong type") {
    const std::string path = write_temporary("test_config_type.toml", "[scoring]\n\nk = \"ten\"\n");
    CHECK_THROWS_WITH(load_config(path, config),
                      Catch::Contains("test_config_type.toml:3") && Catch::Contains("integer"));
  }
  SECTION("negative count") {
    const std::string path = write_temporary("test_config_negative.toml", "[ranking]\ntop_m = -1\n");
    CHECK_THROWS_WITH(load_config(path, config), Catch::Contains("negative"));
  }
  SECTION("unknown enumeration name") {
    const std::string path = write_temporary("test_config_enum.toml", "[mapping]\nnormalization = \"l2\"\n");
    CHECK_THROWS_WITH(load_config(path, config), Catch::Contains(":2") && Catch::Contains("unit-center-unit"));
  }
  SECTION("TOML syntax error") {
    const std::string path = write_temporary("test_config_syntax.toml", "[scoring]\nk = \n");
    CHECK_THROWS_WITH(load_config(path, config), Catch::Contains("test_config_syntax.toml:2"));
  }
}

TEST_CASE("validate() rejects bad values with a sentence", "[config]") {
  AlignConfig config;
  config.input.src_vectors = config.input.tgt_vectors = "v";
  config.input.src_terms = config.input.tgt_terms = config.input.seed = "t";
  CHECK_NOTHROW(config.validate());
  config.scoring.k = 0;
  CHECK_THROWS_WITH(config.validate(), "The CSLS neighbourhood k must be at least 1 (got 0).");
  config.scoring.k = 10;
  config.input.seed.clear();
  CHECK_THROWS_WITH(config.validate(), Catch::Contains("`seed`"));
  config.input.saved_mapping = "m";
  CHECK_NOTHROW(config.validate());
  config.scoring.neighbourhood = Neighbourhood::vocabulary;
  config.scoring.neighbourhood_words = config.input.most_frequent + 1;
  CHECK_THROWS_WITH(config.validate(), Catch::Contains("most_frequent"));
  config.scoring.neighbourhood = Neighbourhood::terms;
  // The refinement's dictionary among the frequent words loaded, not among those loaded for the terms.
  config.input.most_frequent = 1000;
  CHECK_THROWS_WITH(config.validate(), Catch::Contains("refine_words (3000) cannot exceed the number of frequent "
                                                       "words loaded, most_frequent (1000)"));
  config.mapping.refine_iterations = 0;
  CHECK_NOTHROW(config.validate());
  // So are an induced seed's words (a seed file needs none of them).
  config.input.seed = "auto";
  CHECK_THROWS_WITH(config.validate(), Catch::Contains("seed_lexicon_words (10000) cannot exceed"));
  config.mapping.seed_lexicon_words = 0;
  CHECK_NOTHROW(config.validate());
}

TEST_CASE("configs/default.toml holds exactly the library's defaults", "[config]") {
  AlignConfig from_file;
  load_config(TERMALIGN_SOURCE_DIR "/configs/default.toml", from_file);
  CHECK(to_toml(from_file) == to_toml(AlignConfig{}));
}
