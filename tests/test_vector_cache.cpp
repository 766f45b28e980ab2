#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "scratch_file.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "termalign/embeddings.h"

using namespace termalign;

namespace {

const std::vector<std::string> kWords = {"alpha", "beta", "Gamma", "delta", "epsilon"};

// A .vec file of kWords whose values all differ by `offset` from those of another offset.
std::string vec_file(const std::string& name, float offset) {
  Matrix vectors(static_cast<Eigen::Index>(kWords.size()), 3);
  for (Eigen::Index r = 0; r < vectors.rows(); ++r)
    for (Eigen::Index c = 0; c < vectors.cols(); ++c)
      vectors(r, c) = offset + 0.25f * static_cast<float>(r * 3 + c);
  return termalign_tests::scratch_file("test_vector_cache", name, format_vec(kWords, vectors));
}

void check_same(const Embeddings& a, const Embeddings& b) {
  CHECK(a.words == b.words);
  CHECK(a.rows == b.rows);
  CHECK(a.folded == b.folded);
  REQUIRE(a.vectors.rows() == b.vectors.rows());
  REQUIRE(a.vectors.cols() == b.vectors.cols());
  CHECK(a.vectors == b.vectors);
}

LoadOptions restricted(std::unordered_set<std::string> wanted, std::size_t most_frequent) {
  LoadOptions options;
  options.restrict_words = true;
  options.wanted = std::move(wanted);
  options.most_frequent = most_frequent;
  return options;
}

}  // namespace

TEST_CASE("vector cache: a second load of a file is a copy of the first, equal to a fresh load",
          "[vector_cache]") {
  const std::string path = vec_file("same.vec", 1.0f);
  VectorCache cache;
  CHECK(cache.files_read() == 0);
  Embeddings first = cache.load(path, {});
  CHECK(cache.files_read() == 1);
  check_same(first, load_embeddings(path));
  REQUIRE(first.size() == kWords.size());

  // A run normalises its copy in place: the next run still gets the vectors as read.
  first.vectors *= 2.0f;
  LoadOptions other_threads;  // threads and parsing pieces change nothing in what is kept
  other_threads.threads = 1;
  other_threads.chunk_bytes = 8;
  const Embeddings second = cache.load(path, other_threads);
  CHECK(cache.files_read() == 1);
  check_same(second, load_embeddings(path));
  CHECK_FALSE(first.vectors == second.vectors);

  // Without restrict_words, `wanted` and `most_frequent` keep nothing less: the same load.
  LoadOptions ignored;
  ignored.wanted = {"beta"};
  ignored.most_frequent = 1;
  check_same(cache.load(path, ignored), second);
  CHECK(cache.files_read() == 1);
}

TEST_CASE("vector cache: options that keep other words read the file again", "[vector_cache]") {
  const std::string path = vec_file("options.vec", 2.0f);
  VectorCache cache;
  const Embeddings all = cache.load(path, {});
  CHECK(all.size() == 5);

  const LoadOptions first_and_delta = restricted({"delta"}, 1);
  const Embeddings kept = cache.load(path, first_and_delta);
  CHECK(cache.files_read() == 2);
  CHECK(kept.words == std::vector<std::string>{"alpha", "delta"});
  check_same(kept, load_embeddings(path, first_and_delta));

  // Each differing choice of words is a load of its own; the same choice again is served from the cache.
  const LoadOptions other_wanted = restricted({"beta"}, 1);
  CHECK(cache.load(path, other_wanted).words == std::vector<std::string>{"alpha", "beta"});
  CHECK(cache.files_read() == 3);
  const LoadOptions more_frequent = restricted({"delta"}, 2);
  CHECK(cache.load(path, more_frequent).words == std::vector<std::string>{"alpha", "beta", "delta"});
  CHECK(cache.files_read() == 4);
  LoadOptions folded = restricted({"gamma"}, 0);
  folded.fold_case = true;
  const Embeddings with_folded = cache.load(path, folded);
  CHECK(with_folded.words == std::vector<std::string>{"Gamma"});  // kept for its folded form only
  CHECK(cache.files_read() == 5);
  LoadOptions all_folded;
  all_folded.fold_case = true;
  CHECK(cache.load(path, all_folded).folded.count("gamma") == 1);
  CHECK(cache.files_read() == 6);

  check_same(cache.load(path, first_and_delta), kept);
  check_same(cache.load(path, folded), with_folded);
  check_same(cache.load(path, {}), all);
  CHECK(cache.files_read() == 6);
}

