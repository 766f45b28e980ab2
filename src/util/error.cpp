#include "termalign/error.h"

namespace termalign {

void throw_input_error(const std::string& path, std::size_t line, const std::string& message) {
  std::string where = path;
  if (line > 0) where += ":" + std::to_string(line);
  throw Error(ErrorKind::input, where + ": " + message);
}

void throw_usage_error(const std::string& message) { throw Error(ErrorKind::usage, message); }

void throw_output_error(const std::string& path, const std::string& message) {
  throw Error(ErrorKind::output, path + ": " + message);
}

namespace detail {
void throw_internal_error(const char* expression, const char* file, int line, const std::string& message) {
  throw Error(ErrorKind::internal, std::string("internal error: ") + message + " (check '" + expression +
                                       "' failed at " + file + ":" + std::to_string(line) + ")");
}
}  // namespace detail

}  // namespace termalign
