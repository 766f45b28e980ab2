// The Python module's conversions (module_support.h): keywords to options, paths, NumPy arrays, candidates and
// pairs to and from the library's types.
#include "module_support.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "termalign/aligner.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/lexicon.h"
#include "mapping/mapping.h"

namespace termalign::python {

namespace {

// A keyword's value as the option table takes it: bool before int (a Python bool is an int), os.PathLike as text.
OptionValue option_value(const std::string& name, const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) return value.cast<std::int64_t>();
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::hasattr(value, "__fspath__")) return fspath(value);
  // A list of paths (a list option: dictionary=[...]).
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    std::vector<std::string> items;
    for (const py::handle item : value) {
      if (!py::isinstance<py::str>(item) && !py::hasattr(item, "__fspath__"))
        throw_usage_error("Option " + name + " takes a list of strings or paths.");
      items.push_back(py::isinstance<py::str>(item) ? item.cast<std::string>() : fspath(item));
    }
    return items;
  }
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

}  // namespace

// A path given as str or os.PathLike, as text.
std::string fspath(const py::handle& value) {
  return py::module_::import("os").attr("fspath")(value).cast<std::string>();
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
AlignConfig make_config(const py::object& config, const py::kwargs& options, std::string* dataset_gold) {
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

}  // namespace termalign::python
