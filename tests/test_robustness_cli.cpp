// Bad configurations, command lines and output paths, process-wide state, the memory guard and signals: the
// robustness tests of the CLI's runs (the helpers and what they check: robustness_helpers.h).
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <spawn.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "io/io.h"
#include "robustness_helpers.h"
#include "scoring/scoring.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/interrupt.h"
#include "termalign/logging.h"
#include "util/resources.h"

namespace fs = std::filesystem;
using namespace termalign_tests;

// --- Configuration and command line --------------------------------------------------------------------------

// The sample run with `--config` holding `toml`: stderr must say "<config path><where><sentence>", or only
// `sentence` when `where` is empty (a sentence that cannot name the file).
void check_config_rejected(const std::string& name, const std::string& toml, int exit_code,
                           const std::string& where, const std::string& sentence) {
  const Scratch scratch(name);
  AlignRun run;
  const std::string config = scratch.write("config.toml", toml);
  run.extra += " --config " + config;
  check_rejected(scratch, run, exit_code, {where.empty() ? sentence : config + where + sentence});
}

TEST_CASE("robustness: a configuration with an unknown key", "[robustness]") {
  check_config_rejected("config-key", "[scoring]\nk = 10\ncsls_k = 5\n", 2,
                        ":3: ", "unknown key 'scoring.csls_k'.");
  // A near miss gets the key it likely meant.
  check_config_rejected("config-key-near", "[ranking]\ntop_n = 5\n", 2,
                        ":2: ", "unknown key 'ranking.top_n'; did you mean 'ranking.top_m'?");
}

TEST_CASE("robustness: a configuration value of the wrong type", "[robustness]") {
  check_config_rejected("config-type", "[ranking]\ntop_m = \"ten\"\n", 2,
                        ":2: ", "'ranking.top_m' must be an integer.");
}

TEST_CASE("robustness: configuration values out of range", "[robustness]") {
  check_config_rejected("config-large", "\n[scoring]\nk = 3000000000\n", 2,
                        ":3: ", "'scoring.k' is too large (got 3000000000).");
  check_config_rejected("config-negative", "[scoring]\ntile_rows = -4\n", 2,
                        ":2: ", "'scoring.tile_rows' cannot be negative (got -4).");
  // Below an option's minimum: validate() runs after the flags override the file, so it names the option only.
  check_config_rejected("config-minimum", "[scoring]\nk = 0\n", 2, "",
                        "The CSLS neighbourhood k must be at least 1 (got 0).");
}

TEST_CASE("robustness: a configuration with a syntax error", "[robustness]") {
  check_config_rejected("config-syntax", "[scoring]\nk = = 3\n", 3, ":2: ", "");
}

TEST_CASE("robustness: a missing configuration file is an input error, an unknown flag a usage error",
          "[robustness]") {
  const Scratch scratch("config-missing");
  AlignRun run;
  SECTION("missing configuration") {
    run.extra += " --config " + scratch.file("no-such.toml");
    check_stopped_at_once(check_rejected(
        scratch, run, 3, {scratch.file("no-such.toml") + ": cannot open file: No such file or directory"}));
  }
  SECTION("unknown flag") {
    run.extra += " --tile-size 4";
    check_rejected(scratch, run, 2, {"--tile-size"});
  }
  SECTION("unknown value of a flag with named values: the value is named once") {
    run.extra += " --precision fp16";
    check_rejected(scratch, run, 2,
                   {"Option --precision: Unknown scoring precision 'fp16': use fp32, bf16 or auto."});
  }
}

// --- Outputs --------------------------------------------------------------------------------------------------

TEST_CASE("robustness: an output path in a missing folder", "[robustness]") {
  const Scratch scratch("out-missing");
  AlignRun run;
  run.out = scratch.file("missing/out.tsv");
  check_stopped_at_once(
      check_rejected(scratch, run, 4, {run.out + ": cannot create output file: No such file or directory"}));
}

TEST_CASE("robustness: an output path in a folder that cannot be written", "[robustness]") {
  // As root, chmod does not stop writes: a parent that is a regular file, and /proc (no new files), do.
  const Scratch scratch("out-readonly");
  AlignRun run;
  SECTION("the parent is a regular file") {
    const std::string parent = scratch.write("plain-file", "x");
    run.out = parent + "/out.tsv";
    check_stopped_at_once(
        check_rejected(scratch, run, 4, {run.out + ": cannot create output file: Not a directory"}));
    CHECK(read_bytes(parent) == "x");
  }
  SECTION("the parent is /proc") {
    run.out = "/proc/termalign-robustness-out.tsv";
    check_stopped_at_once(check_rejected(scratch, run, 4, {run.out + ": cannot create output file: "}));
    CHECK_FALSE(fs::exists(run.out));
  }
}

