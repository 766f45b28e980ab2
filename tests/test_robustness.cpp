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
#include "skip.h"
#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"
#include "util/resources.h"

namespace fs = std::filesystem;

namespace {

const std::string kSample = std::string(TERMALIGN_SOURCE_DIR) + "/data/sample/";
const std::string kModels = std::string(TERMALIGN_SOURCE_DIR) + "/models/sample/";
const std::string kPreviousOutput = "previous\toutput\n";

std::string read_bytes(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream contents;
  contents << stream.rdbuf();
  return contents.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream << bytes;
  REQUIRE(stream.good());
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines, const std::string& end = "\n") {
  std::string text;
  for (const auto& line : lines) text += line + end;
  return text;
}

// A copy of `source` with its 1-based line `line` replaced by `replacement` (which may hold several lines).
std::string with_line(const std::string& source, std::size_t line, const std::string& replacement) {
  auto lines = split_lines(read_bytes(source));
  REQUIRE(line >= 1);
  REQUIRE(line <= lines.size());
  lines[line - 1] = replacement;
  return join_lines(lines);
}

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// A fresh folder under the build tree, removed afterwards.
class Scratch {
 public:
  explicit Scratch(const std::string& name)
      : dir_(fs::path(TERMALIGN_BINARY_DIR) / "robustness" / (name + "." + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  bool holds(const std::string& path) const { return path.rfind(dir_.string() + "/", 0) == 0; }
  std::string write(const std::string& name, const std::string& bytes) const {
    write_bytes(file(name), bytes);
    return file(name);
  }
  // Files whose name holds ".tmp." (AtomicFile's temporary files).
  std::vector<std::string> temporary_files() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      if (entry.path().filename().string().find(".tmp.") != std::string::npos) found.push_back(entry.path());
    }
    return found;
  }

 private:
  fs::path dir_;
};

// `termalign align` on the sample; each input can be replaced by a broken copy.
struct AlignRun {
  std::string src_vectors = kModels + "en.vec", tgt_vectors = kModels + "fr.vec";
  std::string seed = kSample + "seed-en-fr.txt";
  std::string src_terms = kSample + "terms-en.txt", tgt_terms = kSample + "terms-fr.txt";
  // No refinement: these runs are about the inputs, and the sample's three refinement iterations are most of a
  // run.
  std::string out, extra = "--threads 1 --refine-iterations 0";

  std::vector<std::string> arguments() const {
    std::vector<std::string> arguments = {"align",     "--src-vectors", src_vectors, "--tgt-vectors",
                                          tgt_vectors, "--src-terms",   src_terms,   "--tgt-terms",
                                          tgt_terms,   "--out",         out};
    if (!seed.empty()) arguments.insert(arguments.end(), {"--seed", seed});
    std::istringstream words(extra);
    for (std::string word; words >> word;) arguments.push_back(word);
    return arguments;
  }
};

struct Outcome {
  int exit_code = -1;
  std::string errors;  // stderr
};

// Runs the CLI with `arguments` (stdout discarded, stderr captured) under the extra `environment` assignments.
Outcome run_cli(const Scratch& scratch, const std::vector<std::string>& arguments,
                const std::string& environment = "") {
  std::string command = environment + " " + shell_quote(TERMALIGN_CLI);
  for (const auto& argument : arguments) command += " " + shell_quote(argument);
  const std::string errors = scratch.file("stderr.txt");
  command += " > /dev/null 2> " + shell_quote(errors);
  const int status = std::system(command.c_str());
  Outcome outcome;
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.errors = read_bytes(errors);
  return outcome;
}

// A run that must fail: with a pre-existing output, checks the exit code, that stderr says each of
// `sentence_parts` and that the output and the folder are as they were. Returns what the run printed.
Outcome check_rejected(const Scratch& scratch, AlignRun run, int exit_code,
                       const std::vector<std::string>& sentence_parts, const std::string& environment = "") {
  if (run.out.empty()) run.out = scratch.file("out.tsv");
  // A pre-existing output where one can be created (not in a missing folder, not under /proc).
  const bool had_output = scratch.holds(run.out) && fs::is_directory(fs::path(run.out).parent_path());
  if (had_output) write_bytes(run.out, kPreviousOutput);
  const Outcome outcome = run_cli(scratch, run.arguments(), environment);
  INFO("stderr: " << outcome.errors);
  CHECK(outcome.exit_code == exit_code);
  for (const auto& part : sentence_parts) CHECK_THAT(outcome.errors, Catch::Contains(part));
  if (had_output) CHECK(read_bytes(run.out) == kPreviousOutput);
  CHECK_FALSE(fs::exists(run.out + ".config.toml"));
  CHECK(scratch.temporary_files().empty());
  return outcome;
}

// A run stopped before its work began: no vectors were loaded (their loading logs "words kept").
void check_stopped_at_once(const Outcome& outcome) {
  INFO("stderr: " << outcome.errors);
  CHECK_THAT(outcome.errors, !Catch::Contains("words kept"));
}

// A run that must succeed; returns the submission it wrote.
std::string check_accepted(const Scratch& scratch, AlignRun run, const std::vector<std::string>& warning_parts,
                           const std::string& environment = "") {
  run.out = scratch.file("out.tsv");
  write_bytes(run.out, kPreviousOutput);
  const Outcome outcome = run_cli(scratch, run.arguments(), environment);
  INFO("stderr: " << outcome.errors);
  CHECK(outcome.exit_code == 0);
  for (const auto& part : warning_parts) CHECK_THAT(outcome.errors, Catch::Contains(part));
  CHECK(scratch.temporary_files().empty());
  return read_bytes(run.out);
}

// The submission of the unbroken sample run, computed once.
const std::string& reference_submission() {
  static const std::string submission = [] {
    const Scratch scratch("reference");
    return check_accepted(scratch, AlignRun{}, {});
  }();
  return submission;
}

// An invalid UTF-8 byte, a NUL byte.
const std::string kInvalidUtf8 = "caf\xC3(";
const std::string kNul = std::string("nul") + '\0' + "byte";

}  // namespace

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
  check_rejected(scratch, run, 3, {run.src_vectors + ": truncated fastText model: the file ends inside the"});
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

TEST_CASE("robustness: a memory limit too small for any tile size stops with exit 5", "[robustness]") {
  const Scratch scratch("memory-stop");
  check_rejected(scratch, AlignRun{}, 5,
                 {"needs about", "but only 0.0 MiB may be used (TERMALIGN_MAX_MEMORY_MB", "fewer --threads"},
                 "TERMALIGN_MAX_MEMORY_MB=0.01");
}

TEST_CASE("robustness: a tight memory limit uses smaller tiles and the same submission", "[robustness]") {
  // Unlimited, the sample's run needs about 1.4 MiB with 512 x 2048 tiles (the targets' lists of the re-ranker's
  // evidence included) and about 0.9 MiB with the smallest.
  const Scratch scratch("memory-tiles");
  const std::string submission =
      check_accepted(scratch, AlignRun{}, {"allowed; using 512 x 256 tiles"}, "TERMALIGN_MAX_MEMORY_MB=1.2");
  CHECK(submission == reference_submission());
}

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
