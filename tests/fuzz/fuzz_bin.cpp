// libFuzzer target: load_fasttext_bin on arbitrary bytes, then the vectors of words in and out of its vocabulary.
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
  options.restrict_words = (data[0] & 0x40) != 0;
  options.most_frequent = data[0] % 8;
  options.wanted = {"a", "the", "printer"};
  termalign::fuzz::read_from_file(data + 1, size - 1, ".bin", [&](const std::string& path) {
    const termalign::Embeddings embeddings = termalign::load_fasttext_bin(path, options);
    termalign::fuzz::check_rows(embeddings);
    termalign::RowVector vector;
    for (const char* word : {"", "a", "</s>", "printers", "fen\xc3\xaatre", "\xd1\x84\xd0\xb0\xd0\xb9\xd0\xbb"}) {
      if (embeddings.subword_vector(word, vector) && vector.size() != embeddings.dim()) __builtin_trap();
    }
  });
  return 0;
}
