// Unreadable files, term lists, seed lexicons and vectors; test_robustness_cli.cpp and test_robustness_mistakes.cpp
// hold the other rows. Helpers: robustness_helpers.h.
// Bad inputs and faults: one test per row of docs/robustness.md. Each runs the real CLI on the bundled sample
// (data/sample, models/sample) with one thing broken, in a scratch folder, and checks the exit code, the one
// sentence on stderr naming the file (and line), that a pre-existing output is byte-identical afterwards and that
// no temporary file is left behind.
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
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "io/io.h"
#include "robustness_helpers.h"
#include "skip.h"
#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"
#include "util/resources.h"

namespace fs = std::filesystem;

using namespace termalign_tests;

// --- Files that cannot be read -----------------------------------------------------------------------------

TEST_CASE("robustness: a missing term list", "[robustness]") {
  const Scratch scratch("missing");
  AlignRun run;
  run.src_terms = scratch.file("no-such-terms.txt");
  check_rejected(scratch, run, 3, {run.src_terms + ": cannot open file: No such file or directory"});
}

TEST_CASE("robustness: a missing vector file", "[robustness]") {
  const Scratch scratch("missing-vec");
  AlignRun run;
  run.tgt_vectors = scratch.file("no-such.vec");
  check_rejected(scratch, run, 3, {run.tgt_vectors + ": cannot open file: No such file or directory"});
}

TEST_CASE("robustness: an unreadable term list (a folder)", "[robustness]") {
  // As root every file is readable: a folder given as a file is the unreadable input that remains.
  const Scratch scratch("unreadable");
  AlignRun run;
  run.src_terms = scratch.file("folder");
  fs::create_directories(run.src_terms);
  check_rejected(scratch, run, 3, {run.src_terms + ": is a folder, not a file"});
}

// --- Term lists -----------------------------------------------------------------------------------------------

TEST_CASE("robustness: an empty term list", "[robustness]") {
  const Scratch scratch("empty");
  AlignRun run;
  run.tgt_terms = scratch.write("terms-fr.txt", "\n  \n");
  check_rejected(scratch, run, 3, {run.tgt_terms + ": the term list is empty."});
}

TEST_CASE("robustness: a term list with invalid UTF-8", "[robustness]") {
  const Scratch scratch("terms-utf8");
  AlignRun run;
  run.src_terms = scratch.write("terms-en.txt", with_line(kSample + "terms-en.txt", 7, kInvalidUtf8));
  check_rejected(scratch, run, 3, {run.src_terms + ":7: line is not valid UTF-8"});
}

TEST_CASE("robustness: a term list with a NUL byte", "[robustness]") {
  const Scratch scratch("terms-nul");
  AlignRun run;
  run.src_terms = scratch.write("terms-en.txt", with_line(kSample + "terms-en.txt", 12, kNul));
  check_rejected(scratch, run, 3, {run.src_terms + ":12: line contains a NUL byte"});
}

TEST_CASE("robustness: a term list with a 1 MB line is accepted as one long term", "[robustness]") {
  const Scratch scratch("terms-long");
  AlignRun run;
  std::string long_term;
  while (long_term.size() < (std::size_t{1} << 20)) long_term += "file ";
  long_term.pop_back();
  run.src_terms = scratch.write("terms-en.txt", read_bytes(kSample + "terms-en.txt") + long_term + "\n");
  const std::string submission = check_accepted(scratch, run, {});
  // The long term is the mean of one word's vector, like "file" itself: ranked like any other, in one line.
  bool found = false;
  for (const auto& line : split_lines(submission)) {
    CHECK(std::count(line.begin(), line.end(), '\t') == 1);
    found = found || line.rfind(long_term + "\t", 0) == 0;
  }
  CHECK(found);
}

TEST_CASE("robustness: a term list with CRLF line ends gives the same submission", "[robustness]") {
  const Scratch scratch("terms-crlf");
  AlignRun run;
  run.tgt_terms =
      scratch.write("terms-fr.txt", join_lines(split_lines(read_bytes(kSample + "terms-fr.txt")), "\r\n"));
  const std::string submission =
      check_accepted(scratch, run, {run.tgt_terms + ": 552 lines end with CRLF; accepted"});
  CHECK(submission == reference_submission());
}

