// termalign: bilingual terminology alignment with word embeddings (BUCC 2022).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "rerank/bundled_models.h"
#include "rerank/reranker.h"
#include "scoring/scoring.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/logging.h"
#include "termalign/version.h"
#include "util/resources.h"
#ifdef TERMALIGN_WITH_MPI
#include "termalign/mpi_group.h"
#endif

namespace {

// The bundled re-ranker models' files, for --version: with the seed lexicon, the seedless variants, then those
// with a dictionary.
std::string bundled_model_list() {
  std::string list;
  for (const bool seedless : {false, true}) {
    for (const bool with_corpora : {false, true})
      list +=
          (list.empty() ? "" : ", ") + std::string(termalign::detail::bundled_model_name(with_corpora, seedless));
  }
  for (const bool with_corpora : {false, true})
    list += ", " + std::string(termalign::detail::bundled_model_name(with_corpora, false, true));
  return list;
}

int run(int argc, char** argv, const termalign::ProcessGroup& group);

// After a parse error: "did you mean" for a mistyped sub-command or long flag of the command line.
void suggest(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> commands;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(command->get_name());
  const CLI::App* command = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    for (const CLI::App* candidate : app.get_subcommands([](const CLI::App*) { return true; }))
      if (candidate->get_name() == word) command = candidate;
    if (command == nullptr) {
      const std::string name = termalign::closest_name(word, commands);
      if (!name.empty())
        std::cerr << "termalign: unknown command '" << word << "'; did you mean '" << name << "'?\n";
    }
    break;
  }
  std::vector<std::string> flags;
  for (const CLI::App* owner : {&app, command}) {
    if (owner == nullptr) continue;
    for (const CLI::Option* option : owner->get_options())
      for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
  }
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word.rfind("--", 0) != 0) continue;
    word = word.substr(0, word.find('='));
    if (std::find(flags.begin(), flags.end(), word) != flags.end()) continue;
    const std::string name = termalign::closest_name(word, flags);
    if (!name.empty()) std::cerr << "termalign: unknown flag '" << word << "'; did you mean '" << name << "'?\n";
  }
}

// The library names an option in a message as `keyword` (error.h): on the command line it is the flag.
std::string with_flags(const std::string& message) {
  std::vector<std::string> keywords;
  for (const termalign::OptionName& name : termalign::option_names()) {
    std::string keyword = name.flag;
    std::replace(keyword.begin(), keyword.end(), '-', '_');
    keywords.push_back(keyword);
  }
  std::string shown;
  std::size_t at = 0;
  while (at < message.size()) {
    const std::size_t open = message.find('`', at);
    const std::size_t close = open == std::string::npos ? open : message.find('`', open + 1);
    if (close == std::string::npos) break;
    std::string word = message.substr(open + 1, close - open - 1);
    shown += message.substr(at, open - at);
    if (std::find(keywords.begin(), keywords.end(), word) != keywords.end()) {
      std::replace(word.begin(), word.end(), '_', '-');
      shown += "--" + word;
    } else {
      shown += message.substr(open, close - open + 1);
    }
    at = close + 1;
  }
  return shown + message.substr(std::min(at, message.size()));
}

}  // namespace

int main(int argc, char** argv) {
  termalign::tune_allocator();
  termalign::install_interrupt_handlers();  // SIGINT / SIGTERM: remove temporary files, exit 130
  termalign::use_single_threaded_blas();    // the scoring's tiles may then use OpenBLAS (scoring.h)
#ifdef TERMALIGN_WITH_MPI
  if (termalign::launched_by_mpi()) {
    const termalign::MpiSession session(&argc, &argv);
    const termalign::ProcessGroup& group = session.group();
    if (group.size() > 1) termalign::set_log_prefix("rank " + std::to_string(group.rank()));
    const int code = run(argc, argv, group);
    // A rank that failed has said why; ending every rank keeps the others from waiting for it forever.
    if (code != 0) session.abort(code);
    return 0;
  }
#endif
  return run(argc, argv, termalign::single_process());
}

