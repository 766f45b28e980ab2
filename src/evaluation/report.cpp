#include "termalign/report.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "evaluation/report_parts.h"
#include "io/io.h"
#include "io/sanity.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"

namespace termalign {

using namespace detail;

namespace {

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const std::size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) return fields;
    start = tab + 1;
  }
}

ExplainFile read_explain_file(const std::string& path) {
  ExplainFile file;
  file.path = path;
  const std::string contents = read_file(path);
  std::string_view rest = contents;
  strip_utf8_bom(rest);
  std::size_t line_number = 0;
  const auto fail = [&](const std::string& message) { throw_input_error(path, line_number, message); };
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (!is_valid_utf8(line)) fail("line is not valid UTF-8");
    const std::vector<std::string_view> fields = split_tabs(line);
    if (line_number == 1) {
      if (fields.size() < 4 || fields[0] != "rank" || fields[1] != "source" || fields[2] != "target")
        fail("expected the header of `termalign align --explain` (rank, source, target, score, ...)");
      file.columns.assign(fields.begin() + 3, fields.end());
      continue;
    }
    if (fields.size() != file.columns.size() + 3) {
      fail(fmt::format("expected {} TAB-separated fields, as the header has, found {}", file.columns.size() + 3,
                       fields.size()));
    }
    if (fields[0] != std::to_string(file.pairs.size() + 1))
      fail(fmt::format("expected rank {}, found '{}'", file.pairs.size() + 1, fields[0]));
    file.pairs.emplace_back(std::string(fields[1]), std::string(fields[2]));
    std::vector<double> values(file.columns.size());
    for (std::size_t c = 0; c < values.size(); ++c) {
      const std::string_view field = fields[c + 3];
      const auto parsed = std::from_chars(field.data(), field.data() + field.size(), values[c]);
      if (field.empty() || parsed.ec != std::errc() || parsed.ptr != field.data() + field.size())
        fail(fmt::format("the {} '{}' is not a number", file.columns[c], field));
    }
    file.values.push_back(std::move(values));
  }
  if (file.columns.empty()) throw_input_error(path, 0, "the explain file is empty");
  const auto note_vectors = [&](const char* name, bool source, std::unordered_map<std::string, bool>& without) {
    const std::optional<std::size_t> c = file.column(name);
    if (!c) return;
    for (std::size_t r = 0; r < file.pairs.size(); ++r)
      without[source ? file.pairs[r].first : file.pairs[r].second] = std::isnan(file.values[r][*c]);
  };
  note_vectors("r_S", true, file.source_without_vector);
  note_vectors("r_T", false, file.target_without_vector);
  return file;
}

std::string file_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void match_explanations(std::vector<Run>& runs, const std::vector<ExplainFile>& explanations) {
  for (const ExplainFile& file : explanations) {
    std::size_t best_prefix = 0;
    Run* match = nullptr;
    for (Run& run : runs) {
      if (run.explanation) continue;
      const std::vector<Pair>& pairs = run.predictions.pairs;
      const std::size_t prefix =
          std::mismatch(file.pairs.begin(), file.pairs.end(), pairs.begin(), pairs.end()).first -
          file.pairs.begin();
      if (prefix == file.pairs.size() && prefix == pairs.size()) {
        match = &run;
        break;
      }
      best_prefix = std::max(best_prefix, prefix);
    }
    if (match == nullptr) {
      throw_input_error(file.path, best_prefix + 2,
                        "the explain file's pairs do not follow any --pred list (another explain file took it, or "
                        "it explains another run): an explain file lists its run's pairs in their order");
    }
    match->explanation = &file;
  }
}

}  // namespace

