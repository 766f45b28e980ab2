#include "io/dictionary.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <exception>
#include <memory>
#include <numeric>

#include "io/gzip_stream.h"
#include "io/io.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign {

// --- PhraseTable ---

namespace {

// A slot: the id + 1 (0: empty) and the upper half of the phrase's hash, compared before the text.
std::uint64_t slot_of(std::uint32_t id, std::size_t hash) {
  return (static_cast<std::uint64_t>(hash >> 32) << 32) | (id + 1u);
}

}  // namespace

void PhraseTable::reserve(std::size_t phrases) {
  std::size_t slots = 1024;
  while (slots < 2 * phrases) slots *= 2;
  if (slots <= slots_.size()) return;
  slots_.assign(slots / 2, 0);  // grow() doubles it
  grow();
}

void PhraseTable::grow() {
  std::vector<std::uint64_t> slots(slots_.empty() ? 1024 : 2 * slots_.size(), 0);
  const std::size_t mask = slots.size() - 1;
  for (std::uint32_t id = 0; id < size(); ++id) {
    const std::size_t hash = std::hash<std::string_view>()(phrase(id));
    std::size_t slot = hash & mask;
    while (slots[slot] != 0) slot = (slot + 1) & mask;
    slots[slot] = slot_of(id, hash);
  }
  slots_ = std::move(slots);
}

std::uint32_t PhraseTable::find(std::string_view phrase_text) const {
  if (slots_.empty()) return npos;
  const std::size_t mask = slots_.size() - 1, hash = std::hash<std::string_view>()(phrase_text);
  const std::uint64_t tag = static_cast<std::uint64_t>(hash >> 32) << 32;
  for (std::size_t slot = hash & mask; slots_[slot] != 0; slot = (slot + 1) & mask) {
    const auto id = static_cast<std::uint32_t>(slots_[slot]) - 1;
    if ((slots_[slot] & ~0xffffffffull) == tag && phrase(id) == phrase_text) return id;
  }
  return npos;
}

