#!/usr/bin/env bash
# Installs the Debian packages termalign needs (only those missing; silent when all are there) and builds it.
# Usage: scripts/bootstrap.sh [build-dir] [extra cmake arguments...]
#        scripts/bootstrap.sh --packages     only the packages (the other scripts' builds call it first)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
packages_only=0
if [[ ${1:-} == --packages ]]; then packages_only=1; shift; fi
build=${1:-$root/build}
shift || true

# ocl-icd-opencl-dev: only Recommended by libdnnl-dev, but oneDNN's CMake config requires OpenCL, so without it
# (apt-get --no-install-recommends) find_package(dnnl) fails on a fresh machine. clang, libclang-rt-14-dev and
# libomp-dev (clang's OpenMP runtime; g++ has its own): the sanitizer and fuzzer build. chromium-headless-shell: the
# browser test of `termalign report`'s page (skipped without it). python3-setuptools, python3-wheel, python3-pip and
# python3-venv: `pip install --no-build-isolation .` (pyproject.toml) offline. dict-freedict-*: the FreeDict
# dictionaries of the dictionary tests and measurements (test dependencies: `align` never needs them).
packages=(build-essential cmake pkg-config libeigen3-dev libfasttext-dev libspdlog-dev catch2 libcli11-dev
          libtomlplusplus-dev libicu-dev libopenblas-dev libdnnl-dev ocl-icd-opencl-dev libbenchmark-dev
          python3-numpy python3-matplotlib clang libclang-rt-14-dev libomp-dev zlib1g-dev libxgboost-dev python3-dev
          python3-pybind11 python3-pytest chromium-headless-shell python3-setuptools python3-wheel python3-pip
          python3-venv dict-freedict-eng-deu dict-freedict-deu-eng dict-freedict-eng-fra dict-freedict-fra-eng
          dict-freedict-eng-rus)
"$root/scripts/install-packages.sh" "${packages[@]}"
((packages_only)) && exit 0

# The Python module (build/python/) is part of the default build, so that the test suite covers it.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTERMALIGN_PYTHON=ON "$@" >/dev/null
cmake --build "$build" -j "$(nproc)" -- --no-print-directory >&2
