#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "termalign/error.h"

namespace termalign::detail {

MappedFile::MappedFile(const std::string& path) {
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) throw_input_error(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  struct stat status;
  if (::fstat(descriptor, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(descriptor);
    throw_input_error(path, 0, "not a regular file");
  }
  size_ = static_cast<std::size_t>(status.st_size);
  if (size_ > 0) {
    void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, descriptor, 0);
    if (mapped == MAP_FAILED) {
      const std::string reason = std::strerror(errno);
      ::close(descriptor);
      throw_input_error(path, 0, "cannot map file into memory: " + reason);
    }
    // Chunks are read front to back by each thread: ask for aggressive read-ahead.
    ::madvise(mapped, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const char*>(mapped);
  }
  ::close(descriptor);  // the mapping stays valid
}

void MappedFile::prefault(std::string_view part) const {
#ifdef MADV_POPULATE_READ
  if (part.empty()) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(part.data()) & ~(page - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(part.data() + part.size());
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);  // failure is harmless
#else
  (void)part;
#endif
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

void MappedFile::release(std::string_view part) const {
  if (part.empty()) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(part.data()) & ~(page - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(part.data() + part.size());
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);  // a read-only file map: re-read on touch
}

}  // namespace termalign::detail
