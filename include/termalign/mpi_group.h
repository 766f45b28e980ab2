// The ranks of an `mpirun` as a ProcessGroup (only in builds configured with TERMALIGN_WITH_MPI=ON).
#pragma once

#include <memory>

#include "termalign/types.h"

namespace termalign {

// Whether this process was started by an MPI launcher (mpirun / mpiexec set the environment it looks at).
bool launched_by_mpi();

// MPI for the lifetime of the object: MPI_Init on construction, MPI_Finalize on destruction. Its group() spans
// MPI_COMM_WORLD. Construct at most one, on the main thread, before any other thread starts.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  const ProcessGroup& group() const { return *group_; }

  // Ends every rank of the job with `exit_code` (MPI_Abort): a rank that fails must not leave the others waiting
  // in a collective operation forever.
  [[noreturn]] void abort(int exit_code) const;

 private:
  std::unique_ptr<ProcessGroup> group_;
};

}  // namespace termalign
