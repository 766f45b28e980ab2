// The distributed scoring without MPI: P threads play the ranks of a ProcessGroup whose collectives go through
// shared memory, and rank 0's results must equal one process's, bit for bit. The MPI transport itself is checked
// by scripts/test_mpi.sh (mpirun -np 2 and 3 on the sample, byte for byte).
#include <algorithm>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "scoring/scoring.h"
#include "scoring_helpers.h"
#include "termalign/error.h"
#include "util/distributed.h"

using termalign::Candidate;
using termalign::Matrix;
using termalign::NeighbourhoodMeans;
using termalign::ProcessGroup;
using termalign::SelectionOptions;
using termalign::TileOptions;
using termalign::testing::random_unit_rows;

namespace {

// What the threads share: one slot of bytes per rank and a reusable barrier.
class Exchange {
 public:
  explicit Exchange(int size) : slots_(static_cast<std::size_t>(size)), size_(size) {}

  // Publishes `bytes` as this rank's slot and returns every rank's, once all have published.
  std::vector<std::vector<char>> all_publish(int rank, std::vector<char> bytes) {
    slots_[static_cast<std::size_t>(rank)] = std::move(bytes);
    barrier();
    std::vector<std::vector<char>> all = slots_;
    barrier();  // nobody publishes again before everyone has read
    return all;
  }

 private:
  void barrier() {
    std::unique_lock<std::mutex> lock(mutex_);
    const long generation = generation_;
    if (++waiting_ == size_) {
      waiting_ = 0;
      ++generation_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return generation_ != generation; });
    }
  }

  std::vector<std::vector<char>> slots_;
  int size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int waiting_ = 0;
  long generation_ = 0;
};

template <typename T>
std::vector<char> to_bytes(const std::vector<T>& items) {
  std::vector<char> bytes(items.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), items.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> from_bytes(const std::vector<char>& bytes) {
  std::vector<T> items(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(items.data(), bytes.data(), bytes.size());
  return items;
}

class ThreadGroup final : public ProcessGroup {
 public:
  ThreadGroup(Exchange& exchange, int rank, int size) : exchange_(exchange), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void merge_best(std::vector<float>& values, std::size_t capacity) const override { merge(values, capacity); }
  void merge_best(std::vector<Candidate>& candidates, std::size_t capacity) const override {
    merge(candidates, capacity);
  }
  std::vector<float> all_gather(const std::vector<float>& local) const override { return concatenate(local); }
  std::vector<Candidate> gather(const std::vector<Candidate>& local) const override {
    std::vector<Candidate> all = concatenate(local);
    return is_root() ? all : std::vector<Candidate>();
  }
  void broadcast(std::vector<std::uint32_t>& items) const override {
    items = from_bytes<std::uint32_t>(exchange_.all_publish(rank_, to_bytes(items))[0]);
  }
  void require_same(std::uint64_t fingerprint, const std::string& what) const override {
    for (const auto& other : exchange_.all_publish(rank_, to_bytes(std::vector<std::uint64_t>{fingerprint}))) {
      if (from_bytes<std::uint64_t>(other)[0] != fingerprint)
        throw termalign::Error(termalign::ErrorKind::input, "ranks computed different " + what);
    }
  }

 private:
  template <typename T>
  void merge(std::vector<T>& items, std::size_t capacity) const {
    const auto all = exchange_.all_publish(rank_, to_bytes(items));
    // Every rank merges in its own order (its own list first): the result must not depend on it.
    for (int offset = 1; offset < size_; ++offset) {
      const std::vector<T> other = from_bytes<T>(all[static_cast<std::size_t>((rank_ + offset) % size_)]);
      if (capacity > 0) termalign::merge_best_into(items.data(), other.data(), items.size() / capacity, capacity);
    }
  }
  template <typename T>
  std::vector<T> concatenate(const std::vector<T>& local) const {
    std::vector<T> all;
    for (const auto& bytes : exchange_.all_publish(rank_, to_bytes(local))) {
      const std::vector<T> part = from_bytes<T>(bytes);
      all.insert(all.end(), part.begin(), part.end());
    }
    return all;
  }

  Exchange& exchange_;
  int rank_, size_;
};

// Runs body(group) on `size` threads, one rank each; rethrows the first failure.
template <typename Body>
void run_ranks(int size, Body body) {
  Exchange exchange(size);
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        const ThreadGroup group(exchange, rank, size);
        body(group);
      } catch (...) {
        failures[static_cast<std::size_t>(rank)] = std::current_exception();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

bool same_candidates(const std::vector<Candidate>& a, const std::vector<Candidate>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](const Candidate& x, const Candidate& y) {
           return x.score == y.score && x.cosine == y.cosine && x.source == y.source && x.target == y.target;
         });
}

bool same_vector(const Eigen::VectorXf& a, const Eigen::VectorXf& b) {
  return a.size() == b.size() && std::equal(a.data(), a.data() + a.size(), b.data());
}

}  // namespace

TEST_CASE("row_share splits rows into contiguous shares that differ by at most one", "[distributed]") {
  for (std::size_t n : {0, 1, 5, 7, 100}) {
    for (int size = 1; size <= 6; ++size) {
      std::size_t next = 0, smallest = n, largest = 0;
      for (int rank = 0; rank < size; ++rank) {
        const auto [first, last] = termalign::row_share(n, rank, size);
        REQUIRE(first == next);
        smallest = std::min(smallest, last - first);
        largest = std::max(largest, last - first);
        next = last;
      }
      REQUIRE(next == n);
      REQUIRE(largest - smallest <= 1);
    }
  }
}

