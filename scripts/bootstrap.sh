#!/usr/bin/env bash
# Installs the Debian packages termalign needs (only those missing; silent when all are there) and builds it.
# Usage: scripts/bootstrap.sh [build-dir] [extra cmake arguments...]
#                                        everything: the packages of the tests, the sanitizers and the Python
#                                        module too, and a build of the CLI, the library, the module and the tests
#        scripts/bootstrap.sh --cli [build-dir] [extra cmake arguments...]
#                                        only what `termalign` needs: its packages and the CLI (the main job,
#                                        scripts/run_sample.sh); a folder already configured keeps its options
#        scripts/bootstrap.sh --packages     only the packages (the other scripts' builds call it first)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=all
case ${1:-} in
  --packages) mode=packages; shift ;;
  --cli) mode=cli; shift ;;
esac
build=${1:-$root/build}
shift || true

# What the CLI needs to build and run. ocl-icd-opencl-dev: only Recommended by libdnnl-dev, but oneDNN's CMake
# config requires OpenCL, so without it (apt-get --no-install-recommends) find_package(dnnl) fails on a fresh
# machine. libisal-dev: ISA-L's igzip, which inflates `.vec.gz` and `.bin.gz` (`align` on real-size gzipped vectors
# ran 1.1-1.55x zlib's speed in bench/RESULTS.md; the build falls back to zlib without it). libhunspell-dev,
# libstemmer-dev and the hunspell-* dictionaries: the word forms of English, French, German and Russian terms
# (text/word_forms.h; another language falls back to its Snowball stemmer, or runs without forms).
cli_packages=(build-essential cmake ninja-build pkg-config libeigen3-dev libfasttext-dev libspdlog-dev libcli11-dev
              libtomlplusplus-dev libicu-dev libopenblas-dev libdnnl-dev ocl-icd-opencl-dev zlib1g-dev
              libxgboost-dev libisal-dev libhunspell-dev libstemmer-dev hunspell-en-us hunspell-fr hunspell-de-de
              hunspell-ru)
# What the tests, the sanitizer and fuzzer builds and the Python module add. clang, libclang-rt-14-dev and
# libomp-dev (clang's OpenMP runtime; g++ has its own): the sanitizer and fuzzer build. chromium-headless-shell:
# the browser test of `termalign report`'s page (skipped without it). python3-setuptools, python3-wheel,
# python3-pip and python3-venv: `pip install --no-build-isolation .` (pyproject.toml) offline. dict-freedict-*: the
# FreeDict dictionaries of the dictionary tests and measurements (`align` never needs them). libopenmpi-dev and
# openmpi-bin: the test build has MPI, for the MPI checks (scripts/test_mpi.sh build).
test_packages=(catch2 libbenchmark-dev python3-numpy python3-matplotlib clang libclang-rt-14-dev libomp-dev
               python3-dev python3-pybind11 python3-pytest chromium-headless-shell python3-setuptools python3-wheel
               python3-pip python3-venv dict-freedict-eng-deu dict-freedict-deu-eng dict-freedict-eng-fra
               dict-freedict-fra-eng dict-freedict-eng-rus libopenmpi-dev openmpi-bin)
if [[ $mode == cli ]]; then
  "$root/scripts/install-packages.sh" "${cli_packages[@]}"
  source "$root/scripts/build_env.sh"
  # A fresh folder is configured without the tests (Catch2 is a test package) and the module; one that the test
  # command configured keeps them, and only the CLI is built either way.
  configure=(-DCMAKE_BUILD_TYPE=Release)
  [[ -f $build/CMakeCache.txt ]] || configure+=(-DTERMALIGN_BUILD_TESTS=OFF -DTERMALIGN_PYTHON=OFF)
  cmake -S "$root" -B "$build" "${configure[@]}" "$@" >/dev/null
  cmake --build "$build" -j "$(nproc)" --target termalign >&2
  exit 0
fi
"$root/scripts/install-packages.sh" "${cli_packages[@]}" "${test_packages[@]}"
[[ $mode == packages ]] && exit 0
source "$root/scripts/build_env.sh"

# The Python module (build/python/) is part of the default build, so that the test suite covers it; so is MPI, so
# that scripts/test_mpi.sh checks this build at its own speed (CI: scripts/test_mpi.sh build).
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTERMALIGN_BUILD_TESTS=ON -DTERMALIGN_PYTHON=ON \
  -DTERMALIGN_WITH_MPI=ON "$@" \
  >/dev/null
cmake --build "$build" -j "$(nproc)" >&2
