// Transparent huge pages for large buffers that are written all over soon after their allocation.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "termalign/embeddings.h"

namespace termalign::detail {

// Asks the kernel to back the 2 MiB-aligned interior of [data, data + bytes), fresh and not yet written, with huge
// pages: its first writes then fault 512 times fewer pages. On the 2-core benchmark machine (a VM where a page
// fault costs about 13 us) filling 24 MiB of fresh memory took 78 ms with 4 KiB pages and 38 ms with huge pages.
// Only advice: where the kernel has transparent huge pages disabled (or set to "never") nothing changes.
inline void advise_huge_pages(const void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  const auto start = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (start + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = (start + bytes) & ~(kHugePage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // failure is harmless
#else
  (void)data;
  (void)bytes;
#endif
}

// Resizes `matrix` (its contents are not kept) and advises its new storage for huge pages (advise_huge_pages).
inline void resize_in_huge_pages(Matrix& matrix, Eigen::Index rows, Eigen::Index cols) {
  matrix.resize(rows, cols);
  advise_huge_pages(matrix.data(), static_cast<std::size_t>(matrix.size()) * sizeof(float));
}

// std::allocator, except that allocations of 2 MiB or more are 2 MiB-aligned and advised for huge pages: the
// per-row top-k lists and pools of a large scoring run (25 MiB of pools at 20k x 20k terms) and the tile buffers
// are written all over at once, and faulting them in 4 KiB at a time showed in the profiles.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kLarge) return std::allocator<T>().allocate(n);
    void* memory = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
    if (memory == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(memory, bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
    return static_cast<T*>(memory);
  }
  void deallocate(T* pointer, std::size_t n) {
    if (n * sizeof(T) < kLarge) {
      std::allocator<T>().deallocate(pointer, n);
    } else {
      std::free(pointer);
    }
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const {
    return false;
  }

 private:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kLarge = std::size_t{2} << 20;
};

template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace termalign::detail
