// Inputs that look like another kind of input, or like a mistake (lists swapped, another language, a malformed
// environment variable): the robustness tests that name the likely mistake (helpers: robustness_helpers.h).
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unordered_set>
#include <vector>

#include "robustness_helpers.h"
#include "skip.h"

namespace fs = std::filesystem;
using namespace termalign_tests;

// --- Inputs that look like another kind of input, or like a mistake ------------------------------------------

// A copy of a two-column file with its columns swapped.
std::string swapped_columns(const std::string& path) {
  std::string text;
  for (const auto& line : split_lines(read_bytes(path))) {
    const auto tab = line.find('\t');
    text += line.substr(tab + 1) + "\t" + line.substr(0, tab) + "\n";
  }
  return text;
}

TEST_CASE("robustness: a .vec file given as a term list", "[robustness]") {
  const Scratch scratch("vec-as-terms");
  AlignRun run;
  run.tgt_terms = kModels + "fr.vec";
  check_rejected(scratch, run, 3,
                 {run.tgt_terms + ":2: the line looks like a word vector (a word and 100 numbers), not a term",
                  "Is a .vec file given as a term list?"});
}

TEST_CASE("robustness: a pair file given as a term list", "[robustness]") {
  const Scratch scratch("pairs-as-terms");
  AlignRun run;
  run.src_terms = kSample + "terms-en-fr.txt";
  check_rejected(scratch, run, 3,
                 {run.src_terms + ":1: the line looks like a pair (source<TAB>target), not a term",
                  "Is a seed lexicon, gold or submission given as a term list?"});
}

TEST_CASE("robustness: a seed lexicon with its columns swapped", "[robustness]") {
  const Scratch scratch("seed-swapped");
  AlignRun run;
  run.seed = scratch.write("seed.txt", swapped_columns(kSample + "seed-en-fr.txt"));
  check_rejected(scratch, run, 3,
                 {run.seed + ": the columns look swapped: ", "as target<TAB>source, only ", "Swap the two columns",
                  "--allow-reversed"});
  // --allow-reversed=false is the check, as without the flag.
  AlignRun explicit_false = run;
  explicit_false.extra += " --allow-reversed=false";
  check_rejected(scratch, explicit_false, 3, {run.seed + ": the columns look swapped: "});
  // --allow-reversed goes on, with the warning and the low coverage's.
  run.extra += " --allow-reversed";
  check_accepted(scratch, run,
                 {run.seed + ": the columns look swapped", "used as written (--allow-reversed)",
                  "seed pairs (9 %) have both sides", "its columns are swapped"});
}

TEST_CASE("robustness: two outputs of one file, or an output over an input, are usage errors", "[robustness]") {
  const Scratch scratch("outputs-distinct");
  AlignRun run;
  run.out = scratch.file("out.tsv");
  run.extra += " --scores " + scratch.file("./out.tsv");
  check_stopped_at_once(check_rejected(
      scratch, run, 2, {"--out and --scores name the same file (" + scratch.file("./out.tsv") + ")"}));
  run.extra = "--threads 1 --refine-iterations 0 --explain " + scratch.file("out.tsv.config.toml");
  check_rejected(scratch, run, 2, {"the resolved configuration of --out and --explain name the same file"});
  // An output over an input: the input stays as it was.
  const std::string terms = scratch.write("terms-en.txt", read_bytes(kSample + "terms-en.txt"));
  AlignRun over_input;
  over_input.src_terms = terms;
  over_input.extra += " --scores " + terms;
  check_rejected(scratch, over_input, 2,
                 {"The output --scores is the input --src-terms (" + terms + "): writing it would replace it."});
  CHECK(read_bytes(terms) == read_bytes(kSample + "terms-en.txt"));
}

