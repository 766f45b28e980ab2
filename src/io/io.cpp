#include "io/io.h"

#include <fcntl.h>
#include <spdlog/fmt/fmt.h>
#include <sys/stat.h>
#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/utf8.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "termalign/error.h"
#include "termalign/interrupt.h"
#include "util/distributed.h"
#include "util/resources.h"

namespace termalign {

bool is_valid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t length;
    std::uint32_t code_point;
    if ((lead & 0xE0) == 0xC0) {
      length = 2, code_point = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3, code_point = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4, code_point = lead & 0x07;
    } else {
      return false;
    }
    if (i + length > n) return false;
    for (std::size_t j = 1; j < length; ++j) {
      if ((bytes[i + j] & 0xC0) != 0x80) return false;
      code_point = (code_point << 6) | (bytes[i + j] & 0x3F);
    }
    static const std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < smallest[length] || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

bool is_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

namespace {

const icu::Normalizer2* nfc_normalizer() {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
  return U_FAILURE(status) ? nullptr : nfc;
}

}  // namespace

bool is_nfc(std::string_view text) {
  if (is_ascii(text)) return true;
  const icu::Normalizer2* nfc = nfc_normalizer();
  if (nfc == nullptr) return true;
  UErrorCode status = U_ZERO_ERROR;
  const bool normalized =
      nfc->isNormalizedUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())), status);
  return U_FAILURE(status) || normalized;
}

std::string to_nfc(std::string_view text) {
  const icu::Normalizer2* nfc = nfc_normalizer();
  if (is_ascii(text) || nfc == nullptr) return std::string(text);
  std::string normalized;
  icu::StringByteSink<std::string> sink(&normalized, static_cast<int32_t>(text.size()));
  UErrorCode status = U_ZERO_ERROR;
  nfc->normalizeUTF8(0, icu::StringPiece(text.data(), static_cast<int32_t>(text.size())), sink, nullptr, status);
  return U_FAILURE(status) ? std::string(text) : normalized;
}

bool strip_utf8_bom(std::string_view& text) {
  if (text.substr(0, kUtf8Bom.size()) != kUtf8Bom) return false;
  text.remove_prefix(kUtf8Bom.size());
  return true;
}

bool may_change_when_lowered(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte >= 'A' && byte <= 'Z') || byte >= 0x80) return true;
  }
  return false;
}

std::string fold_case(std::string_view text) { return fold_lowered(to_lower(text)); }

std::string fold_lowered(std::string lowered) {
  // ё is U+0451 (D1 91 in UTF-8), е U+0435 (D0 B5): the same length, replaced in place.
  for (std::size_t i = lowered.find("\xD1\x91"); i != std::string::npos; i = lowered.find("\xD1\x91", i + 2)) {
    lowered[i] = '\xD0';
    lowered[i + 1] = '\xB5';
  }
  return lowered;
}

std::string to_lower(std::string_view text) {
  std::string lowered;
  lowered.reserve(text.size());
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t length = static_cast<int32_t>(text.size());
  int32_t i = 0;
  while (i < length) {
    const unsigned char byte = bytes[i];
    if (byte < 0x80) {  // ASCII fast path
      lowered.push_back(static_cast<char>(byte >= 'A' && byte <= 'Z' ? byte + 32 : byte));
      ++i;
      continue;
    }
    UChar32 code_point;
    const int32_t start = i;
    U8_NEXT(bytes, i, length, code_point);
    if (code_point < 0) {  // invalid sequence: keep the bytes as they are
      lowered.append(text.substr(start, i - start));
      continue;
    }
    uint8_t encoded[4];
    int32_t encoded_length = 0;
    UBool error = false;
    U8_APPEND(encoded, encoded_length, 4, u_tolower(code_point), error);
    (void)error;  // a lower-cased code point always fits in 4 bytes
    lowered.append(reinterpret_cast<const char*>(encoded), encoded_length);
  }
  return lowered;
}

