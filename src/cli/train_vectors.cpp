// `termalign train-vectors`: flags copied into termalign::TrainVectorsOptions.
#include "io/train_vectors.h"

#include <memory>

#include "commands.h"

namespace termalign::cli {

void add_train_vectors_command(CLI::App& app) {
  struct Flags {
    TrainVectorsOptions options;
    std::string model = to_string(options.model);
  };
  auto flags = std::make_shared<Flags>();
  TrainVectorsOptions& o = flags->options;
  CLI::App* command = app.add_subcommand(
      "train-vectors",
      "Train fastText vectors on a corpus (tokenised as the data's README says; multi-word terms of --terms "
      "joined "
      "into one token each, e.g. 'drop-down menu' -> 'drop-down\u2581menu'); writes OUT.bin and OUT.vec");
  command->add_option("--corpus", o.corpus, "Corpus, one sentence per line")->required();
  command->add_option("--out", o.out, "Output prefix: writes OUT.bin and OUT.vec")->required();
  command->add_option("--terms", o.terms, "Term list whose multi-word terms get vectors of their own");
  command->add_option("--dim", o.dim, "Vector dimension")->capture_default_str();
  command->add_option("--epoch", o.epoch, "Passes over the corpus")->capture_default_str();
  command->add_option("--min-count", o.min_count, "Words seen fewer times get no vector")->capture_default_str();
  command->add_option("--minn", o.minn, "Shortest character n-gram")->capture_default_str();
  command->add_option("--maxn", o.maxn, "Longest character n-gram (0 = no sub-words)")->capture_default_str();
  command->add_option("--bucket", o.bucket, "Hash buckets of the character n-grams")->capture_default_str();
  command->add_option("--model", flags->model, "skipgram or cbow")->capture_default_str();
  command->add_option("--lr", o.learning_rate, "Learning rate")->capture_default_str();
  command->add_option("--window", o.window, "Context window size")->capture_default_str();
  command->add_option("--negatives", o.negatives, "Negative samples")->capture_default_str();
  command
      ->add_option("--threads", o.threads,
                   "Training threads; 1 with a fixed --seed gives the same vectors on every run, more do not")
      ->capture_default_str();
  command->add_option("--seed", o.seed, "Random seed")->capture_default_str();
  command->add_option("--lowercase", o.lowercase, "Lower-case the corpus and the terms")
      ->default_str(o.lowercase ? "true" : "false");
  command->callback([flags] {
    flags->options.model = parse_vector_model(flags->model);
    train_vectors(flags->options);
  });
}

}  // namespace termalign::cli
