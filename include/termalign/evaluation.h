// The BUCC 2022 scorer: Average Precision (uninterpolated, interpolated), P/R/F1, P@k, breakdowns, curves.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "termalign/lexicon.h"

namespace termalign {

struct EvaluationOptions {
  bool ignore_oov = false;  // drop a predicted pair whose term is outside its list, before ranking (needs lists)
  bool breakdown = false;   // recall and AP on subsets of the gold
};

// Recall and AP over one subset of the gold pairs (AP's denominator is the subset's size; the precision at a hit
// on the subset is that of the full list at that rank). Subsets: "identical" terms, "close" (edit distance 1 to 3
// code points), "far" (the rest); "single-word" and "multi-word" source terms. An empty subset scores 0.
struct SubsetScore {
  std::size_t n_gold = 0, tp = 0;
  double recall = 0, ap = 0;
};

struct CurvePoint {
  std::size_t rank = 0, tp = 0;
  double precision = 0, recall = 0, f1 = 0, ap = 0;  // ap: the sum so far over n_gold
};

struct EvaluationResult {
  double ap = 0, ap_interpolated = 0;
  std::size_t n_sys = 0, n_gold = 0, tp = 0, fp = 0, fn = 0;
  double precision = 0, recall = 0, f1 = 0;
  std::map<std::size_t, double> p_at;  // 1, 10, 100, 1000 -> precision at that rank
  std::size_t repeated = 0;            // repeated predicted pairs, counted once
  std::size_t oov_dropped = 0;         // pairs dropped by ignore_oov
  // With term lists: the cap, how many lines lie past it, and AP of the list cut at the cap.
  bool has_cap = false;
  std::size_t cap = 0, past_cap = 0;
  double ap_capped = 0;
  std::map<std::string, SubsetScore> breakdown;  // "identical", "close", "far", "single-word", "multi-word"
};

// Usage errors, in words: term lists given one without the other, ignore_oov without the lists.
void validate(const EvaluationOptions& options, bool has_source_terms, bool has_target_terms);

// `source_terms` and `target_terms` may be null (no lists given). With both lists, the cap is applied to the
// ranked list (after repeated pairs and, with ignore_oov, out-of-list pairs are dropped).
EvaluationResult evaluate(const PairList& gold, const PairList& predictions, const TermList* source_terms,
                          const TermList* target_terms, const EvaluationOptions& options,
                          std::vector<CurvePoint>* curve = nullptr);

// Plain-text report (one "name: value" per line) and one JSON object with the keys of the README.
std::string format_report(const EvaluationResult& result);
std::string format_json(const EvaluationResult& result);
// TSV with header "rank tp precision recall f1 ap".
std::string format_curve(const std::vector<CurvePoint>& curve);

// Levenshtein distance in Unicode code points.
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace termalign
