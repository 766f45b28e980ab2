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

# TERMALIGN_BUILD_FUZZERS: one libFuzzer executable per tests/fuzz/fuzz_*.cpp (clang only). The code the fuzzers read
# with is also instrumented for coverage (fuzzer-no-link): the readers of src/io/ and the configuration's. Elsewhere
# (the scoring, the mapping, the tests, the CLI) it only slowed the sanitizer suite, by 40 % (423 s against 305 s on
# 2 cores). The sanitizer runtime answers its callbacks outside a fuzzer, so one build serves scripts/sanitize.sh and
# scripts/fuzz.sh (scripts/build-asan.sh configures it). Files with options of their own are compiled outside the
# unity batches.
if(TERMALIGN_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TERMALIGN_BUILD_FUZZERS needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ (scripts/build-asan.sh does)")
  endif()
  file(GLOB TERMALIGN_FUZZED_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/io/*.cpp)
  list(APPEND TERMALIGN_FUZZED_SOURCES ${PROJECT_SOURCE_DIR}/src/pipeline/config_file.cpp
                                       ${PROJECT_SOURCE_DIR}/src/pipeline/options.cpp)
  set_property(SOURCE ${TERMALIGN_FUZZED_SOURCES} APPEND PROPERTY COMPILE_OPTIONS -fsanitize=fuzzer-no-link)
  # clang refuses a precompiled header built without the option: these files parse their headers themselves.
  set_property(SOURCE ${TERMALIGN_FUZZED_SOURCES} PROPERTY SKIP_PRECOMPILE_HEADERS ON)
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
