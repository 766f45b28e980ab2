#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TERMALIGN_BUILD_DIR:-$root/build}
"$root/scripts/bootstrap.sh" "$build"
cd "$build"
# ctest runs a test per core, each with a thread per core: OpenMP's threads that wait sleep rather than spin, so
# that they leave the cores to the other tests (the sanitizer suite took 7 % less CPU time).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
ctest --output-on-failure -j "$(nproc)"
# The similarity tiles have two kernels (src/scoring/scoring.h, similarity_product): OpenBLAS's where its
# kernel on this machine rounds alike in every position of a product, else Eigen's. The suite above ran with the
# one this environment selects (`termalign --version` names it); the scoring, bf16 and alignment tests run again
# with the other kernel forced (and with both where OPENBLAS_CORETYPE is set, since the forced runs unset it).
# OpenBLAS's AVX-512 kernels need OPENBLAS_CORETYPE unset; its run is skipped where the build or the machine has no
# kernel that rounds alike (asked for, such a kernel is a usage error).
version=$(./termalign --version)
echo "$version"
suite_kernel=none
if [[ -z ${OPENBLAS_CORETYPE:-} ]]; then
  case $version in
    *"similarity tiles: OpenBLAS"*) suite_kernel=openblas ;;
    *"similarity tiles: Eigen"*) suite_kernel=eigen ;;
  esac
fi
for kernel in eigen openblas; do
  if [[ $kernel == "$suite_kernel" ]]; then
    echo "== [scoring], [bf16] and [align] tests with the $kernel tile kernel: the suite above ran with it"
    continue
  fi
  if [[ $kernel == openblas ]] &&
     ! refused=$(env -u OPENBLAS_CORETYPE TERMALIGN_TILE_KERNEL=openblas ./termalign --version 2>&1); then
    echo "OpenBLAS tiles skipped: $refused"
    continue
  fi
  echo "== [scoring], [bf16] and [align] tests with the $kernel tile kernel"
  env -u OPENBLAS_CORETYPE TERMALIGN_TILE_KERNEL=$kernel ./termalign_tests "[scoring],[bf16],[align]"
done
