#include "termalign/version.h"

namespace termalign {

const char* version() { return TERMALIGN_VERSION; }

// bundled_models_id() is with the models (rerank/bundled_models.cpp).

}  // namespace termalign