TEST_CASE("vector cache: a file rewritten since it was read is read again", "[vector_cache]") {
  const std::string path = vec_file("rewritten.vec", 1.0f);
  VectorCache cache;
  const Embeddings before = cache.load(path, {});
  REQUIRE(cache.files_read() == 1);

  SECTION("another size") {
    const std::string other = vec_file("rewritten-other.vec", 100.5f);  // longer numbers
    REQUIRE(std::filesystem::file_size(other) != std::filesystem::file_size(path));
    std::filesystem::rename(other, path);
  }
  SECTION("the same size, another modification time") {
    const auto written = std::filesystem::last_write_time(path);
    const auto size = std::filesystem::file_size(path);
    vec_file("rewritten.vec", 3.0f);  // the same digits but the first of each value
    REQUIRE(std::filesystem::file_size(path) == size);
    std::filesystem::last_write_time(path, written + std::chrono::seconds(10));
  }
  const Embeddings after = cache.load(path, {});
  CHECK(cache.files_read() == 2);
  check_same(after, load_embeddings(path));
  CHECK(after.words == before.words);
  CHECK_FALSE(after.vectors == before.vectors);
  // Read again once, not at every load.
  check_same(cache.load(path, {}), after);
  CHECK(cache.files_read() == 2);
}

TEST_CASE("vector cache: vectors provided in memory stand for their name, whatever the options",
          "[vector_cache]") {
  VectorCache cache;
  Embeddings given;
  given.words = {"x", "y"};
  given.rows = {{"x", 0}, {"y", 1}};
  given.vectors = Matrix::Identity(2, 2);
  cache.provide("in-memory vectors", given);
  const Embeddings loaded = cache.load("in-memory vectors", restricted({"y"}, 0));
  CHECK(loaded.path == "in-memory vectors");
  CHECK(loaded.words == given.words);  // all of them: the options do not apply
  CHECK(loaded.vectors == given.vectors);
  CHECK(cache.files_read() == 0);

  // Provided again under the same name: the new vectors replace the old.
  given.vectors *= 3.0f;
  cache.provide("in-memory vectors", given);
  CHECK(cache.load("in-memory vectors", {}).vectors == given.vectors);
  CHECK(cache.files_read() == 0);

  // A name neither provided nor a file is an input error, and nothing is counted as read.
  CHECK_THROWS_AS(cache.load(std::string(TERMALIGN_BINARY_DIR) + "/test_vector_cache/missing.vec", {}), Error);
  CHECK(cache.files_read() == 0);
}

TEST_CASE("vector cache: states kept under a key are found until replaced or cleared", "[vector_cache]") {
  VectorCache cache;
  CHECK(cache.find_state("run") == nullptr);
  const auto first = std::make_shared<const int>(1);
  const auto other = std::make_shared<const int>(2);
  cache.keep_state("run", first);
  cache.keep_state("other run", other);
  CHECK(cache.find_state("run") == first);
  CHECK(cache.find_state("other run") == other);
  CHECK(cache.find_state("Run") == nullptr);

  const auto replacing = std::make_shared<const int>(3);
  cache.keep_state("run", replacing);
  CHECK(cache.find_state("run") == replacing);
  CHECK(first.use_count() == 1);  // the cache let the replaced state go
  CHECK(cache.find_state("other run") == other);

  const std::string path = vec_file("cleared.vec", 1.0f);
  cache.load(path, {});
  cache.clear();
  CHECK(cache.find_state("run") == nullptr);
  CHECK(cache.find_state("other run") == nullptr);
  cache.load(path, {});  // the vectors went too
  CHECK(cache.files_read() == 2);
}

TEST_CASE("vector cache: loads and states from several threads at once", "[vector_cache]") {
  const std::string path = vec_file("threads.vec", 5.0f);
  const LoadOptions kept = restricted({"epsilon"}, 2);
  const Embeddings expected_all = load_embeddings(path), expected_kept = load_embeddings(path, kept);
  VectorCache cache;
  constexpr int kThreads = 4, kLoads = 20;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kLoads; ++i) {
        const bool restrict = (i + t) % 2 == 1;
        const Embeddings got = cache.load(path, restrict ? kept : LoadOptions{});
        const Embeddings& expected = restrict ? expected_kept : expected_all;
        if (got.words != expected.words || !(got.vectors == expected.vectors)) ++mismatches[t];
        cache.keep_state("thread " + std::to_string(t), std::make_shared<const int>(i));
        const auto state = std::static_pointer_cast<const int>(cache.find_state("thread " + std::to_string(t)));
        if (!state || *state != i) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(mismatches == std::vector<int>(kThreads, 0));
  // Two loads of their own; threads that miss at the same moment may each read, never once per load.
  CHECK(cache.files_read() >= 2);
  CHECK(cache.files_read() <= 2 * kThreads);
}
