#include "util/spilled_matrix.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/huge_pages.h"

namespace termalign::detail {

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 26;  // bytes per read or write call

}  // namespace

SpilledMatrix::~SpilledMatrix() {
  if (fd_ >= 0) ::close(fd_);
}

bool SpilledMatrix::spill(Matrix& matrix, const std::string& directory, const std::string& what) {
  TERMALIGN_CHECK(fd_ < 0, "one spill at a time");
  std::string name = (directory.empty() ? std::string(".") : directory) + "/.termalign-spill-XXXXXX";
  std::vector<char> path(name.begin(), name.end());
  path.push_back('\0');
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    logger().warn("{} stay in memory: no temporary file in {} ({})", what, directory, std::strerror(errno));
    return false;
  }
  ::unlink(path.data());  // gone from the folder now; the space is freed when the descriptor closes
  const char* data = reinterpret_cast<const char*>(matrix.data());
  const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(matrix.size());
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t written = ::write(fd, data + done, std::min(kChunk, bytes - done));
    if (written <= 0) {
      logger().warn("{} stay in memory: writing them to a temporary file in {} failed ({})", what, directory,
                    written < 0 ? std::strerror(errno) : "no progress");
      ::close(fd);
      return false;
    }
    done += static_cast<std::size_t>(written);
  }
  fd_ = fd;
  rows_ = static_cast<long>(matrix.rows());
  cols_ = static_cast<long>(matrix.cols());
  what_ = what;
  matrix = Matrix();
  logger().debug("{} ({:.1f} MiB) spilled to a temporary file in {}", what, static_cast<double>(bytes) / (1 << 20),
                 directory);
  return true;
}

void SpilledMatrix::restore(Matrix& matrix) {
  if (fd_ < 0) return;
  resize_in_huge_pages(matrix, rows_, cols_);  // hundreds of megabytes at scale, written at once
  char* data = reinterpret_cast<char*>(matrix.data());
  const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(matrix.size());
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t read = ::pread(fd_, data + done, std::min(kChunk, bytes - done), static_cast<off_t>(done));
    if (read <= 0)
      throw Error(ErrorKind::resources, "Reading back the " + what_ + " from their temporary file failed (" +
                                            (read < 0 ? std::string(std::strerror(errno)) : "file too short") +
                                            ").");
    done += static_cast<std::size_t>(read);
  }
  ::close(fd_);
  fd_ = -1;
}

}  // namespace termalign::detail
