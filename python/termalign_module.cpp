// The Python module `termalign`: align, evaluate and the Aligner's stages over the C++ library (pybind11).
// Every call that works releases the GIL and stops at Ctrl-C with KeyboardInterrupt; the library's log lines go to
// Python's logging ("termalign"); its errors become termalign.Error and its subclasses, with its message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <spdlog/details/null_mutex.h>
#include <spdlog/sinks/base_sink.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "evaluation/ablation.h"
#include "evaluation/explain.h"
#include "io/train_vectors.h"
#include "mapping/mapping.h"
#include "rerank/reranker.h"
#include "rerank/training.h"
#include "scoring/scoring.h"
#include "termalign/aligner.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "termalign/interrupt.h"
#include "termalign/lexicon.h"
#include "termalign/logging.h"
#include "termalign/report.h"
#include "termalign/version.h"

namespace py = pybind11;
using namespace termalign;

namespace {

// Python's logging level for an spdlog level, and back.
int python_level(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return 5;
    case spdlog::level::debug:
      return 10;
    case spdlog::level::info:
      return 20;
    case spdlog::level::warn:
      return 30;
    case spdlog::level::err:
      return 40;
    default:
      return 50;
  }
}

spdlog::level::level_enum spdlog_level(int python) {
  if (python < 10) return spdlog::level::trace;
  if (python < 20) return spdlog::level::debug;
  if (python < 30) return spdlog::level::info;
  if (python < 40) return spdlog::level::warn;
  if (python < 50) return spdlog::level::err;
  return spdlog::level::critical;
}

// Where a call of without_gil on this thread keeps the exception a Python signal handler raised while the library
// ran (null outside such calls).
thread_local std::optional<py::error_already_set>* raised_by_handler = nullptr;

// Hands each log line to logging.getLogger("termalign") with the GIL taken (lines come from the library's worker
// threads while the calling thread waits without the GIL). Off once the interpreter is finalising. No lock of its
// own (null_mutex): a sink lock held while waiting for the GIL would deadlock against a thread that holds the GIL
// and logs through termalign; Python's logging is safe to call from several threads.
class PythonSink : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 public:
  std::atomic<bool> enabled{true};

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    if (!enabled || !Py_IsInitialized()) return;
    const std::string text(message.payload.data(), message.payload.size());
    py::gil_scoped_acquire gil;
    try {
      py::module_::import("logging").attr("getLogger")("termalign").attr("log")(python_level(message.level), text);
    } catch (py::error_already_set& error) {
      // Python runs its signal handlers on the calling thread when it logs there: Ctrl-C's KeyboardInterrupt (not
      // an Exception) raised inside logging is kept for the call's next poll, which stops it, not dropped.
      if (raised_by_handler && !*raised_by_handler && !error.matches(PyExc_Exception)) {
        raised_by_handler->emplace(std::move(error));
        return;
      }
      error.discard_as_unraisable("termalign log line");
    }
  }
  void flush_() override {}
};

std::shared_ptr<PythonSink> python_sink;

// The library logs what Python's "termalign" logger would let through (its effective level, as now set).
void follow_python_level() {
  const int level =
      py::module_::import("logging").attr("getLogger")("termalign").attr("getEffectiveLevel")().cast<int>();
  logger().set_level(spdlog_level(level));
}

// scores[key] of a dict that score() returned, as `Column`; a missing or ill-typed column is a usage error.
template <class Column>
Column scores_column(const py::dict& scores, const char* key) {
  if (!scores.contains(key))
    throw_usage_error(std::string("scores has no '") + key + "': give the dict score() returns.");
  try {
    return scores[key].cast<Column>();
  } catch (const py::cast_error&) {
    throw_usage_error(std::string("scores['") + key + "'] must be a sequence of " +
                      (std::is_same_v<Column, std::vector<float>> ? "numbers" : "non-negative integers") +
                      ", as score() returns it.");
  }
}

