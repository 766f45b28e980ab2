// The test runner: the process is set up as the CLI sets it up (OpenBLAS single-threaded, TERMALIGN_TILE_KERNEL
// forcing the similarity kernel, which scripts/test.sh uses to run the scoring tests with each kernel).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>

#include "scoring/scoring.h"

int main(int argc, char** argv) {
  termalign::use_single_threaded_blas();
  if (const char* kernel = std::getenv("TERMALIGN_TILE_KERNEL"))
    termalign::set_tile_kernel(termalign::parse_tile_kernel(kernel));
  return Catch::Session().run(argc, argv);
}