TEST_CASE("robustness: a term list joined from files with byte order marks, or with CR-only line ends",
          "[robustness]") {
  // Two halves of the list, each saved with a BOM, then concatenated: the second BOM is inside the file.
  const Scratch scratch("terms-joined");
  const auto lines = split_lines(read_bytes(kSample + "terms-fr.txt"));
  const std::size_t half = lines.size() / 2;
  const std::vector<std::string> first(lines.begin(), lines.begin() + static_cast<long>(half)),
      second(lines.begin() + static_cast<long>(half), lines.end());
  AlignRun run;
  run.tgt_terms =
      scratch.write("terms-fr.txt", "\xEF\xBB\xBF" + join_lines(first) + "\xEF\xBB\xBF" + join_lines(second));
  CHECK(check_accepted(scratch, run,
                       {run.tgt_terms + ": starts with a UTF-8 byte order mark; ignored",
                        run.tgt_terms + ": 1 lines after the first start with a UTF-8 byte order mark"}) ==
        reference_submission());
  // CR-only line ends: the whole list would be one term.
  AlignRun cr_only;
  cr_only.out = scratch.file("cr.tsv");
  cr_only.tgt_terms = scratch.write("terms-cr.txt", join_lines(lines, "\r"));
  check_stopped_at_once(check_rejected(scratch, cr_only, 3,
                                       {cr_only.tgt_terms + ":1: line holds a carriage return (CR) inside: a file "
                                                            "with CR-only line ends?"}));
}

TEST_CASE("robustness: a term list in decomposed Unicode (NFD) is named in a warning", "[robustness]") {
  // `é` as `e` and a combining acute accent, as some systems write file names and text: the vectors' words are
  // composed (NFC), so these terms would miss them without a word.
  const Scratch scratch("terms-nfd");
  AlignRun run;
  auto lines = split_lines(read_bytes(kSample + "terms-fr.txt"));
  std::size_t decomposed = 0;
  for (std::string& line : lines) {
    bool changed = false;
    for (std::size_t at; (at = line.find("\xC3\xA9")) != std::string::npos; changed = true)
      line.replace(at, 2, "e\xCC\x81");
    decomposed += changed;
  }
  REQUIRE(decomposed > 20);
  run.tgt_terms = scratch.write("terms-fr.txt", join_lines(lines));
  check_accepted(scratch, run,
                 {run.tgt_terms + ": " + std::to_string(decomposed) + " lines are not in Unicode NFC",
                  "convert the file to NFC"});
  // The sample as it is (NFC): no such warning.
  AlignRun plain;
  plain.out = scratch.file("plain.tsv");
  CHECK_THAT(run_cli(scratch, plain.arguments()).errors, !Catch::Contains("NFC"));
}

TEST_CASE("robustness: a term list with a byte order mark gives the same submission", "[robustness]") {
  const Scratch scratch("terms-bom");
  AlignRun run;
  run.src_terms = scratch.write("terms-en.txt", "\xEF\xBB\xBF" + read_bytes(kSample + "terms-en.txt"));
  const std::string submission =
      check_accepted(scratch, run, {run.src_terms + ": starts with a UTF-8 byte order mark; ignored"});
  CHECK(submission == reference_submission());
}

// --- Seed lexicons --------------------------------------------------------------------------------------------

TEST_CASE("robustness: a seed lexicon with invalid UTF-8", "[robustness]") {
  const Scratch scratch("seed-utf8");
  AlignRun run;
  run.seed = scratch.write("seed.txt", with_line(kSample + "seed-en-fr.txt", 300, "word\t" + kInvalidUtf8));
  check_rejected(scratch, run, 3, {run.seed + ":300: line is not valid UTF-8"});
}

TEST_CASE("robustness: a seed lexicon with a NUL byte", "[robustness]") {
  const Scratch scratch("seed-nul");
  AlignRun run;
  run.seed = scratch.write("seed.txt", with_line(kSample + "seed-en-fr.txt", 4000, kNul + "\tmot"));
  check_rejected(scratch, run, 3, {run.seed + ":4000: line contains a NUL byte"});
}

TEST_CASE("robustness: a seed lexicon line without a TAB", "[robustness]") {
  const Scratch scratch("seed-columns");
  AlignRun run;
  run.seed = scratch.write("seed.txt", with_line(kSample + "seed-en-fr.txt", 2, "of de"));
  check_rejected(scratch, run, 3,
                 {run.seed + ":2: expected exactly 2 TAB-separated columns (source<TAB>target), found 1"});
}