// Runs `work` without the GIL, so that Python's other threads run meanwhile, and stops it at Ctrl-C: the library
// polls (interrupt.h) a check that takes the GIL and runs Python's signal handlers. When a handler raises (as
// Ctrl-C's raises KeyboardInterrupt), the library stops with its interrupted error, and the handler's exception is
// raised in its place. Only the calling thread polls, with no lock of the library held: the GIL is all it takes.
template <class Work>
auto without_gil(Work&& work) {
  std::optional<py::error_already_set> raised;
  const auto run_signal_handlers = [&raised] {
    py::gil_scoped_acquire gil;
    if (raised) return true;  // raised while a log line went to Python (PythonSink)
    if (PyErr_CheckSignals() == 0) return false;
    raised.emplace();  // takes the exception out of Python's error indicator until the call has unwound
    return true;
  };
  // The slot of PythonSink on this thread, for this call (restored after: calls do not nest, but stay safe if so).
  struct Slot {
    std::optional<py::error_already_set>* previous;
    explicit Slot(std::optional<py::error_already_set>* slot) : previous(raised_by_handler) {
      raised_by_handler = slot;
    }
    ~Slot() { raised_by_handler = previous; }
  } slot(&raised);
  const auto run = [&] {
    py::gil_scoped_release release;
    const ScopedInterruptCheck interruptible(run_signal_handlers);
    return work();
  };
  // A handler's exception kept after the last poll (a log line at the end) is raised once the call is done.
  try {
    if constexpr (std::is_void_v<decltype(work())>) {
      run();
      if (raised) throw *raised;
    } else {
      auto result = run();
      if (raised) throw *raised;
      return result;
    }
  } catch (const Error& error) {
    if (error.kind() != ErrorKind::interrupted || !raised) throw;
    throw *raised;  // with the GIL held again
  }
}

// A path given as str or os.PathLike, as text.
std::string fspath(const py::handle& value) {
  return py::module_::import("os").attr("fspath")(value).cast<std::string>();
}

// A keyword's value as the option table takes it: bool before int (a Python bool is an int), os.PathLike as text.
OptionValue option_value(const std::string& name, const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) return value.cast<std::int64_t>();
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::hasattr(value, "__fspath__")) return fspath(value);
  // A NumPy scalar (np.int64, np.float32, np.bool_: what a grid's values drawn from an array are) by its kind.
  if (py::hasattr(value, "dtype") && py::hasattr(value, "item") && py::len(value.attr("shape")) == 0) {
    const std::string kind = py::str(value.attr("dtype").attr("kind"));
    if (kind == "b" || kind == "i" || kind == "u" || kind == "f") return option_value(name, value.attr("item")());
  }
  throw_usage_error("Option " + name + " takes a bool, a number or a string (got " +
                    std::string(py::str(value.get_type().attr("__name__"))) + ").");
}

// Each keyword over `config` (None: not given).
void apply_keywords(AlignConfig& config, const py::kwargs& options) {
  for (const auto& [key, value] : options) {
    if (value.is_none()) continue;
    const std::string name = key.cast<std::string>();
    set_option(config, name, option_value(name, value));
  }
}

// `function` returns its results and writes no run's files: out=, scores= and explain= are refused, not ignored.
void refuse_output_files(const py::kwargs& options, const std::string& function) {
  for (const char* output : {"out", "scores", "explain"}) {
    if (options.contains(output) && !options[output].is_none()) {
      throw_usage_error(function + " returns its results and writes no file, so it takes no " + output +
                        "=: write them yourself, or run `termalign align`.");
    }
  }
}

// The keywords over an Aligner's configuration, all or none, then the files of a data_dir (resolve_dataset: a new
// folder or pair gives its own lists, seed and corpora).
void apply_aligner_keywords(AlignConfig& config, const py::kwargs& options, const std::string& function) {
  refuse_output_files(options, function);
  AlignConfig changed = config;
  apply_keywords(changed, options);
  resolve_dataset(changed);
  config = std::move(changed);
}

// The configuration file (when given), then the keywords over it, then a --data-dir's files.
// `dataset_gold`, when given, receives the gold of a data_dir that holds one.
AlignConfig make_config(const py::object& config, const py::kwargs& options, std::string* dataset_gold = nullptr) {
  AlignConfig resolved;
  if (!config.is_none()) load_config(fspath(config), resolved);
  apply_keywords(resolved, options);
  const std::string gold = resolve_dataset(resolved);
  if (dataset_gold) *dataset_gold = gold;
  return resolved;
}

py::list to_tuples(const std::vector<RankedPair>& pairs) {
  py::list list(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    list[i] = py::make_tuple(pairs[i].source, pairs[i].target, static_cast<double>(pairs[i].score));
  }
  return list;
}