TEST_CASE("robustness: a seed lexicon of which under 20 % of the pairs are usable", "[robustness]") {
  const Scratch scratch("seed-low");
  AlignRun run;
  // The lexicon's first 200 pairs (most usable: enough to whiten in 100 dimensions) among 1000 whose words no
  // vocabulary knows (neither way round).
  std::string seed;
  const auto lines = split_lines(read_bytes(kSample + "seed-en-fr.txt"));
  for (std::size_t i = 0; i < 200; ++i) seed += lines[i] + "\n";
  for (int i = 0; i < 1000; ++i)
    seed += "zzunknown" + std::to_string(i) + "\tqqinconnu" + std::to_string(i) + "\n";
  run.seed = scratch.write("seed.txt", seed);
  const std::string submission =
      check_accepted(scratch, run, {run.seed + ": only ", " of 1200 seed pairs (1", "Likely causes"});
  CHECK_FALSE(submission.empty());
}

TEST_CASE("robustness: the term lists swapped", "[robustness]") {
  const Scratch scratch("terms-swapped");
  AlignRun run;
  std::swap(run.src_terms, run.tgt_terms);
  check_accepted(scratch, run,
                 {run.src_terms + ": only 14 % of the source terms are made of words of the vectors",
                  "are --src-terms and --tgt-terms swapped?"});
}

TEST_CASE("robustness: term lists of another language than the vectors", "[robustness]") {
  const Scratch scratch("terms-other-language");
  AlignRun run;
  // Made-up words, in neither vocabulary: the likely cause is the vectors' language, not swapped lists.
  std::string terms;
  for (int i = 0; i < 50; ++i) terms += "xqzterm" + std::to_string(i) + (i % 3 ? " file\n" : "\n");
  run.tgt_terms = scratch.write("terms-xx.txt", terms);
  check_accepted(scratch, run,
                 {run.tgt_terms + ": only 0 % of the target terms are made of words of the vectors",
                  "are the vectors " + run.tgt_vectors + " of the term list's language (and of its case)?"});
  // A .bin model gives every word a vector from its character n-grams: the warning says they are weaker.
  run.src_vectors = kModels + "en.bin";  // the sample's .bin models (dimension 32)
  run.tgt_vectors = kModels + "fr.bin";
  check_accepted(
      scratch, run,
      {run.tgt_terms + ": only 0 % of the target terms are made of words of the vectors",
       "the others get vectors from their character n-grams (" + run.tgt_vectors + " is a .bin model)"});
}

TEST_CASE("robustness: a list of closed compounds over .vec vectors is composed from their parts",
          "[robustness]") {
  // A German-like stand-in: the sample's multi-word French terms of letters only, their words joined
  // (`référence de cellule` -> `référencedecellule`). .vec vectors know none of them; their parts they know.
  const Scratch scratch("closed-compounds");
  AlignRun run;
  std::string terms;
  std::unordered_set<std::string> joined;
  for (const std::string& term : split_lines(read_bytes(kSample + "terms-fr.txt"))) {
    const bool letters = std::all_of(term.begin(), term.end(), [](char c) {
      return c == ' ' || (c >= 'a' && c <= 'z') || static_cast<unsigned char>(c) >= 0x80;
    });
    std::string compound;
    for (const char c : term) compound += c == ' ' ? "" : std::string(1, c);
    const bool join = letters && term.find(' ') != std::string::npos && compound.size() <= 64;
    if (join) joined.insert(compound);
    terms += (join ? compound : term) + "\n";
  }
  REQUIRE(joined.size() > 150);
  run.tgt_terms = scratch.write("terms-fr.txt", terms);
  const auto targets_joined = [&](const std::string& submission) {
    std::size_t count = 0;
    for (const auto& line : split_lines(submission)) count += joined.count(line.substr(line.find('\t') + 1));
    return count;
  };
  const std::string split = check_accepted(
      scratch, run, {run.tgt_terms + ": ", " % of the words are closed compounds of words of " + run.tgt_vectors});
  run.extra += " --split-closed-compounds false";
  const std::string unsplit = check_accepted(scratch, run, {" of 552 target terms have no usable word"});
  // Unsplit, a joined term is a candidate only by its spelling; split, by its meaning too.
  CHECK(targets_joined(split) > 2 * targets_joined(unsplit));
}

