#include "termalign/evaluation.h"

#include <spdlog/fmt/fmt.h>
#include <unicode/uscript.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <array>
#include <functional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "evaluation/ranking.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "text/spelling.h"
#include "util/json_escape.h"

namespace termalign {

namespace {

using detail::GoldIndex;
using detail::HitRanks;
using detail::Pair;
using detail::PairHash;
using detail::rank_predictions;
using detail::RankedList;

struct AveragePrecision {
  double uninterpolated = 0, interpolated = 0;
};

// AP over the hits at ranks <= limit: precision at the i-th hit (rank k) is i / k; the interpolated precision at a
// hit is the largest precision at that or any later hit (within the limit). Both sums are divided by n_relevant.
AveragePrecision average_precision(const HitRanks& hit_ranks, std::size_t n_relevant, std::size_t limit) {
  const std::size_t n_hits = std::upper_bound(hit_ranks.begin(), hit_ranks.end(), limit) - hit_ranks.begin();
  AveragePrecision result;
  if (n_relevant == 0) return result;
  double best_later = 0;
  for (std::size_t i = n_hits; i-- > 0;) {
    const double precision = static_cast<double>(i + 1) / static_cast<double>(hit_ranks[i]);
    best_later = std::max(best_later, precision);
    result.uninterpolated += precision;
    result.interpolated += best_later;
  }
  result.uninterpolated /= static_cast<double>(n_relevant);
  result.interpolated /= static_cast<double>(n_relevant);
  return result;
}

struct SetScores {
  double precision = 0, recall = 0, f1 = 0;
};

// The organisers' conventions: P = 0 for an empty list, R = 1 for an empty gold, F1 = 0 without a hit.
SetScores set_scores(std::size_t tp, std::size_t n_sys, std::size_t n_gold) {
  SetScores scores;
  scores.precision = n_sys == 0 ? 0.0 : static_cast<double>(tp) / static_cast<double>(n_sys);
  scores.recall = n_gold == 0 ? 1.0 : static_cast<double>(tp) / static_cast<double>(n_gold);
  scores.f1 = tp == 0 ? 0.0 : 2 * scores.precision * scores.recall / (scores.precision + scores.recall);
  return scores;
}

// The scripts of the letters of `text` (not Common nor Inherited: digits, punctuation, combining marks).
std::vector<UScriptCode> scripts_of(const std::string& text) {
  std::vector<UScriptCode> scripts;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
  const std::int32_t length = static_cast<std::int32_t>(text.size());
  for (std::int32_t i = 0; i < length;) {
    UChar32 code_point;
    U8_NEXT(bytes, i, length, code_point);
    if (code_point < 0) continue;
    UErrorCode status = U_ZERO_ERROR;
    const UScriptCode script = uscript_getScript(code_point, &status);
    if (U_FAILURE(status) || script == USCRIPT_COMMON || script == USCRIPT_INHERITED) continue;
    if (std::find(scripts.begin(), scripts.end(), script) == scripts.end()) scripts.push_back(script);
  }
  return scripts;
}

}  // namespace

std::size_t spelling_distance(const std::string& a, const std::string& b) {
  const std::vector<UScriptCode> x = scripts_of(a), y = scripts_of(b);
  const bool shared = x.empty() || y.empty() || std::any_of(x.begin(), x.end(), [&](UScriptCode s) {
                        return std::count(y.begin(), y.end(), s);
                      });
  return shared ? edit_distance(a, b) : edit_distance(latin_spelling(a), latin_spelling(b));
}

namespace {

// The subsets of the gold in the breakdown; a gold pair belongs to one string-similarity and one length subset.
const std::array<const char*, 5> subset_names = {"identical", "close", "far", "single-word", "multi-word"};

std::array<bool, 5> subsets_of(const Pair& gold_pair) {
  const std::size_t distance = spelling_distance(gold_pair.first, gold_pair.second);
  const bool multi_word = gold_pair.first.find(' ') != std::string::npos;
  return {distance == 0, distance > 0 && distance <= 3, distance > 3, !multi_word, multi_word};
}

}  // namespace

namespace detail {

GoldIndex::GoldIndex(const PairList& gold) {
  index.reserve(gold.pairs.size());
  for (const Pair& pair : gold.pairs) {
    if (index.emplace(pair, pairs.size()).second) pairs.push_back(&pair);
  }
  if (pairs.empty()) throw_input_error(gold.path, 0, "the gold file holds no pair");
}

RankedList rank_predictions(const GoldIndex& gold, const PairList& predictions, const TermList* source_terms,
                            const TermList* target_terms, const EvaluationOptions& options) {
  // Unlike the organisers' scorer, which counts every copy of a repeated pair (so that AP can exceed 1), a
  // repeated pair counts once: the later copies are dropped and take no rank. The reader already dropped repeated
  // lines; pairs repeated inside `predictions.pairs` itself are dropped here.
  RankedList ranked;
  std::unordered_set<Pair, PairHash> seen;
  seen.reserve(predictions.pairs.size());
  for (std::size_t place = 0; place < predictions.pairs.size(); ++place) {
    const Pair& pair = predictions.pairs[place];
    if (!seen.insert(pair).second) {
      ++ranked.repeated;
      continue;
    }
    if (source_terms != nullptr && !(source_terms->contains(pair.first) && target_terms->contains(pair.second))) {
      ++ranked.out_of_lists;
      if (options.ignore_oov) continue;
    }
    ranked.places.push_back(place);
    const auto found = gold.index.find(pair);
    if (found == gold.index.end()) continue;
    ranked.hit_ranks.push_back(ranked.places.size());
    ranked.hit_gold.push_back(found->second);
  }
  return ranked;
}

}  // namespace detail

void validate(const EvaluationOptions& options, bool has_source_terms, bool has_target_terms) {
  if (has_source_terms != has_target_terms) {
    throw_usage_error(
        "The term lists go together: give both the source and the target list "
        "(--src-terms and --tgt-terms), or neither");
  }
  if (options.ignore_oov && !has_source_terms) {
    throw_usage_error(
        "Ignoring out-of-list pairs (--ignore-oov) needs the source and target term lists "
        "(--src-terms and --tgt-terms)");
  }
}

EvaluationResult evaluate(const PairList& gold, const PairList& predictions, const TermList* source_terms,
                          const TermList* target_terms, const EvaluationOptions& options,
                          std::vector<CurvePoint>* curve) {
  validate(options, source_terms != nullptr, target_terms != nullptr);
  const GoldIndex gold_index(gold);
  const std::vector<const Pair*>& gold_pairs = gold_index.pairs;
  EvaluationResult result;
  result.n_gold = gold_pairs.size();
  const RankedList ranked = rank_predictions(gold_index, predictions, source_terms, target_terms, options);
  const HitRanks& hit_ranks = ranked.hit_ranks;
  const std::vector<std::size_t>& hit_gold = ranked.hit_gold;
  const std::size_t repeated_here = ranked.repeated, out_of_lists = ranked.out_of_lists;
  result.n_sys = ranked.places.size();
  std::vector<std::size_t> hit_prediction;  // with details: the place of each hit in predictions.pairs
  std::unordered_map<std::string_view, std::pair<std::size_t, std::size_t>> first_rank;  // source -> rank, place
  if (options.details) {
    for (const std::size_t rank : hit_ranks) hit_prediction.push_back(ranked.places[rank - 1]);
    for (std::size_t rank = 1; rank <= ranked.places.size(); ++rank) {
      first_rank.try_emplace(predictions.pairs[ranked.places[rank - 1]].first, rank, ranked.places[rank - 1]);
    }
  }
  result.repeated = predictions.duplicates + repeated_here;
  if (repeated_here > 0) {
    logger().warn("{}: {} repeated pairs counted once, at their first rank", predictions.path, repeated_here);
  }
  if (options.ignore_oov) {
    result.oov_dropped = out_of_lists;
    logger().info("{}: {} pairs with a term outside the term lists dropped before ranking", predictions.path,
                  out_of_lists);
  } else if (out_of_lists > 0) {
    logger().info("{}: {} pairs have a term outside the term lists (kept; --ignore-oov drops them)",
                  predictions.path, out_of_lists);
  }

  result.tp = hit_ranks.size();
  result.fp = result.n_sys - result.tp;
  result.fn = result.n_gold - result.tp;
  const SetScores scores = set_scores(result.tp, result.n_sys, result.n_gold);
  result.precision = scores.precision;
  result.recall = scores.recall;
  result.f1 = scores.f1;
  const AveragePrecision ap = average_precision(hit_ranks, result.n_gold, result.n_sys);
  result.ap = ap.uninterpolated;
  result.ap_interpolated = ap.interpolated;
  // P@k counts the missing lines of a list shorter than k as misses (the denominator is always k).
  for (const std::size_t k : {1, 10, 100, 1000}) {
    const std::size_t hits = std::upper_bound(hit_ranks.begin(), hit_ranks.end(), k) - hit_ranks.begin();
    result.p_at[k] = static_cast<double>(hits) / static_cast<double>(k);
  }

  if (source_terms != nullptr) {
    result.has_cap = true;
    result.cap = submission_cap(source_terms->size(), target_terms->size());
    result.past_cap = result.n_sys > result.cap ? result.n_sys - result.cap : 0;
    result.ap_capped = average_precision(hit_ranks, result.n_gold, result.cap).uninterpolated;
    if (result.past_cap > 0) {
      logger().warn(
          "{}: {} ranked pairs lie past the cap of {} pairs (10 x (|D1| + |D2|) / 2); AP within the cap "
          "is {:.4f}",
          predictions.path, result.past_cap, result.cap, result.ap_capped);
    }
  }

  if (options.breakdown) {
    // A subset's AP sums the precision of the full list at the hits on that subset and divides by the subset's
    // size, so that a perfect list scores 1 on every subset and the subset APs weighted by their sizes add up to
    // the AP.
    std::vector<std::array<bool, 5>> membership;
    membership.reserve(gold_pairs.size());
    for (const Pair* pair : gold_pairs) membership.push_back(subsets_of(*pair));
    for (std::size_t subset = 0; subset < subset_names.size(); ++subset) {
      SubsetScore score;
      for (const auto& member : membership) score.n_gold += member[subset] ? 1 : 0;
      double precision_sum = 0;
      for (std::size_t hit = 0; hit < hit_ranks.size(); ++hit) {
        if (!membership[hit_gold[hit]][subset]) continue;
        ++score.tp;
        precision_sum += static_cast<double>(hit + 1) / static_cast<double>(hit_ranks[hit]);
      }
      if (score.n_gold > 0) {
        score.recall = static_cast<double>(score.tp) / static_cast<double>(score.n_gold);
        score.ap = precision_sum / static_cast<double>(score.n_gold);
      }
      result.breakdown[subset_names[subset]] = score;
    }
  }

  if (options.details) {
    double precision_sum = 0;
    std::vector<char> found(gold_pairs.size(), 0);
    for (std::size_t hit = 0; hit < hit_ranks.size(); ++hit) {
      const double precision = static_cast<double>(hit + 1) / static_cast<double>(hit_ranks[hit]);
      precision_sum += precision;
      const double n_gold = static_cast<double>(result.n_gold);
      result.hits.push_back({hit_ranks[hit], hit_prediction[hit], precision, static_cast<double>(hit + 1) / n_gold,
                             precision_sum / n_gold});
      found[hit_gold[hit]] = 1;
    }
    for (std::size_t g = 0; g < gold_pairs.size(); ++g) {
      if (found[g]) continue;
      Miss miss;
      miss.gold = static_cast<std::size_t>(gold_pairs[g] - gold.pairs.data());
      const auto first = first_rank.find(gold_pairs[g]->first);
      if (first != first_rank.end()) std::tie(miss.best_rank, miss.best_prediction) = first->second;
      result.missed.push_back(miss);
    }
  }

  if (curve != nullptr) {
    curve->clear();
    curve->reserve(result.n_sys);
    std::size_t tp = 0;
    double precision_sum = 0;
    for (std::size_t rank = 1; rank <= result.n_sys; ++rank) {
      if (tp < hit_ranks.size() && hit_ranks[tp] == rank) {
        ++tp;
        precision_sum += static_cast<double>(tp) / static_cast<double>(rank);
      }
      const SetScores at_rank = set_scores(tp, rank, result.n_gold);
      curve->push_back({rank, tp, at_rank.precision, at_rank.recall, at_rank.f1,
                        precision_sum / static_cast<double>(result.n_gold)});
    }
  }
  return result;
}

namespace {

// The scalar scores, named as in the plain report (the organisers' labels) and as in the JSON object.
struct Field {
  const char* label;
  const char* key;
  std::variant<std::size_t, double> value;
};

std::vector<Field> scalar_fields(const EvaluationResult& result) {
  std::vector<Field> fields = {{"AP", "ap", result.ap},
                               {"AP_interpolated", "ap_interpolated", result.ap_interpolated},
                               {"nSys", "n_sys", result.n_sys},
                               {"nGold", "n_gold", result.n_gold},
                               {"TP", "tp", result.tp},
                               {"FP", "fp", result.fp},
                               {"FN", "fn", result.fn},
                               {"P", "precision", result.precision},
                               {"R", "recall", result.recall},
                               {"F1", "f1", result.f1},
                               {"repeated", "repeated", result.repeated},
                               {"oov_dropped", "oov_dropped", result.oov_dropped}};
  if (result.has_cap) {
    fields.push_back({"cap", "cap", result.cap});
    fields.push_back({"past_cap", "past_cap", result.past_cap});
    fields.push_back({"AP_capped", "ap_capped", result.ap_capped});
  }
  return fields;
}

using detail::json_escape;

}  // namespace

std::string format_report(const EvaluationResult& result) {
  std::string report;
  for (const Field& field : scalar_fields(result)) {
    if (const double* score = std::get_if<double>(&field.value)) {
      report += fmt::format("{}: {:.6f}\n", field.label, *score);
    } else {
      report += fmt::format("{}: {}\n", field.label, std::get<std::size_t>(field.value));
    }
  }
  for (const auto& [k, precision] : result.p_at) report += fmt::format("P@{}: {:.6f}\n", k, precision);
  for (const auto& [name, score] : result.breakdown) {
    report += fmt::format("breakdown {}: nGold {}, TP {}, R {:.6f}, AP {:.6f}\n", name, score.n_gold, score.tp,
                          score.recall, score.ap);
  }
  return report;
}

std::string format_json(const EvaluationResult& result) {
  // "{}" prints a double in its shortest round-trip form, which is valid JSON (the values are finite).
  std::string json = "{";
  for (const Field& field : scalar_fields(result)) {
    std::visit([&](auto value) { json += fmt::format("\"{}\": {}, ", field.key, value); }, field.value);
  }
  json += "\"p_at\": {";
  const char* separator = "";
  for (const auto& [k, precision] : result.p_at) {
    json += fmt::format("{}\"{}\": {}", separator, k, precision);
    separator = ", ";
  }
  json += "}";
  if (!result.breakdown.empty()) {
    json += ", \"breakdown\": {";
    separator = "";
    for (const auto& [name, score] : result.breakdown) {
      json += fmt::format("{}\"{}\": {{\"n_gold\": {}, \"tp\": {}, \"recall\": {}, \"ap\": {}}}", separator, name,
                          score.n_gold, score.tp, score.recall, score.ap);
      separator = ", ";
    }
    json += "}";
  }
  return json + "}\n";
}

std::string format_curve(const std::vector<CurvePoint>& curve) {
  std::string tsv = "rank\ttp\tprecision\trecall\tf1\tap\n";
  for (const CurvePoint& point : curve) {
    tsv += fmt::format("{}\t{}\t{:.6f}\t{:.6f}\t{:.6f}\t{:.6f}\n", point.rank, point.tp, point.precision,
                       point.recall, point.f1, point.ap);
  }
  return tsv;
}

TableFormat parse_table_format(const std::string& name) {
  if (name == "markdown") return TableFormat::markdown;
  if (name == "tsv") return TableFormat::tsv;
  if (name == "json") return TableFormat::json;
  throw_usage_error("Unknown table format '" + name + "': use markdown, tsv or json.");
}

std::string format_table(const std::vector<NamedResult>& runs, TableFormat format) {
  if (format == TableFormat::json) {
    std::string json = "[";
    for (std::size_t i = 0; i < runs.size(); ++i) {
      std::string object = format_json(runs[i].result);  // "{...}\n"
      object.pop_back();
      if (runs[i].has_interval) {
        object.pop_back();
        object += fmt::format(", \"ap_interval\": [{}, {}]}}", runs[i].interval.low, runs[i].interval.high);
      }
      if (runs[i].has_difference) {
        const Difference& d = runs[i].difference;
        object.pop_back();
        object += fmt::format(
            ", \"difference\": {{\"ap\": {}, \"interval\": [{}, {}], \"p_value\": {}, "
            "\"resamples\": {}}}}}",
            d.ap, d.low, d.high, d.p_value, d.resamples);
      }
      json += (i ? ",\n " : "") + fmt::format("{{\"run\": \"{}\", ", json_escape(runs[i].run)) + object.substr(1);
    }
    return json + "]\n";
  }
  const bool capped =
      std::any_of(runs.begin(), runs.end(), [](const NamedResult& run) { return run.result.has_cap; });
  std::vector<std::string> header = {"run",  "AP",   "AP_interpolated", "nSys", "TP", "P", "R", "F1",
                                     "P@10", "P@100"};
  const bool intervals =
      std::any_of(runs.begin(), runs.end(), [](const NamedResult& run) { return run.has_interval; });
  if (intervals) header.insert(header.begin() + 2, "AP 95% interval");
  if (capped) header.push_back("AP_capped");
  const bool compared =
      std::any_of(runs.begin(), runs.end(), [](const NamedResult& run) { return run.has_difference; });
  if (compared) header.insert(header.end(), {"difference", "95% interval", "p"});
  std::vector<std::vector<std::string>> rows;
  for (const NamedResult& run : runs) {
    const EvaluationResult& r = run.result;
    std::vector<std::string> row = {run.run,
                                    fmt::format("{:.6f}", r.ap),
                                    fmt::format("{:.6f}", r.ap_interpolated),
                                    std::to_string(r.n_sys),
                                    std::to_string(r.tp),
                                    fmt::format("{:.6f}", r.precision),
                                    fmt::format("{:.6f}", r.recall),
                                    fmt::format("{:.6f}", r.f1),
                                    fmt::format("{:.6f}", r.p_at.at(10)),
                                    fmt::format("{:.6f}", r.p_at.at(100))};
    if (intervals) {
      row.insert(row.begin() + 2,
                 run.has_interval ? fmt::format("[{:.4f}, {:.4f}]", run.interval.low, run.interval.high) : "");
    }
    if (capped) row.push_back(r.has_cap ? fmt::format("{:.6f}", r.ap_capped) : "");
    if (compared && run.has_difference) {
      const Difference& d = run.difference;
      row.insert(row.end(), {fmt::format("{:+.4f}", d.ap), fmt::format("[{:+.4f}, {:+.4f}]", d.low, d.high),
                             fmt::format("{:.4f}", d.p_value)});
    } else if (compared) {
      row.insert(row.end(), {"", "", ""});
    }
    rows.push_back(std::move(row));
  }
  std::string text;
  const auto add_row = [&](const std::vector<std::string>& cells) {
    if (format == TableFormat::tsv) {
      for (std::size_t c = 0; c < cells.size(); ++c) text += (c ? "\t" : "") + cells[c];
      text += "\n";
    } else {
      text += "|";
      for (const auto& cell : cells) text += " " + cell + " |";
      text += "\n";
    }
  };
  add_row(header);
  if (format == TableFormat::markdown) {
    text += "|---|";
    for (std::size_t c = 1; c < header.size(); ++c) text += "---:|";
    text += "\n";
  }
  for (const auto& row : rows) add_row(row);
  return text;
}

std::string format_details(const std::string& run, const EvaluationResult& result, const PairList& predictions,
                           bool header) {
  std::string tsv = header ? "run\trank\tsource\ttarget\ttp\tprecision\trecall\tap\n" : "";
  for (std::size_t i = 0; i < result.hits.size(); ++i) {
    const Hit& hit = result.hits[i];
    const auto& [source, target] = predictions.pairs[hit.prediction];
    tsv += fmt::format("{}\t{}\t{}\t{}\t{}\t{:.6f}\t{:.6f}\t{:.6f}\n", run, hit.rank, source, target, i + 1,
                       hit.precision, hit.recall, hit.ap);
  }
  return tsv;
}

std::string format_missed(const std::string& run, const EvaluationResult& result, const PairList& gold,
                          const PairList& predictions, bool header) {
  std::string tsv = header ? "run\tsource\ttarget\tbest_rank\tbest_target\tbest_score\n" : "";
  for (const Miss& miss : result.missed) {
    const auto& [source, target] = gold.pairs[miss.gold];
    tsv += fmt::format("{}\t{}\t{}\t", run, source, target);
    if (miss.best_rank == 0) {
      tsv += "\t\t\n";
      continue;
    }
    const std::string score =
        predictions.scores.empty() ? std::string() : fmt::format("{}", predictions.scores[miss.best_prediction]);
    tsv += fmt::format("{}\t{}\t{}\n", miss.best_rank, predictions.pairs[miss.best_prediction].second, score);
  }
  return tsv;
}

std::string closest_name(const std::string& typed, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, typed.size() / 3) + 1;
  for (const std::string& name : known) {
    const std::size_t distance = edit_distance(typed, name);
    if (distance < best_distance) {
      best_distance = distance;
      best = name;
    }
  }
  return best;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Code points of valid UTF-8; a byte of an invalid sequence stands for itself (above U+10FFFF, so it matches
  // no code point).
  const auto code_points = [](const std::string& text) {
    std::vector<std::int32_t> decoded;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
    const std::int32_t length = static_cast<std::int32_t>(text.size());
    std::int32_t i = 0;
    while (i < length) {
      const std::int32_t start = i;
      UChar32 code_point;
      U8_NEXT(bytes, i, length, code_point);
      decoded.push_back(code_point >= 0 ? code_point : 0x110000 + bytes[start]);
    }
    return decoded;
  };
  const std::vector<std::int32_t> x = code_points(a), y = code_points(b);
  // Two rows of the dynamic programme: previous[j] is the distance between x[0, i) and y[0, j).
  std::vector<std::size_t> previous(y.size() + 1), current(y.size() + 1);
  for (std::size_t j = 0; j <= y.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= x.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= y.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1);
      current[j] = std::min({substitution, previous[j] + 1, current[j - 1] + 1});
    }
    std::swap(previous, current);
  }
  return previous[y.size()];
}

}  // namespace termalign
