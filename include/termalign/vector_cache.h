// Vectors loaded once for several runs: a grid (`ablate`), an Aligner in a notebook.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "termalign/embeddings.h"

namespace termalign {

// Each distinct load (the file and the LoadOptions that decide which of its words are kept) is read once; later
// runs get a copy of it (a run normalises its vectors in place), so they see exactly what a fresh load gives.
// Vectors given in memory (provide) stand for a name that is not a file. Thread-safe.
class VectorCache {
 public:
  // load_embeddings(path, options) the first time, a copy of the kept vectors after.
  Embeddings load(const std::string& path, const LoadOptions& options);
  // Vectors a program gives: load(name, any options) returns a copy of them.
  void provide(const std::string& name, Embeddings vectors);
  // How many files were read (not counting copies handed out).
  std::size_t files_read() const;
  // What a run derived from its inputs, kept under `key` for the runs after it: the Aligner's scheduler keeps a
  // run's term lists and mapped term vectors, which the runs of a grid that differ only in the scoring, ranking
  // and orthography reuse. Null when nothing is kept under `key`.
  std::shared_ptr<const void> find_state(const std::string& key) const;
  void keep_state(const std::string& key, std::shared_ptr<const void> state);
  void clear();

 private:
  struct Entry {
    std::string path;
    bool any_options = false;  // provided: the options do not matter
    std::string signature;     // file_signature when it was read: a file changed since is read again
    LoadOptions options;       // the words kept (wanted, most_frequent); the threads do not matter
    std::shared_ptr<const Embeddings> vectors;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  std::vector<std::pair<std::string, std::shared_ptr<const void>>> states_;
  std::size_t files_read_ = 0;
};

}  // namespace termalign
