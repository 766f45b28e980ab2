// Embeddings' lookups, and the loaders' common parts: the reader chosen by content (vec_text.cpp, vec_gz.cpp,
// bin_vectors.cpp), a vector file's dimension read from its header, .vec text written.
#include "termalign/embeddings.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "io/fasttext_model_file.h"
#include "io/gzip_stream.h"
#include "io/io.h"
#include "io/vector_loading.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign {

std::optional<std::size_t> Embeddings::row(const std::string& word) const {
  const auto found = rows.find(word);
  if (found == rows.end()) return std::nullopt;
  return found->second;
}

std::optional<std::size_t> Embeddings::row_any_case(const std::string& word) const {
  if (auto found = row(word)) return found;
  const std::string lowered = to_lower(word);
  if (lowered != word) {
    if (auto found = row(lowered)) return found;
  }
  const std::string key = fold_lowered(lowered);
  if (key != lowered) {
    if (auto found = row(key)) return found;
  }
  const auto found = folded.find(key);
  if (found == folded.end()) return std::nullopt;
  return found->second;
}

bool Embeddings::subword_vector(const std::string& word, RowVector& out) const {
  if (!subwords) return false;
  RowVector vector(subwords->dim());
  if (!subwords->word_vector(word, vector.data())) return false;
  if ((vector.array() == 0.0f).all()) return false;
  out = std::move(vector);
  return true;
}

namespace detail {

bool wanted_word(const LoadOptions& options, std::string_view word) {
  if (!options.restrict_words) return true;
  const std::string text(word);
  if (options.wanted.count(text) > 0) return true;
  return options.fold_case && may_change_when_lowered(word) && options.wanted.count(fold_case(word)) > 0;
}

void log_loaded(const Embeddings& embeddings, std::size_t total, Clock::time_point start) {
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  logger().info("{}: {} of {} words kept, dim {}, {:.2f} s", embeddings.path, embeddings.size(), total,
                embeddings.dim(), seconds);
}

}  // namespace detail

Embeddings load_vec(const std::string& path, const LoadOptions& options) {
  const auto start = detail::Clock::now();
  if (detail::has_gzip_magic(path)) return detail::load_vec_gz(path, options, start);
  return detail::load_vec_text(path, options, start);
}

std::string format_vec(const std::vector<std::string>& words, const Matrix& vectors, int threads) {
  TERMALIGN_CHECK(words.size() == static_cast<std::size_t>(vectors.rows()), "one word per row");
  constexpr std::size_t kBlock = 1024;
  const std::size_t blocks = (words.size() + kBlock - 1) / kBlock;
  std::vector<std::string> texts(blocks);
  parallel_for(blocks, threads, [&](std::size_t block) {
    fmt::memory_buffer out;
    for (std::size_t r = block * kBlock; r < std::min(words.size(), (block + 1) * kBlock); ++r) {
      fmt::format_to(std::back_inserter(out), "{}", words[r]);
      // The shortest text that reads back to the same float.
      for (const float value : vectors.row(static_cast<Eigen::Index>(r)))
        fmt::format_to(std::back_inserter(out), " {}", value);
      out.push_back('\n');
    }
    texts[block] = fmt::to_string(out);
  });
  std::string text = fmt::format("{} {}\n", words.size(), vectors.cols());
  for (const auto& part : texts) text += part;
  return text;
}

std::optional<int> vector_file_dimension(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  try {
    std::string head(4096, '\0');
    if (detail::has_gzip_magic(path)) {
      detail::GzipStream stream(path);
      head.resize(stream.read(head.data(), head.size()));
    } else {
      std::ifstream file(path, std::ios::binary);
      file.read(head.data(), static_cast<std::streamsize>(head.size()));
      head.resize(static_cast<std::size_t>(file.gcount()));
    }
    std::int32_t numbers[3] = {0, 0, 0};  // a model's magic, version, dimension
    if (head.size() >= sizeof(numbers)) std::memcpy(numbers, head.data(), sizeof(numbers));
    if (numbers[0] == detail::fasttext_magic) {  // a version the reader refuses: the loader says so
      const bool known = (numbers[1] == 11 || numbers[1] == 12) && numbers[2] > 0;
      return known ? std::optional<int>(numbers[2]) : std::nullopt;
    }
    std::string_view text = head;
    strip_utf8_bom(text);
    const auto header_end = text.find('\n');
    if (header_end == std::string_view::npos) return std::nullopt;
    return detail::parse_vec_header(path, detail::strip_line_end(text.substr(0, header_end))).dim;
  } catch (const Error&) {
    return std::nullopt;  // the loader says what is wrong
  }
}

Embeddings load_embeddings(const std::string& path, const LoadOptions& options) {
  const bool model = detail::has_fasttext_magic(path) || is_gzipped_fasttext_model(path);
  Embeddings embeddings = model ? load_fasttext_bin(path, options) : load_vec(path, options);
  if (options.fold_case) {
    for (std::size_t r = 0; r < embeddings.words.size(); ++r) {
      const std::string& word = embeddings.words[r];
      if (!may_change_when_lowered(word)) continue;
      std::string key = fold_case(word);
      if (key != word && embeddings.rows.count(key) == 0) embeddings.folded.try_emplace(std::move(key), r);
    }
  }
  return embeddings;
}

}  // namespace termalign
