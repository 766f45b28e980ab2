// Files a test writes for itself in the build tree.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <string>

#include "io/io.h"

namespace termalign_tests {

// Writes `text` as `name` in the build tree's folder `folder`, in a sub-folder of the running test case's own (ctest
// runs the cases in parallel, and they write files of one name), and returns its path.
inline std::string scratch_file(const std::string& folder, const std::string& name, const std::string& text) {
  const std::string test = Catch::getResultCapture().getCurrentTestName();
  const std::string directory =
      std::string(TERMALIGN_BINARY_DIR) + "/" + folder + "/" + std::to_string(std::hash<std::string>{}(test));
  std::filesystem::create_directories(directory);
  const std::string path = directory + "/" + name;
  termalign::write_file_atomically(path, text);
  return path;
}

}  // namespace termalign_tests
