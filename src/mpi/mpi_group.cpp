// The MPI ProcessGroup: best-k merges as MPI_Allreduce with a user operation over one datatype per slot, gathers
// as MPI_(All)gatherv. Built only with TERMALIGN_WITH_MPI=ON. MPI's default error handler (errors are fatal)
// stays: a failed MPI call ends the job.
#include "termalign/mpi_group.h"

#include <mpi.h>

#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>

#include "termalign/error.h"
#include "util/distributed.h"

namespace termalign {
namespace {

// MPI_Allreduce callbacks: `len` slots of the datatype, each one slot's `capacity` items.
template <typename T>
void merge_slots(void* in, void* inout, int* len, MPI_Datatype* type) {
  int bytes = 0;
  MPI_Type_size(*type, &bytes);
  const std::size_t capacity = static_cast<std::size_t>(bytes) / sizeof(T);
  merge_best_into(static_cast<T*>(inout), static_cast<const T*>(in), static_cast<std::size_t>(*len), capacity);
}

class MpiGroup final : public ProcessGroup {
 public:
  MpiGroup() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Op_create(&merge_slots<float>, /*commute=*/1, &merge_values_);
    MPI_Op_create(&merge_slots<Candidate>, /*commute=*/1, &merge_candidates_);
    MPI_Type_contiguous(sizeof(Candidate), MPI_BYTE, &candidate_type_);
    MPI_Type_commit(&candidate_type_);
  }
  ~MpiGroup() override {
    MPI_Op_free(&merge_values_);
    MPI_Op_free(&merge_candidates_);
    MPI_Type_free(&candidate_type_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void merge_best(std::vector<float>& values, std::size_t capacity) const override {
    merge(values.data(), values.size(), capacity, sizeof(float), merge_values_);
  }
  void merge_best(std::vector<Candidate>& candidates, std::size_t capacity) const override {
    merge(candidates.data(), candidates.size(), capacity, sizeof(Candidate), merge_candidates_);
  }

  std::vector<float> all_gather(const std::vector<float>& local) const override {
    const std::vector<int> counts = all_counts(local.size());
    const std::vector<int> offsets = displacements(counts);
    std::vector<float> all(static_cast<std::size_t>(offsets.back() + counts.back()));
    MPI_Allgatherv(local.data(), static_cast<int>(local.size()), MPI_FLOAT, all.data(), counts.data(),
                   offsets.data(), MPI_FLOAT, MPI_COMM_WORLD);
    return all;
  }

  std::vector<Candidate> gather(const std::vector<Candidate>& local) const override {
    const std::vector<int> counts = all_counts(local.size());  // every rank learns them; only rank 0 uses them
    const std::vector<int> offsets = displacements(counts);
    std::vector<Candidate> all(is_root() ? static_cast<std::size_t>(offsets.back() + counts.back()) : 0);
    MPI_Gatherv(local.data(), static_cast<int>(local.size()), candidate_type_, all.data(), counts.data(),
                offsets.data(), candidate_type_, 0, MPI_COMM_WORLD);
    return all;
  }

  void broadcast(std::vector<std::uint32_t>& items) const override {
    TERMALIGN_CHECK(items.size() <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                    "an MPI count fits an int");
    int count = static_cast<int>(items.size());
    MPI_Bcast(&count, 1, MPI_INT, 0, MPI_COMM_WORLD);
    items.resize(static_cast<std::size_t>(count));
    MPI_Bcast(items.data(), count, MPI_UINT32_T, 0, MPI_COMM_WORLD);
  }

  void require_same(std::uint64_t fingerprint, const std::string& what) const override {
    std::vector<std::uint64_t> all(static_cast<std::size_t>(size_));
    MPI_Allgather(&fingerprint, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    for (int r = 1; r < size_; ++r) {
      if (all[static_cast<std::size_t>(r)] != all[0]) {
        throw Error(ErrorKind::input, "ranks 0 and " + std::to_string(r) + " computed different " + what +
                                          ": every rank must read the same inputs with the same options.");
      }
    }
  }

 private:
  void merge(void* items, std::size_t count, std::size_t capacity, std::size_t item_bytes, MPI_Op op) const {
    if (capacity == 0 || count == 0) return;
    TERMALIGN_CHECK(count % capacity == 0, "whole slots");
    MPI_Datatype slot;
    MPI_Type_contiguous(static_cast<int>(capacity * item_bytes), MPI_BYTE, &slot);
    MPI_Type_commit(&slot);
    MPI_Allreduce(MPI_IN_PLACE, items, static_cast<int>(count / capacity), slot, op, MPI_COMM_WORLD);
    MPI_Type_free(&slot);
  }

  std::vector<int> all_counts(std::size_t local) const {
    TERMALIGN_CHECK(local <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                    "an MPI count fits an int");
    const int count = static_cast<int>(local);
    std::vector<int> counts(static_cast<std::size_t>(size_));
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    return counts;
  }

  static std::vector<int> displacements(const std::vector<int>& counts) {
    std::vector<int> offsets(counts.size(), 0);
    std::partial_sum(counts.begin(), counts.end() - 1, offsets.begin() + 1);
    return offsets;
  }

  int rank_ = 0, size_ = 1;
  MPI_Op merge_values_{}, merge_candidates_{};
  MPI_Datatype candidate_type_{};
};

}  // namespace

bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);  // MPI is called from the main thread only
  group_ = std::make_unique<MpiGroup>();
}

MpiSession::~MpiSession() {
  group_.reset();
  MPI_Finalize();
}

void MpiSession::abort(int exit_code) const {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // not reached
}

}  // namespace termalign