void fold_phrase(std::string_view text, std::string& out) {
  out.clear();
  bool ascii = true;
  for (const char c : text) {
    if (is_ascii_space(c)) {
      if (!out.empty() && out.back() != ' ') out.push_back(' ');
    } else {
      ascii = ascii && static_cast<unsigned char>(c) < 0x80;
      out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  if (!ascii) out = fold_case(out);  // ASCII letters are lowered above, as to_lower lowers them
}

std::string_view trim(std::string_view text) {
  // A loop, not find_first_not_of: that searches the set of spaces once per byte (a call each), which showed in
  // the reading of large dictionaries.
  std::size_t first = 0, last = text.size();
  while (first < last && is_ascii_space(text[first])) ++first;
  while (last > first && is_ascii_space(text[last - 1])) --last;
  return text.substr(first, last - first);
}

std::string file_signature(const std::string& path) {
  struct stat status {};
  if (path.empty() || ::stat(path.c_str(), &status) != 0) return "";
  return std::to_string(status.st_size) + "@" + std::to_string(status.st_mtim.tv_sec) + "." +
         std::to_string(status.st_mtim.tv_nsec);
}

std::string file_fingerprint(const std::string& path) {
  // Only a regular file: a named pipe would block (or, read again, give nothing), a device never end.
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0)
    throw_input_error(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  if (!S_ISREG(status.st_mode)) return "";
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (descriptor < 0) throw_input_error(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  // Blocks of a multiple of 8 bytes: fingerprint_bytes chained over them hashes the same words as over the whole.
  std::vector<char> block(std::size_t(1) << 20);
  std::uint64_t hash = fingerprint_bytes(nullptr, 0);
  std::size_t filled = 0;
  while (true) {
    const ssize_t got = ::read(descriptor, block.data() + filled, block.size() - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const std::string reason = std::strerror(errno);
      ::close(descriptor);
      throw_input_error(path, 0, "cannot read file: " + reason);
    }
    filled += static_cast<std::size_t>(got);
    if (got == 0 || filled == block.size()) {
      hash = fingerprint_bytes(block.data(), filled, hash);
      filled = 0;
      try {
        throw_if_interrupted();  // vectors of several GB take seconds
      } catch (...) {
        ::close(descriptor);
        throw;
      }
    }
    if (got == 0) break;
  }
  ::close(descriptor);
  return fmt::format("fnv1a64:{:016x}", hash);
}

std::string read_file(const std::string& path) {
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) throw_input_error(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  struct stat status;
  const bool known = ::fstat(descriptor, &status) == 0;
  if (known && S_ISDIR(status.st_mode)) {
    ::close(descriptor);
    throw_input_error(path, 0, "is a folder, not a file");
  }
  // A regular file is read straight into a string of its size (one more read confirms its end); pipes and other
  // special files as they come.
  std::string contents(known && S_ISREG(status.st_mode) ? static_cast<std::size_t>(status.st_size) : 0, '\0');
  std::size_t size = 0;
  char probe[1 << 12];
  while (true) {
    const bool full = size == contents.size();
    const ssize_t got = full ? ::read(descriptor, probe, sizeof probe)
                             : ::read(descriptor, contents.data() + size, contents.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const std::string reason = std::strerror(errno);
      ::close(descriptor);
      throw_input_error(path, 0, "cannot read file: " + reason);
    }
    if (got == 0) break;
    if (full) {
      contents.append(probe, static_cast<std::size_t>(got));
      contents.resize(std::max(contents.capacity(), contents.size() + sizeof probe));  // room for the next reads
    }
    size += static_cast<std::size_t>(got);
  }
  ::close(descriptor);
  contents.resize(size);
  return contents;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  // A folder there could not be replaced at the end: say so now, before any work.
  struct stat status {};
  if (::stat(path_.c_str(), &status) == 0 && S_ISDIR(status.st_mode))
    throw_output_error(path_, "is a folder, not a file");
  std::string pattern = path_ + ".tmp.XXXXXX";
  const int descriptor = ::mkstemp(pattern.data());
  if (descriptor < 0) throw_output_error(path_, std::string("cannot create output file: ") + std::strerror(errno));
  temporary_path_ = pattern;
  register_temporary_file(temporary_path_);  // a SIGINT removes it
  file_ = ::fdopen(descriptor, "wb");
  if (!file_) {
    ::close(descriptor);
    std::remove(temporary_path_.c_str());
    unregister_temporary_file(temporary_path_);
    throw_output_error(path_, "cannot open output file");
  }
}

AtomicFile::~AtomicFile() {
  if (file_) {
    std::fclose(file_);
    std::remove(temporary_path_.c_str());
    unregister_temporary_file(temporary_path_);
  }
}

void AtomicFile::write(std::string_view text) {
  TERMALIGN_CHECK(file_ != nullptr, "write after commit");
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    throw_output_error(path_, std::string("cannot write: ") + std::strerror(errno));
  }
}

void AtomicFile::commit() {
  TERMALIGN_CHECK(file_ != nullptr, "commit twice");
  const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  // mkstemp creates the file 0600; give it the usual permissions of a new file.
  ::chmod(temporary_path_.c_str(), static_cast<mode_t>(new_file_permissions()));
  if (!flushed || !closed || std::rename(temporary_path_.c_str(), path_.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary_path_.c_str());
    unregister_temporary_file(temporary_path_);
    throw_output_error(path_, "cannot write: " + reason);
  }
  unregister_temporary_file(temporary_path_);
}

unsigned new_file_permissions() {
  unsigned mask = 0022;
  if (std::FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, status)) {
      if (std::strncmp(line, "Umask:", 6) == 0) {
        mask = static_cast<unsigned>(std::strtoul(line + 6, nullptr, 8));
        break;
      }
    }
    std::fclose(status);
  }
  return 0666u & ~mask;
}

void write_file_atomically(const std::string& path, std::string_view text) {
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

}  // namespace termalign
