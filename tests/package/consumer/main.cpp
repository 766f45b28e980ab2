// Links the installed library through its public headers: an Eigen matrix made here (the consumer's own
// instruction set) goes through the Aligner's scoring stage and back; the candidates are checked against what the
// vectors imply.
#include <termalign/aligner.h>
#include <termalign/config.h>

#include <iostream>

int main() {
  termalign::Matrix X(3, 4), Z(3, 4);
  X << 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0;
  Z << 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0;
  termalign::AlignConfig config;
  termalign::set_option(config, "top_m", std::int64_t{1});
  termalign::set_option(config, "k", std::int64_t{1});
  config.input.reranker = "none";
  config.scoring.threads = 1;
  const auto selected = termalign::Aligner(config).score(X, Z);
  // Each source row's one best target: row 0 -> 1, row 1 -> 2, row 2 -> 0.
  const unsigned expected[3] = {1, 2, 0};
  if (selected.candidates.size() != 3) {
    std::cerr << "consumer: " << selected.candidates.size() << " candidates, expected 3\n";
    return 1;
  }
  for (const auto& candidate : selected.candidates) {
    if (candidate.target != expected[candidate.source]) {
      std::cerr << "consumer: source " << candidate.source << " -> " << candidate.target << "\n";
      return 1;
    }
  }
  std::cout << "consumer: 3 candidates as expected; top_m " << config.ranking.top_m << "\n";
  return config.ranking.top_m == 1 ? 0 : 1;
}
