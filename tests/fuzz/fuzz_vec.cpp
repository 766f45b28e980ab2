// libFuzzer target: load_vec on arbitrary bytes, with tiny parsing chunks so that short inputs cross chunk
// borders.
#include <cmath>

#include "fuzz_input.h"
#include "termalign/embeddings.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  termalign::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the options; the rest is the file.
  termalign::LoadOptions options;
  options.threads = 1;
  options.chunk_bytes = 1 + data[0] % 64;
  options.restrict_words = (data[0] & 0x40) != 0;
  options.most_frequent = data[0] % 4;
  options.wanted = {"a", "b", "the"};
  termalign::fuzz::read_from_file(data + 1, size - 1, ".vec", [&](const std::string& path) {
    const termalign::Embeddings embeddings = termalign::load_vec(path, options);
    // Every value finite.
    termalign::fuzz::check_rows(embeddings);
    if (!embeddings.vectors.allFinite()) __builtin_trap();
  });
  return 0;
}