TEST_CASE("robustness: train-reranker's model path in a missing folder", "[robustness]") {
  const Scratch scratch("reranker-out-missing");
  AlignRun run;
  run.out = scratch.file("missing/model.txt");
  std::vector<std::string> arguments = run.arguments();
  arguments.front() = "train-reranker";
  arguments.insert(arguments.end(), {"--gold", kSample + "terms-en-fr.txt"});
  const Outcome outcome = run_cli(scratch, arguments);
  INFO("stderr: " << outcome.errors);
  CHECK(outcome.exit_code == 4);
  CHECK_THAT(outcome.errors, Catch::Contains(run.out + ": cannot create output file: No such file or directory"));
  check_stopped_at_once(outcome);
  CHECK(scratch.temporary_files().empty());
}

TEST_CASE("robustness: train-reranker's report or held-out list in a missing folder stops it before training",
          "[robustness]") {
  // Opened after the training, such a path lost the trained model.
  const Scratch scratch("reranker-report-missing");
  for (const std::string flag : {"--report", "--held-out"}) {
    INFO(flag);
    AlignRun run;
    run.out = scratch.write("model.txt", "previous model\n");
    const std::string report = scratch.file("missing/report.txt");
    std::vector<std::string> arguments = run.arguments();
    arguments.front() = "train-reranker";
    arguments.insert(arguments.end(), {"--gold", kSample + "terms-en-fr.txt", flag, report});
    const Outcome outcome = run_cli(scratch, arguments);
    INFO("stderr: " << outcome.errors);
    CHECK(outcome.exit_code == 4);
    CHECK_THAT(outcome.errors, Catch::Contains(report + ": cannot create output file: No such file or directory"));
    check_stopped_at_once(outcome);
    CHECK(read_bytes(run.out) == "previous model\n");
    CHECK(scratch.temporary_files().empty());
  }
}

TEST_CASE("robustness: an output path that is a folder stops the run before its work", "[robustness]") {
  const Scratch scratch("out-folder");
  AlignRun run;
  run.out = scratch.file("folder");
  fs::create_directory(run.out);
  const Outcome outcome = run_cli(scratch, run.arguments());
  INFO("stderr: " << outcome.errors);
  CHECK(outcome.exit_code == 4);
  CHECK_THAT(outcome.errors, Catch::Contains(run.out + ": is a folder, not a file"));
  check_stopped_at_once(outcome);
  CHECK(fs::is_directory(run.out));
  CHECK(fs::is_empty(run.out));
  CHECK(scratch.temporary_files().empty());
}

TEST_CASE("robustness: a bad re-ranker or mapping path stops the run before its work", "[robustness]") {
  const Scratch scratch("early-checks");
  AlignRun run;
  SECTION("a re-ranker file that is no model") {
    const std::string model = scratch.write("model.txt", "not a model\n");
    run.extra += " --reranker " + model;
    check_stopped_at_once(check_rejected(scratch, run, 3, {model + ":1: not a termalign re-ranker model"}));
  }
  SECTION("a corpus model without the corpora") {
    run.extra += " --reranker " + std::string(TERMALIGN_SOURCE_DIR) + "/models/reranker-enfr-corpus.txt";
    check_stopped_at_once(check_rejected(
        scratch, run, 3,
        {"reranker-enfr-corpus.txt: the model uses the corpus feature", "this run has no corpora"}));
  }
  SECTION("a mapping to save in a missing folder") {
    const std::string mapping = scratch.file("missing/mapping.bin");
    run.extra += " --save-mapping " + mapping;
    check_stopped_at_once(check_rejected(scratch, run, 4, {mapping + ": its folder", "does not exist"}));
  }
}

// train-reranker on the sample with `extra` flags (one stage, logistic: the quickest training).
Outcome train_sample(const Scratch& scratch, const std::string& extra, bool with_gold = true) {
  AlignRun run;
  run.out = scratch.file("model.txt");
  run.extra += " --stages 1 " +
               std::string(extra.find("--learner") == std::string::npos ? "--learner logistic " : "") + extra;
  std::vector<std::string> arguments = run.arguments();
  arguments.front() = "train-reranker";
  if (with_gold) arguments.insert(arguments.end(), {"--gold", kSample + "terms-en-fr.txt"});
  return run_cli(scratch, arguments);
}

