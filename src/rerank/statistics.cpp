#include "rerank/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "util/key_groups.h"
#include "util/parallel.h"

namespace termalign::detail {

namespace {

// A float's bits as an unsigned integer in the float's order (-0 as +0, so that they tie as the floats do).
std::uint32_t ordered_bits(float value) {
  if (value == 0) value = 0;
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

}  // namespace

RunScale run_scale(const std::vector<float>& values, int threads) {
  const std::size_t n = values.size();
  RunScale scale;
  scale.quantile.assign(n, 0.0f);
  if (n < 2) return scale;
  // Ascending value, ties by index: one sort of 64-bit keys (value's bits, index), in halves on two threads.
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = std::uint64_t{ordered_bits(values[i])} << 32 | i;
  const auto middle = keys.begin() + static_cast<std::ptrdiff_t>(n / 2);
  run_both([&] { std::sort(keys.begin(), middle); }, [&] { std::sort(middle, keys.end()); }, threads);
  std::inplace_merge(keys.begin(), middle, keys.end());
  const auto at = [&](std::size_t position) { return static_cast<std::uint32_t>(keys[position]); };
  const double last = static_cast<double>(n - 1);
  for (std::size_t begin = 0; begin < n;) {
    std::size_t end = begin;
    while (end < n && values[at(end)] == values[at(begin)]) ++end;
    if (end == begin) ++end;  // a NaN equals nothing, itself included: its own group
    const float q = static_cast<float>(0.5 * static_cast<double>(begin + end - 1) / last);
    for (std::size_t i = begin; i < end; ++i) scale.quantile[at(i)] = q;
    begin = end;
  }
  const float iqr = values[at((3 * (n - 1)) / 4)] - values[at((n - 1) / 4)];
  scale.spread = iqr > 0 ? iqr : 1.0f;
  return scale;
}

// The candidates by group (group_by_key), then each group's few by value: linear in the candidates,
// where one comparison sort of millions of indices took seconds.
Standing standing(const std::vector<std::uint32_t>& group, const std::vector<float>& values, const RunScale* scale,
                  int threads) {
  const std::size_t n = group.size();
  const std::size_t groups = n ? std::size_t{*std::max_element(group.begin(), group.end())} + 1 : 0;
  KeyGroups by_group = group_by_key(n, groups, [&](std::size_t i) { return group[i]; });
  std::vector<std::uint32_t>& order = by_group.order;
  Standing stats{
      &values, &group, scale, std::vector<float>(n), std::vector<float>(groups), std::vector<float>(groups)};
  constexpr std::size_t kGroupBlock = 16384;
  parallel_for((groups + kGroupBlock - 1) / kGroupBlock, threads, [&](std::size_t block) {
    for (std::size_t g = block * kGroupBlock; g < std::min(groups, (block + 1) * kGroupBlock); ++g) {
      const auto begin = order.begin() + static_cast<std::ptrdiff_t>(by_group.begin(g));
      const auto end = order.begin() + static_cast<std::ptrdiff_t>(by_group.end(g));
      if (begin == end) continue;
      std::sort(begin, end, [&](std::uint32_t x, std::uint32_t y) {
        return values[x] != values[y] ? values[x] > values[y] : x < y;
      });
      stats.best[g] = values[*begin];
      stats.second[g] = end - begin > 1 ? values[*(begin + 1)] : stats.best[g];
      for (auto it = begin; it != end; ++it) stats.rank[*it] = static_cast<float>(it - begin + 1);
    }
  });
  return stats;
}

std::vector<float> group_z(const std::vector<std::uint32_t>& group, const std::vector<float>& values) {
  std::unordered_map<std::uint32_t, std::pair<double, double>> sums;  // group -> sum, sum of squares
  std::unordered_map<std::uint32_t, std::size_t> sizes;
  for (std::size_t i = 0; i < group.size(); ++i) {
    auto& sum = sums[group[i]];
    sum.first += values[i];
    sum.second += double(values[i]) * values[i];
    ++sizes[group[i]];
  }
  std::vector<float> z(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    const auto& sum = sums[group[i]];
    const double count = static_cast<double>(sizes[group[i]]);
    const double mean = sum.first / count;
    const double variance = std::max(0.0, sum.second / count - mean * mean);
    z[i] = variance > 1e-12 ? static_cast<float>((values[i] - mean) / std::sqrt(variance)) : 0.0f;
  }
  return z;
}

NestedSupport nested_support(const CandidateEvidence& evidence, const std::vector<float>& scores) {
  const std::size_t n = evidence.size();
  NestedSupport support{std::vector<float>(n, kNoNestedPair), std::vector<float>(n, kNoNestedPair)};
  if (evidence.source_parts.empty() || evidence.target_parts.empty()) return support;
  // Only candidates of two terms that are parts can be looked up: a sorted index of those alone (at 130k x 290k
  // terms, millions of candidates, most of whose terms are parts of none).
  const auto part_of_some = [](const std::vector<std::vector<std::uint32_t>>& parts) {
    std::vector<std::uint8_t> is_part(parts.size(), 0);
    for (const auto& term_parts : parts)
      for (const std::uint32_t part : term_parts) is_part[part] = 1;
    return is_part;
  };
  const std::vector<std::uint8_t> source_is_part = part_of_some(evidence.source_parts),
                                  target_is_part = part_of_some(evidence.target_parts);
  const auto key = [](std::uint32_t s, std::uint32_t t) { return (std::uint64_t(s) << 32) | t; };
  std::vector<std::pair<std::uint64_t, std::uint32_t>> index;
  for (std::size_t i = 0; i < n; ++i) {
    if (source_is_part[evidence.source[i]] && target_is_part[evidence.target[i]])
      index.emplace_back(key(evidence.source[i], evidence.target[i]), static_cast<std::uint32_t>(i));
  }
  std::sort(index.begin(), index.end());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& source_parts = evidence.source_parts[evidence.source[i]];
    const auto& target_parts = evidence.target_parts[evidence.target[i]];
    for (const std::uint32_t p : source_parts) {
      for (const std::uint32_t q : target_parts) {
        const auto found = std::lower_bound(index.begin(), index.end(), std::pair{key(p, q), std::uint32_t{0}});
        if (found == index.end() || found->first != key(p, q)) continue;
        support.parts[i] = std::max(support.parts[i], scores[found->second]);
        support.wholes[found->second] = std::max(support.wholes[found->second], scores[i]);
      }
    }
  }
  return support;
}

}  // namespace termalign::detail
