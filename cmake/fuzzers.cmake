# Sanitizer builds and libFuzzer targets for the readers (included at the end of CMakeLists.txt).

# TERMALIGN_SANITIZE: AddressSanitizer and UndefinedBehaviorSanitizer on the library and, through its PUBLIC
# usage requirements, on everything linked to it (CLI, tests, benchmarks). scripts/sanitize.sh uses it.
if(TERMALIGN_SANITIZE)
  set(TERMALIGN_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_compile_options(termalign_lib PUBLIC ${TERMALIGN_SANITIZER_FLAGS})
  target_link_options(termalign_lib PUBLIC -fsanitize=address,undefined)
endif()

# TERMALIGN_BUILD_FUZZERS: one libFuzzer executable per tests/fuzz/fuzz_*.cpp (clang only). The library is
# instrumented for coverage (fuzzer-no-link) and sanitized; scripts/fuzz.sh builds and runs them.
if(TERMALIGN_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TERMALIGN_BUILD_FUZZERS needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ (scripts/fuzz.sh does)")
  endif()
  set(TERMALIGN_FUZZ_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_compile_options(termalign_lib PUBLIC ${TERMALIGN_FUZZ_FLAGS} -fsanitize=fuzzer-no-link)
  target_link_options(termalign_lib PUBLIC -fsanitize=address,undefined)
  file(GLOB TERMALIGN_FUZZ_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_*.cpp)
  foreach(source ${TERMALIGN_FUZZ_SOURCES})
    get_filename_component(name ${source} NAME_WE)
    add_executable(${name} ${source})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(${name} PRIVATE termalign::termalign)
    list(APPEND TERMALIGN_FUZZ_TARGETS ${name})
  endforeach()
  add_custom_target(fuzzers DEPENDS ${TERMALIGN_FUZZ_TARGETS})
endif()
