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

#include "io/train_vectors.h"
#include "mapping/mapping.h"
#include "module_support.h"
#include "pipeline/ablation.h"
#include "pipeline/explain.h"
#include "pipeline/reranker_training.h"
#include "rerank/reranker.h"
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
using namespace termalign::python;

namespace termalign::python {

// Where a call of without_gil on this thread keeps the exception a Python signal handler raised while the library
// ran (null outside such calls).
thread_local std::optional<py::error_already_set>* raised_by_handler = nullptr;

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

}  // namespace

// The library logs what Python's "termalign" logger would let through (its effective level, as now set).
void follow_python_level() {
  const int level =
      py::module_::import("logging").attr("getLogger")("termalign").attr("getEffectiveLevel")().cast<int>();
  logger().set_level(spdlog_level(level));
}

}  // namespace termalign::python

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

  bind_runs(m);
  bind_training(m);
  bind_aligner(m);
}