TEST_CASE("robustness: a seed lexicon with a 1 MB line is accepted (the pair is unusable)", "[robustness]") {
  const Scratch scratch("seed-long");
  AlignRun run;
  run.seed = scratch.write("seed.txt", read_bytes(kSample + "seed-en-fr.txt") + "word\t" +
                                           std::string(std::size_t{1} << 20, 'x') + "\n");
  // The pair has no vector, so the mapping and the submission are those of the unbroken seed lexicon.
  CHECK(check_accepted(scratch, run, {}) == reference_submission());
}

TEST_CASE("robustness: a seed lexicon with CRLF and a byte order mark gives the same submission", "[robustness]") {
  const Scratch scratch("seed-crlf");
  AlignRun run;
  run.seed = scratch.write(
      "seed.txt", "\xEF\xBB\xBF" + join_lines(split_lines(read_bytes(kSample + "seed-en-fr.txt")), "\r\n"));
  const std::string submission = check_accepted(
      scratch, run,
      {run.seed + ": starts with a UTF-8 byte order mark; ignored", run.seed + ": 5000 lines end with CRLF"});
  CHECK(submission == reference_submission());
}

TEST_CASE("robustness: a seed lexicon with no pair in the vocabularies", "[robustness]") {
  const Scratch scratch("seed-unknown");
  AlignRun run;
  run.seed = scratch.write("seed.txt", "qqqzx\tzzzqq\nxxyyq\tyyxxq\n");
  check_rejected(scratch, run, 3,
                 {run.seed + ": only 0 of 2 seed pairs have both words in the vectors; at least 50 are needed"});
}

// --- Vectors --------------------------------------------------------------------------------------------------

TEST_CASE("robustness: cased vectors under lower-cased lists give the lower-cased vectors' list", "[robustness]") {
  // Official fastText vectors keep case (German nouns); BUCC lists and seeds are lower-cased. Each word of the
  // target vectors capitalised: every lower-cased term word, seed word and word-level lookup must find it.
  const Scratch scratch("vec-cased");
  AlignRun run;
  run.out = scratch.file("lower.tsv");
  REQUIRE(run_cli(scratch, run.arguments()).exit_code == 0);
  const std::string lower = read_bytes(run.out);
  auto lines = split_lines(read_bytes(kModels + "fr.vec"));
  std::size_t capitalised = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty() || lines[i][0] < 'a' || lines[i][0] > 'z') continue;
    lines[i][0] = static_cast<char>(lines[i][0] - 'a' + 'A');
    ++capitalised;
  }
  CHECK(capitalised > 3000);
  run.tgt_vectors = scratch.write("fr-cased.vec", join_lines(lines));
  run.out = scratch.file("cased.tsv");
  const Outcome outcome = run_cli(scratch, run.arguments());
  INFO("stderr: " << outcome.errors);
  REQUIRE(outcome.exit_code == 0);
  CHECK(read_bytes(run.out) == lower);
  // Without the case fallback the capitalised words are not found.
  run.extra += " --lowercase-fallback false";
  run.out = scratch.file("exact.tsv");
  REQUIRE(run_cli(scratch, run.arguments()).exit_code == 0);
  CHECK(read_bytes(run.out) != lower);
}

TEST_CASE("robustness: a .vec with a bad header", "[robustness]") {
  const Scratch scratch("vec-header");
  AlignRun run;
  run.src_vectors = scratch.write("en.vec", with_line(kModels + "en.vec", 1, "4162 100 7"));
  check_rejected(scratch, run, 3, {run.src_vectors + ":1: bad header: expected '<number of words> <dimension>'"});
}

TEST_CASE("robustness: a .vec with a short row", "[robustness]") {
  const Scratch scratch("vec-short");
  AlignRun run;
  auto lines = split_lines(read_bytes(kModels + "en.vec"));
  lines[99] = lines[99].substr(0, lines[99].find_last_not_of(' ') + 1);  // without fastText's trailing space
  lines[99] = lines[99].substr(0, lines[99].rfind(' '));                 // line 100 loses its last value
  run.src_vectors = scratch.write("en.vec", join_lines(lines));
  check_rejected(scratch, run, 3, {run.src_vectors + ":100: expected 100 values after the word, found 99"});
}