TEST_CASE("robustness: train-reranker rejects training values that would train nothing", "[robustness]") {
  const Scratch scratch("reranker-values");
  const std::pair<std::string, std::string> cases[] = {
      {"--rounds -5", "Training option rounds (--rounds) must be at least 1 (got -5)."},
      {"--max-depth 0", "Training option max_depth (--max-depth) must be at least 1 (got 0)."},
      {"--second-rounds 0", "Training option second_rounds (--second-rounds) must be at least 1 (got 0)."},
      {"--eta 0", "Training option eta (--eta) must be in (0, 1] (got 0)."},
      {"--eta 1.5", "Training option eta (--eta) must be in (0, 1] (got 1.5)."},
      {"--l2 -3", "Training option l2 (--l2) must be 0 or more (got -3)."},
      {"--learner tree", "Unknown learner 'tree': expected logistic, trees, ranking or auto."}};
  for (const auto& [flags, message] : cases) {
    INFO(flags);
    const Outcome outcome = train_sample(scratch, flags);
    INFO("stderr: " << outcome.errors);
    CHECK(outcome.exit_code == 2);
    CHECK_THAT(outcome.errors, Catch::Contains(message));
    check_stopped_at_once(outcome);
    CHECK_FALSE(fs::exists(scratch.file("model.txt")));
  }
  // More folds than source terms: each fold needs terms of its own (checked once the lists are read). A leading 0
  // is read as typed, not as octal (01000 would be 512).
  const Outcome outcome = train_sample(scratch, "--folds 01000");
  CHECK(outcome.exit_code == 2);
  CHECK_THAT(outcome.errors, Catch::Contains("1000 folds for 181 source terms with candidates"));
  CHECK_FALSE(fs::exists(scratch.file("model.txt")));
  CHECK(scratch.temporary_files().empty());
}

TEST_CASE("robustness: a fold that holds every source term with candidates is a usage error", "[robustness]") {
  // Two source terms with vectors among thirty without: the folds are drawn over all of them, so with some fold
  // seeds both land in one fold, and the other fold has nothing to train on.
  const Scratch scratch("reranker-one-fold");
  std::string terms = "absolute values\nalign left\n";
  for (int i = 0; i < 30; ++i) terms += "xqzterm" + std::to_string(i) + "\n";
  std::size_t rejected = 0, trained = 0;
  for (int seed = 1; seed <= 6; ++seed) {
    AlignRun run;
    run.src_terms = scratch.write("terms-en.txt", terms);
    run.out = scratch.file("model.txt");
    run.extra += " --stages 1 --learner logistic --folds 2 --fold-seed " + std::to_string(seed);
    std::vector<std::string> arguments = run.arguments();
    arguments.front() = "train-reranker";
    arguments.insert(arguments.end(), {"--gold", kSample + "terms-en-fr.txt"});
    const Outcome outcome = run_cli(scratch, arguments);
    INFO("fold seed " << seed << ", stderr: " << outcome.errors);
    if (outcome.exit_code == 2) {
      CHECK_THAT(outcome.errors, Catch::Contains("holds every source term with candidates (2), so no model can "
                                                 "score it: use fewer folds (--folds) or another --fold-seed."));
      ++rejected;
    } else {
      CHECK(outcome.exit_code == 0);
      ++trained;
    }
  }
  CHECK(rejected > 0);  // with these seeds both kinds occur
  CHECK(trained > 0);
}

// --- Process-wide state ----------------------------------------------------------------------------------------

TEST_CASE("robustness: writing a file gives it the usual permissions and leaves the umask alone", "[robustness]") {
  const Scratch scratch("umask");
  const mode_t previous = ::umask(027);
  CHECK(termalign::new_file_permissions() == 0640u);
  const std::string path = scratch.file("written.txt");
  termalign::write_file_atomically(path, "text\n");
  struct stat status {};
  REQUIRE(::stat(path.c_str(), &status) == 0);
  CHECK((status.st_mode & 0777) == 0640);
  CHECK(::umask(previous) == 027);  // as it was set: never 0, not even for a moment (it is read, not set)
  CHECK(termalign::new_file_permissions() == (0666u & ~static_cast<unsigned>(previous)));
}

