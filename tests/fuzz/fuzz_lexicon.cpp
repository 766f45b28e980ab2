// libFuzzer target: read_pairs (seed lexicon and gold file) on arbitrary bytes.
#include "fuzz_input.h"
#include "termalign/lexicon.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  termalign::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using termalign::PairFileKind;
  for (const PairFileKind kind : {PairFileKind::seed_lexicon, PairFileKind::gold}) {
    termalign::fuzz::read_from_file(data, size, ".tsv", [kind](const std::string& path) {
      const termalign::PairList list = termalign::read_pairs(path, kind);
      // One line number per pair, strictly increasing; no TAB inside a column.
      if (list.lines.size() != list.pairs.size()) __builtin_trap();
      for (std::size_t i = 0; i < list.pairs.size(); ++i) {
        if (i > 0 && list.lines[i] <= list.lines[i - 1]) __builtin_trap();
        const auto& [source, target] = list.pairs[i];
        if (source.find('\t') != std::string::npos || target.find('\t') != std::string::npos) __builtin_trap();
      }
    });
  }
  return 0;
}
