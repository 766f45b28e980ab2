// What report.cpp (reading the runs and explain files, the reasons of misses) and report_html.cpp (the page's
// charts and sections) share.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "termalign/evaluation.h"
#include "termalign/lexicon.h"

namespace termalign::detail {

using Pair = std::pair<std::string, std::string>;

// An `align --explain` file: its columns after rank, source and target, and one row of values per ranked pair.
struct ExplainFile {
  std::string path;
  std::vector<std::string> columns;
  std::vector<Pair> pairs;
  std::vector<std::vector<double>> values;  // pairs x columns; NaN where the file says "nan"
  // Terms the file ranks with r_S (sources) or r_T (targets) NaN, which it writes for a term without a vector;
  // the value says whether that term has none.
  std::unordered_map<std::string, bool> source_without_vector, target_without_vector;

  std::optional<std::size_t> column(const std::string& name) const {
    const auto found = std::find(columns.begin(), columns.end(), name);
    if (found == columns.end()) return std::nullopt;
    return static_cast<std::size_t>(found - columns.begin());
  }
};

// One ranked list with its scores. read_pairs keeps each pair once, so a pair's rank is its place + 1.
struct Run {
  std::string path, label;
  PairList predictions;
  EvaluationResult result;
  std::vector<CurvePoint> curve;
  std::vector<char> hit;                                                     // by place
  std::unordered_map<std::string_view, std::vector<std::size_t>> by_source;  // source -> its places, best first
  const ExplainFile* explanation = nullptr;
  ApInterval interval;                   // its AP's 95 % bootstrap interval (evaluate --intervals)
  std::optional<Difference> difference;  // after the first run: its difference to the first (evaluate's)
};

// The gold as a set, and each source term's gold targets.
struct Gold {
  PairList pairs;
  std::vector<std::string_view> sources;  // distinct, in gold order
  std::unordered_map<std::string_view, std::vector<std::string_view>> targets;
};

struct MissRow {
  std::string reason, source, target, detail;
};

// --- report.cpp ---

std::vector<MissRow> miss_rows(const Run& run, const Gold& gold);

// --- report_html.cpp ---

std::string escape(std::string_view text);
std::string summary_section(const std::vector<Run>& runs);
std::string curves_section(const std::vector<Run>& runs);
std::string breakdown_section(const std::vector<Run>& runs);
std::string wrong_pairs_section(const std::vector<Run>& runs, const Gold& gold, std::size_t max_rows);
std::string missed_section(const std::vector<Run>& runs, const Gold& gold, std::size_t max_rows);
std::string terms_section(const std::vector<Run>& runs, const Gold& gold, std::size_t max_rows);
// The page's style sheet, and its script that filters the term table.
extern const char* kStyle;
extern const char* kScript;

}  // namespace termalign::detail