TEST_CASE("robustness: the library's logger is not in spdlog's registry, so a program may use its name",
          "[robustness]") {
  termalign::logger().info("the library's logger exists");
  std::shared_ptr<spdlog::logger> program;
  CHECK_NOTHROW(program = spdlog::stderr_color_mt("termalign"));
  CHECK(program.get() != &termalign::logger());
  spdlog::drop("termalign");
}

// --- Memory guard --------------------------------------------------------------------------------------------

TEST_CASE("robustness: the scoring memory estimate, computed by hand", "[robustness]") {
  termalign::AlignConfig config;
  config.scoring.k = 10;  // the figures below are for k = 10, top_m = 10, mutual_m = 0, neighbourhood = terms
  config.ranking.top_m = 10;
  termalign::TileOptions tiles;  // 512 x 2048
  tiles.threads = 1;
  const auto memory = termalign::estimate_scoring_memory({10, 20, 4}, config, tiles);
  CHECK(memory.term_matrices == 30 * 4 * 4);
  // Tiles padded to 48 x 48: 48 x 48 similarities plus 48 + 48 padded rows of 4 floats.
  CHECK(memory.tile_buffers == (48 * 48 + 96 * 4) * 4);
  // The one-pass CSLS: each of the 10 rows keeps a pool of min(20 targets, 4 x top_m) = 20 candidates, in a
  // buffer of twice that many 16-byte entries, and its 10 largest values, and the 20 columns 10 values each in one
  // thread and in the merge.
  CHECK(memory.top_lists == 10 * (2 * 20 * 16 + 10 * 4) + 2 * 20 * 10 * 4);
  CHECK(memory.candidates == 10 * 10 * sizeof(termalign::Candidate));
  // With mutual_m the two passes run: the neighbourhood pass's 10 rows x 10 values and 20 columns x 10 values
  // outweigh the selection's 10 x 10 candidates and 20 x 1 per column in one thread and in the merge.
  config.ranking.mutual_m = 1;
  CHECK(termalign::estimate_scoring_memory({10, 20, 4}, config, tiles).top_lists ==
        std::max<std::size_t>((10 * 10 + 2 * 20 * 10) * 4, (10 * 10 + 2 * 20 * 1) * sizeof(termalign::Candidate)));
  config.ranking.mutual_m = 0;
  tiles.threads = 3;  // 10 rows are one row block: one thread works
  CHECK(termalign::estimate_scoring_memory({10, 20, 4}, config, tiles).tile_buffers == memory.tile_buffers);
}

// The sample's .bin models (dimension 32) load in about 0.25 MiB each, 0.51 MiB together (one budget), less than
// the scoring needs: the limit reaches the scoring. The .vec files (dimension 100) need 2.2 MiB each to load: 1.6
// MiB of vectors kept, and 0.6 MiB for the words read and their duplicate table, released after.
AlignRun with_bin_models() {
  AlignRun run;
  run.src_vectors = kModels + "en.bin";
  run.tgt_vectors = kModels + "fr.bin";
  return run;
}

TEST_CASE("robustness: a memory limit too small for any tile size stops with exit 5", "[robustness]") {
  const Scratch scratch("memory-stop");
  check_rejected(scratch, with_bin_models(), 5,
                 {"needs about", "but only 0.5 MiB may be used (TERMALIGN_MAX_MEMORY_MB", "fewer --threads"},
                 "TERMALIGN_MAX_MEMORY_MB=0.52");
}

TEST_CASE("robustness: a memory limit too small to load the vectors stops with exit 5 before loading",
          "[robustness]") {
  const Scratch scratch("memory-load");
  AlignRun run;
  check_rejected(
      scratch, run, 5,
      {run.src_vectors + ": loading the vectors of 4162 words needs 2.2 MiB (1.6 MiB of vectors, 0.6 MiB to read "
                         "the file), but only 1.5 MiB may be used",
       "--most-frequent"},
      "TERMALIGN_MAX_MEMORY_MB=1.5");
}

TEST_CASE("robustness: a memory limit below what inflating a .vec.gz takes stops with exit 5", "[robustness]") {
  // The sample's vectors gzipped: each side keeps 1.6 MiB of vectors but inflates through two blocks of 17 MiB,
  // which the limit counts too (it once counted the vectors alone, and this run went through).
  const Scratch scratch("memory-gz");
  AlignRun run;
  run.src_vectors = write_gzip(scratch.file("en.vec.gz"), read_bytes(kModels + "en.vec"));
  run.tgt_vectors = write_gzip(scratch.file("fr.vec.gz"), read_bytes(kModels + "fr.vec"));
  check_rejected(
      scratch, run, 5,
      {".vec.gz: reading the file needs 34.0 MiB", "but only 20.0 MiB may be used (TERMALIGN_MAX_MEMORY_MB"},
      "TERMALIGN_MAX_MEMORY_MB=20");
}

