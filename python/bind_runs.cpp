// The module's functions over one run: align, explain, evaluate and report.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "module_support.h"
#include "pipeline/explain.h"
#include "termalign/aligner.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/lexicon.h"
#include "termalign/report.h"

namespace termalign::python {

void bind_runs(py::module_& m) {
  m.def(
      "align",
      [](py::object config, py::kwargs options) {
        refuse_output_files(options, "align()");
        const AlignConfig resolved = make_config(config, options);
        follow_python_level();
        const std::vector<RankedPair> pairs = without_gil([&] { return align_terms(resolved); });
        return to_tuples(pairs);
      },
      py::arg("config") = py::none(),
      "Aligns two term lists: the ranked, capped list as (source, target, score) tuples, best first.\n"
      "config: a TOML configuration file; options: the CLI's flags with underscores (src_vectors=, seed=, top_m=,"
      " ...), over the file. Writes nothing but a mapping asked for with save_mapping.");

  m.def(
      "explain",
      [](py::object config, py::kwargs options) {
        refuse_output_files(options, "explain()");
        const AlignConfig resolved = make_config(config, options);
        follow_python_level();
        const Explanation explanation = without_gil([&] {
          const CandidateSet candidates = generate_candidates(resolved, false);
          return explain_ranking(candidates, final_ranking(candidates, resolved), resolved);
        });
        py::list rows;
        std::vector<py::str> columns;
        for (const std::string& column : explanation.columns) columns.emplace_back(column);
        for (Eigen::Index r = 0; r < explanation.values.rows(); ++r) {
          py::dict row;
          row["rank"] = r + 1;
          row["source"] = explanation.sources[static_cast<std::size_t>(r)];
          row["target"] = explanation.targets[static_cast<std::size_t>(r)];
          for (std::size_t c = 0; c < columns.size(); ++c)
            row[columns[c]] = static_cast<double>(explanation.values(r, static_cast<Eigen::Index>(c)));
          rows.append(row);
        }
        return rows;
      },
      py::arg("config") = py::none(),
      "The parts of each ranked pair's score, as `termalign align --explain` writes them: one dict per pair of "
      "align()'s list, best first (rank, source, target, score, csls, cosine, r_T, r_S, orthographic, "
      "orthographic_bonus; with a re-ranker its reranker_bias and each feature's value `feature:NAME` and "
      "contribution `contribution:NAME`, which with the bias sum to the last run's score; after ranked rounds, "
      "`run_score:1` to `run_score:3`, whose mean is `score`). Writes nothing.");

  m.def(
      "evaluate",
      [](py::object gold, py::object pred, py::object src_terms, py::object tgt_terms, bool ignore_oov) {
        const PairList gold_pairs = pair_list(gold, PairFileKind::gold);
        const PairList predictions = pair_list(pred, PairFileKind::submission);
        const auto path = [](const py::object& value) { return value.is_none() ? std::string() : fspath(value); };
        const std::string source_path = path(src_terms), target_path = path(tgt_terms);
        EvaluationOptions options;
        options.ignore_oov = ignore_oov;
        follow_python_level();
        std::string json;
        without_gil([&] {
          validate(options, !source_path.empty(), !target_path.empty());
          TermList sources, targets;
          if (!source_path.empty()) sources = read_term_list(source_path);
          if (!target_path.empty()) targets = read_term_list(target_path);
          json = format_json(evaluate(gold_pairs, predictions, source_path.empty() ? nullptr : &sources,
                                      target_path.empty() ? nullptr : &targets, options));
        });
        return py::module_::import("json").attr("loads")(json);
      },
      py::arg("gold"), py::arg("pred"), py::arg("src_terms") = py::none(), py::arg("tgt_terms") = py::none(),
      py::arg("ignore_oov") = false,
      "Scores a ranked list against the gold (files, or lists of (source, target) pairs): the keys of "
      "`termalign evaluate --json`.");

  m.def(
      "inflected_first",
      [](py::object gold, py::object pred, const std::string& language, py::object hunspell_dir) {
        const PairList gold_pairs = pair_list(gold, PairFileKind::gold);
        const PairList predictions = pair_list(pred, PairFileKind::submission);
        const std::string dictionaries = fspath(hunspell_dir);
        follow_python_level();
        const InflectedFirst counted = without_gil(
            [&] { return inflected_first_candidates(gold_pairs, predictions, language, dictionaries); });
        py::list cases;
        for (const InflectedFirst::Case& c : counted.cases)
          cases.append(py::make_tuple(c.source, c.candidate, c.gold));
        py::dict out;
        out["source_terms"] = counted.source_terms;
        out["with_candidate"] = counted.with_candidate;
        out["correct"] = counted.correct;
        out["inflected"] = counted.inflected;
        out["analyser"] = counted.analyser;
        out["cases"] = cases;
        return out;
      },
      py::arg("gold"), py::arg("pred"), py::arg("language"),
      py::arg("hunspell_dir") = py::str("/usr/share/hunspell"),
      "The gold source terms whose first candidate is another form of a gold target, as `termalign evaluate "
      "--forms-language LANGUAGE --inflected FILE` counts and lists them: a dict of source_terms, with_candidate, "
      "correct, inflected, analyser and cases, (source, candidate, gold target) tuples by source term.");

  m.def(
      "compare",
      [](py::object gold, py::list preds, py::object src_terms, py::object tgt_terms, bool ignore_oov,
         std::size_t resamples, std::uint64_t seed, int threads, bool intervals) {
        const PairList gold_pairs = pair_list(gold, PairFileKind::gold);
        std::vector<PairList> lists;
        std::vector<std::string> names;
        for (const py::handle pred : preds) {
          const py::object run = py::reinterpret_borrow<py::object>(pred);
          lists.push_back(pair_list(run, PairFileKind::submission));
          const bool is_path = py::isinstance<py::str>(run) || py::hasattr(run, "__fspath__");
          names.push_back(is_path ? fspath(run) : "run" + std::to_string(lists.size()));
        }
        const auto path = [](const py::object& value) { return value.is_none() ? std::string() : fspath(value); };
        const std::string source_path = path(src_terms), target_path = path(tgt_terms);
        EvaluationOptions options;
        options.ignore_oov = ignore_oov;
        SignificanceOptions significance;
        significance.resamples = resamples;
        significance.seed = seed;
        significance.threads = threads;
        follow_python_level();
        std::string json;
        without_gil([&] {
          validate(options, !source_path.empty(), !target_path.empty());
          validate(significance);
          if (lists.size() < 2)
            throw_usage_error("compare needs two or more prediction lists (got " + std::to_string(lists.size()) +
                              ")");
          TermList sources, targets;
          if (!source_path.empty()) sources = read_term_list(source_path);
          if (!target_path.empty()) targets = read_term_list(target_path);
          const TermList* source_list = source_path.empty() ? nullptr : &sources;
          const TermList* target_list = target_path.empty() ? nullptr : &targets;
          std::vector<NamedResult> runs;
          std::vector<const PairList*> pointers;
          for (std::size_t r = 0; r < lists.size(); ++r) {
            runs.push_back({names[r], evaluate(gold_pairs, lists[r], source_list, target_list, options)});
            pointers.push_back(&lists[r]);
          }
          const std::vector<Difference> differences =
              compare_runs(gold_pairs, pointers, source_list, target_list, options, significance);
          for (std::size_t r = 1; r < runs.size(); ++r) {
            runs[r].has_difference = true;
            runs[r].difference = differences[r];
          }
          if (intervals) {
            const std::vector<ApInterval> own =
                ap_intervals(gold_pairs, pointers, source_list, target_list, options, significance);
            for (std::size_t r = 0; r < runs.size(); ++r) {
              runs[r].has_interval = true;
              runs[r].interval = own[r];
            }
          }
          json = format_table(runs, TableFormat::json);
        });
        return py::module_::import("json").attr("loads")(json);
      },
      py::arg("gold"), py::arg("preds"), py::arg("src_terms") = py::none(), py::arg("tgt_terms") = py::none(),
      py::arg("ignore_oov") = false, py::arg("resamples") = SignificanceOptions().resamples,
      py::arg("seed") = SignificanceOptions().seed, py::arg("threads") = 0, py::arg("intervals") = false,
      "Scores several ranked lists against one gold and compares each with the first: a list of evaluate()'s "
      "dicts with a \"run\" key (the file, or run1, run2, ... for lists of pairs) and, after the first, "
      "\"difference\": {ap, interval, p_value, resamples}, as `termalign evaluate --json` with several --pred; "
      "intervals=True adds each run's \"ap_interval\": [lo, hi] (evaluate --intervals).");

  m.def(
      "report",
      [](py::object pred, py::object gold, py::object src_terms, py::object tgt_terms, py::object explain,
         py::object data_dir, py::object pair, py::object out, std::size_t max_rows) -> py::object {
        const auto path = [](const py::object& value) { return value.is_none() ? std::string() : fspath(value); };
        // One path or a list of them.
        const auto paths = [&](const py::object& value) {
          std::vector<std::string> list;
          if (value.is_none()) return list;
          if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__")) return std::vector{path(value)};
          for (const py::handle item : value) list.push_back(fspath(item));
          return list;
        };
        ReportOptions options;
        options.predictions = paths(pred);
        options.explanations = paths(explain);
        options.gold = path(gold);
        options.source_terms = path(src_terms);
        options.target_terms = path(tgt_terms);
        options.data_dir = path(data_dir);
        options.pair = pair.is_none() ? std::string() : pair.cast<std::string>();
        options.out = path(out);
        options.max_rows = max_rows;
        follow_python_level();
        if (!options.out.empty()) {
          without_gil([&] { write_report(options); });
          return py::none();
        }
        return py::str(without_gil([&] { return report_page(options); }));
      },
      py::arg("pred"), py::arg("gold") = py::none(), py::arg("src_terms") = py::none(),
      py::arg("tgt_terms") = py::none(), py::arg("explain") = py::none(), py::arg("data_dir") = py::none(),
      py::arg("pair") = py::none(), py::arg("out") = py::none(), py::arg("max_rows") = ReportOptions().max_rows,
      "The error-analysis page of `termalign report` for one ranked list or a list of them (files): written to "
      "`out`, or returned as a str when `out` is None. `explain`: `align --explain` files of the runs.");
}

}  // namespace termalign::python
