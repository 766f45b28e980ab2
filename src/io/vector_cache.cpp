#include <algorithm>

#include "io/io.h"
#include "termalign/embeddings.h"
#include "termalign/logging.h"

namespace termalign {

namespace {

// The same words kept: the loads give the same vectors (the threads and the parsing chunks change nothing).
bool same_words(const LoadOptions& a, const LoadOptions& b) {
  return a.restrict_words == b.restrict_words && a.fold_case == b.fold_case &&
         (!a.restrict_words || (a.most_frequent == b.most_frequent && a.wanted == b.wanted)) &&
         a.subword_wanted == b.subword_wanted;
}

}  // namespace

Embeddings VectorCache::load(const std::string& path, const LoadOptions& options) {
  std::shared_ptr<const Embeddings> found;
  const std::string signature = file_signature(path);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // A file changed since it was read (rewritten between two runs of a notebook) is read again.
    const auto stale = [&](const Entry& entry) {
      return entry.path == path && !entry.any_options && entry.signature != signature;
    };
    if (std::any_of(entries_.begin(), entries_.end(), stale)) {
      logger().info("{} changed since it was read: it is read again", path);
      entries_.erase(std::remove_if(entries_.begin(), entries_.end(), stale), entries_.end());
    }
    for (const Entry& entry : entries_) {
      if (entry.path == path && (entry.any_options || same_words(entry.options, options))) found = entry.vectors;
    }
  }
  if (found) {
    logger().info("{}: {} vectors already loaded (reused)", path, found->size());
    return *found;
  }
  auto loaded = std::make_shared<const Embeddings>(load_embeddings(path, options));
  Entry entry{path, false, signature, options, loaded};
  std::lock_guard<std::mutex> lock(mutex_);
  ++files_read_;
  entries_.push_back(std::move(entry));
  return *loaded;
}

void VectorCache::provide(const std::string& name, Embeddings vectors) {
  vectors.path = name;
  auto given = std::make_shared<const Embeddings>(std::move(vectors));
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.path == name; }),
                 entries_.end());
  entries_.push_back(Entry{name, true, "", {}, std::move(given)});
}

std::size_t VectorCache::files_read() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return files_read_;
}

std::shared_ptr<const void> VectorCache::find_state(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [kept_key, state] : states_)
    if (kept_key == key) return state;
  return nullptr;
}

void VectorCache::keep_state(const std::string& key, std::shared_ptr<const void> state) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [kept_key, kept] : states_) {
    if (kept_key == key) {
      kept = std::move(state);
      return;
    }
  }
  states_.emplace_back(key, std::move(state));
}

void VectorCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  states_.clear();
}

}  // namespace termalign