std::uint32_t PhraseTable::intern(std::string_view phrase_text) {
  if (2 * (size() + 1) > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1, hash = std::hash<std::string_view>()(phrase_text);
  const std::uint64_t tag = static_cast<std::uint64_t>(hash >> 32) << 32;
  std::size_t slot = hash & mask;
  for (; slots_[slot] != 0; slot = (slot + 1) & mask) {
    const auto id = static_cast<std::uint32_t>(slots_[slot]) - 1;
    if ((slots_[slot] & ~0xffffffffull) == tag && phrase(id) == phrase_text) return id;
  }
  const auto id = static_cast<std::uint32_t>(size());
  text_.append(phrase_text);
  starts_.push_back(static_cast<std::uint32_t>(text_.size()));
  slots_[slot] = slot_of(id, hash);
  return id;
}

// --- Dictionary ---

namespace {

// Offsets (CSR) and the other side's ids of `pairs` grouped by `key` of each pair.
void group_pairs(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs, std::size_t keys, bool by_first,
                 std::vector<std::uint32_t>& first, std::vector<std::uint32_t>& values) {
  first.assign(keys + 1, 0);
  for (const auto& [s, t] : pairs) ++first[(by_first ? s : t) + 1];
  std::partial_sum(first.begin(), first.end(), first.begin());
  values.resize(pairs.size());
  std::vector<std::uint32_t> next(first.begin(), first.end() - 1);
  for (const auto& [s, t] : pairs) values[next[by_first ? s : t]++] = by_first ? t : s;
}

}  // namespace

void Dictionary::add(std::string_view source, std::string_view target) {
  const std::uint32_t s = intern_phrase(source, true);
  if (s != PhraseTable::npos) add_ids(s, intern_phrase(target, false));
}

std::uint32_t Dictionary::intern_phrase(std::string_view phrase, bool source) {
  if (!is_valid_utf8(phrase)) return PhraseTable::npos;
  fold_phrase(phrase, buffer_);
  if (buffer_.empty()) return PhraseTable::npos;
  return (source ? sources_ : targets_).intern(buffer_);
}

void Dictionary::add_ids(std::uint32_t source, std::uint32_t target) {
  if (source != PhraseTable::npos && target != PhraseTable::npos) pairs_.emplace_back(source, target);
}

void Dictionary::add_all(const Dictionary& other, int threads) {
  // Each side's phrases interned in the order of their first pair (the ids a pair-by-pair merge would give), the
  // two sides side by side.
  std::vector<std::uint32_t> source_ids(other.sources_.size(), PhraseTable::npos),
      target_ids(other.targets_.size(), PhraseTable::npos);
  parallel_for(2, threads, [&](std::size_t side) {
    const bool source = side == 0;
    std::vector<std::uint32_t>& ids = source ? source_ids : target_ids;
    PhraseTable& table = source ? sources_ : targets_;
    const PhraseTable& from = source ? other.sources_ : other.targets_;
    for (const auto& [s, t] : other.pairs_) {
      const std::uint32_t id = source ? s : t;
      if (ids[id] == PhraseTable::npos) ids[id] = table.intern(from.phrase(id));
    }
  });
  pairs_.reserve(pairs_.size() + other.pairs_.size());
  for (const auto& [s, t] : other.pairs_) pairs_.emplace_back(source_ids[s], target_ids[t]);
}

void Dictionary::reserve(std::size_t pairs) {
  pairs_.reserve(pairs);
  sources_.reserve(pairs / 2);
  targets_.reserve(pairs / 2);
}

void Dictionary::finish() {
  std::sort(pairs_.begin(), pairs_.end());
  pairs_.erase(std::unique(pairs_.begin(), pairs_.end()), pairs_.end());
  pairs_.shrink_to_fit();
  group_pairs(pairs_, sources_.size(), true, by_source_first_, forward_);
  group_pairs(pairs_, targets_.size(), false, by_target_first_, backward_);
}

std::pair<const std::uint32_t*, const std::uint32_t*> Dictionary::translations(std::uint32_t source) const {
  return {forward_.data() + by_source_first_[source], forward_.data() + by_source_first_[source + 1]};
}

std::pair<const std::uint32_t*, const std::uint32_t*> Dictionary::sources_of(std::uint32_t target) const {
  return {backward_.data() + by_target_first_[target], backward_.data() + by_target_first_[target + 1]};
}

bool Dictionary::has_pair(std::string_view source, std::string_view target) const {
  const std::uint32_t s = sources_.find(source), t = targets_.find(target);
  if (s == PhraseTable::npos || t == PhraseTable::npos) return false;
  const auto [begin, end] = translations(s);
  return std::find(begin, end, t) != end;
}

// --- dictd ---

bool decode_dictd_number(std::string_view digits, std::uint64_t& value) {
  if (digits.empty() || digits.size() > 10) return false;  // 10 digits: 60 bits
  value = 0;
  for (const char c : digits) {
    int digit;
    if (c >= 'A' && c <= 'Z') {
      digit = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      digit = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      digit = c - '0' + 52;
    } else if (c == '+') {
      digit = 62;
    } else if (c == '/') {
      digit = 63;
    } else {
      return false;
    }
    value = value * 64 + static_cast<std::uint64_t>(digit);
  }
  return true;
}

std::vector<DictdIndexEntry> parse_dictd_index(std::string_view text, const std::string& path) {
  std::vector<DictdIndexEntry> entries;
  strip_utf8_bom(text);
  std::size_t line = 0;
  while (!text.empty()) {
    ++line;
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view row = text.substr(0, end);
    text.remove_prefix(std::min(text.size(), end + 1));
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    if (row.empty()) continue;
    std::string_view fields[5];
    std::size_t count = 0;
    for (std::size_t start = 0; count < 5;) {
      const std::size_t tab = row.find('\t', start);
      fields[count++] = row.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start);
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    if (count < 3 || count > 4) {
      throw_input_error(path, line,
                        "a dictd index line is a headword, an offset and a length separated by TABs (got " +
                            std::to_string(count) + " field" + (count == 1 ? "" : "s") + ").");
    }
    DictdIndexEntry entry;
    entry.headword = fields[0];
    entry.line = line;
    if (!decode_dictd_number(fields[1], entry.offset) || !decode_dictd_number(fields[2], entry.length)) {
      throw_input_error(path, line,
                        "entry '" + std::string(entry.headword) + "': its offset or length is not a base64 number ('" +
                            std::string(fields[1]) + "', '" + std::string(fields[2]) + "').");
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

namespace {

// `text` without bracketed parts ([...], <...>, (...), {...}; with `pronunciation`, /.../ after a space), into
// `kept`.
void without_brackets(std::string_view text, bool pronunciation, std::string& kept) {
  kept.clear();
  char closing = 0;
  int depth = 0;
  for (const char c : text) {
    if (depth > 0) {
      if (c == closing) --depth;
      continue;
    }
    switch (c) {
      case '[':
        closing = ']';
        break;
      case '<':
        closing = '>';
        break;
      case '(':
        closing = ')';
        break;
      case '{':
        closing = '}';
        break;
      case '/':  // a pronunciation, after a space
        if (!pronunciation || !(kept.empty() || kept.back() == ' ')) {
          kept.push_back(c);
          continue;
        }
        closing = '/';
        break;
      default:
        kept.push_back(c);
        continue;
    }
    depth = 1;
  }
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

namespace {

// parse_dictd_entry's work: `headword` set, then translation(item) for each translation (a view into `buffer`).
template <class Translation>
void visit_dictd_entry(std::string_view text, std::string& headword, std::string& buffer, Translation&& translation) {
  headword.clear();
  bool first = true;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view row = trim(text.substr(0, end));
    text.remove_prefix(std::min(text.size(), end + 1));
    if (first) {
      without_brackets(row, true, buffer);
      headword.assign(trim(buffer));
      first = false;
      continue;
    }
    if (row.empty() || starts_with(row, "Note:") || starts_with(row, "see:") || starts_with(row, "Synonym") ||
        starts_with(row, "Antonym") || starts_with(row, "\"")) {
      break;
    }
    std::string_view line = row;
    // A numbered sense: "2. ..."
    std::size_t digits = 0;
    while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9') ++digits;
    if (digits > 0 && digits + 1 < line.size() && line[digits] == '.' && line[digits + 1] == ' ')
      line.remove_prefix(digits + 2);
    without_brackets(line, false, buffer);
    std::string_view rest = buffer;
    while (!rest.empty()) {
      std::size_t cut = 0;  // a loop: find_first_of calls memchr once per byte
      while (cut < rest.size() && rest[cut] != ',' && rest[cut] != ';') ++cut;
      const std::string_view item = trim(rest.substr(0, cut));
      if (!item.empty()) translation(item);
      rest.remove_prefix(std::min(rest.size(), cut + 1));
    }
  }
}

}  // namespace

DictdEntry parse_dictd_entry(std::string_view text) {
  DictdEntry entry;
  std::string buffer;
  visit_dictd_entry(text, entry.headword, buffer,
                    [&](std::string_view item) { entry.translations.emplace_back(item); });
  return entry;
}

// --- Decompression ---

struct DecompressedChunks::State {
  std::unique_ptr<detail::GzipStream> gzip;  // null for a plain file
  std::FILE* file = nullptr;
  bool ended = false;
};

DecompressedChunks::DecompressedChunks(const std::string& path) : state_(new State) {
  try {
    if (detail::has_gzip_magic(path)) {
      state_->gzip = std::make_unique<detail::GzipStream>(path);
    } else {
      state_->file = std::fopen(path.c_str(), "rb");
      if (!state_->file) throw_input_error(path, 0, "cannot open the file.");
    }
  } catch (...) {
    delete state_;
    throw;
  }
}

DecompressedChunks::~DecompressedChunks() {
  if (state_->file) std::fclose(state_->file);
  delete state_;
}

bool DecompressedChunks::next(std::string& out) {
  State& s = *state_;
  if (s.ended) return false;
  constexpr std::size_t kChunk = 1 << 20;
  const std::size_t old = out.size();
  out.resize(old + kChunk);
  const std::size_t got = s.gzip ? s.gzip->read(&out[old], kChunk) : std::fread(&out[old], 1, kChunk, s.file);
  out.resize(old + got);
  if (got < kChunk) s.ended = true;
  return got > 0;
}

// --- Reading ---

namespace {

struct Language {
  const char* two;
  const char* three;
  const char* other;  // a second ISO 639-2 code (bibliographic), or ""
};
constexpr Language kLanguages[] = {
    {"en", "eng", ""},    {"de", "deu", "ger"}, {"fr", "fra", "fre"}, {"ru", "rus", ""},  {"es", "spa", ""},
    {"it", "ita", ""},    {"nl", "nld", "dut"}, {"pt", "por", ""},    {"pl", "pol", ""},  {"cs", "ces", "cze"},
    {"sv", "swe", ""},    {"fi", "fin", ""},    {"da", "dan", ""},    {"el", "ell", "gre"}, {"tr", "tur", ""},
    {"hu", "hun", ""},    {"ja", "jpn", ""},    {"zh", "zho", "chi"}, {"uk", "ukr", ""},  {"bg", "bul", ""},
};

bool same_language(std::string_view code, std::string_view language) {
  for (const Language& l : kLanguages) {
    const bool names_code = code == l.two || code == l.three || code == l.other;
    const bool names_language = language == l.two || language == l.three || language == l.other;
    if (names_code && names_language) return true;
  }
  return code == language;
}

// The two language codes of a name such as freedict-eng-deu (the last two dash-separated parts).
bool name_codes(const std::string& name, std::string& first, std::string& second) {
  const std::size_t last = name.rfind('-');
  if (last == std::string::npos || last == 0) return false;
  const std::size_t before = name.rfind('-', last - 1);
  first = name.substr(before == std::string::npos ? 0 : before + 1,
                      last - (before == std::string::npos ? 0 : before + 1));
  second = name.substr(last + 1);
  return !first.empty() && !second.empty();
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The base name of a dictd database that `path` names, or "" when it names none.
std::string dictd_base(const std::string& path) {
  for (const char* suffix : {".index", ".dict.dz", ".dict"}) {
    if (ends_with(path, suffix)) return path.substr(0, path.size() - std::string_view(suffix).size());
  }
  std::error_code error;
  if (std::filesystem::is_regular_file(path + ".index", error)) return path;
  return "";
}

void read_dictd(const std::string& base, const std::string& pair, Dictionary& dictionary) {
  const std::string index_path = base + ".index";
  std::string data_path = base + ".dict.dz";
  std::error_code error;
  if (!std::filesystem::exists(data_path, error) && std::filesystem::exists(base + ".dict", error))
    data_path = base + ".dict";
  const std::string index_text = read_file(index_path);
  std::vector<DictdIndexEntry> index = parse_dictd_index(index_text, index_path);
  // The database's own entries (00-database-info, 00databaseshort ...) are not translations.
  index.erase(std::remove_if(index.begin(), index.end(),
                             [](const DictdIndexEntry& e) { return starts_with(e.headword, "00-database-") ||
                                                                   starts_with(e.headword, "00database"); }),
              index.end());
  std::sort(index.begin(), index.end(),
            [](const DictdIndexEntry& a, const DictdIndexEntry& b) { return a.offset < b.offset; });
  dictionary.reserve(2 * index.size());
  const bool backward = dictd_reads_backward(std::filesystem::path(base).filename().string(), pair);
  DecompressedChunks chunks(data_path);
  std::string window;         // decompressed text from window_start on
  std::uint64_t window_start = 0;
  bool more = true;
  std::string headword, buffer;
  std::size_t read = 0;
  Progress progress("dictionary " + std::filesystem::path(base).filename().string() + ", entries", index.size());
  for (const DictdIndexEntry& entry : index) {
    const std::uint64_t end = entry.offset + entry.length;
    // (Sorted by offset, no entry starts before the window.) Drop what is before this entry once it is large,
    // then decompress until the entry is in the window.
    if (entry.offset - window_start > (8u << 20) && entry.offset - window_start <= window.size()) {
      window.erase(0, static_cast<std::size_t>(entry.offset - window_start));
      window_start = entry.offset;
    }
    try {
      while (more && window_start + window.size() < end) more = chunks.next(window);
    } catch (const Error& failure) {
      if (failure.kind() != ErrorKind::input) throw;
      std::string message = failure.what();
      if (!message.empty() && message.back() != '.') message += '.';
      throw Error(ErrorKind::input, message + " It stops before entry '" +
                                        std::string(entry.headword) + "' (" + index_path + ":" +
                                        std::to_string(entry.line) + ").");
    }
    if (window_start + window.size() < end) {
      throw_input_error(index_path, entry.line,
                        "entry '" + std::string(entry.headword) + "' (offset " + std::to_string(entry.offset) +
                            ", length " +
                            std::to_string(entry.length) + ") runs past the end of " + data_path + " (" +
                            std::to_string(window_start + window.size()) + " bytes).");
    }
    const std::string_view text(window.data() + (entry.offset - window_start), entry.length);
    // The headword once, each translation on the other side; a phrase that is not UTF-8 is left out.
    std::uint32_t head = PhraseTable::npos;
    bool head_interned = false;
    visit_dictd_entry(text, headword, buffer, [&](std::string_view translation) {
      if (!head_interned) {
        head = dictionary.intern_phrase(headword, !backward);
        head_interned = true;
      }
      if (head == PhraseTable::npos) return;
      const std::uint32_t other = dictionary.intern_phrase(translation, backward);
      if (backward) {
        dictionary.add_ids(other, head);
      } else {
        dictionary.add_ids(head, other);
      }
    });
    if (++read % 4096 == 0) progress.advance(4096);
  }
  progress.advance(read % 4096);
  progress.finish();
  logger().info("dictionary {}: {} entries, read {}", base, index.size(), backward ? "backward" : "forward");
}

void read_two_columns(const std::string& path, Dictionary& dictionary) {
  const std::string content = read_file(path);
  std::string_view text = content;
  strip_utf8_bom(text);
  std::size_t line = 0, pairs = 0;
  while (!text.empty()) {
    ++line;
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view row = trim(text.substr(0, end));
    text.remove_prefix(std::min(text.size(), end + 1));
    if (row.empty()) continue;
    if (!is_valid_utf8(row)) throw_input_error(path, line, "the line is not valid UTF-8.");
    std::string_view source, target;
    const std::size_t tab = row.find('\t');
    if (tab != std::string_view::npos) {
      source = trim(row.substr(0, tab));
      target = trim(row.substr(tab + 1));
      if (target.find('\t') != std::string_view::npos)
        throw_input_error(path, line, "a dictionary line has two TAB-separated columns (this one has more).");
    } else {
      const std::size_t space = row.find_first_of(" \t");
      source = row.substr(0, space);
      target = space == std::string_view::npos ? std::string_view() : trim(row.substr(space));
      if (target.find(' ') != std::string_view::npos) {
        throw_input_error(path, line,
                          "a dictionary line is two words separated by white space, or two TAB-separated "
                          "columns (of phrases).");
      }
    }
    if (source.empty() || target.empty())
      throw_input_error(path, line, "a dictionary line needs both a source and a target.");
    dictionary.add(source, target);
    ++pairs;
  }
  logger().info("dictionary {}: {} pairs", path, pairs);
}

}  // namespace

bool dictd_reads_backward(const std::string& name, const std::string& pair) {
  std::string first, second;
  std::string stem = name;
  for (const char* suffix : {".index", ".dict.dz", ".dict"})
    if (ends_with(stem, suffix)) stem = stem.substr(0, stem.size() - std::string_view(suffix).size());
  if (!name_codes(stem, first, second)) return false;
  const std::size_t dash = pair.find('-');
  if (dash != std::string::npos) {
    const std::string source = pair.substr(0, dash), target = pair.substr(dash + 1);
    if (same_language(first, target) && same_language(second, source)) return true;
    if (same_language(first, source) && same_language(second, target)) return false;
  }
  return same_language(second, "en") && !same_language(first, "en");
}

void read_dictionary(const std::string& path, const std::string& pair, Dictionary& dictionary) {
  const std::string base = dictd_base(path);
  if (!base.empty()) {
    read_dictd(base, pair, dictionary);
  } else {
    read_two_columns(path, dictionary);
  }
}

Dictionary read_dictionaries(const std::vector<std::string>& paths, const std::string& pair, int threads) {
  std::vector<Dictionary> each(paths.size());
  std::vector<std::exception_ptr> errors(paths.size());
  parallel_for(paths.size(), threads, [&](std::size_t i) {
    try {
      read_dictionary(paths[i], pair, each[i]);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  for (const std::exception_ptr& error : errors)  // the first file's error first
    if (error) std::rethrow_exception(error);
  // The largest takes in the others.
  std::size_t largest = 0;
  for (std::size_t i = 0; i < each.size(); ++i)
    if (each[i].size() > each[largest].size()) largest = i;
  Dictionary dictionary = each.empty() ? Dictionary() : std::move(each[largest]);
  for (std::size_t i = 0; i < each.size(); ++i) {
    if (i == largest) continue;
    dictionary.add_all(each[i], threads);
    each[i] = Dictionary();
  }
  dictionary.finish();
  return dictionary;
}

}  // namespace termalign