py::array_t<float> to_numpy(const Matrix& matrix) {
  py::array_t<float> array({matrix.rows(), matrix.cols()});
  std::copy(matrix.data(), matrix.data() + matrix.size(), array.mutable_data());
  return array;
}

template <class Vector>
py::array to_numpy_vector(const Vector& vector) {
  using Value = typename Vector::value_type;
  py::array_t<Value> array(static_cast<py::ssize_t>(vector.size()));
  std::copy(vector.begin(), vector.end(), array.mutable_data());
  return std::move(array);
}

Matrix from_numpy(const py::array_t<float, py::array::c_style | py::array::forcecast>& array, const char* what) {
  if (array.ndim() != 2) throw_usage_error(std::string(what) + " must be a 2-D array (rows x dimensions).");
  Matrix matrix(array.shape(0), array.shape(1));
  std::copy(array.data(), array.data() + array.size(), matrix.data());
  if (!matrix.allFinite()) {
    Eigen::Index row = 0;
    while (matrix.row(row).allFinite()) ++row;
    throw_usage_error(std::string(what) + " holds a NaN or infinite value (row " + std::to_string(row) + ").");
  }
  return matrix;
}

// A list of candidates (rows of X and Z, CSLS, cosine) as `prefix`source, target, csls and cosine arrays.
void put_candidates(py::dict& result, const std::vector<Candidate>& candidates, const std::string& prefix) {
  std::vector<std::uint32_t> rows, cols;
  std::vector<float> csls, cosine;
  for (const Candidate& candidate : candidates) {
    rows.push_back(candidate.source);
    cols.push_back(candidate.target);
    csls.push_back(candidate.score);
    cosine.push_back(candidate.cosine);
  }
  result[py::str(prefix + "source")] = to_numpy_vector(rows);
  result[py::str(prefix + "target")] = to_numpy_vector(cols);
  result[py::str(prefix + "csls")] = to_numpy_vector(csls);
  result[py::str(prefix + "cosine")] = to_numpy_vector(cosine);
}

// The candidates put_candidates wrote under `prefix`.
std::vector<Candidate> take_candidates(const py::dict& scores, const std::string& prefix) {
  const auto rows = scores_column<std::vector<std::uint32_t>>(scores, (prefix + "source").c_str());
  const auto cols = scores_column<std::vector<std::uint32_t>>(scores, (prefix + "target").c_str());
  const auto csls = scores_column<std::vector<float>>(scores, (prefix + "csls").c_str());
  const auto cosine = scores_column<std::vector<float>>(scores, (prefix + "cosine").c_str());
  if (rows.size() != cols.size() || rows.size() != csls.size() || rows.size() != cosine.size())
    throw_usage_error("scores' " + prefix + "source, target, csls and cosine arrays need the same length.");
  std::vector<Candidate> candidates;
  candidates.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) candidates.push_back({csls[i], cosine[i], rows[i], cols[i]});
  return candidates;
}

Eigen::VectorXf to_eigen(const std::vector<float>& values) {
  return Eigen::Map<const Eigen::VectorXf>(values.data(), static_cast<Eigen::Index>(values.size()));
}

Embeddings make_embeddings(std::vector<std::string> words,
                           const py::array_t<float, py::array::c_style | py::array::forcecast>& vectors,
                           const char* what) {
  Embeddings embeddings;
  embeddings.words = std::move(words);
  embeddings.vectors = from_numpy(vectors, what);
  return embeddings;
}

Side parse_side(const std::string& side) {
  if (side == "source") return Side::source;
  if (side == "target") return Side::target;
  throw_usage_error("side must be 'source' or 'target' (got '" + side + "').");
}