namespace {

// CLI11 reads an integer with a leading 0 in C's way, as octal (`--folds 010` gave 8 folds): every integer
// option of every command drops its leading zeros first, so that it reads as typed. (align's options read
// decimal on their own, through the library's option parser.)
void read_integers_as_decimal(CLI::App& app) {
  const auto decimal = [](std::string text) {
    const std::size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
    std::size_t digits = sign;
    while (digits + 1 < text.size() && text[digits] == '0' &&
           std::isdigit(static_cast<unsigned char>(text[digits + 1])) != 0)
      ++digits;
    return text.erase(sign, digits - sign);
  };
  for (CLI::App* command : app.get_subcommands({})) {
    for (CLI::Option* option : command->get_options()) {
      // The type name, then ":" and the validators' descriptions when there are any ("UINT:{1,2}").
      const std::string type = option->get_type_name();
      const std::string base = type.substr(0, type.find(':'));
      if (base == "INT" || base == "UINT") option->transform(decimal);
    }
  }
}

int run(int argc, char** argv, const termalign::ProcessGroup& group) {
  CLI::App app{"termalign: align bilingual terminology with word embeddings (BUCC 2022 shared task)"};
  app.require_subcommand(1);
  app.fallthrough();
  // The similarity kernel is chosen at run time (OpenBLAS's or Eigen's, scoring.h), and so is the default
  // precision (bf16 where the CPU has it): --version says which, and which re-ranker models the build holds.
  app.set_version_flag(
      "--version", std::function<std::string()>([] {
        return std::string("termalign ") + termalign::version() +
               " (bundled re-ranker models: " + termalign::bundled_models_id() + "; re-ranker feature revision " +
               std::to_string(termalign::kFeatureRevision) + "; models " + bundled_model_list() +
               "; similarity tiles: " + termalign::similarity_kernel() +
               "; precision auto: " + termalign::describe_precision(termalign::Precision::automatic) + ")";
      }));
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "Debug-level logging on stderr");
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors on stderr");
  app.parse_complete_callback([&] {
    termalign::set_verbosity(quiet ? -1 : verbose ? 1 : 0);
    // Every rank runs the same steps: rank 0 tells how they go, the others only their errors (all with -v).
    if (!group.is_root() && !verbose) termalign::logger().set_level(spdlog::level::err);
  });

  termalign::cli::add_evaluate_command(app);
  termalign::cli::add_align_command(app, group);
  termalign::cli::add_train_reranker_command(app);
  termalign::cli::add_train_vectors_command(app);
  termalign::cli::add_ablate_command(app);
  termalign::cli::add_report_command(app);
  read_integers_as_decimal(app);

  try {
    // TERMALIGN_TILE_KERNEL=auto|eigen|openblas forces the similarity kernel (scripts/test.sh runs the tests with
    // each); a malformed value is a usage error before any work.
    if (const char* kernel = std::getenv("TERMALIGN_TILE_KERNEL"))
      termalign::set_tile_kernel(termalign::parse_tile_kernel(kernel));
    // TERMALIGN_MAX_MEMORY_MB: the memory the loaded vectors and the scoring may use (resources.h); a malformed
    // value likewise.
    if (const char* megabytes = std::getenv("TERMALIGN_MAX_MEMORY_MB"); megabytes && *megabytes)
      termalign::set_memory_limit(termalign::parse_memory_limit_mb(megabytes));
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // CLI11's own codes (105, 106, ...) would hide the documented usage code; --help and --version exit 0.
    const int code = app.exit(error);
    if (code == 0) return 0;
    suggest(app, argc, argv);
    return static_cast<int>(termalign::ErrorKind::usage);
  } catch (const termalign::Error& error) {
    termalign::logger().error("{}", with_flags(error.what()));
    return error.exit_code();
  } catch (const std::bad_alloc&) {
    termalign::logger().error("out of memory");
    return static_cast<int>(termalign::ErrorKind::resources);
  } catch (const std::exception& error) {
    termalign::logger().error("internal error: {}", error.what());
    return static_cast<int>(termalign::ErrorKind::internal);
  }
  return 0;
}

}  // namespace
