# Sanitizer builds and libFuzzer targets for the readers (included at the end of CMakeLists.txt).

# TERMALIGN_SANITIZE: AddressSanitizer and UndefinedBehaviorSanitizer on the library and, through its PUBLIC
# usage requirements, on everything linked to it (CLI, tests, benchmarks). The fuzzers need them too.
if(TERMALIGN_SANITIZE OR TERMALIGN_BUILD_FUZZERS)
  target_compile_options(termalign_lib PUBLIC -fsanitize=address,undefined -fno-sanitize-recover=undefined
                                              -fno-omit-frame-pointer)
  target_link_options(termalign_lib PUBLIC -fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(termalign_lib PUBLIC
                           -fsanitize-ignorelist=${PROJECT_SOURCE_DIR}/cmake/sanitizer-ignorelist.txt)
  endif()
endif()

# TERMALIGN_BUILD_FUZZERS: one libFuzzer executable per tests/fuzz/fuzz_*.cpp (clang only). The library's own code is
# also instrumented for coverage (fuzzer-no-link, PRIVATE: the readers are in it; the tests, the CLI and the headers
# they compile are not, which would only slow them), and the sanitizer runtime answers its callbacks outside a
# fuzzer, so one build serves scripts/sanitize.sh and scripts/fuzz.sh (scripts/build-asan.sh configures it).
if(TERMALIGN_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TERMALIGN_BUILD_FUZZERS needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ (scripts/build-asan.sh does)")
  endif()
  target_compile_options(termalign_lib PRIVATE -fsanitize=fuzzer-no-link)
  file(GLOB TERMALIGN_FUZZ_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_*.cpp)
  foreach(source ${TERMALIGN_FUZZ_SOURCES})
    get_filename_component(name ${source} NAME_WE)
    add_executable(${name} ${source})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(${name} PRIVATE termalign::termalign)
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
    list(APPEND TERMALIGN_FUZZ_TARGETS ${name})
  endforeach()
  add_custom_target(fuzzers DEPENDS ${TERMALIGN_FUZZ_TARGETS})
endif()
