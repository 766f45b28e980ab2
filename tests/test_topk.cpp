// The scoring's top-k structures (src/scoring/topk.h) against sorting: the kept items must not depend on the
// order in which they are offered.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "scoring/topk.h"

using termalign::Candidate;
using termalign::detail::RowPools;
using termalign::detail::SharedBounds;
using termalign::detail::TopValues;

namespace {

// Values with many exact ties (few distinct values), in a shuffled order.
std::vector<float> tied_values(std::size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int> level(-20, 20);
  std::vector<float> values(n);
  for (float& value : values) value = static_cast<float>(level(generator)) / 8.0f;
  return values;
}

std::vector<float> largest(std::vector<float> values, std::size_t k) {
  std::sort(values.begin(), values.end(), [](float a, float b) { return a > b; });
  values.resize(std::min(k, values.size()));
  std::sort(values.begin(), values.end());
  return values;
}

}  // namespace

TEST_CASE("TopValues keeps each slot's largest values, sorted, whatever the order", "[scoring]") {
  for (const std::size_t capacity : {1, 2, 10, 33}) {
    for (const unsigned seed : {1u, 2u, 3u}) {
      INFO("capacity " << capacity << ", seed " << seed);
      const std::vector<float> first = tied_values(200, seed), second = tied_values(150, seed + 10);
      TopValues top(2, capacity, -std::numeric_limits<float>::infinity());
      for (const float value : first) top.offer(0, value);
      for (const float value : second) top.offer(1, value);
      const std::vector<float> kept0(top.begin(0), top.end(0)), kept1(top.begin(1), top.end(1));
      CHECK(kept0 == largest(first, capacity));
      CHECK(kept1 == largest(second, capacity));
      CHECK(top.bounds()[0] == kept0.front());

      // Merging two halves gives what one structure offered everything keeps.
      TopValues half(2, capacity, -std::numeric_limits<float>::infinity()),
          other(2, capacity, -std::numeric_limits<float>::infinity());
      for (std::size_t i = 0; i < first.size(); ++i) (i % 2 ? half : other).offer(0, first[i]);
      half.merge(other);
      CHECK(std::vector<float>(half.begin(0), half.end(0)) == kept0);

      // rebuild() restores the order after the items were permuted (as a process group's merge leaves them).
      std::reverse(top.items().begin(), top.items().begin() + static_cast<std::ptrdiff_t>(capacity));
      top.rebuild();
      CHECK(std::vector<float>(top.begin(0), top.end(0)) == kept0);
    }
  }
  TopValues none(3, 0, -std::numeric_limits<float>::infinity());
  none.offer(1, 5.0f);
  CHECK(none.bounds()[1] == std::numeric_limits<float>::infinity());
}

TEST_CASE("SharedBounds: lists that skip what is below the shared bound merge to the same values", "[scoring]") {
  // Three threads' lists for the same slot take turns, as the scoring's threads do with a column's values: each
  // offers only what reaches the larger of its own bound and the shared bound, then raises the shared bound to its
  // own. Merged, they keep what one list offered everything keeps, and the shared bound saves offers.
  constexpr float lowest = -std::numeric_limits<float>::infinity();
  for (const std::size_t capacity : {1, 3, 10}) {
    for (const unsigned seed : {6u, 7u, 8u, 9u}) {
      INFO("capacity " << capacity << ", seed " << seed);
      // Tied values, and distinct ones (where a shared bound set any higher would lose values).
      std::vector<float> values = tied_values(600, seed);
      if (seed > 7) {
        std::mt19937 generator(seed);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (float& value : values) value = normal(generator);
      }
      std::vector<TopValues> lists(3, TopValues(1, capacity, lowest));
      SharedBounds shared(1);
      std::size_t skipped_by_shared = 0;
      for (std::size_t i = 0; i < values.size(); ++i) {
        TopValues& list = lists[(i / 7) % lists.size()];  // runs of 7 values, as tiles give a thread runs
        const float own = list.bounds()[0];
        if (values[i] >= std::max(own, shared.bound(0))) {
          list.offer(0, values[i]);
          shared.raise(0, list.bounds()[0]);
        } else if (values[i] > own) {
          ++skipped_by_shared;  // its own list would have taken it
        }
      }
      CHECK(skipped_by_shared > 0);
      TopValues merged(1, capacity, lowest);
      for (const TopValues& list : lists) merged.merge(list);
      CHECK(std::vector<float>(merged.begin(0), merged.end(0)) == largest(values, capacity));
    }
  }
  // A shared bound only rises.
  SharedBounds shared(2);
  shared.raise(1, 0.5f);
  shared.raise(1, 0.25f);
  CHECK(shared.bound(1) == 0.5f);
  CHECK(shared.bound(0) == -std::numeric_limits<float>::infinity());
}