namespace detail {

// The gold pairs a run misses or ranks low, each with its reason (the header comment lists them).
std::vector<MissRow> miss_rows(const Run& run, const Gold& gold) {
  std::vector<MissRow> rows;
  const EvaluationResult& result = run.result;
  const bool cut_at_cap = !result.has_cap || result.n_sys >= result.cap;
  const auto vector_status = [&](const std::string& source, const std::string& target) {
    if (!run.explanation) return std::string();
    const auto known = [](const std::unordered_map<std::string, bool>& without, const std::string& term) {
      const auto found = without.find(term);
      return found == without.end() ? std::optional<bool>() : std::optional<bool>(found->second);
    };
    const std::optional<bool> source_none = known(run.explanation->source_without_vector, source);
    const std::optional<bool> target_none = known(run.explanation->target_without_vector, target);
    if (source_none.value_or(false) && target_none.value_or(false)) return std::string("no vector (both terms)");
    if (source_none.value_or(false)) return std::string("no vector (source term)");
    if (target_none.value_or(false)) return std::string("no vector (target term)");
    return std::string();
  };
  const auto source_context = [&](const std::string& source) {
    const auto found = run.by_source.find(source);
    if (found == run.by_source.end()) return std::string("its source term has no pair in the list");
    // How many pairs the term has hints at a per-term limit (top_m) the list reached.
    const std::size_t first = found->second.front();
    return fmt::format("its source term: {} pair{} in the list, the first at rank {}, {}", found->second.size(),
                       found->second.size() == 1 ? "" : "s", first + 1,
                       escape(run.predictions.pairs[first].second));
  };
  for (const Miss& miss : result.missed) {
    const auto& [source, target] = gold.pairs.pairs[miss.gold];
    MissRow row{vector_status(source, target), source, target, source_context(source)};
    if (row.reason.empty()) row.reason = cut_at_cap ? "unknown" : "not kept";
    rows.push_back(std::move(row));
  }
  for (const Hit& hit : result.hits) {
    const auto& [source, target] = run.predictions.pairs[hit.prediction];
    if (result.has_cap && hit.rank > result.cap) {
      rows.push_back({"past the cap", source, target, fmt::format("rank {} (cap {})", hit.rank, result.cap)});
      continue;
    }
    // The best wrong pair of its source term above it, if any (a pair above it may be another gold target).
    for (const std::size_t place : run.by_source.at(source)) {
      if (place == hit.prediction) break;
      if (run.hit[place]) continue;
      rows.push_back({"ranked low", source, target,
                      fmt::format("rank {}, below its source term's wrong pair at rank {}, {}", hit.rank,
                                  place + 1, escape(run.predictions.pairs[place].second))});
      break;
    }
  }
  return rows;
}

}  // namespace detail

void validate(const ReportOptions& options) {
  if (options.predictions.empty()) throw_usage_error("The report needs at least one ranked list (--pred).");
  if (options.gold.empty() && options.data_dir.empty())
    throw_usage_error("The report needs the gold pairs (--gold, or --data-dir with the dataset's gold).");
  if (options.data_dir.empty() && options.source_terms.empty() != options.target_terms.empty()) {
    throw_usage_error(
        "The term lists go together: give both the source and the target list (--src-terms and --tgt-terms), or "
        "neither");
  }
  if (options.data_dir.empty() && !options.pair.empty())
    throw_usage_error("The language pair (--pair) names the files of a dataset folder: give --data-dir with it.");
  if (options.explanations.size() > options.predictions.size()) {
    throw_usage_error(fmt::format("{} explain files for {} runs: each explain file belongs to one --pred list.",
                                  options.explanations.size(), options.predictions.size()));
  }
  if (options.max_rows == 0)
    throw_usage_error("The rows listed per table (--max-rows) must be at least 1 (got 0).");
}

