// The error-analysis page: one self-contained HTML file (inline CSS and SVG, a few lines of script for the search
// box, nothing fetched) for one or several runs against a gold.
//
// It holds the runs' scores (evaluate's, with the breakdown), their precision-recall and AP-by-rank curves, the
// top-ranked wrong pairs (with an `align --explain` file: the parts that pushed each up), the gold pairs missed or
// ranked low with a reason, and each gold source term's ranked targets. Each table lists its first `max_rows` rows
// and says how many there are.
//
// The reasons of a missed gold pair come only from the given files, never from a guess:
// - "no vector": an explain file of the run ranks the source (target) term with r_S (r_T) NaN, which it writes
//   for a term without a vector; a term the explain file never ranks has an unknown vector status;
// - "past the cap": the list holds the pair at a rank below the cap (lists longer than the cap are scored whole
//   by evaluate, but the task scores the list cut at the cap);
// - "not kept": the list ends before the cap, so every candidate the run kept is in it: the pair was never a
//   candidate, or fell below its source term's per-term limit (top_m) - the files cannot tell those two apart;
// - "unknown": the list stops at the cap (or no term lists give the cap), so the pair was never a candidate or
//   ranked below the cap: the files cannot tell which;
// - "ranked low": the pair is in the list (a hit) but below a wrong pair of its own source term (its rank and
//   that pair are shown).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace termalign {

struct ReportOptions {
  std::string gold;                        // gold pairs, src<TAB>tgt
  std::string source_terms, target_terms;  // the term lists D1 and D2 (the cap): both or neither
  std::string data_dir, pair;              // a BUCC dataset folder: fills the lists and the gold not given
  std::vector<std::string> predictions;    // ranked lists, best first (a score column is read when present)
  std::vector<std::string> explanations;   // `align --explain` files, each of the run whose list it explains
  std::string out;                         // the page
  std::size_t max_rows = 300;              // rows listed per table
};

// Usage errors, in words: no run, no gold, one term list without the other, a pair without data_dir, more
// explain files than runs, max_rows 0.
void validate(const ReportOptions& options);

// The page as text. Input errors name the file and line (an explain file that matches no run among them).
std::string report_page(const ReportOptions& options);

// report_page written to options.out atomically (a temporary file renamed); a usage error without options.out.
void write_report(const ReportOptions& options);

}  // namespace termalign
