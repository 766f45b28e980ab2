// A matrix held in an unlinked temporary file while the memory it took is needed for something else.
#pragma once

#include <string>

#include "termalign/embeddings.h"

namespace termalign::detail {

// spill() writes a matrix's values to a temporary file in `directory`, unlinked at once (nothing is left behind
// whatever happens), and frees the matrix; restore() reads it back, identical to the last bit. A spill that cannot
// be written (no room, no permission) leaves the matrix in memory and says why in the log: it only saves memory.
class SpilledMatrix {
 public:
  SpilledMatrix() = default;
  ~SpilledMatrix();
  SpilledMatrix(const SpilledMatrix&) = delete;
  SpilledMatrix& operator=(const SpilledMatrix&) = delete;

  // Returns whether the matrix was spilled (and freed). `what` names it in messages.
  bool spill(Matrix& matrix, const std::string& directory, const std::string& what);
  // Reads a spilled matrix back into `matrix` (nothing to do when none was spilled); an I/O error is an error.
  void restore(Matrix& matrix);
  bool spilled() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  long rows_ = 0, cols_ = 0;
  std::string what_;
};

}  // namespace termalign::detail
