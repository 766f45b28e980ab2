// Term lists, seed lexicons, gold dictionaries and submissions: reading, validation, ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace termalign {

// One term per line. Terms keep their first-occurrence order; duplicates are kept once (with a warning).
struct TermList {
  std::string path;
  std::vector<std::string> terms;                       // id -> term
  std::unordered_map<std::string, std::uint32_t> ids;   // term -> id

  std::size_t size() const { return terms.size(); }
  bool contains(const std::string& term) const { return ids.count(term) != 0; }
  std::optional<std::uint32_t> id(const std::string& term) const;
};

// Which kind of two-column file is read: it decides the wording of messages and whether emptiness is an error.
enum class PairFileKind { seed_lexicon, gold, submission };

// `src<TAB>tgt` lines, in file order; duplicates are kept once (first occurrence) with a warning.
struct PairList {
  std::string path;
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t duplicates = 0;      // repeated lines dropped
  std::vector<std::size_t> lines;  // 1-based line number of each kept pair
  std::vector<double> scores;      // a score list's third column, one per kept pair (else empty)
};

// Whether a pair file may hold a third column, a score (`align --scores` writes such lists): never, when its
// first line has a numeric third column, or always.
enum class ScoreColumn { none, detect, required };

// Errors (naming the file and line): missing or unreadable file, invalid UTF-8, a NUL byte, an empty term.
// Accepted with a warning: CRLF line ends, a UTF-8 BOM, duplicate lines. Blank lines are skipped.
// Surrounding white space of each line is stripped.
TermList read_term_list(const std::string& path);

// Errors as read_term_list, plus a line without exactly two TAB-separated columns and an empty column;
// a gold file with no pair is an error.
// With a score column, every line needs one (a finite number); the line order stays the rank.
PairList read_pairs(const std::string& path, PairFileKind kind, ScoreColumn score_column = ScoreColumn::none);

// The BUCC 2022 cap on a submission: floor(10 x (|D1| + |D2|) / 2).
std::size_t submission_cap(std::size_t source_terms, std::size_t target_terms);

// Nested terms: for each term of `list` (by id), the ids of the list's other terms that are its words in a row
// (words split at spaces: `barre d'outils` in `barre d'outils standard`), each once, in id order; parts of at most
// 8 words.
std::vector<std::vector<std::uint32_t>> nested_terms(const TermList& list);

}  // namespace termalign
