// A gzip file decompressed as it is read, a block at a time, never held whole: the readers of `.vec.gz` and
// `.bin.gz` take their bytes from it in one sequential pass. ISA-L's igzip inflates it where the build has it
// (TERMALIGN_WITH_ISAL, Debian libisal-dev), zlib otherwise: with igzip, `align` on real-size gzipped vectors ran
// 1.1-1.55x zlib's speed in bench/RESULTS.md (whole runs, .bin.gz 30.8 -> 27.9 s, .vec.gz 28.9 -> 18.6 s).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace termalign::detail {

// True when the file starts with gzip's magic bytes (1f 8b); false for a shorter or unreadable file.
bool has_gzip_magic(const std::string& path);

// The most bytes that `compressed_bytes` of a gzip file can inflate to: deflate's largest ratio is about 1032:1.
constexpr std::uint64_t inflated_bound(std::uint64_t compressed_bytes) { return compressed_bytes * 1032 + 64; }

// "igzip (ISA-L)" or "zlib": the inflater of this build.
const char* gzip_inflater();

class GzipStream {
 public:
  // Opens `path` (an input error naming it when it cannot be read); nothing is inflated yet.
  explicit GzipStream(const std::string& path);
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;
  ~GzipStream();

  // Fills out[0, size) with the next decompressed bytes; fewer only at the end of the data (0: the end). Several
  // concatenated members are read one after another. A file cut short, a corrupt deflate stream, a bad CRC or
  // length in a member's trailer, or bytes after the last member that are not gzip, is an input error naming the
  // file. Checks for an interrupt (throw_if_interrupted) between blocks.
  std::size_t read(char* out, std::size_t size);
  // The decompressed bytes handed out so far.
  std::uint64_t position() const { return position_; }
  const std::string& path() const { return path_; }

 private:
  struct Inflater;
  bool refill_input();

  std::string path_;
  int descriptor_ = -1;
  std::unique_ptr<Inflater> inflater_;
  std::unique_ptr<unsigned char[]> input_;
  std::size_t input_size_ = 0;  // bytes of input_ read from the file
  bool file_ended_ = false;
  bool finished_ = false;  // the last member's trailer was read and checked
  std::uint64_t position_ = 0;
};

}  // namespace termalign::detail
