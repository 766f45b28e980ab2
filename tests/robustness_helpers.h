// Helpers of the robustness tests (tests/test_robustness*.cpp): a scratch folder, the sample run with any input
// replaced by a broken copy, and checks of a run the CLI refuses or accepts.
#pragma once

#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace fs = std::filesystem;

namespace termalign_tests {

inline const std::string kSample = std::string(TERMALIGN_SOURCE_DIR) + "/data/sample/";
inline const std::string kModels = std::string(TERMALIGN_SOURCE_DIR) + "/models/sample/";
inline const std::string kPreviousOutput = "previous\toutput\n";

inline std::string read_bytes(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream contents;
  contents << stream.rdbuf();
  return contents.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream << bytes;
  REQUIRE(stream.good());
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

inline std::string join_lines(const std::vector<std::string>& lines, const std::string& end = "\n") {
  std::string text;
  for (const auto& line : lines) text += line + end;
  return text;
}

// A copy of `source` with its 1-based line `line` replaced by `replacement` (which may hold several lines).
inline std::string with_line(const std::string& source, std::size_t line, const std::string& replacement) {
  auto lines = split_lines(read_bytes(source));
  REQUIRE(line >= 1);
  REQUIRE(line <= lines.size());
  lines[line - 1] = replacement;
  return join_lines(lines);
}

inline std::string shell_quote(const std::string& text) {
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

// Runs the CLI with `arguments` (stdout discarded, stderr captured) under the extra `environment` assignments
// (or what precedes the command: "ulimit -v 4000000;", measuring_peak's).
inline Outcome run_cli(const Scratch& scratch, const std::vector<std::string>& arguments,
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

// run_cli's `environment` that runs the CLI as the child of a small Python process, which writes the CLI's peak
// resident memory (KiB) into `peak_file` (read it with peak_kib). A child of the test process itself would start
// at the test process's own peak, whose memory it shares until it runs the CLI.
inline std::string measuring_peak(const std::string& peak_file) {
  return "/usr/bin/python3 -c " +
         shell_quote(
             "import resource, subprocess, sys\n"
             "code = subprocess.call(sys.argv[2:])\n"
             "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
             "sys.exit(code)\n") +
         " " + shell_quote(peak_file);
}
inline long peak_kib(const std::string& peak_file) { return std::stol(read_bytes(peak_file)); }

// A run that must fail: with a pre-existing output, checks the exit code, that stderr says each of
// `sentence_parts` and that the output and the folder are as they were. Returns what the run printed.
inline Outcome check_rejected(const Scratch& scratch, AlignRun run, int exit_code,
                              const std::vector<std::string>& sentence_parts,
                              const std::string& environment = "") {
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
inline void check_stopped_at_once(const Outcome& outcome) {
  INFO("stderr: " << outcome.errors);
  CHECK_THAT(outcome.errors, !Catch::Contains("words kept"));
}

// A run that must succeed; returns the submission it wrote.
inline std::string check_accepted(const Scratch& scratch, AlignRun run,
                                  const std::vector<std::string>& warning_parts,
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
inline const std::string& reference_submission() {
  static const std::string submission = [] {
    const Scratch scratch("reference");
    return check_accepted(scratch, AlignRun{}, {});
  }();
  return submission;
}

// `bytes` gzipped into `path` (zlib level 1, as `gzip -1`); returns the path.
inline std::string write_gzip(const std::string& path, const std::string& bytes) {
  gzFile out = gzopen(path.c_str(), "wb1");
  REQUIRE(out != nullptr);
  REQUIRE(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(out) == Z_OK);
  return path;
}

// The header of the fastText model `model` (its bytes) up to its dictionary's sizes, which now claim 2^31 - 1
// words (and no bucket: the words alone fill int32's rows), then `junk_bytes` seeded random bytes instead of its
// entries. Gzipped, 21 MB of junk pass the reader's first bound (an entry takes 10 bytes at least, and deflate
// inflates up to 1032 times).
inline std::string claiming_most_words(const std::string& model, std::size_t junk_bytes) {
  constexpr std::size_t kBucketAt = 4 + 4 + 8 * 4, kSizesAt = 4 + 4 + 12 * 4 + 8,
                        kEntriesAt = kSizesAt + 3 * 4 + 2 * 8;
  REQUIRE(model.size() >= kEntriesAt);
  std::string bytes = model.substr(0, kEntriesAt);
  std::memset(bytes.data() + kBucketAt, 0, sizeof(std::int32_t));
  const std::int32_t most = INT32_MAX;
  std::memcpy(bytes.data() + kSizesAt, &most, sizeof(most));          // entries
  std::memcpy(bytes.data() + kSizesAt + 4, &most, sizeof(most));      // words of them
  std::memset(bytes.data() + kSizesAt + 8, 0, sizeof(std::int32_t));  // no label
  std::mt19937 random(59);
  for (std::size_t i = 0; i < junk_bytes; ++i) bytes += static_cast<char>(random());
  return bytes;
}

// An invalid UTF-8 byte, a NUL byte.
inline const std::string kInvalidUtf8 = "caf\xC3(";
inline const std::string kNul = std::string("nul") + '\0' + "byte";

}  // namespace termalign_tests
