// The BUCC 2022 scorer: Average Precision (uninterpolated, interpolated), P/R/F1, P@k, breakdowns, curves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "termalign/lexicon.h"

namespace termalign {

struct EvaluationOptions {
  bool ignore_oov = false;  // drop a predicted pair whose term is outside its list, before ranking (needs lists)
  bool breakdown = false;   // recall and AP on subsets of the gold
  bool details = false;     // fill EvaluationResult::hits and ::missed
};

// A hit of the ranked list (after repeated and, with ignore_oov, out-of-list pairs are dropped): its rank, its
// place in the predictions, and P, R and AP of the list down to it.
struct Hit {
  std::size_t rank = 0, prediction = 0;
  double precision = 0, recall = 0, ap = 0;
};

// A gold pair the list does not hold, and the first (best) rank at which its source term appears (0: nowhere).
struct Miss {
  std::size_t gold = 0;                            // place in the gold's distinct pairs (gold.pairs)
  std::size_t best_rank = 0, best_prediction = 0;  // the source term's first ranked pair
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
  std::vector<Hit> hits;                         // with options.details
  std::vector<Miss> missed;                      // with options.details, in gold order
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

// The paired comparison of a run with a baseline over the same gold, both ranked as evaluate ranks them. The unit
// of resampling is the source term: those of the gold and of either list. A resample's AP of each run is that of
// the list of its pairs whose source term was drawn, one copy per draw in place of each pair (the order of the
// ranks kept), against the drawn terms' gold pairs.
struct SignificanceOptions {
  std::size_t resamples = 10000;  // for the bootstrap interval and for the randomisation test, each
  std::uint64_t seed = 61;        // resample i draws from (seed, i): the same figures for any thread count
  int threads = 0;                // 0: OpenMP's default
};
struct Difference {
  double ap = 0;             // AP of the run minus AP of the baseline
  double low = 0, high = 0;  // 95 % paired-bootstrap percentile interval of the difference
  double p_value = 1;        // two-sided paired approximate randomisation: (1 + #|d_perm| >= |d|) / (1 + R)
  std::size_t resamples = 0;
};
// Usage error in words on zero resamples.
void validate(const SignificanceOptions& options);
// The difference of each run to runs[0] (so the first is all zero), against one gold.
std::vector<Difference> compare_runs(const PairList& gold, const std::vector<const PairList*>& runs,
                                     const TermList* source_terms, const TermList* target_terms,
                                     const EvaluationOptions& options, const SignificanceOptions& significance);

// Each run's AP with the 95 % percentile interval of a bootstrap over the source terms of that run alone (those of
// the gold and of its list; the resamples drawn as compare_runs draws them), against one gold.
struct ApInterval {
  double ap = 0;
  double low = 0, high = 0;
  std::size_t resamples = 0;
};
std::vector<ApInterval> ap_intervals(const PairList& gold, const std::vector<const PairList*>& runs,
                                     const TermList* source_terms, const TermList* target_terms,
                                     const EvaluationOptions& options, const SignificanceOptions& significance);

// A paired approximate randomisation test over units (such as source terms) of per-unit differences: each resample
// flips the sign of each unit's difference with probability 1/2; the two-sided p-value is (1 + the resamples whose
// |sum| is at least the observed |sum|) / (1 + R). All differences 0 give p = 1. Resample i draws from (seed, i).
double sign_flip_p_value(const std::vector<double>& differences, const SignificanceOptions& significance);

// One run of a comparison: its name (the prediction file), its scores and, after the first, its difference.
struct NamedResult {
  NamedResult() = default;
  NamedResult(std::string run_name, EvaluationResult run_result)
      : run(std::move(run_name)), result(std::move(run_result)) {}
  std::string run;
  EvaluationResult result;
  bool has_difference = false;
  Difference difference;
  bool has_interval = false;  // its AP's own interval (ap_intervals)
  ApInterval interval;
};
enum class TableFormat { markdown, tsv, json };
TableFormat parse_table_format(const std::string& name);  // usage error on an unknown name
// One row per run: AP as format_report prints it (6 decimals), interpolated AP, nSys, TP, P, R, F1, P@10, P@100
// (and AP within the cap when the runs had term lists), with intervals: AP's 95 % interval after AP, and with
// differences: difference, its interval and p; JSON: an array of format_json's objects with a "run" key (and
// "ap_interval": [lo, hi], "difference": {ap, interval, p_value, resamples}).
std::string format_table(const std::vector<NamedResult>& runs, TableFormat format);
// TSV "run rank source target tp precision recall ap": each hit of a result evaluated with options.details.
std::string format_details(const std::string& run, const EvaluationResult& result, const PairList& predictions,
                           bool header = true);
// TSV "run source target best_rank best_target best_score": the gold pairs not found, with the first ranked pair
// of their source term (best_score only for a score list; empty fields when the source term is not ranked).
std::string format_missed(const std::string& run, const EvaluationResult& result, const PairList& gold,
                          const PairList& predictions, bool header = true);

// The source terms of the gold whose first candidate in a ranked list is another form of one of their gold
// targets (the same family of word forms, text/word_forms.h: `файла` for the gold `файл`), with the language's
// analyser (Hunspell's dictionary in hunspell_dir, else Snowball's stemmer; with neither, nothing is counted).
struct InflectedFirst {
  std::size_t source_terms = 0;    // in the gold
  std::size_t with_candidate = 0;  // of which the list has a pair
  std::size_t correct = 0;         // whose first candidate is a gold target
  std::size_t inflected = 0;       // whose first candidate is another form of a gold target
  std::string analyser;            // "hunspell ru_RU", ...; "none": nothing counted
  // The `inflected` source terms, by source term as the gold spells it: the first candidate and the gold target of
  // its family (the first in the gold's order).
  struct Case {
    std::string source, candidate, gold;
  };
  std::vector<Case> cases;
};
InflectedFirst inflected_first_candidates(const PairList& gold, const PairList& predictions,
                                          const std::string& language,
                                          const std::string& hunspell_dir = "/usr/share/hunspell");
// TSV "run source candidate gold_target": the cases of inflected_first_candidates.
std::string format_inflected(const std::string& run, const InflectedFirst& counted, bool header = true);

// Levenshtein distance in Unicode code points.
std::size_t edit_distance(const std::string& a, const std::string& b);
// The name of `known` closest to `typed` (edit distance at most 2, or a third of its length when longer), or ""
// when none is that close: the "did you mean" of a mistyped flag, key or keyword.
std::string closest_name(const std::string& typed, const std::vector<std::string>& known);
// The distance of the breakdown's identical, close and far pairs: edit_distance of the terms as written when they
// share a script (or one has no letter), else of their Latin spellings (latin_spelling: `протокол` / `protocol`
// are 1 apart, `protokol`), so that a pair of languages in two scripts has close pairs too.
std::size_t spelling_distance(const std::string& a, const std::string& b);

}  // namespace termalign