TEST_CASE("robustness: a .vec whose header announces a huge dimension", "[robustness]") {
  // Found by fuzz_vec: 2 rows of dimension 700,000,002 made the loader allocate 5.6 GB before reading a row.
  const Scratch scratch("vec-huge-dim");
  AlignRun run;
  run.src_vectors = scratch.write("en.vec", "2 700000002\nthe 0.5 0.25\nof 0.5 0.25\n");
  // The same header on both sides, or the headers' mismatch is reported before either file is read.
  run.tgt_vectors = scratch.write("fr.vec", "2 700000002\nle 0.5 0.25\nde 0.5 0.25\n");
  check_rejected(scratch, run, 3, {run.src_vectors + ":2: expected 700000002 values after the word, found 2"});
}

TEST_CASE("robustness: a .vec with a long row", "[robustness]") {
  const Scratch scratch("vec-long");
  AlignRun run;
  auto lines = split_lines(read_bytes(kModels + "fr.vec"));
  lines[2999] = lines[2999].substr(0, lines[2999].find_last_not_of(' ') + 1) + " 0.5";
  run.tgt_vectors = scratch.write("fr.vec", join_lines(lines));
  check_rejected(scratch, run, 3, {run.tgt_vectors + ":3000: expected 100 values after the word, found 101"});
}

TEST_CASE("robustness: a .vec with a value that is not a number or not finite", "[robustness]") {
  const Scratch scratch("vec-values");
  // A row of 100 values, 0.1 except `bad` at the 1-based `position`, written as line `line` of en.vec.
  const auto broken_vec = [&](std::size_t line, int position, const std::string& bad) {
    std::string row = "breakage";
    for (int i = 1; i <= 100; ++i) row += " " + (i == position ? bad : std::string("0.1"));
    return scratch.write("en.vec", with_line(kModels + "en.vec", line, row));
  };
  AlignRun run;
  SECTION("not a number") {
    run.src_vectors = broken_vec(42, 2, "abc");
    check_rejected(scratch, run, 3, {run.src_vectors + ":42: value 2 'abc' is not a number"});
  }
  SECTION("not finite") {
    run.src_vectors = broken_vec(9, 58, "inf");
    check_rejected(scratch, run, 3, {run.src_vectors + ":9: value 58 'inf' is not a finite float"});
  }
  SECTION("overflowing a float") {
    run.src_vectors = broken_vec(9, 100, "1e39");
    check_rejected(scratch, run, 3, {run.src_vectors + ":9: value 100 '1e39' is not a finite float"});
  }
}

TEST_CASE("robustness: a .vec with a duplicate word", "[robustness]") {
  const Scratch scratch("vec-duplicate");
  AlignRun run;
  const auto lines = split_lines(read_bytes(kModels + "en.vec"));
  const std::string word = lines[4].substr(0, lines[4].find(' '));  // the word of line 5
  run.src_vectors = scratch.write("en.vec", with_line(kModels + "en.vec", 2000, lines[4]));
  check_rejected(scratch, run, 3, {run.src_vectors + ":2000: duplicate word '" + word + "' (first at line 5)"});
}

TEST_CASE("robustness: a truncated .bin", "[robustness]") {
  const Scratch scratch("bin-truncated");
  AlignRun run;
  const std::string model = read_bytes(kModels + "en.bin");
  run.src_vectors = scratch.write("en.bin", model.substr(0, model.size() / 2));
  run.tgt_vectors = kModels + "fr.bin";  // of the same dimension: the headers agree
  check_rejected(scratch, run, 3, {run.src_vectors + ": truncated fastText model: the file ends inside the"});
}

TEST_CASE("robustness: a .bin.gz whose header claims 2^31 - 1 words, in 4 GB of address space", "[robustness]") {
  // Once 16 GiB of entry offsets reserved from the header: "out of memory", exit 5.
  if (termalign_tests::kAddressSanitizer) {
    termalign_tests::skip_test("AddressSanitizer's shadow memory does not fit in 4 GB of address space");
    return;
  }
  const Scratch scratch("bin-gz-claiming");
  AlignRun run;
  run.src_vectors = write_gzip(scratch.file("en.bin.gz"),
                               claiming_most_words(read_bytes(kModels + "en.bin"), std::size_t{24} << 20));
  run.tgt_vectors = kModels + "fr.bin";
  check_rejected(scratch, run, 3, {run.src_vectors + ": corrupt fastText model: "}, "ulimit -v 4000000;");
}

