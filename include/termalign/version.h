// What build of termalign this is: its version and the identity of the re-ranker models built into it.
#pragma once

#include <string>

namespace termalign {

// The release, "MAJOR.MINOR.PATCH" (CMake's project version).
const char* version();

// The identity of the bundled re-ranker models (models/reranker-enfr*.txt as built into this library): "fnv1a64:"
// and 16 hex digits of fingerprint_bytes over both files, computed once. A resolved configuration records it, so
// that a run of `reranker = 'default'` by a build with other models is told that its ranking will differ.
std::string bundled_models_id();

}  // namespace termalign