TEST_CASE("merge_best_into keeps each slot's best items of both lists", "[distributed]") {
  // Two slots of capacity 3; -inf pads a list that holds fewer items.
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> into = {0.5f, 0.9f, -inf, 0.1f, 0.2f, 0.3f};
  const std::vector<float> other = {0.7f, 0.6f, 0.95f, 0.25f, -inf, -inf};
  termalign::merge_best_into(into.data(), other.data(), 2, 3);
  std::sort(into.begin(), into.begin() + 3, std::greater<float>());
  std::sort(into.begin() + 3, into.end(), std::greater<float>());
  REQUIRE(into == std::vector<float>{0.95f, 0.9f, 0.7f, 0.3f, 0.25f, 0.2f});
}

TEST_CASE("Distributed CSLS passes give one process's results on rank 0, for any number of ranks",
          "[distributed][scoring]") {
  // 53 x 37 terms, d = 8: with tiles of 5 x 6 every share crosses several tile borders, and with 4 ranks the
  // shares (13-14 rows) do not line up with the tiles.
  const Matrix X = random_unit_rows(53, 8, 11);
  Matrix Z = random_unit_rows(37, 8, 12);
  Z.row(20) = Z.row(3);  // a duplicate target: exact ties
  const TileOptions tiles{5, 6, 1};
  const int k = GENERATE(1, 3);
  const SelectionOptions selection =
      GENERATE(SelectionOptions{3, 0, 0}, SelectionOptions{2, 4, 0}, SelectionOptions{0, 2, 0},
               SelectionOptions{0, 0, 40}, SelectionOptions{5, 0, 17});
  const NeighbourhoodMeans single = termalign::neighbourhood_means(X, Z, k, tiles);
  const std::vector<Candidate> expected = termalign::select_csls_candidates(X, Z, single, selection, tiles);
  const Eigen::VectorXf expected_knn = termalign::knn_mean_similarity(Z, X, k, tiles);
  REQUIRE(!expected.empty());
  // The targets' lists of the fused pass (when it runs: top_m without mutual_m), as one process keeps them.
  const termalign::CslsSelection expected_fused =
      termalign::csls_select(X, Z, k, selection, tiles, 4, termalign::single_process(), 3);

  for (int size = 1; size <= 4; ++size) {
    CAPTURE(k, selection.top_m, selection.mutual_m, selection.limit, size);
    std::vector<NeighbourhoodMeans> means(static_cast<std::size_t>(size));
    std::vector<Eigen::VectorXf> knn(static_cast<std::size_t>(size));
    std::vector<std::vector<Candidate>> selected(static_cast<std::size_t>(size));
    std::vector<termalign::CslsSelection> fused(static_cast<std::size_t>(size));
    run_ranks(size, [&](const ProcessGroup& group) {
      const auto r = static_cast<std::size_t>(group.rank());
      means[r] = termalign::neighbourhood_means(X, Z, k, tiles, group);
      knn[r] = termalign::knn_mean_similarity(Z, X, k, tiles, group);
      selected[r] = termalign::select_csls_candidates(X, Z, means[r], selection, tiles, group);
      fused[r] = termalign::csls_select(X, Z, k, selection, tiles, 4, group, 3);
    });
    for (int rank = 0; rank < size; ++rank) {
      const auto r = static_cast<std::size_t>(rank);
      REQUIRE(same_vector(means[r].source, single.source));
      REQUIRE(same_vector(means[r].target, single.target));
      REQUIRE(same_vector(knn[r], expected_knn));
      REQUIRE(same_vector(fused[r].means.source, single.source));
      REQUIRE(same_vector(fused[r].means.target, single.target));
      if (rank == 0) {
        REQUIRE(same_candidates(selected[r], expected));
        REQUIRE(same_candidates(fused[r].candidates, expected));
        REQUIRE(fused[r].has_reverse == expected_fused.has_reverse);
        REQUIRE(same_candidates(fused[r].reverse, expected_fused.reverse));
      } else {
        REQUIRE(selected[r].empty());
        REQUIRE(fused[r].candidates.empty());
        REQUIRE(fused[r].reverse.empty());
      }
    }
  }
}

TEST_CASE("More ranks than rows: the ranks without rows still take part", "[distributed][scoring]") {
  const Matrix X = random_unit_rows(2, 4, 21), Z = random_unit_rows(9, 4, 22);
  const TileOptions tiles{1, 2, 1};
  const NeighbourhoodMeans single = termalign::neighbourhood_means(X, Z, 2, tiles);
  const auto expected = termalign::select_csls_candidates(X, Z, single, {2, 1, 0}, tiles);
  std::vector<Candidate> at_root;
  run_ranks(5, [&](const ProcessGroup& group) {
    const NeighbourhoodMeans means = termalign::neighbourhood_means(X, Z, 2, tiles, group);
    auto selected = termalign::select_csls_candidates(X, Z, means, {2, 1, 0}, tiles, group);
    if (group.is_root()) at_root = std::move(selected);
  });
  REQUIRE(same_candidates(at_root, expected));
}
