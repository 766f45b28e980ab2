#include "io/gzip_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "termalign/error.h"
#include "termalign/interrupt.h"

#if TERMALIGN_WITH_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

namespace termalign::detail {

namespace {
constexpr std::size_t kInputBytes = std::size_t{1} << 20;  // compressed bytes read from the file at a time
}  // namespace

bool has_gzip_magic(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  return stream.read(reinterpret_cast<char*>(magic), 2) && magic[0] == 0x1f && magic[1] == 0x8b;
}

// One backend's state. step() inflates from the input it was given into out[0, size): the bytes written, and
// whether a member ended (its trailer read and checked); an error is a message, empty when there is none.
#if TERMALIGN_WITH_ISAL
const char* gzip_inflater() { return "igzip (ISA-L)"; }

struct GzipStream::Inflater {
  inflate_state state;
  Inflater() { start(); }
  void start() {
    isal_inflate_init(&state);
    state.crc_flag = ISAL_GZIP;  // the gzip header, the trailer's CRC-32 and length checked
  }
  void restart() {  // the input left is the next member's
    std::uint8_t* input = state.next_in;
    const std::uint32_t size = state.avail_in;
    isal_inflate_reset(&state);
    state.crc_flag = ISAL_GZIP;
    state.next_in = input;
    state.avail_in = size;
  }
  void give(unsigned char* input, std::size_t size) {
    state.next_in = input;
    state.avail_in = static_cast<std::uint32_t>(size);
  }
  std::size_t input_left() const { return state.avail_in; }
  std::size_t step(char* out, std::size_t size, bool& member_ended, std::string& error) {
    state.next_out = reinterpret_cast<std::uint8_t*>(out);
    state.avail_out = static_cast<std::uint32_t>(std::min<std::size_t>(size, UINT32_MAX / 2));
    const std::uint32_t room = state.avail_out;
    const int status = isal_inflate(&state);
    switch (status) {
      case ISAL_DECOMP_OK:
      case ISAL_END_INPUT:
      case ISAL_OUT_OVERFLOW:
        break;
      case ISAL_INCORRECT_CHECKSUM:
        error = "incorrect CRC-32 or length in a member's trailer";
        break;
      case ISAL_INVALID_WRAPPER:
        error = "incorrect header check";
        break;
      case ISAL_UNSUPPORTED_METHOD:
        error = "unknown compression method";
        break;
      case ISAL_INVALID_BLOCK:
        error = "invalid block type";
        break;
      case ISAL_INVALID_SYMBOL:
        error = "invalid code";
        break;
      case ISAL_INVALID_LOOKBACK:
        error = "invalid distance too far back";
        break;
      default:
        error = "igzip error " + std::to_string(status);
        break;
    }
    member_ended = error.empty() && state.block_state == ISAL_BLOCK_FINISH;
    return room - state.avail_out;
  }
};
#else
const char* gzip_inflater() { return "zlib"; }

struct GzipStream::Inflater {
  z_stream stream{};
  // 16 + MAX_WBITS: a gzip header and trailer, checked.
  Inflater() {
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
  }
  ~Inflater() { inflateEnd(&stream); }
  void restart() { inflateReset(&stream); }
  void give(unsigned char* input, std::size_t size) {
    stream.next_in = input;
    stream.avail_in = static_cast<uInt>(size);
  }
  std::size_t input_left() const { return stream.avail_in; }
  std::size_t step(char* out, std::size_t size, bool& member_ended, std::string& error) {
    stream.next_out = reinterpret_cast<Bytef*>(out);
    stream.avail_out = static_cast<uInt>(std::min<std::size_t>(size, UINT32_MAX / 2));
    const uInt room = stream.avail_out;
    const int status = inflate(&stream, Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR) {
      error = stream.msg != nullptr ? stream.msg : "zlib error " + std::to_string(status);
      if (error == "incorrect data check") error = "incorrect CRC-32 in a member's trailer";
    }
    member_ended = status == Z_STREAM_END;
    return room - stream.avail_out;
  }
};
#endif

GzipStream::GzipStream(const std::string& path) : path_(path) {
  descriptor_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor_ < 0) throw_input_error(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  ::posix_fadvise(descriptor_, 0, 0, POSIX_FADV_SEQUENTIAL);
  input_ = std::make_unique<unsigned char[]>(kInputBytes);
  inflater_ = std::make_unique<Inflater>();
}

GzipStream::~GzipStream() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

bool GzipStream::refill_input() {
  input_size_ = 0;
  while (input_size_ < kInputBytes) {
    const ssize_t got = ::read(descriptor_, input_.get() + input_size_, kInputBytes - input_size_);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw_input_error(path_, 0, std::string("cannot read the file: ") + std::strerror(errno));
    if (got == 0) {
      file_ended_ = true;
      break;
    }
    input_size_ += static_cast<std::size_t>(got);
  }
  inflater_->give(input_.get(), input_size_);
  return input_size_ > 0;
}

std::size_t GzipStream::read(char* out, std::size_t size) {
  std::size_t done = 0;
  while (done < size && !finished_) {
    throw_if_interrupted();  // a large file inflates for tens of seconds
    if (inflater_->input_left() == 0 && !file_ended_) refill_input();
    bool member_ended = false;
    std::string error;
    const std::size_t produced = inflater_->step(out + done, size - done, member_ended, error);
    done += produced;
    position_ += produced;
    if (!error.empty()) throw_input_error(path_, 0, "corrupt gzip file: " + error);
    if (member_ended) {
      // Another member may follow (what `cat a.gz b.gz` makes): its header is checked as the first's.
      if (inflater_->input_left() == 0 && (file_ended_ || !refill_input())) {
        finished_ = true;
      } else {
        inflater_->restart();
      }
    } else if (produced == 0 && inflater_->input_left() == 0 && file_ended_) {
      throw_input_error(path_, 0, "truncated gzip file (it ends inside the compressed data)");
    }
  }
  return done;
}

}  // namespace termalign::detail
