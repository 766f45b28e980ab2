#!/usr/bin/env bash
# `pip install --no-build-isolation ROOT` into a fresh virtual environment (--system-site-packages, offline), then,
# from a folder outside the repository, the README's Python example: it must print the three best pairs of the CLI's
# submission on the same configuration, and the environment's `termalign --version` must be the CLI's.
# Usage: check_pip.sh ROOT WORK CLI [PYTHON]    (WORK: a scratch folder, removed on success)
# Without python3-venv, setuptools or wheel it exits with 77 (ctest: skipped). pip builds in TERMALIGN_PIP_BUILD_DIR
# (ctest sets the tests' own build folder, already built) or in ROOT/build/pip.
set -euo pipefail
root=$1 work=$2 cli=$3 python=${4:-/usr/bin/python3}
skip() {
  echo "SKIPPED: $*"
  exit 77
}
"$python" -c "import setuptools, wheel" 2>/dev/null || skip "$python has no setuptools or wheel (python3-setuptools, python3-wheel)"
rm -rf "$work"
mkdir -p "$work"
venv_log=$("$python" -m venv --system-site-packages "$work/venv" 2>&1) || {
  [[ $venv_log == *ensurepip* ]] && skip "$python cannot make a virtual environment (python3-venv): $venv_log"
  echo "$venv_log" >&2
  exit 1
}
unset PYTHONPATH  # the module must come from the environment, not from a build folder
PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 "$work/venv/bin/pip" install --no-build-isolation "$root" >"$work/pip.log" 2>&1 ||
  { cat "$work/pip.log" >&2; exit 1; }

config=$root/configs/sample.toml
TERMALIGN_LOG_LEVEL=error "$cli" align --config "$config" --out "$work/submission.tsv" --scores "$work/scores.tsv"
outside=$(mktemp -d)
trap 'rm -rf "$outside"' EXIT
cd "$outside"
"$work/venv/bin/python" -c "import termalign; print(termalign.align(config='$config')[:3])" \
  >"$work/example.txt"
"$work/venv/bin/python" - "$work" <<'PYTHON'
import ast, pathlib, sys
import termalign
work = pathlib.Path(sys.argv[1])
assert pathlib.Path(termalign.__file__).is_relative_to(work / "venv"), f"termalign imported from {termalign.__file__}"
printed = ast.literal_eval(work.joinpath("example.txt").read_text(encoding="utf-8"))
cli_best = [tuple(line.split("\t")[:2]) for line in work.joinpath("submission.tsv").read_text(encoding="utf-8").splitlines()[:3]]
assert len(printed) == 3 and [(s, t) for s, t, _ in printed] == cli_best, f"printed {printed}, the CLI's best {cli_best}"
print("the README's example prints the CLI's three best pairs:", printed)
PYTHON
installed=$("$work/venv/bin/termalign" --version)
[[ $installed == "$("$cli" --version)" ]] || { echo "the installed CLI says: $installed" >&2; exit 1; }
echo "$work/venv/bin/termalign --version: $installed"
rm -rf "$work"