TEST_CASE("RowPools keeps each row's best targets in ranks_before order, whatever the order", "[scoring]") {
  for (const std::size_t capacity : {1, 3, 40}) {
    for (const unsigned seed : {4u, 5u}) {
      INFO("capacity " << capacity << ", seed " << seed);
      const std::vector<float> keys = tied_values(300, seed);
      std::vector<Candidate> all;
      for (std::uint32_t target = 0; target < keys.size(); ++target)
        all.push_back(Candidate{keys[target], 0.5f * static_cast<float>(target), 7, target});
      all.push_back(Candidate{-0.0f, 1.0f, 7, 300});  // -0 ties with +0, broken by the target
      all.push_back(Candidate{0.0f, 2.0f, 7, 301});
      std::vector<Candidate> expected = all;
      std::sort(expected.begin(), expected.end(), termalign::ranks_before);
      expected.resize(capacity);

      std::vector<Candidate> shuffled = all;
      std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(seed));
      RowPools pools(2, capacity);
      for (const Candidate& c : shuffled) {
        pools.offer(1, c.score, c.cosine, c.target);
        // The bound only rises, and never above a kept key.
        CHECK(pools.bounds()[1] <= expected.front().score);
      }
      for (std::uint32_t target = 0; target < capacity; ++target) pools.offer(0, 1.0f, 0.0f, target);
      pools.finish();
      std::vector<Candidate> kept = pools.candidates(1, 7);
      std::sort(kept.begin(), kept.end(), termalign::ranks_before);
      REQUIRE(kept.size() == capacity);
      for (std::size_t i = 0; i < capacity; ++i) {
        INFO("rank " << i);
        CHECK(kept[i].score == expected[i].score);
        CHECK(kept[i].cosine == expected[i].cosine);
        CHECK(kept[i].source == 7);
        CHECK(kept[i].target == expected[i].target);
      }
      CHECK(pools.worst_key(1) == expected.back().score);
      CHECK(pools.candidates(0, 3).size() == capacity);
    }
  }
}

TEST_CASE("RowPools::finish insists on full pools", "[scoring]") {
  const int threads = GENERATE(1, 2);
  RowPools pools(3, 5);
  for (std::size_t slot : {0, 2})
    for (std::uint32_t target = 0; target < 7; ++target) pools.offer(slot, 1.0f, 0.0f, target);
  for (std::uint32_t target = 0; target < 4; ++target) pools.offer(1, 1.0f, 0.0f, target);
  CHECK_THROWS(pools.finish(threads));
}

TEST_CASE("RowPools::finish on several threads keeps what one thread keeps", "[scoring]") {
  constexpr std::size_t kSlots = 97, kCapacity = 6;
  std::mt19937 generator(11);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  RowPools serial(kSlots, kCapacity);
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    const std::uint32_t offers = static_cast<std::uint32_t>(kCapacity + slot % 17);  // some compact on the way
    for (std::uint32_t target = 0; target < offers; ++target) {
      const float similarity = value(generator);
      serial.offer(slot, 2.0f * similarity, similarity, target);
    }
  }
  RowPools parallel = serial;
  serial.finish(1);
  parallel.finish(2);
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    INFO("slot " << slot);
    CHECK(parallel.worst_key(slot) == serial.worst_key(slot));
    std::vector<Candidate> expected = serial.candidates(slot, 0), kept = parallel.candidates(slot, 0);
    REQUIRE(kept.size() == expected.size());
    for (std::size_t i = 0; i < kept.size(); ++i) {
      CHECK(kept[i].target == expected[i].target);
      CHECK(kept[i].score == expected[i].score);
    }
  }
}