std::string report_page(const ReportOptions& given) {
  validate(given);
  ReportOptions options = given;
  if (!options.data_dir.empty()) {
    AlignConfig dataset;
    dataset.input.data_dir = options.data_dir;
    dataset.input.pair = options.pair;
    dataset.input.src_terms = options.source_terms;
    dataset.input.tgt_terms = options.target_terms;
    dataset.input.seed = kIdenticalSeed;  // the report needs no seed: the folder need not hold one
    dataset.input.dataset_corpora = false;
    const std::string dataset_gold = resolve_dataset(dataset, false);
    options.source_terms = dataset.input.src_terms;
    options.target_terms = dataset.input.tgt_terms;
    if (options.gold.empty()) options.gold = dataset_gold;
    if (options.gold.empty())
      throw_input_error(options.data_dir, 0, "the dataset folder has no gold (terms-l1-l2.txt): give --gold");
  }

  Gold gold;
  gold.pairs = read_pairs(options.gold, PairFileKind::gold);
  for (const Pair& pair : gold.pairs.pairs) {
    auto& targets = gold.targets[pair.first];
    if (targets.empty()) gold.sources.push_back(pair.first);
    targets.push_back(pair.second);
  }
  std::optional<TermList> source_terms, target_terms;
  if (!options.source_terms.empty()) {
    source_terms = read_term_list(options.source_terms);
    target_terms = read_term_list(options.target_terms);
    check_pairs_against_lists(gold.pairs, *source_terms, *target_terms, false);
    warn_gold_outside_lists(gold.pairs, *source_terms, *target_terms);
  }
  EvaluationOptions evaluation;
  evaluation.breakdown = true;
  evaluation.details = true;
  std::vector<Run> runs(options.predictions.size());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    Run& run = runs[r];
    run.path = options.predictions[r];
    run.label = fmt::format("{}: {}", r + 1, file_name(run.path));
    run.predictions = read_pairs(run.path, PairFileKind::submission, ScoreColumn::detect);
    if (source_terms) check_pairs_against_lists(run.predictions, *source_terms, *target_terms, false);
    check_predictions_against_gold(run.predictions, gold.pairs, false);
    run.result = evaluate(gold.pairs, run.predictions, source_terms ? &*source_terms : nullptr,
                          target_terms ? &*target_terms : nullptr, evaluation, &run.curve);
    run.hit.assign(run.predictions.pairs.size(), 0);
    for (const Hit& hit : run.result.hits) {
      TERMALIGN_CHECK(hit.rank == hit.prediction + 1, "a pair's rank is its place in a list read once");
      run.hit[hit.prediction] = 1;
    }
    for (std::size_t place = 0; place < run.predictions.pairs.size(); ++place)
      run.by_source[run.predictions.pairs[place].first].push_back(place);
  }
  std::vector<ExplainFile> explanations;
  explanations.reserve(options.explanations.size());
  for (const std::string& path : options.explanations) explanations.push_back(read_explain_file(path));
  match_explanations(runs, explanations);

  // Each run's AP interval, and with several runs each one's difference to the first, as `evaluate --intervals`
  // gives them (its default resamples and seed).
  std::vector<const PairList*> lists;
  for (const Run& run : runs) lists.push_back(&run.predictions);
  const std::vector<ApInterval> intervals =
      ap_intervals(gold.pairs, lists, source_terms ? &*source_terms : nullptr,
                   target_terms ? &*target_terms : nullptr, evaluation, SignificanceOptions{});
  for (std::size_t r = 0; r < runs.size(); ++r) runs[r].interval = intervals[r];
  if (runs.size() > 1) {
    const std::vector<Difference> differences =
        compare_runs(gold.pairs, lists, source_terms ? &*source_terms : nullptr,
                     target_terms ? &*target_terms : nullptr, evaluation, SignificanceOptions{});
    for (std::size_t r = 1; r < runs.size(); ++r) runs[r].difference = differences[r];
  }
  std::vector<NamedResult> named;
  for (const Run& run : runs) {
    named.push_back({run.path, run.result});
    named.back().has_interval = true;
    named.back().interval = run.interval;
    if (run.difference) {
      named.back().has_difference = true;
      named.back().difference = *run.difference;
    }
  }
  std::string json = format_table(named, TableFormat::json);
  // "</" cannot end the script block early: JSON reads "<\/" as "</".
  for (std::size_t at = 0; (at = json.find("</", at)) != std::string::npos; at += 3) json.replace(at, 2, "<\\/");

  std::string html =
      "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n<title>termalign report</title>\n";
  html += fmt::format("<style>{}</style></head><body>\n<h1>termalign report</h1>\n", kStyle);
  html += fmt::format("<p>Gold <code>{}</code>: {} pairs, {} source terms.", escape(options.gold),
                      runs.front().result.n_gold, gold.sources.size());
  if (source_terms) {
    html += fmt::format(" Term lists <code>{}</code> ({} terms) and <code>{}</code> ({} terms): the cap is {}.",
                        escape(options.source_terms), source_terms->size(), escape(options.target_terms),
                        target_terms->size(), runs.front().result.cap);
  } else {
    html += " No term lists: the cap is not known.";
  }
  html += "</p>\n<ul>";
  for (const Run& run : runs) {
    html += fmt::format("<li>{} <code>{}</code>{}</li>", escape(run.label), escape(run.path),
                        run.explanation ? " explained by <code>" + escape(run.explanation->path) + "</code>" : "");
  }
  html +=
      "</ul>\n<nav><a href=\"#summary\">scores</a><a href=\"#curves\">curves</a><a href=\"#breakdown\">"
      "breakdown</a><a href=\"#wrong\">wrong pairs</a><a href=\"#missed\">missed</a><a href=\"#terms\">source "
      "terms</a></nav>\n";
  html += summary_section(runs) + curves_section(runs) + breakdown_section(runs) +
          wrong_pairs_section(runs, gold, options.max_rows) + missed_section(runs, gold, options.max_rows) +
          terms_section(runs, gold, options.max_rows);
  html += "<script type=\"application/json\" id=evaluation>" + json + "</script>\n";
  html += fmt::format("<script>{}</script>\n</body></html>\n", kScript);
  return html;
}

void write_report(const ReportOptions& options) {
  if (options.out.empty()) throw_usage_error("The report needs the path of its page (--out).");
  const std::string page = report_page(options);
  write_file_atomically(options.out, page);
  logger().info("{}: the report of {} runs ({} KiB)", options.out, options.predictions.size(), page.size() / 1024);
}

}  // namespace termalign
