// libFuzzer target: read_term_list on arbitrary bytes.
#include "fuzz_input.h"
#include "io/io.h"
#include "termalign/lexicon.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  termalign::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  termalign::fuzz::read_from_file(data, size, ".txt", [](const std::string& path) {
    const termalign::TermList list = termalign::read_term_list(path);
    // Every term is non-empty, stripped, unique and findable by its id.
    for (std::size_t id = 0; id < list.size(); ++id) {
      const std::string& term = list.terms[id];
      if (term.empty() || term != std::string(termalign::trim(term)) || list.id(term) != id) __builtin_trap();
    }
    if (list.ids.size() != list.size()) __builtin_trap();
  });
  return 0;
}
