// Files a test writes for itself in the build tree.
#pragma once

#include <filesystem>
#include <string>

#include "termalign/io.h"

namespace termalign_tests {

// Writes `text` as `name` in the build tree's folder `folder` (made when missing) and returns its path.
inline std::string scratch_file(const std::string& folder, const std::string& name, const std::string& text) {
  const std::string directory = std::string(TERMALIGN_BINARY_DIR) + "/" + folder;
  std::filesystem::create_directories(directory);
  const std::string path = directory + "/" + name;
  termalign::write_file_atomically(path, text);
  return path;
}

}  // namespace termalign_tests
