// A test that cannot run on this machine (no bf16 instructions, no matplotlib, no ../shared/data) is reported as
// skipped, never as passed: run by ctest (TERMALIGN_SKIP_CODE set, SKIP_RETURN_CODE in CMakeLists.txt) it prints
// the reason and exits with that code; run by hand it warns and the test returns.
#pragma once

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace termalign_tests {

// Ends the test as skipped, giving `reason`. Call it before any assertion ran, then return: a test that checked
// something and then skips would hide a failure.
inline void skip_test(const std::string& reason) {
  if (const char* code = std::getenv("TERMALIGN_SKIP_CODE")) {
    std::fprintf(stderr, "SKIPPED: %s\n", reason.c_str());
    std::fflush(nullptr);
    std::_Exit(std::atoi(code));
  }
  WARN("skipped: " << reason);
}

// Whether this build runs under AddressSanitizer, whose shadow memory takes terabytes of address space (so no
// test can run it under an address-space limit such as `ulimit -v`).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#define TERMALIGN_SKIP_ASAN_KNOWN 1
#endif
#endif
#if !defined(TERMALIGN_SKIP_ASAN_KNOWN)
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#endif

}  // namespace termalign_tests
