// What the Python module's files share (termalign_module.cpp, module_support.cpp and the bind_*.cpp files that
// define its functions and classes): running the library without the GIL, and Python's values to and from the
// library's.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "termalign/aligner.h"
#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "termalign/interrupt.h"
#include "termalign/lexicon.h"
#include "mapping/mapping.h"
#include "pipeline/ranking.h"
#include "scoring/scoring.h"

namespace py = pybind11;

namespace termalign::python {

// The functions and classes of the module by theme, each file's own (PYBIND11_MODULE calls them in turn).
void bind_runs(py::module_& m);      // bind_runs.cpp: align, explain, evaluate, report
void bind_training(py::module_& m);  // bind_training.cpp: train_reranker, ablate, train_vectors
void bind_aligner(py::module_& m);   // bind_aligner.cpp: Candidates, Aligner

// --- termalign_module.cpp ---

// Where a call of without_gil on this thread keeps the exception a Python signal handler raised (PythonSink).
extern thread_local std::optional<py::error_already_set>* raised_by_handler;

void follow_python_level();

// --- module_support.cpp ---

std::string fspath(const py::handle& value);
void refuse_output_files(const py::kwargs& options, const std::string& function);
void apply_aligner_keywords(AlignConfig& config, const py::kwargs& options, const std::string& function);
AlignConfig make_config(const py::object& config, const py::kwargs& options, std::string* dataset_gold = nullptr);
py::list to_tuples(const std::vector<RankedPair>& pairs);
py::array_t<float> to_numpy(const Matrix& matrix);
Matrix from_numpy(const py::array_t<float, py::array::c_style | py::array::forcecast>& array, const char* what);
void put_candidates(py::dict& result, const std::vector<Candidate>& candidates, const std::string& prefix);
std::vector<Candidate> take_candidates(const py::dict& scores, const std::string& prefix);
Eigen::VectorXf to_eigen(const std::vector<float>& values);
Embeddings make_embeddings(std::vector<std::string> words,
                           const py::array_t<float, py::array::c_style | py::array::forcecast>& vectors,
                           const char* what);
Side parse_side(const std::string& side);
PairList pair_list(const py::object& pairs, PairFileKind kind);
py::dict mapping_dict(const Mapping& mapping);

// --- templates ---

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

template <class Vector>
py::array to_numpy_vector(const Vector& vector) {
  using Value = typename Vector::value_type;
  py::array_t<Value> array(static_cast<py::ssize_t>(vector.size()));
  std::copy(vector.begin(), vector.end(), array.mutable_data());
  return std::move(array);
}

}  // namespace termalign::python