PairList pair_list(const py::object& pairs, PairFileKind kind) {
  if (py::isinstance<py::str>(pairs) || py::hasattr(pairs, "__fspath__")) {
    const std::string path = fspath(pairs);
    return without_gil([&] { return read_pairs(path, kind); });
  }
  PairList list;
  list.path = "(pairs given in Python)";
  // Each item (source, target) or align's (source, target, score). A string is not a pair: a sequence of
  // strings would otherwise be read character by character.
  for (const py::handle& item : pairs) {
    const std::string number = std::to_string(list.pairs.size() + 1);
    if (py::isinstance<py::str>(item)) {
      throw_usage_error("Pair " + number + " is a string ('" + item.cast<std::string>() +
                        "'): give (source, target) tuples, e.g. line.split('\\t') of each line, or the file's "
                        "path.");
    }
    if (!py::isinstance<py::sequence>(item))
      throw_usage_error("Pair " + number + " is not a (source, target) tuple.");
    const py::sequence pair = py::reinterpret_borrow<py::sequence>(item);
    if (pair.size() != 2 && pair.size() != 3) {
      throw_usage_error("Pair " + number + " has " + std::to_string(pair.size()) +
                        " items: a pair is (source, target), or (source, target, score) as align returns it.");
    }
    if (!py::isinstance<py::str>(pair[0]) || !py::isinstance<py::str>(pair[1]) ||
        (pair.size() == 3 && !py::isinstance<py::float_>(pair[2]) && !py::isinstance<py::int_>(pair[2]))) {
      throw_usage_error("Pair " + number + ": its source and target must be strings (and its score a number).");
    }
    list.pairs.emplace_back(pair[0].cast<std::string>(), pair[1].cast<std::string>());
    list.lines.push_back(list.pairs.size());
  }
  return list;
}

py::dict mapping_dict(const Mapping& mapping) {
  py::dict result;
  result["normalization"] = to_string(mapping.source.kind);
  result["source_transform"] = to_numpy(mapping.source_transform);
  result["target_transform"] = to_numpy(mapping.target_transform);
  result["source_mean"] = to_numpy(Matrix(mapping.source.mean));
  result["target_mean"] = to_numpy(Matrix(mapping.target.mean));
  return result;
}

}  // namespace

