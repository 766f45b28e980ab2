// Shared by the libFuzzer targets: the readers take paths, so each input is written to a temporary file first.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "termalign/error.h"
#include "termalign/logging.h"

namespace termalign::fuzz {

// The readers' warnings would flood the fuzzer's output.
inline void silence_logging() { logger().set_level(spdlog::level::off); }

// Writes the input to this process's temporary file (named with `suffix`) and calls read(path). A termalign::Error
// is the expected answer to a bad input; anything else (another exception, a crash, a sanitizer report) is a bug.
template <typename Read>
void read_from_file(const std::uint8_t* data, std::size_t size, const char* suffix, Read&& read) {
  static const std::string path = "/tmp/termalign-fuzz-" + std::to_string(::getpid()) + suffix;
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) __builtin_trap();
  if (size > 0 && std::fwrite(data, 1, size, file) != size) __builtin_trap();
  std::fclose(file);
  try {
    read(path);
  } catch (const termalign::Error& error) {
    if (error.kind() == termalign::ErrorKind::internal) throw;  // an internal check failed: a bug
  }
}

// What every loaded vector set must hold, whatever the file: one row per word, each word found at its row.
template <typename Embeddings>
void check_rows(const Embeddings& embeddings) {
  if (static_cast<std::size_t>(embeddings.vectors.rows()) != embeddings.size()) __builtin_trap();
  for (std::size_t row = 0; row < embeddings.size(); ++row) {
    if (embeddings.row(embeddings.words[row]) != row) __builtin_trap();
  }
}

}  // namespace termalign::fuzz
