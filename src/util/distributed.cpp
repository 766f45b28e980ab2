#include "util/distributed.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "termalign/error.h"

namespace termalign {
namespace {

class SingleProcess final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void merge_best(std::vector<float>&, std::size_t) const override {}
  void merge_best(std::vector<Candidate>&, std::size_t) const override {}
  std::vector<float> all_gather(const std::vector<float>& local) const override { return local; }
  std::vector<Candidate> gather(const std::vector<Candidate>& local) const override { return local; }
  void broadcast(std::vector<std::uint32_t>&) const override {}
  void require_same(std::uint64_t, const std::string&) const override {}
};

template <typename T, typename Better>
void merge_slots(T* into, const T* other, std::size_t slots, std::size_t capacity, Better better) {
  std::vector<T> both(2 * capacity);
  for (std::size_t slot = 0; slot < slots; ++slot) {
    T* kept = into + slot * capacity;
    std::copy(kept, kept + capacity, both.begin());
    std::copy(other + slot * capacity, other + (slot + 1) * capacity,
              both.begin() + static_cast<std::ptrdiff_t>(capacity));
    std::partial_sort(both.begin(), both.begin() + static_cast<std::ptrdiff_t>(capacity), both.end(), better);
    std::copy(both.begin(), both.begin() + static_cast<std::ptrdiff_t>(capacity), kept);
  }
}

}  // namespace

const ProcessGroup& single_process() {
  static const SingleProcess group;
  return group;
}

std::pair<std::size_t, std::size_t> row_share(std::size_t n, int rank, int size) {
  TERMALIGN_CHECK(size > 0 && rank >= 0 && rank < size, "rank within the group");
  const std::size_t parts = static_cast<std::size_t>(size), r = static_cast<std::size_t>(rank);
  const std::size_t base = n / parts, extra = n % parts;
  const std::size_t first = r * base + std::min(r, extra);
  return {first, first + base + (r < extra ? 1 : 0)};
}

void merge_best_into(float* into, const float* other, std::size_t slots, std::size_t capacity) {
  merge_slots(into, other, slots, capacity, std::greater<float>());
}

void merge_best_into(Candidate* into, const Candidate* other, std::size_t slots, std::size_t capacity) {
  merge_slots(into, other, slots, capacity, ranks_before);
}

std::uint64_t fingerprint_bytes(const void* data, std::size_t bytes, std::uint64_t seed) {
  // FNV-1a over 8-byte words, then the remaining bytes.
  constexpr std::uint64_t prime = 1099511628211ull;
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t hash = seed;
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, p + i, 8);
    hash = (hash ^ word) * prime;
  }
  for (; i < bytes; ++i) hash = (hash ^ p[i]) * prime;
  return hash;
}

}  // namespace termalign
