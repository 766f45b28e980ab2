// A read-only memory map of a whole file, for parsers that split a large input into chunks.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace termalign::detail {

class MappedFile {
 public:
  // A missing or unreadable file, or one that is not a regular file, is an input error naming it. An empty file
  // gives an empty view.
  explicit MappedFile(const std::string& path);
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view contents() const { return {data_, size_}; }
  // Maps the pages of `part` (a view into contents()) in one call before they are read: one system call instead
  // of a page fault per 16 pages. Advice only: nothing happens where the kernel lacks it (before Linux 5.14).
  void prefault(std::string_view part) const;
  // Drops the pages of `part` from this process's memory: they are read again from the file (the page cache) if
  // touched later. Advice only.
  void release(std::string_view part) const;

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace termalign::detail
