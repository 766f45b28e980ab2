#include "evidence/word_translation.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "io/io.h"
#include "util/huge_pages.h"
#include "util/parallel.h"

namespace termalign {

WordVectors mapped_word_vectors(const std::vector<std::string>& words, const TermComposer& composer,
                                const Matrix& transform, int threads) {
  WordVectors result;
  const auto n = static_cast<Eigen::Index>(words.size());
  detail::resize_in_huge_pages(result.vectors, n, transform.cols());  // 423 MiB at 130k x 290k terms
  result.vectors.setZero();
  result.usable.assign(words.size(), 0);
  // In blocks of rows of fixed bounds: one product per block (a product per word took a second per 100k words),
  // whose rounding depends on the block, not on the thread count.
  constexpr Eigen::Index kBlock = 2048;
  const int thread_count = resolve_threads(threads);  // before SerialEigenProducts, which sets the default to 1
  SerialEigenProducts serial_products;
  parallel_for(static_cast<std::size_t>((n + kBlock - 1) / kBlock), thread_count, [&](std::size_t block) {
    const Eigen::Index first = static_cast<Eigen::Index>(block) * kBlock, rows = std::min(kBlock, n - first);
    Matrix composed = Matrix::Zero(rows, transform.rows());
    RowVector vector;
    for (Eigen::Index r = 0; r < rows; ++r) {
      if (!composer.compose(words[static_cast<std::size_t>(first + r)], vector)) continue;
      composed.row(r) = vector;
      result.usable[static_cast<std::size_t>(first + r)] = 1;
    }
    Matrix mapped = composed * transform;
    for (Eigen::Index r = 0; r < rows; ++r) {
      const float norm = mapped.row(r).norm();
      if (norm == 0) {
        result.usable[static_cast<std::size_t>(first + r)] = 0;
        continue;
      }
      if (result.usable[static_cast<std::size_t>(first + r)]) result.vectors.row(first + r) = mapped.row(r) / norm;
    }
  });
  return result;
}

TermWords term_words(const std::vector<std::string>& terms) {
  TermWords result;
  std::unordered_map<std::string, std::uint32_t> ids;
  result.first.reserve(terms.size() + 1);
  result.first.push_back(0);
  for (const std::string& term : terms) {
    std::vector<std::string> words = split_words(fold_case(term));
    if (words.size() > kMaxEvidenceWords) words.resize(kMaxEvidenceWords);
    for (std::string& word : words) {
      const auto [found, added] = ids.try_emplace(word, static_cast<std::uint32_t>(result.words.size()));
      if (added) result.words.push_back(std::move(word));
      result.word_ids.push_back(found->second);
    }
    result.first.push_back(result.word_ids.size());
  }
  return result;
}

std::vector<std::vector<std::uint32_t>> nearest_rows(const WordVectors& from, const WordVectors& to, std::size_t k,
                                                     int threads) {
  const auto rows = static_cast<std::size_t>(from.vectors.rows());
  std::vector<std::vector<std::uint32_t>> nearest(rows);
  if (to.vectors.rows() == 0 || k == 0) return nearest;
  constexpr std::size_t kBlock = 256;
  // Each block's product single-threaded on any path, so that its rounding (and the ties) do not depend on the
  // thread count.
  const int thread_count = resolve_threads(threads);
  SerialEigenProducts serial_products;
  parallel_for((rows + kBlock - 1) / kBlock, thread_count, [&](std::size_t block) {
    const std::size_t begin = block * kBlock, end = std::min(rows, begin + kBlock);
    const Matrix similarities =
        from.vectors.middleRows(static_cast<Eigen::Index>(begin), static_cast<Eigen::Index>(end - begin)) *
        to.vectors.transpose();
    std::vector<std::uint32_t> order;
    for (std::size_t r = begin; r < end; ++r) {
      if (!from.usable[r]) continue;
      order.clear();
      for (std::size_t c = 0; c < to.usable.size(); ++c)
        if (to.usable[c]) order.push_back(static_cast<std::uint32_t>(c));
      const std::size_t kept = std::min(k, order.size());
      const auto row = similarities.row(static_cast<Eigen::Index>(r - begin));
      // Ties by index, so that the result does not depend on the sort's internals.
      std::partial_sort(
          order.begin(), order.begin() + static_cast<std::ptrdiff_t>(kept), order.end(),
          [&](std::uint32_t a, std::uint32_t b) { return row(a) != row(b) ? row(a) > row(b) : a < b; });
      nearest[r].assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(kept));
    }
  });
  return nearest;
}

std::unordered_map<std::string, std::vector<std::string>> seed_translations(const PairList& seed, bool reverse) {
  std::unordered_map<std::string, std::vector<std::string>> translations;
  for (const auto& [source, target] : seed.pairs) {
    std::string from = fold_case(reverse ? target : source), to = fold_case(reverse ? source : target);
    auto& list = translations[from];
    if (std::find(list.begin(), list.end(), to) == list.end()) list.push_back(std::move(to));
  }
  return translations;
}

}  // namespace termalign
