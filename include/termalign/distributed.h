// Scoring shared among processes: a ProcessGroup is the few collective operations the distributed passes need.
// The default group is this process alone; the MPI group (termalign/mpi_group.h, built with TERMALIGN_WITH_MPI)
// spans the ranks of an `mpirun`. Every process runs the same pipeline on the same inputs up to the scoring; each
// then scores its share of the source rows against all target rows, and the results are merged so that rank 0
// holds exactly what a single process would have computed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "termalign/scoring.h"

namespace termalign {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  bool is_root() const { return rank() == 0; }

  // Per-slot best-k lists, `capacity` items per slot, each slot's items in any order and padded with items that
  // rank after every real one (the sentinels of detail::BoundedHeaps). Afterwards every process holds, per slot,
  // the best `capacity` items of the union over all processes, in any order.
  virtual void merge_best(std::vector<float>& values, std::size_t capacity) const = 0;
  virtual void merge_best(std::vector<Candidate>& candidates, std::size_t capacity) const = 0;

  // Every process's vector, concatenated in rank order, on every process.
  virtual std::vector<float> all_gather(const std::vector<float>& local) const = 0;
  // Every process's vector, concatenated in rank order, on rank 0 (empty elsewhere).
  virtual std::vector<Candidate> gather(const std::vector<Candidate>& local) const = 0;

  // Throws an input error naming `what` on every process unless all processes pass the same fingerprint.
  virtual void require_same(std::uint64_t fingerprint, const std::string& what) const = 0;
};

// This process alone: the collectives copy or do nothing.
const ProcessGroup& single_process();

// The contiguous rows [first, last) of n rows that `rank` of `size` processes handles: shares differ by at most one
// row, lower ranks first.
std::pair<std::size_t, std::size_t> row_share(std::size_t n, int rank, int size);

// Best-k merge of two lists of `capacity` items for each of `slots` slots: `into` keeps, per slot, the best
// `capacity` of both (the reduction every ProcessGroup applies; associative and commutative).
void merge_best_into(float* into, const float* other, std::size_t slots, std::size_t capacity);
void merge_best_into(Candidate* into, const Candidate* other, std::size_t slots, std::size_t capacity);

// An FNV-1a fingerprint of bytes, for require_same (chainable through `seed`).
std::uint64_t fingerprint_bytes(const void* data, std::size_t bytes, std::uint64_t seed = 14695981039346656037ull);

}  // namespace termalign