TEST_CASE("robustness: corpora swapped, or of other texts, are named in a warning", "[robustness]") {
  const Scratch scratch("corpora-swapped");
  AlignRun run;
  const std::string en = kSample + "corpus-en.txt", fr = kSample + "corpus-fr.txt";
  run.extra += " --src-corpus " + fr + " --tgt-corpus " + en;
  const std::string swapped = check_accepted(
      scratch, run,
      {fr + ": only 17 % of the source terms (" + run.src_terms + ") occur in this corpus",
       en + ": only 11 % of the target terms (" + run.tgt_terms + ") occur in this corpus",
       "are --src-corpus and --tgt-corpus swapped",
       "the corpus evidence is left out: the bundled model trained without corpora ranks this run"});
  // Left out, they rank as no corpora do (the corpus model on them: AP 0.887 against 0.910 without, on the
  // sample's default run).
  AlignRun without;
  without.out = scratch.file("without.tsv");
  REQUIRE(run_cli(scratch, without.arguments()).exit_code == 0);
  CHECK(swapped == read_bytes(without.out));
  // A model of the user's own keeps them.
  AlignRun own = run;
  own.extra += " --reranker " + std::string(TERMALIGN_SOURCE_DIR) + "/models/reranker-enfr-corpus.txt";
  own.out = scratch.file("own.tsv");
  const Outcome kept = run_cli(scratch, own.arguments());
  CHECK(kept.exit_code == 0);
  CHECK_THAT(kept.errors, !Catch::Contains("the corpus evidence is left out"));
  CHECK(read_bytes(own.out) != swapped);
  // One corpus of other texts: that one is named, as such.
  const std::string other = scratch.write("other.txt", "Nothing of the kind.\nAnother sentence.\n");
  AlignRun one_wrong;
  one_wrong.extra += " --src-corpus " + other + " --tgt-corpus " + fr;
  const Scratch scratch_one("corpus-other");
  check_accepted(scratch_one, one_wrong,
                 {other + ": only 0 % of the source terms",
                  "is it the corpus these terms were found in (or does it hold them only in other forms, "
                  "inflected)?"});
  // The right corpora: no such warning.
  AlignRun right;
  right.extra += " --src-corpus " + en + " --tgt-corpus " + fr;
  const Scratch scratch_right("corpora-right");
  right.out = scratch_right.file("out.tsv");
  const Outcome outcome = run_cli(scratch_right, right.arguments());
  CHECK(outcome.exit_code == 0);
  CHECK_THAT(outcome.errors, !Catch::Contains("occur in this corpus"));
}

TEST_CASE("robustness: evaluate with the gold's or the predictions' columns swapped", "[robustness]") {
  const Scratch scratch("gold-swapped");
  const std::string gold = scratch.write("gold.tsv", swapped_columns(kSample + "terms-en-fr.txt"));
  const std::string lists[] = {"--src-terms", kSample + "terms-en.txt", "--tgt-terms", kSample + "terms-fr.txt"};
  std::vector<std::string> arguments = {"evaluate", "--gold", gold, "--pred", kSample + "terms-en-fr.txt"};
  arguments.insert(arguments.end(), std::begin(lists), std::end(lists));
  Outcome outcome = run_cli(scratch, arguments);
  CHECK(outcome.exit_code == 3);
  CHECK_THAT(outcome.errors, Catch::Contains(gold + ": the columns look swapped: 150 of 150 pairs fit the term "
                                                    "lists"));
  // Without the term lists, the predictions hit the gold reversed.
  outcome = run_cli(scratch, {"evaluate", "--gold", gold, "--pred", kSample + "terms-en-fr.txt"});
  CHECK(outcome.exit_code == 3);
  CHECK_THAT(outcome.errors, Catch::Contains(kSample +
                                             "terms-en-fr.txt: the columns of this file or of the gold look "
                                             "swapped: 150 of 150 pairs are gold pairs of " +
                                             gold + " reversed"));
  CHECK_THAT(outcome.errors, Catch::Contains("give the term lists (--src-terms, --tgt-terms) to tell which"));
  arguments.push_back("--allow-reversed");
  outcome = run_cli(scratch, arguments);
  CHECK(outcome.exit_code == 0);
  CHECK_THAT(outcome.errors, Catch::Contains("used as written (--allow-reversed)"));
  // The predictions' columns swapped, against the term lists.
  arguments[2] = kSample + "terms-en-fr.txt";
  arguments[4] = gold;
  arguments.pop_back();
  outcome = run_cli(scratch, arguments);
  CHECK(outcome.exit_code == 3);
  CHECK_THAT(outcome.errors, Catch::Contains(gold + ": the columns look swapped: 150 of 150 pairs fit the term"));
}

