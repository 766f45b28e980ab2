// The one exception type of termalign, and the checks that throw it.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace termalign {

// What went wrong decides the process exit code of the CLI (documented in the README).
enum class ErrorKind {
  internal = 1,     // a bug: an internal check failed
  usage = 2,        // bad command line or configuration value
  input = 3,        // a file could not be read or is malformed
  output = 4,       // an output could not be written
  resources = 5,    // the run needs more memory than allowed
  interrupted = 130 // SIGINT / SIGTERM
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }
  int exit_code() const noexcept { return static_cast<int>(kind_); }

 private:
  ErrorKind kind_;
};

// "path:line: message" (or "path: message" when line is 0): an input error a user can act on.
[[noreturn]] void throw_input_error(const std::string& path, std::size_t line, const std::string& message);
// "message" as a usage error (bad option or configuration value). An option of the option table (config.h) is
// named in a message by its keyword in backquotes, `src_vectors` (the Python module's keyword, the TOML key):
// the CLI shows it as its flag, --src-vectors (with_flags in src/cli/main.cpp).
[[noreturn]] void throw_usage_error(const std::string& message);
[[noreturn]] void throw_output_error(const std::string& path, const std::string& message);

namespace detail {
[[noreturn]] void throw_internal_error(const char* expression, const char* file, int line, const std::string& message);
}  // namespace detail

}  // namespace termalign

// Internal invariant: records the expression, file and line.
#define TERMALIGN_CHECK(condition, message)                                                      \
  do {                                                                                           \
    if (!(condition)) ::termalign::detail::throw_internal_error(#condition, __FILE__, __LINE__, \
                                                                (message));                      \
  } while (0)
