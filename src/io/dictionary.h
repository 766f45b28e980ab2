// Bilingual dictionaries as evidence (--dictionary): a dict server's database (dictd: an `.index` of headword,
// offset and length in base64, and the entries' text, dictzip-compressed `.dict.dz` or plain `.dict`), as Debian's
// FreeDict packages install them, or a two-column file of word or phrase pairs (src<TAB>tgt, or two words
// separated by white space as MUSE's dictionaries are).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace termalign {

// Distinct phrases stored end to end, each with an id; found by a hash table of ids (a few bytes a phrase, where
// a std::string each and a node-based map cost ten times that at a million phrases).
class PhraseTable {
 public:
  std::uint32_t intern(std::string_view phrase);
  // Room for `phrases` phrases without growing.
  void reserve(std::size_t phrases);
  // The id of `phrase`, or npos.
  std::uint32_t find(std::string_view phrase) const;
  std::string_view phrase(std::uint32_t id) const {
    return std::string_view(text_).substr(starts_[id], starts_[id + 1] - starts_[id]);
  }
  std::size_t size() const { return starts_.size() - 1; }
  static constexpr std::uint32_t npos = 0xffffffffu;

 private:
  void grow();
  std::string text_;
  std::vector<std::uint32_t> starts_{0};
  std::vector<std::uint64_t> slots_;  // a power of two long: 0 empty, else the upper half of the hash and id + 1
};

// The pairs (source phrase, target phrase) of one or more dictionaries, in the run's direction. Phrases are in
// the form fold_phrase gives (io.h), as the terms they are matched with. Look-ups need finish() first.
class Dictionary {
 public:
  // Adds a pair as written (folded and spaced here); empty sides, and sides that are not UTF-8, are dropped.
  void add(std::string_view source, std::string_view target);
  // The parts of add: a phrase as written interned on its side (npos when empty or not UTF-8), and a pair of
  // interned ids (none when either is npos).
  std::uint32_t intern_phrase(std::string_view phrase, bool source);
  void add_ids(std::uint32_t source, std::uint32_t target);
  // Adds the pairs of another dictionary (finished or not); its two sides' phrases on `threads` threads (0: all
  // cores).
  void add_all(const Dictionary& other, int threads = 1);
  // Room for about `pairs` pairs of as many distinct phrases a side.
  void reserve(std::size_t pairs);
  // Sorts and removes repeated pairs, and indexes them both ways.
  void finish();

  std::size_t size() const { return pairs_.size(); }
  bool empty() const { return pairs_.empty(); }
  const PhraseTable& sources() const { return sources_; }
  const PhraseTable& targets() const { return targets_; }
  // The target phrase ids of a source phrase id, and the reverse.
  std::pair<const std::uint32_t*, const std::uint32_t*> translations(std::uint32_t source) const;
  std::pair<const std::uint32_t*, const std::uint32_t*> sources_of(std::uint32_t target) const;
  bool has_pair(std::string_view source, std::string_view target) const;
  // Every pair (source id, target id), sorted.
  const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs() const { return pairs_; }

 private:
  PhraseTable sources_, targets_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs_;
  std::vector<std::uint32_t> by_source_first_, by_target_first_;  // CSR offsets
  std::vector<std::uint32_t> forward_, backward_;                 // target ids by source, source ids by target
  std::string buffer_;                                            // intern_phrase's folded phrase
};

// One line of a dictd index: the headword, and where its entry is in the text. A malformed line (not three or
// four TAB-separated fields, a bad base64 number) is an input error naming `path` and `line`.
struct DictdIndexEntry {
  std::string_view headword;  // in the index's text
  std::uint64_t offset = 0, length = 0;
  std::size_t line = 0;
};
// The headwords are views into `text`, which must outlive them.
std::vector<DictdIndexEntry> parse_dictd_index(std::string_view text, const std::string& path);

// A dictd number: base64 digits (A-Z a-z 0-9 + /), most significant first; false on a bad digit or overflow.
bool decode_dictd_number(std::string_view digits, std::uint64_t& value);

// An entry's text as headword and translations: the first line without pronunciation (/.../) and brackets
// (<...>, [...], (...), {...}); the translations from the lines after it until the first note, cross-reference,
// example or blank line, each line's numbered senses and comma- and semicolon-separated items, brackets dropped.
struct DictdEntry {
  std::string headword;
  std::vector<std::string> translations;
};
DictdEntry parse_dictd_entry(std::string_view text);

// Reads a compressed file (gzip, dictzip's format; inflated by detail::GzipStream) in pieces: each call appends
// the next decompressed piece to `out` and returns false at the end. A corrupt or cut stream, or a bad CRC, is an
// input error naming `path`. A plain file (no gzip header) is passed through as it is.
class DecompressedChunks {
 public:
  explicit DecompressedChunks(const std::string& path);
  ~DecompressedChunks();
  DecompressedChunks(const DecompressedChunks&) = delete;
  DecompressedChunks& operator=(const DecompressedChunks&) = delete;
  bool next(std::string& out);

 private:
  struct State;
  State* state_;
};

// Whether a dictd database named `name` (its file name: freedict-eng-deu.index) reads backward for a run of
// `pair` ("en-de"; "" when not known): its name's language codes (ISO 639-3 or -1) name the run's target
// language first. Without a pair, a database whose second code is English reads backward (the task's pairs are
// all English first).
bool dictd_reads_backward(const std::string& name, const std::string& pair);

// Reads one dictionary into `dictionary` (not finished): a dictd database (its .index, .dict.dz or .dict path, or
// their base name) in the direction its name says for `pair`, or a two-column file. Errors name the file and the
// line or entry.
void read_dictionary(const std::string& path, const std::string& pair, Dictionary& dictionary);

// All of `paths`, finished; read side by side on `threads` threads (0: all cores), one file each.
Dictionary read_dictionaries(const std::vector<std::string>& paths, const std::string& pair, int threads = 0);

}  // namespace termalign
