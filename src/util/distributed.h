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

#include "termalign/types.h"

namespace termalign {

// The contiguous rows [first, last) of n rows that `rank` of `size` processes handles: shares differ by at most
// one row, lower ranks first.
std::pair<std::size_t, std::size_t> row_share(std::size_t n, int rank, int size);

// Best-k merge of two lists of `capacity` items for each of `slots` slots: `into` keeps, per slot, the best
// `capacity` of both (the reduction every ProcessGroup applies; associative and commutative).
void merge_best_into(float* into, const float* other, std::size_t slots, std::size_t capacity);
void merge_best_into(Candidate* into, const Candidate* other, std::size_t slots, std::size_t capacity);

// An FNV-1a fingerprint of bytes, for require_same (chainable through `seed`).
std::uint64_t fingerprint_bytes(const void* data, std::size_t bytes, std::uint64_t seed = 14695981039346656037ull);

}  // namespace termalign