TEST_CASE("robustness: a malformed TERMALIGN_MAX_MEMORY_MB is a usage error", "[robustness]") {
  const Scratch scratch("memory-bad");
  for (const std::string value : {"abc", "0", "-3", "12MB"}) {
    check_stopped_at_once(
        check_rejected(scratch, AlignRun{}, 2,
                       {"TERMALIGN_MAX_MEMORY_MB must be a positive number of MiB (got '" + value + "')."},
                       "TERMALIGN_MAX_MEMORY_MB=" + value));
  }
}

TEST_CASE("robustness: a malformed TERMALIGN_TILE_KERNEL is a usage error, before the lists' errors",
          "[robustness]") {
  const Scratch scratch("kernel-bad");
  const std::vector<std::string> expected{"TERMALIGN_TILE_KERNEL must be auto, eigen or openblas (got \"blas\")."};
  check_stopped_at_once(check_rejected(scratch, AlignRun{}, 2, expected, "TERMALIGN_TILE_KERNEL=blas"));
  // The kernel is chosen while the lists are read (beside the target list on 2 threads): its error still comes
  // first when either list fails too.
  for (const int list : {0, 1}) {
    for (const char* threads : {"1", "2"}) {
      INFO("missing " << (list == 0 ? "source" : "target") << " list, " << threads << " threads");
      AlignRun missing_list;
      (list == 0 ? missing_list.src_terms : missing_list.tgt_terms) = scratch.file("missing-terms.txt");
      missing_list.extra = std::string("--refine-iterations 0 --threads ") + threads;
      check_rejected(scratch, missing_list, 2, expected, "TERMALIGN_TILE_KERNEL=blas");
    }
  }
}

TEST_CASE("robustness: OpenBLAS's tiles asked for where its kernel rounds by position are a usage error",
          "[robustness]") {
  // OpenBLAS's AVX2 kernels (core Haswell) round a product by its place in the tile: its tiles would make the
  // outputs depend on the tiling. OPENBLAS_CORETYPE picks that core on any CPU with AVX2; what the automatic
  // choice says of it decides what asking for OpenBLAS must do.
  const std::string environment = "OPENBLAS_CORETYPE=Haswell";
  std::string version;
  if (FILE* pipe = popen((environment + " " + shell_quote(TERMALIGN_CLI) + " --version").c_str(), "r")) {
    char buffer[512];
    for (std::size_t read; (read = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) version.append(buffer, read);
    pclose(pipe);
  }
  const Scratch scratch("kernel-by-position");
  const std::string forced = environment + " TERMALIGN_TILE_KERNEL=openblas";
  if (version.find("OpenBLAS (core Haswell) rounds a product by its place in the tile") != std::string::npos) {
    check_stopped_at_once(check_rejected(scratch, AlignRun{}, 2,
                                         {"The OpenBLAS tile kernel was asked for, but OpenBLAS (core Haswell) "
                                          "rounds a product by its place in the tile"},
                                         forced));
  } else if (version.find("similarity tiles: OpenBLAS (core Haswell)") != std::string::npos) {
    CHECK(check_accepted(scratch, AlignRun{}, {}, forced) == reference_submission());
  } else {
    termalign_tests::skip_test(
        "this build or CPU has no OpenBLAS Haswell kernel (termalign --version: " + version + ")");
  }
}
