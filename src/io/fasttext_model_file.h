// The layout of a fastText 0.9 model file (.bin), checked before libfasttext reads it.
#pragma once

#include <cstdint>
#include <string>

namespace termalign::detail {

constexpr std::int32_t fasttext_magic = 793712314;

// True when the file starts with fastText's magic number (false for a shorter file); an unreadable file is an
// input error naming it.
bool has_fasttext_magic(const std::string& path);

// Walks the whole layout (magic, version 11 or 12, arguments, dictionary, input and output matrices) against the
// file's size without loading the matrices. libfasttext trusts every size it reads: on a truncated file it loops
// forever in the dictionary or reads past its buffers, and on another file it throws std::invalid_argument. Here
// each of those is an input error naming the file. Quantized models (.ftz) are rejected.
void check_fasttext_model_file(const std::string& path);

}  // namespace termalign::detail
