// File helpers shared by the readers and writers: UTF-8 checks, lower-casing, atomic output.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace termalign {

// True when `text` is well-formed UTF-8 (no overlong forms, no surrogates, no code point above U+10FFFF).
bool is_valid_utf8(std::string_view text);
// True when every byte of `text` is ASCII.
bool is_ascii(std::string_view text);

// Whether valid UTF-8 `text` is in Unicode NFC (composed characters, as BUCC data and fastText vectors are; ASCII
// always is), and `text` in NFC.
bool is_nfc(std::string_view text);
std::string to_nfc(std::string_view text);

// The UTF-8 byte order mark, which every text input ignores at its start.
inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
// Removes a leading byte order mark from `text`; whether there was one.
bool strip_utf8_bom(std::string_view& text);

// Unicode lower-casing of valid UTF-8, code point by code point (ICU's simple case mapping).
std::string to_lower(std::string_view text);
// Whether to_lower could change `text`: it holds an ASCII capital or a non-ASCII byte (a quick test before it).
// fold_case changes only such texts too.
bool may_change_when_lowered(std::string_view text);
// The form under which words are matched across the inputs (vectors, term lists, seed lexicon, corpora): lower
// case (to_lower), and the Russian letter ё as е, which Russian texts may write for it (отчёт, отчет).
std::string fold_case(std::string_view text);
// fold_case of a text that to_lower has already lower-cased (no second pass over it).
std::string fold_lowered(std::string lowered);

// ASCII white space: space, tab, CR, LF, VT, FF. It separates a term's words (split_words) and trim strips it.
inline bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}
// The form under which a dictionary's phrases and the terms are matched: fold_case, the words (separated by
// ASCII white space) joined by single spaces, none at the ends. Into `out` (its storage reused).
void fold_phrase(std::string_view text, std::string& out);

// Strips ASCII white space (is_ascii_space) at both ends.
std::string_view trim(std::string_view text);

// Reads a whole file; a missing or unreadable file is an input error naming it.
std::string read_file(const std::string& path);

// A file's size and modification time as text ("" when there is no such file): what was derived from the file and
// kept (VectorCache, Aligner) is stale once it differs.
std::string file_signature(const std::string& path);

// A file's contents as "fnv1a64:" and 16 hex digits (fingerprint_bytes over all its bytes, read in blocks), for
// records of what a result was made from; "" for what is not a regular file (a pipe, a device), which it does not
// read; an input error naming the file when it cannot be read.
std::string file_fingerprint(const std::string& path);

// Writes to a temporary file beside `path` and renames it onto `path` on commit(), so that readers never see a
// partial file and an existing file stays as it was when the run fails. Without commit() the temporary file is
// removed on destruction.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  void write(std::string_view text);
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_, temporary_path_;
  std::FILE* file_ = nullptr;
};

// Writes `text` to `path` atomically.
void write_file_atomically(const std::string& path, std::string_view text);

// The permissions of a new file: 0666 less the process's umask, read from /proc/self/status (0022 assumed where it
// cannot be read) without setting it, since umask() is process-wide: another thread creating a file meanwhile
// would get the temporary value. AtomicFile gives its file these on commit (mkstemp creates it 0600).
unsigned new_file_permissions();

}  // namespace termalign