TEST_CASE("robustness: a .vec.gz without line ends stops at the line, holding no more than a block of it",
          "[robustness]") {
  // 64 MiB of text without a line end: the reader once carried the unfinished line from block to block, and
  // copied it whole, before it found the header bad (200 MiB more than a run that stops at once). Peaks against
  // a run whose header is bad at once: the second 17 MiB block and a block carried (33 MiB) more at most.
  const Scratch scratch("vec-gz-no-line-end");
  const auto endless = [&](const std::string& name, const std::string& start) {
    const std::string path = scratch.file(name);
    gzFile out = gzopen(path.c_str(), "wb1");
    REQUIRE(out != nullptr);
    const std::string piece(std::size_t{1} << 20, 'x');
    REQUIRE(gzwrite(out, start.data(), static_cast<unsigned>(start.size())) == static_cast<int>(start.size()));
    for (int i = 0; i < 64; ++i) REQUIRE(gzwrite(out, piece.data(), 1u << 20) == 1 << 20);
    REQUIRE(gzclose(out) == Z_OK);
    return path;
  };
  const std::string peak_file = scratch.file("peak.txt");
  AlignRun run;
  run.src_vectors = write_gzip(scratch.file("no-header.vec.gz"), "not a header\n");
  check_rejected(scratch, run, 3, {run.src_vectors + ":1: bad header"}, measuring_peak(peak_file));
  const long at_once = peak_kib(peak_file);
  run.src_vectors = endless("en.vec.gz", "");
  check_rejected(scratch, run, 3,
                 {run.src_vectors + ":1: the first line is longer than 1048576 bytes: not a .vec header "
                                    "'<number of words> <dimension>'"},
                 measuring_peak(peak_file));
  CHECK(peak_kib(peak_file) < at_once + 48 * 1024);
  // After the header, a row: a word and 100 values take no more than 1 MiB and 64 bytes a value.
  run.src_vectors = endless("row.vec.gz", "2 100\n");
  check_rejected(
      scratch, run, 3,
      {run.src_vectors + ":2: the line is longer than 1054976 bytes, more than a word and 100 values take"},
      measuring_peak(peak_file));
  CHECK(peak_kib(peak_file) < at_once + 48 * 1024);
  // The same errors for a .vec.
  const std::string line(std::size_t{2} << 20, 'x');
  run.src_vectors = scratch.write("en.vec", line);
  check_rejected(scratch, run, 3, {run.src_vectors + ":1: the first line is longer than 1048576 bytes"});
  run.src_vectors = scratch.write("row.vec", "2 100\n" + line);
  check_rejected(scratch, run, 3, {run.src_vectors + ":2: the line is longer than 1054976 bytes"});
}

TEST_CASE("robustness: a file that is not a fastText model", "[robustness]") {
  const Scratch scratch("bin-garbage");
  AlignRun run;
  SECTION("without fastText's magic number it is read as .vec, whose header is wrong") {
    run.tgt_vectors = scratch.write("fr.bin", std::string("\x89PNG\r\n\x1a\n", 8) + std::string(64, '\x01'));
    check_rejected(scratch, run, 3, {run.tgt_vectors + ":1: bad header"});
  }
  SECTION("with the magic number but an unknown version") {
    std::string model = read_bytes(kModels + "fr.bin");
    model[4] = 99;  // the int32 version follows the int32 magic number
    run.tgt_vectors = scratch.write("fr.bin", model);
    check_rejected(scratch, run, 3, {run.tgt_vectors + ": unsupported fastText model version 99"});
  }
}

TEST_CASE("robustness: vectors of different dimensions for the two languages", "[robustness]") {
  const Scratch scratch("dims");
  AlignRun run;
  auto lines = split_lines(read_bytes(kModels + "fr.vec"));
  lines[0] = lines[0].substr(0, lines[0].find(' ')) + " 99";
  for (std::size_t i = 1; i < lines.size(); ++i) lines[i] = lines[i].substr(0, lines[i].find_last_not_of(' ') + 1);
  for (std::size_t i = 1; i < lines.size(); ++i) lines[i] = lines[i].substr(0, lines[i].rfind(' '));
  run.tgt_vectors = scratch.write("fr.vec", join_lines(lines));
  check_rejected(scratch, run, 3,
                 {run.tgt_vectors + ": the vectors have dimension 99 but the source vectors (" + run.src_vectors +
                  ") have dimension 100"});
}