PYBIND11_MODULE(termalign, m) {
  m.doc() = "termalign: align bilingual terminology with word embeddings (BUCC 2022 shared task).";
  m.attr("__version__") = version();
  // The meaning of the re-ranker's features (kFeatureRevision): a model file says the one it was trained on.
  m.attr("feature_revision") = kFeatureRevision;
  m.def("bundled_models_id", &bundled_models_id,
        "The identity of the re-ranker models built into the library (`fnv1a64:` and 16 hex digits over both "
        "files), as a resolved configuration's [provenance] records it.");

  // Errors: termalign.Error (a RuntimeError) and one subclass per kind, each with the library's message.
  static py::exception<Error> error_type(m, "Error", PyExc_RuntimeError);
  static py::handle usage_type = PyErr_NewException("termalign.UsageError", error_type.ptr(), nullptr);
  static py::handle input_type = PyErr_NewException("termalign.InputError", error_type.ptr(), nullptr);
  static py::handle output_type = PyErr_NewException("termalign.OutputError", error_type.ptr(), nullptr);
  static py::handle resources_type = PyErr_NewException("termalign.ResourcesError", error_type.ptr(), nullptr);
  m.attr("UsageError") = usage_type;
  m.attr("InputError") = input_type;
  m.attr("OutputError") = output_type;
  m.attr("ResourcesError") = resources_type;
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const Error& error) {
      py::handle type = error_type;
      if (error.kind() == ErrorKind::usage) type = usage_type;
      if (error.kind() == ErrorKind::input) type = input_type;
      if (error.kind() == ErrorKind::output) type = output_type;
      if (error.kind() == ErrorKind::resources) type = resources_type;
      PyErr_SetString(type.ptr(), error.what());
    }
  });

  // The library's log lines go to Python's logging, not to stderr.
  python_sink = std::make_shared<PythonSink>();
  logger().sinks().clear();
  logger().sinks().push_back(python_sink);
  py::module_::import("atexit").attr("register")(py::cpp_function([] { python_sink->enabled = false; }));

  // Process-wide settings: the library changes nothing on its own; a program may call these (the CLI calls both).
  m.def("similarity_kernel", &similarity_kernel, "The similarity tiles' product: OpenBLAS's or Eigen's.");
  m.def(
      "set_tile_kernel",
      [](const std::string& name) {
        if (name != "auto" && name != "eigen" && name != "openblas")
          throw_usage_error("set_tile_kernel takes 'auto', 'eigen' or 'openblas' (got '" + name + "').");
        set_tile_kernel(parse_tile_kernel(name));
      },
      py::arg("name"), "Forces the similarity tiles' product: 'auto', 'eigen' or 'openblas'.");
  m.def("use_single_threaded_blas", &use_single_threaded_blas,
        "Makes OpenBLAS single-threaded for the whole process (NumPy's products too), so that the similarity "
        "tiles may use it, as the CLI does.");

  m.def(
      "option_names",
      [] {
        py::list names;
        for (const OptionName& name : option_names()) {
          std::string keyword = name.flag;
          for (char& c : keyword)
            if (c == '-') c = '_';
          names.append(py::make_tuple(keyword, name.section + "." + name.key));
        }
        return names;
      },
      "Every option: (keyword, 'section.key' in the TOML configuration).");

  m.def(
      "resolve_config",
      [](py::object config, py::kwargs options) { return to_toml(make_config(config, options)); },
      py::arg("config") = py::none(), "The configuration that align(config, **options) would run, as TOML text.");

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
        const Explanation explanation = without_gil([&] { return explain_terms(resolved); });
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
      "contribution "
      "`contribution:NAME`, which with the bias sum to the score). Writes nothing.");

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

  const RerankerTrainingOptions kTrainingDefaults;
  m.def(
      "train_reranker",
      [](py::object gold, py::object config, std::size_t folds, std::uint32_t fold_seed,
         const std::string& learner, std::size_t stages, int rounds, int max_depth, int second_rounds,
         int second_max_depth, double eta, double l2, bool ablation, py::kwargs options) {
        std::string dataset_gold;
        const AlignConfig resolved = make_config(config, options, &dataset_gold);
        RerankerTrainingOptions training;
        training.gold = gold.is_none() ? dataset_gold : fspath(gold);
        if (training.gold.empty())
          throw_usage_error("train_reranker needs the gold: gold=, or a data_dir that holds one.");
        training.folds = folds;
        training.seed = fold_seed;
        training.learner = learner;
        training.stages = stages;
        training.trees.rounds = rounds;
        training.trees.max_depth = max_depth;
        training.second_rounds = second_rounds;
        training.second_max_depth = second_max_depth;
        training.trees.eta = eta;
        training.l2 = l2;
        training.ablation = ablation;
        follow_python_level();
        RerankerTrainingResult result;
        std::string model;
        without_gil([&] {
          result = train_reranker(resolved, training);
          model = format_reranker(result.model);
        });
        py::dict learners, groups;
        for (const auto& [name, ap] : result.learners) learners[py::str(name)] = ap;
        for (const AblationRow& row : result.ablation) groups[py::str(row.group)] = row.cross_validated_ap;
        py::list held_out(result.held_out.size());
        for (std::size_t i = 0; i < result.held_out.size(); ++i) {
          const HeldOutScore& row = result.held_out[i];
          held_out[i] = py::make_tuple(row.source, row.target, row.gold, row.fold, row.score);
        }
        py::dict out;
        out["model"] = model;
        out["learner"] = to_string(result.model.learner);
        out["stages"] = result.model.stages();
        out["cross_validated_ap"] = result.cross_validated_ap;
        out["one_stage_ap"] = result.one_stage_ap;
        out["learners"] = learners;
        out["without_group"] = groups;
        out["candidates"] = result.candidates;
        out["positives"] = result.positives;
        out["gold_pairs"] = result.gold_pairs;
        out["candidate_recall"] = result.candidate_recall;
        out["csls_ap"] = result.csls_ap;
        out["unsupervised_ap"] = result.unsupervised_ap;
        out["held_out"] = held_out;
        return out;
      },
      // The defaults are the library's (and the CLI's).
      py::arg("gold") = py::none(), py::arg("config") = py::none(), py::arg("folds") = kTrainingDefaults.folds,
      py::arg("fold_seed") = kTrainingDefaults.seed, py::arg("learner") = kTrainingDefaults.learner,
      py::arg("stages") = kTrainingDefaults.stages, py::arg("rounds") = kTrainingDefaults.trees.rounds,
      py::arg("max_depth") = kTrainingDefaults.trees.max_depth,
      py::arg("second_rounds") = kTrainingDefaults.second_rounds,
      py::arg("second_max_depth") = kTrainingDefaults.second_max_depth,
      py::arg("eta") = kTrainingDefaults.trees.eta, py::arg("l2") = kTrainingDefaults.l2,
      py::arg("ablation") = kTrainingDefaults.ablation,
      "Trains a re-ranker as `termalign train-reranker` does: a dict with the model's text (`model`, for a file "
      "that align(reranker=path) reads), the cross-validated AP (`cross_validated_ap`; its first stage's alone in "
      "`one_stage_ap`; each learner's in `learners`, each feature group's absence in `without_group` with "
      "ablation=True), the candidate recall, "
      "and the cross-validated list `held_out` as (source, target, gold, fold, score) tuples, best first.\n"
      "options: align's, as in align(); gold: the gold pairs' file, or the data_dir's.");

  m.def(
      "ablate",
      [](py::object grid, py::object base, py::object plot_script) {
        const std::string grid_path = fspath(grid);
        const std::string base_path = base.is_none() ? std::string() : fspath(base);
        AblationOptions options;
        if (!plot_script.is_none()) options.plot_script = fspath(plot_script);
        follow_python_level();
        const AblationResult result =
            without_gil([&] { return run_ablation(read_grid(grid_path, base_path), options); });
        py::module_ json = py::module_::import("json"), tomllib = py::module_::import("tomllib");
        py::list runs;
        for (const AblationRun& run : result.runs) {
          py::dict row = json.attr("loads")(format_json(run.evaluation));
          py::dict values, labels;
          for (const GridSetting& setting : run.settings)  // typed as TOML reads the grid's value
            values[py::str(setting.option)] = tomllib.attr("loads")("value = " + setting.value)["value"];
          for (std::size_t a = 0; a < result.options.size() && a < run.labels.size(); ++a)
            labels[py::str(result.options[a])] = run.labels[a];
          row["run"] = run.number;
          row["options"] = values;
          row["labels"] = labels;
          row["seconds"] = run.seconds;
          runs.append(row);
        }
        return runs;
      },
      py::arg("grid"), py::arg("base") = py::none(), py::arg("plot_script") = py::none(),
      "Runs a grid as `termalign ablate --grid GRID [--base BASE]` does, writing the same files into the grid's "
      "[output] dir: the runs, best AP first, as dicts of `termalign evaluate --json`'s keys plus `run` (its "
      "number), `options` (each varied option's value, typed: int, float, bool or str; options varied together "
      "each under its own name), `labels` (each axis's value as results.md shows it) and `seconds`. plot_script: "
      "scripts/plot_curve.py to draw the best run's curve (default: none).");

  const TrainVectorsOptions kVectorDefaults;
  m.def(
      "train_vectors",
      [](py::object corpus, py::object out, py::object terms, int dim, int epoch, int min_count, int minn,
         int maxn, int bucket, const std::string& model, double lr, int window, int negatives, int threads,
         int seed, bool lowercase) {
        TrainVectorsOptions options;
        options.corpus = fspath(corpus);
        options.out = fspath(out);
        if (!terms.is_none()) options.terms = fspath(terms);
        options.dim = dim;
        options.epoch = epoch;
        options.min_count = min_count;
        options.minn = minn;
        options.maxn = maxn;
        options.bucket = bucket;
        options.model = parse_vector_model(model);
        options.learning_rate = lr;
        options.window = window;
        options.negatives = negatives;
        options.threads = threads;
        options.seed = seed;
        options.lowercase = lowercase;
        follow_python_level();
        const TrainVectorsReport report = without_gil([&] { return train_vectors(options); });
        py::dict result;
        result["bin"] = options.out + ".bin";
        result["vec"] = options.out + ".vec";
        result["lines"] = report.lines;
        result["tokens"] = report.tokens;
        result["joined_occurrences"] = report.joined_occurrences;
        result["joined_terms"] = report.joined_terms;
        result["vocabulary"] = report.vocabulary;
        result["seconds"] = report.tokenize_seconds + report.train_seconds + report.save_seconds;
        return result;
      },
      py::arg("corpus"), py::arg("out"), py::arg("terms") = py::none(), py::arg("dim") = kVectorDefaults.dim,
      py::arg("epoch") = kVectorDefaults.epoch, py::arg("min_count") = kVectorDefaults.min_count,
      py::arg("minn") = kVectorDefaults.minn, py::arg("maxn") = kVectorDefaults.maxn,
      py::arg("bucket") = kVectorDefaults.bucket, py::arg("model") = to_string(kVectorDefaults.model),
      py::arg("lr") = kVectorDefaults.learning_rate, py::arg("window") = kVectorDefaults.window,
      py::arg("negatives") = kVectorDefaults.negatives, py::arg("threads") = kVectorDefaults.threads,
      py::arg("seed") = kVectorDefaults.seed, py::arg("lowercase") = kVectorDefaults.lowercase,
      "Trains fastText vectors on a corpus as `termalign train-vectors` does, writing OUT.bin and OUT.vec (terms: "
      "a term list whose multi-word terms are joined into one token each). Returns the files written and the "
      "counts of the report (lines, tokens, joined_occurrences, joined_terms, vocabulary) and seconds.");

  py::class_<CandidateSet>(m, "Candidates", "Aligner.collect_evidence's candidates and their evidence.")
      .def("__len__", [](const CandidateSet& candidates) { return candidates.evidence.size(); });

  py::class_<Aligner>(m, "Aligner",
                      "The align pipeline by stages, keeping the vectors it loaded for the runs after:\n"
                      "load_vectors / set_vectors -> fit_mapping / set_mapping -> compose -> score -> "
                      "collect_evidence -> rank (align()'s list);\n"
                      "align() runs it whole (as termalign.align) with the kept vectors.")
      .def(py::init([](py::object config, py::kwargs options) {
             refuse_output_files(options, "Aligner");
             return std::make_unique<Aligner>(make_config(config, options));
           }),
           py::arg("config") = py::none())
      .def(
          "set_options",
          [](Aligner& aligner, py::kwargs options) {
            apply_aligner_keywords(aligner.config(), options, "Aligner.set_options");
          },
          "Changes options for the next stages and runs (the loaded vectors are kept when the inputs are the "
          "same).")
      .def_property_readonly(
          "config", [](const Aligner& aligner) { return to_toml(aligner.config()); },
          "The resolved configuration as TOML text.")
      .def(
          "load_vectors",
          [](Aligner& aligner) {
            follow_python_level();
            const Embeddings *source, *target;
            without_gil([&] {
              source = &aligner.vectors(Side::source);
              target = &aligner.vectors(Side::target);
            });
            return py::make_tuple(py::make_tuple(source->words, to_numpy(source->vectors)),
                                  py::make_tuple(target->words, to_numpy(target->vectors)));
          },
          "Loads (once) the configured vectors as a run needs them: ((source_words, source_matrix), "
          "(target_words, "
          "target_matrix)), raw float32 rows.")
      .def(
          "set_vectors",
          [](Aligner& aligner, std::vector<std::string> source_words,
             py::array_t<float, py::array::c_style | py::array::forcecast> source_vectors,
             std::vector<std::string> target_words,
             py::array_t<float, py::array::c_style | py::array::forcecast> target_vectors) {
            Embeddings source = make_embeddings(std::move(source_words), source_vectors, "source_vectors");
            Embeddings target = make_embeddings(std::move(target_words), target_vectors, "target_vectors");
            without_gil([&] { aligner.set_vectors(std::move(source), std::move(target)); });
          },
          py::arg("source_words"), py::arg("source_vectors"), py::arg("target_words"), py::arg("target_vectors"),
          "Uses these vectors (words most frequent first, one float row each) instead of the configured files.")
      .def(
          "fit_mapping",
          [](Aligner& aligner, py::object seed) {
            follow_python_level();
            std::unique_ptr<PairList> pairs;
            if (!seed.is_none()) pairs = std::make_unique<PairList>(pair_list(seed, PairFileKind::seed_lexicon));
            const Mapping* mapping = without_gil([&] { return &aligner.fit_mapping(pairs.get()); });
            return mapping_dict(*mapping);
          },
          py::arg("seed") = py::none(),
          "Normalises the vectors and fits the mapping on the seed (a file or (source, target) pairs; default: "
          "the configured seed). Returns its normalisation, transforms and means as NumPy arrays.")
      .def(
          "set_mapping",
          [](Aligner& aligner, py::object path) {
            const std::string file = fspath(path);
            without_gil([&] { aligner.set_mapping(load_mapping(file)); });
          },
          py::arg("path"), "Uses a mapping saved by `termalign align --save-mapping` instead of fitting one.")
      .def_property_readonly(
          "mapping", [](const Aligner& aligner) { return mapping_dict(aligner.mapping()); },
          "The current mapping (fitted by fit_mapping or set by set_mapping), as fit_mapping returns it: a dict "
          "of its normalisation and its transforms and means as NumPy arrays.")
      .def(
          "compose",
          [](Aligner& aligner, std::vector<std::string> terms, const std::string& side) {
            follow_python_level();
            const Side which = parse_side(side);
            const ComposedTerms composed = without_gil([&] { return aligner.compose(terms, which); });
            return py::make_tuple(to_numpy(composed.vectors), to_numpy_vector(composed.term_ids));
          },
          py::arg("terms"), py::arg("side") = "source",
          "The terms' unit vectors in the shared space and, per row, the term's index in `terms` (terms with no "
          "usable word are left out).")
      .def(
          "score",
          [](const Aligner& aligner, py::array_t<float, py::array::c_style | py::array::forcecast> X,
             py::array_t<float, py::array::c_style | py::array::forcecast> Z) {
            follow_python_level();
            const Matrix x = from_numpy(X, "X"), z = from_numpy(Z, "Z");
            const CslsSelection scored = without_gil([&] { return aligner.score(x, z); });
            py::dict result;
            put_candidates(result, scored.candidates, "");
            result["source_means"] = to_numpy_vector(std::vector<float>(
                scored.means.source.data(), scored.means.source.data() + scored.means.source.size()));
            result["target_means"] = to_numpy_vector(std::vector<float>(
                scored.means.target.data(), scored.means.target.data() + scored.means.target.size()));
            if (scored.has_reverse) put_candidates(result, scored.reverse, "reverse_");
            return result;
          },
          py::arg("X"), py::arg("Z"),
          "CSLS between the rows of X and Z (unit rows): each X row's candidates (rows of X and Z, CSLS, cosine), "
          "best first, and both sides' neighbourhood means; with a re-ranker, each Z row's best X rows too "
          "(reverse_source, reverse_target, reverse_csls, reverse_cosine).")
      .def(
          "collect_evidence",
          [](Aligner& aligner, std::vector<std::string> source_terms, std::vector<std::string> target_terms,
             py::array_t<float, py::array::c_style | py::array::forcecast> X,
             std::vector<std::uint32_t> source_ids,
             py::array_t<float, py::array::c_style | py::array::forcecast> Z,
             std::vector<std::uint32_t> target_ids, py::dict scores) {
            follow_python_level();
            ComposedTerms x{from_numpy(X, "X"), std::move(source_ids), {}};
            ComposedTerms z{from_numpy(Z, "Z"), std::move(target_ids), {}};
            CslsSelection scored;
            scored.candidates = take_candidates(scores, "");
            scored.means.source = to_eigen(scores_column<std::vector<float>>(scores, "source_means"));
            scored.means.target = to_eigen(scores_column<std::vector<float>>(scores, "target_means"));
            scored.has_reverse = scores.contains("reverse_source");
            if (scored.has_reverse) scored.reverse = take_candidates(scores, "reverse_");
            return without_gil([&] {
              return aligner.collect_evidence(source_terms, target_terms, std::move(x), std::move(z),
                                              std::move(scored));
            });
          },
          py::arg("source_terms"), py::arg("target_terms"), py::arg("X"), py::arg("source_ids"), py::arg("Z"),
          py::arg("target_ids"), py::arg("scores"),
          "The candidates of score()'s dict over compose()'s X and Z of these lists, with the evidence the "
          "ranking "
          "reads (the targets' own and the orthographic candidates added; with a re-ranker, its features).")
      .def(
          "rank",
          [](const Aligner& aligner, const CandidateSet& candidates) {
            const std::vector<RankedIndex> ranked = without_gil([&] { return aligner.rank(candidates); });
            py::list list(ranked.size());
            for (std::size_t i = 0; i < ranked.size(); ++i) {
              list[i] = py::make_tuple(candidates.source_terms.terms[ranked[i].source],
                                       candidates.target_terms.terms[ranked[i].target],
                                       static_cast<double>(ranked[i].score));
            }
            return list;
          },
          py::arg("candidates"),
          "The final list of collect_evidence()'s candidates: (source, target, score) tuples, each source's best "
          "top_m, cut at the cap: align()'s list.")
      .def(
          "align",
          [](Aligner& aligner, py::kwargs options) {
            apply_aligner_keywords(aligner.config(), options, "Aligner.align");
            follow_python_level();
            const std::vector<RankedPair> pairs = without_gil([&] { return aligner.align(); });
            return to_tuples(pairs);
          },
          "termalign.align with this Aligner's configuration (options given here change it) and kept vectors.")
      .def_property_readonly("files_read", &Aligner::files_read, "Vector files read so far.");
}