TEST_CASE("robustness: a tight memory limit uses smaller tiles and the same submission", "[robustness]") {
  // Unlimited, the sample's run with its .bin models needs about 1.0 MiB with 512 x 2048 tiles (the targets' lists
  // of the re-ranker's evidence included) and about 0.5 MiB with the smallest.
  const Scratch scratch("memory-tiles");
  const std::string unlimited = check_accepted(scratch, with_bin_models(), {});
  const std::string submission = check_accepted(scratch, with_bin_models(), {"allowed; using 512 x 256 tiles"},
                                                "TERMALIGN_MAX_MEMORY_MB=0.9");
  CHECK(submission == unlimited);
}

// --- Signals --------------------------------------------------------------------------------------------------

TEST_CASE("robustness: SIGINT or SIGTERM half-way exits 130 and leaves the previous output", "[robustness]") {
  const Scratch scratch("signals");
  for (const int signal_number : {SIGINT, SIGTERM}) {
    AlignRun run;
    run.out = scratch.file("out.tsv");
    // One-row tiles make the scoring slow (hundreds of thousands of tiny products): seconds to interrupt in.
    run.extra = "--threads 1 --tile-rows 1 --tile-cols 1";
    write_bytes(run.out, kPreviousOutput);
    const std::string errors = scratch.file("stderr.txt");
    std::vector<std::string> arguments = run.arguments();
    arguments.insert(arguments.begin(), TERMALIGN_CLI);
    std::vector<char*> argv;
    for (auto& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t child = 0;
    REQUIRE(posix_spawn(&child, TERMALIGN_CLI, &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    // Wait until the mapping is fitted (the log says how many seed pairs were usable): scoring comes next.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (read_bytes(errors).find("seed pairs have both sides") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    REQUIRE(::kill(child, signal_number) == 0);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    const std::string messages = read_bytes(errors);
    INFO("signal " << signal_number << ", stderr: " << messages);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    CHECK_THAT(messages,
               Catch::Contains(signal_number == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"));
    CHECK(read_bytes(run.out) == kPreviousOutput);
    CHECK_FALSE(fs::exists(run.out + ".config.toml"));
    CHECK(scratch.temporary_files().empty());
  }
}

TEST_CASE("robustness: a signal while an output is being written removes its temporary file", "[robustness]") {
  // An AtomicFile held open in a child process: SIGTERM must remove its temporary file and keep the old file.
  const Scratch scratch("signal-write");
  const std::string out = scratch.file("out.tsv");
  write_bytes(out, kPreviousOutput);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    termalign::install_interrupt_handlers();
    const int quiet = ::open("/dev/null", O_WRONLY);
    ::dup2(quiet, STDERR_FILENO);
    termalign::AtomicFile file(out);
    file.write("new\tcontents\n");
    ::pause();  // the signal ends the process
    ::_exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (scratch.temporary_files().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(scratch.temporary_files().size() == 1);
  REQUIRE(::kill(child, SIGTERM) == 0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(scratch.temporary_files().empty());
  CHECK(read_bytes(out) == kPreviousOutput);
}

// Under AddressSanitizer, malloc is the sanitizer's own: glibc's settings and statistics do not apply.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TERMALIGN_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TERMALIGN_TEST_ASAN 1
#endif
#if defined(__GLIBC__) && !defined(TERMALIGN_TEST_ASAN)
TEST_CASE("tune_allocator keeps blocks of tens of MB in the heap, which it has grown", "[resources]") {
  termalign::tune_allocator();
  // The calling thread's arena was grown by two blocks of 30 MiB, freed and kept (not trimmed).
  CHECK(mallinfo2().arena >= std::size_t{60} << 20);
  // A 20 MiB block now comes from the heap, not from a mapping of its own (glibc's default threshold is 128 KiB).
  const std::size_t mapped_before = mallinfo2().hblkhd;
  void* block = std::malloc(std::size_t{20} << 20);
  REQUIRE(block != nullptr);
  CHECK(mallinfo2().hblkhd == mapped_before);
  std::free(block);
}
#endif
