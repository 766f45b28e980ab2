#!/usr/bin/env bash
# The throughput benchmarks of issue 4 in one run; writes the table to bench/RESULTS.md (and prints it).
#
#   bench/run_benchmarks.sh [--build DIR] [--work DIR] [--out FILE] [--readme FILE|none]
#                           [--large subset|full|skip] [--real-size run|skip] [--tile-rows R] [--tile-cols C]
#                           [--summarise]
#
# Measures, on synthetic data from bench/generate_synthetic.py (seeded, d = 300):
#   a. bench_scoring: GFLOP/s of the two CSLS passes at n = 2k, 10k, 40k next to a plain Eigen GEMM and the
#      library's tiled GEMM (its tiles and tile kernel, no top-k work) of the same shapes (2 threads);
#   b. `termalign align` on 20k x 20k terms (wall time, peak RSS from /usr/bin/time -v, AP) next to the NumPy
#      reference (bench/reference/csls_reference.py) and, for the neighbourhood pass, faiss exact top-10; align
#      runs the method the reference implements (the baseline: unit-center-unit, Procrustes, CSLS k = 10, no
#      whitening, refinement or orthography), not the richer default configuration;
#   c. 1 versus 2 threads (scoring kernel at n = 10k, align at 20k x 20k);
#   d. the large run: 130k x 290k terms (--large full, about 45 TFLOP) or, by default, the proportional subset
#      130k x 29k (--large subset; a tenth of the flops, same source side);
#   e. the default configuration (what every user runs: multi-step mapping, checked refinement, orthography, the
#      bundled re-ranker over the word-level evidence)
#      beside the plain method, at 20k x 20k and in the large run (alternating with the plain runs): time, peak
#      memory and AP against the synthetic gold;
#   f. the precisions side by side: bf16 against fp32 tile products (same shapes), both CSLS passes and the one
#      pass at n = 2k, 10k, 40k, and `align` 20k x 20k and in the large run (plain method and default), each bf16
#      output compared byte for byte with the fp32 one. The runs of b-e use the default precision (`auto`: bf16
#      where the CPU has AVX512_BF16 or AMX-BF16), f's fp32 runs --precision fp32;
#   g. the inputs participants really have (--real-size run): the default `align` of BUCC test-size lists
#      (1,270 x 9,712 terms) with vectors shaped as the organisers' cc.en.300.bin (2M words + 2M n-gram buckets,
#      d = 300, 7.2 GB a language), with a 2M-word .vec (4.8 GB), and with the .bin and 1.1M-sentence corpora:
#      wall time and peak memory, beside libfasttext's own loadModel + getWordVector of the same words
#      (bench_fasttext_reference); and the same .vec and .bin gzipped (`gzip -1`, as downloaded), read by the
#      default build (ISA-L's inflater) and by a build with zlib's (-DTERMALIGN_WITH_ISAL=OFF), each output
#      compared byte for byte with the uncompressed run's; and the .bin without a seed lexicon, on a variant whose
#      French spells 5 % of its words as their English translation (the start of an induced seed). Its data (about
#      26 GB, 13 GB gzipped and 10 GB for the variant) is made in WORK on first use and kept there.
# The synthetic .vec files have their rows in unrelated orders (generate_synthetic.py --row-order shuffled): the
# first rows of the two files are not translations of each other, the case where an unchecked self-learning
# refinement drifts.
# --summarise only rewrites the table from the raw results of the last run (kept in WORK/results).
# Writes the full tables to --out (bench/RESULTS.md) and the summary table into the README, between its
# "run_benchmarks.sh: begin/end" markers (--readme; by default README.md, or none when --out is given).
# Tiles: the library's defaults unless --tile-rows / --tile-cols are given (then used by bench_scoring and align).
# Installs what it needs when missing (time, NumPy on OpenBLAS, python3-faiss, libbenchmark-dev). After the build
# it waits (at most 3 minutes) for the machine to go idle. Takes about 8 minutes on an idle 2-core machine (plus
# about 12 with --large full); the load average is recorded at the start and the end.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build-bench
WORK=${TMPDIR:-/tmp}/termalign-bench
OUT=$ROOT/bench/RESULTS.md
README=default
LARGE=subset
REAL_SIZE=run
TILE_ROWS=""
TILE_COLS=""
SUMMARISE_ONLY=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --readme) README=$2; shift 2 ;;
    --large) LARGE=$2; shift 2 ;;
    --real-size) REAL_SIZE=$2; shift 2 ;;
    --tile-rows) TILE_ROWS=$2; shift 2 ;;
    --tile-cols) TILE_COLS=$2; shift 2 ;;
    --summarise) SUMMARISE_ONLY=1; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $LARGE in subset|full|skip) ;; *) echo "--large must be subset, full or skip (got $LARGE)" >&2; exit 2 ;; esac
case $REAL_SIZE in run|skip) ;; *) echo "--real-size must be run or skip (got $REAL_SIZE)" >&2; exit 2 ;; esac
if [[ $README == default ]]; then
  README=none
  [[ $OUT == "$ROOT/bench/RESULTS.md" ]] && README=$ROOT/README.md
fi

PY=/usr/bin/python3
# What the benchmarks need besides the build's packages (installed when missing; silent otherwise). NumPy on
# Debian multiplies with whatever libblas.so.3 points at: the netlib reference BLAS (about 10x slower) unless an
# OpenBLAS is installed, so libopenblas0-pthread is part of the list and checked below.
"$ROOT/scripts/bootstrap.sh" --packages  # the build's packages, on a fresh machine
"$ROOT/scripts/install-packages.sh" time python3-numpy python3-faiss libopenblas0-pthread libbenchmark-dev
"$PY" -c "import numpy, faiss" || { echo "NumPy and faiss do not import in $PY" >&2; exit 1; }
"$PY" -c "import numpy, sys; sys.exit('openblas' not in open('/proc/self/maps').read())" ||
  { echo "NumPy does not use OpenBLAS (see update-alternatives --display libblas.so.3-x86_64-linux-gnu)" >&2; exit 1; }
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (workarounds for old OpenBLAS bugs that some machines set) force a slower
# kernel on NumPy and on termalign's tiles alike (OPENBLAS_CORETYPE=Haswell: half the AVX-512 kernel's speed, and
# a kernel that rounds by position, so termalign falls back to Eigen): unset for the whole run.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE

step() { echo "[$(date +%H:%M:%S)] $*" >&2; }
RESULTS=$WORK/results
# The method of bench/reference/csls_reference.py, whatever the library's defaults are (the re-ranker off too).
BASELINE=(--normalization unit-center-unit --whiten false --src-reweight 0 --tgt-reweight 0 --dewhiten none
  --refine-iterations 0 --k 10 --top-m 10 --orthographic-weight 0 --orthographic-candidates 0 --reranker none)

if [[ $SUMMARISE_ONLY == 0 ]]; then
mkdir -p "$RESULTS"
rm -f "$RESULTS"/*

step "building bench_scoring and termalign in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTERMALIGN_BUILD_BENCH=ON >/dev/null
cmake --build "$BUILD" -j2 --target bench_scoring bench_fasttext_reference termalign >/dev/null
TERMALIGN=$BUILD/termalign

# The build above (or earlier jobs) keeps the load average up: wait, at most 3 minutes, until the 1-minute load
# average is below 0.5, so that the figures are those of an idle machine (the table records the load).
for _ in $(seq 36); do
  awk '{exit !($1 < 0.5)}' /proc/loadavg && break
  sleep 5
done

{
  echo "date=$(date +%F)"
  echo "commit=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  echo "cores=$(nproc)"
  echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "tiles=${TILE_ROWS:-library default} x ${TILE_COLS:-library default} (rows x columns)"
  echo "large=$LARGE"
  echo "real_size=$REAL_SIZE"
  echo "kernel=$("$TERMALIGN" --version | sed 's/.*similarity tiles: //; s/; precision auto.*//')"
  echo "precision=$("$TERMALIGN" --version | sed 's/.*precision auto: //; s/)$//')"
} >"$RESULTS/machine.txt"

tile_flags=()
[[ -n $TILE_ROWS ]] && tile_flags+=(--tile-rows "$TILE_ROWS")
[[ -n $TILE_COLS ]] && tile_flags+=(--tile-cols "$TILE_COLS")
export TERMALIGN_BENCH_TILE_ROWS=$TILE_ROWS TERMALIGN_BENCH_TILE_COLS=$TILE_COLS

# a, and the neighbourhood pass at 20k for b; c for the kernel. Three rounds, 2 threads then 1, and the summary
# keeps each benchmark's fastest: one round on this VM varied by up to 15 % (the GEMM itself scaled 1.73x in one
# round and 1.96x in another).
for round in 1 2 3; do
  step "a. scoring kernel, 2 threads: n = 2000, 10000, 40000 (and the neighbourhood pass at 20000), round $round"
  OMP_NUM_THREADS=2 "$BUILD/bench_scoring" --benchmark_format=json \
    --benchmark_out="$RESULTS/scoring_2.$round.json" \
    --benchmark_filter='^BM_[A-Za-z0-9]+/(n:)?(2000|10000|40000)/|^BM_NeighbourhoodMeans/n:20000/bf16:0' >/dev/null
  step "c. scoring kernel, 1 thread: n = 10000, round $round"
  OMP_NUM_THREADS=1 "$BUILD/bench_scoring" --benchmark_format=json \
    --benchmark_out="$RESULTS/scoring_1.$round.json" \
    --benchmark_filter='^BM_(PlainGemmTiles|NeighbourhoodMeans|SelectCandidates|CslsOnePass)/(n:)?10000/(bf16:0/)?real' \
    >/dev/null
done

# The end-to-end runs at 20k x 20k last seconds, and one run varies by 5-10 % on this machine: each runs several
# times and the table keeps the fastest (the summary reads every NAME.time.R file). termalign's 1- and 2-thread
# runs alternate, so that a slower spell of the machine does not fall on one of them only.
REPEATS=3
ALIGN_REPEATS=7

# align with /usr/bin/time -v: align DATA NAME THREADS [RUN [METHOD [PRECISION]]] (RUN numbers the timing file;
# METHOD is plain, the default, or default: the library's default configuration; PRECISION is --precision's value,
# the default's `auto` unless given)
run_align() {
  local data=$1 name=$2 threads=$3 run=${4:-1} method=${5:-plain} precision=${6:-}
  local method_flags=("${BASELINE[@]}")
  [[ $method == default ]] && method_flags=()
  [[ -n $precision ]] && method_flags+=(--precision "$precision")
  /usr/bin/time -v -o "$RESULTS/$name.time.$run" "$TERMALIGN" align --src-vectors "$data/en.vec" \
    --tgt-vectors "$data/fr.vec" --seed "$data/seed-en-fr.txt" --src-terms "$data/terms-en.txt" \
    --tgt-terms "$data/terms-fr.txt" --out "$data/$name.tsv" --threads "$threads" "${method_flags[@]}" \
    "${tile_flags[@]}" 2>"$RESULTS/$name.log"
  "$TERMALIGN" evaluate --gold "$data/terms-en-fr.txt" --pred "$data/$name.tsv" --src-terms "$data/terms-en.txt" \
    --tgt-terms "$data/terms-fr.txt" --json >"$RESULTS/$name.eval.json"
}

D20=$WORK/data-20k-shuffled
step "b. generating 20k x 20k terms (30000 words per language, d = 300, rows shuffled) in $D20"
"$PY" "$ROOT/bench/generate_synthetic.py" --out "$D20" --src-terms 20000 --tgt-terms 20000 --words 30000 \
  --dim 300 --seed 1 --row-order shuffled 2>"$RESULTS/generate-20k.log"
step "b, c, e. termalign align 20k x 20k: plain method on 2 threads and 1 thread, default configuration on 2" \
  "threads, alternating, $ALIGN_REPEATS runs each"
rm -f "$RESULTS"/align-20k-*.time.* "$RESULTS"/default-20k-*.time.*
for run in $(seq "$ALIGN_REPEATS"); do
  run_align "$D20" align-20k-2 2 "$run"
  run_align "$D20" default-20k-2 2 "$run" default
  run_align "$D20" align-20k-1 1 "$run"
done
step "f. termalign align 20k x 20k in fp32: plain method and default configuration, $REPEATS runs each"
for run in $(seq "$REPEATS"); do
  run_align "$D20" align-20k-2-fp32 2 "$run" plain fp32
  run_align "$D20" default-20k-2-fp32 2 "$run" default fp32
done
# Whether the default precision's output (bf16 where the CPU has it) is the fp32 one, byte for byte.
same_output() {
  if cmp -s "$1/$2.tsv" "$1/$3.tsv"; then echo "$2 $3 identical"; else echo "$2 $3 DIFFERENT"; fi >>"$RESULTS/identical.txt"
}
same_output "$D20" align-20k-2 align-20k-2-fp32
same_output "$D20" default-20k-2 default-20k-2-fp32
# The NumPy reference with align's default normalisation.
step "b. NumPy reference 20k x 20k"
for run in $(seq "$REPEATS"); do
  /usr/bin/time -v -o "$RESULTS/numpy-20k.time.$run" \
    "$PY" "$ROOT/bench/reference/csls_reference.py" --src-vectors "$D20/en.vec" --tgt-vectors "$D20/fr.vec" \
    --seed "$D20/seed-en-fr.txt" --src-terms "$D20/terms-en.txt" --tgt-terms "$D20/terms-fr.txt" \
    --out "$D20/numpy-20k.tsv" --normalize unit-center-unit 2>"$RESULTS/numpy-20k.log"
done
"$TERMALIGN" evaluate --gold "$D20/terms-en-fr.txt" --pred "$D20/numpy-20k.tsv" --src-terms "$D20/terms-en.txt" \
  --tgt-terms "$D20/terms-fr.txt" --json >"$RESULTS/numpy-20k.eval.json"
step "b. faiss exact top-10 both directions, 20000 x 20000, 2 threads"
"$PY" "$ROOT/bench/reference/faiss_neighbourhood.py" --n1 20000 --n2 20000 --dim 300 --k 10 --threads 2 \
  --repeat 2 >"$RESULTS/faiss-20k.txt" 2>/dev/null

if [[ $LARGE != skip ]]; then
  n2=290000
  [[ $LARGE == subset ]] && n2=29000
  DL=$WORK/data-130k-$n2-shuffled
  step "d. generating 130000 x $n2 terms (300000 words per language, rows shuffled) in $DL"
  "$PY" "$ROOT/bench/generate_synthetic.py" --out "$DL" --src-terms 130000 --tgt-terms $n2 --words 300000 \
    --dim 300 --seed 2 --gold-fraction 0.1 --row-order shuffled 2>"$RESULTS/generate-large.log"
  # Two runs of each, alternating: one run of a minute or two varies by 5-10 % on this VM, and the table keeps each
  # one's fastest, as at 20k.
  step "d, e. termalign align 130000 x $n2, 2 threads: the plain method and the default configuration," \
    "alternating, 2 runs each"
  for run in 1 2; do
    run_align "$DL" align-large 2 "$run"
    run_align "$DL" default-large 2 "$run" default
  done
  step "f. termalign align 130000 x $n2, 2 threads, in fp32: the plain method and the default configuration"
  run_align "$DL" align-large-fp32 2 1 plain fp32
  run_align "$DL" default-large-fp32 2 1 default fp32
  same_output "$DL" align-large align-large-fp32
  same_output "$DL" default-large default-large-fp32
fi
if [[ $REAL_SIZE == run ]]; then
  DR=$WORK/real-size
  if [[ ! -e $DR/corpus-fr.txt ]]; then
    step "g. generating the real-size case in $DR (first use: 1,270 x 9,712 terms, 2M-word .bin and .vec," \
      "1.1M-sentence corpora; about 26 GB, 10 minutes)"
    "$PY" "$ROOT/bench/generate_synthetic.py" --out "$DR" --src-terms 1270 --tgt-terms 9712 --words 2000000 \
      --dim 300 --seed 1 --bin --buckets 2000000 --corpus-sentences 1100000 2>"$RESULTS/generate-real-size.log"
  fi
  # A task folder has no seed lexicon; the run induces one from the words spelt alike, and the synthetic languages
  # share none: the seedless run reads the same case with 5 % of the French words spelt as their English
  # translation (names, numbers, code), .bin only.
  DRS=$WORK/real-size-shared
  if [[ ! -e $DRS/fr.bin ]]; then
    step "g. generating the real-size case with shared spellings in $DRS (first use: .bin only, about 10 GB)"
    "$PY" "$ROOT/bench/generate_synthetic.py" --out "$DRS" --src-terms 1270 --tgt-terms 9712 --words 2000000 \
      --dim 300 --seed 1 --bin --no-vec --buckets 2000000 --shared-words 0.05 2>"$RESULTS/generate-real-size-shared.log"
  fi
  # The files as participants download them: gzipped (`gzip -1`), made once from the files above.
  for file in en.vec fr.vec en.bin fr.bin; do
    if [[ ! -e $DR/$file.gz ]]; then
      step "g. gzip -1 $file (first use)"
      gzip -1 -c "$DR/$file" >"$DR/$file.gz.partial" && mv "$DR/$file.gz.partial" "$DR/$file.gz"
    fi
  done
  # The same CLI with zlib's inflater instead of ISA-L's, for the gzipped inputs side by side.
  step "g. building termalign with zlib's inflater in $BUILD-zlib"
  cmake -S "$ROOT" -B "$BUILD-zlib" -DCMAKE_BUILD_TYPE=Release -DTERMALIGN_WITH_ISAL=OFF \
    -DTERMALIGN_BUILD_TESTS=OFF >/dev/null
  cmake --build "$BUILD-zlib" -j2 --target termalign >/dev/null
  # real_align NAME EXTENSION RUN [corpora|zlib|seedless]: the default configuration on the real-size case (zlib:
  # the build with zlib's inflater; seedless: the case with shared spellings, no seed lexicon, as a task folder).
  real_align() {
    local name=$1 extension=$2 run=$3 corpora=() program=$TERMALIGN dir=$DR seed=(--seed "$DR/seed-en-fr.txt")
    [[ ${4:-} == corpora ]] && corpora=(--src-corpus "$DR/corpus-en.txt" --tgt-corpus "$DR/corpus-fr.txt")
    [[ ${4:-} == zlib ]] && program=$BUILD-zlib/termalign
    [[ ${4:-} == seedless ]] && dir=$DRS && seed=(--seed auto)
    /usr/bin/time -v -o "$RESULTS/$name.time.$run" "$program" align --src-vectors "$dir/en.$extension" \
      --tgt-vectors "$dir/fr.$extension" "${seed[@]}" --src-terms "$dir/terms-en.txt" \
      --tgt-terms "$dir/terms-fr.txt" "${corpora[@]}" --out "$dir/$name.tsv" --threads 2 2>"$RESULTS/$name.log"
    "$TERMALIGN" evaluate --gold "$dir/terms-en-fr.txt" --pred "$dir/$name.tsv" --src-terms "$dir/terms-en.txt" \
      --tgt-terms "$dir/terms-fr.txt" --json >"$RESULTS/$name.eval.json"
  }
  step "g. termalign align, default configuration, 1,270 x 9,712 terms: cc-shaped .bin, 2M-word .vec, .bin with" \
    "corpora; libfasttext's loadModel + getWordVector of one .bin; 2 runs each, alternating"
  for run in 1 2; do
    real_align real-bin bin "$run"
    real_align real-bin-seedless bin "$run" seedless
    real_align real-vec vec "$run"
    real_align real-corpora bin "$run" corpora
    real_align real-vec-gz vec.gz "$run"
    real_align real-vec-gz-zlib vec.gz "$run" zlib
    real_align real-bin-gz bin.gz "$run"
    real_align real-bin-gz-zlib bin.gz "$run" zlib
    /usr/bin/time -v -o "$RESULTS/real-fasttext.time.$run" "$BUILD/bench_fasttext_reference" "$DR/en.bin" 20000 \
      "$DR/terms-en.txt" >"$RESULTS/real-fasttext.txt.$run"
  done
  # The gzipped inputs' outputs against the uncompressed ones' (apart from f's comparisons).
  for pair in "real-vec real-vec-gz" "real-vec real-vec-gz-zlib" "real-bin real-bin-gz" "real-bin real-bin-gz-zlib"; do
    read -r plain gz <<<"$pair"
    if cmp -s "$DR/$plain.tsv" "$DR/$gz.tsv"; then echo "$plain $gz identical"; else echo "$plain $gz DIFFERENT"; fi
  done >"$RESULTS/identical-gz.txt"
fi

step "h. evaluate's comparison of two runs at BUCC test size (10,000 resamples): 3 runs, then the NumPy reference"
for run in 1 2 3; do
  "$ROOT/bench/significance_bench.sh" --build "$BUILD" --work "$WORK/significance" --reference-resamples 0 \
    >"$RESULTS/significance.txt.$run" 2>&1
done
"$ROOT/bench/significance_bench.sh" --build "$BUILD" --work "$WORK/significance" --reference-resamples 500 \
  >"$RESULTS/significance-reference.txt" 2>&1
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RESULTS/machine.txt"
fi

step "writing $OUT"
"$PY" - "$RESULTS" "$OUT" "$README" <<'PYTHON'
import glob, json, re, sys
results, out, readme = sys.argv[1], sys.argv[2], sys.argv[3]
machine = dict(line.strip().split("=", 1) for line in open(f"{results}/machine.txt"))

def bench(pattern):
    """{(benchmark, n): (real seconds per iteration, GFLOP/s)} of the fastest round, from the files PATTERN; the
    bf16 runs of a benchmark are named with "Bf16" after it. A benchmark that failed (a bf16 result not identical
    to the fp32 one) stops the summary."""
    table = {}
    for path in sorted(glob.glob(pattern)):
        for entry in json.load(open(path))["benchmarks"]:
            if entry.get("run_type") == "aggregate":
                continue
            if entry.get("error_occurred"):
                if entry.get("error_message") == "this CPU has no bf16 instructions":
                    continue  # bench_scoring's bf16 benchmarks where the CPU cannot run them
                sys.exit(f"{path}: {entry['name']}: {entry.get('error_message')}")
            parts = entry["name"].split("/")
            name, n = parts[0], int(parts[1].split(":")[-1])
            bf16 = any(part == "bf16:1" for part in parts)
            scale = {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0}[entry["time_unit"]]
            key, measured = (name[3:] + ("Bf16" if bf16 else ""), n), (entry["real_time"] * scale, entry["GFLOP/s"])
            if key not in table or measured[0] < table[key][0]:
                table[key] = measured
    return table

def timed(name):
    """(wall seconds, peak RSS in MiB, page faults) of the fastest run, from the /usr/bin/time -v files
    NAME.time.R."""
    runs = []
    for path in sorted(glob.glob(f"{results}/{name}.time.*")):
        text = open(path).read()
        clock = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
        seconds = 0.0
        for part in clock.split(":"):
            seconds = seconds * 60 + float(part)
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
        faults = int(re.search(r"Minor \(reclaiming a frame\) page faults: (\d+)", text).group(1))
        runs.append((seconds, rss / 1024, faults))
    return min(runs)

def runs(name):
    return len(glob.glob(f"{results}/{name}.time.*"))

def ap(name):
    return json.load(open(f"{results}/{name}.eval.json"))["ap"]

two, one = bench(f"{results}/scoring_2.*.json"), bench(f"{results}/scoring_1.*.json")
rounds = len(glob.glob(f"{results}/scoring_2.*.json"))
lines = ["# Throughput benchmarks", "",
         f"Written by `bench/run_benchmarks.sh` (one run). Machine: {machine['cpu']}, {machine['cores']} cores; "
         f"load average (1, 5, 15 min) {machine['load_start']} at the start, {machine['load_end']} at the end. "
         "Synthetic data of `bench/generate_synthetic.py`, "
         f"d = 300; tiles {machine['tiles']}; similarity tiles computed by {machine['kernel']}.", "",
         *(["**The load average was above 1: other jobs shared the cores, so the absolute figures are low and "
            "the thread scaling does not show what the code can do; rerun on an idle machine.**", ""]
           if float(machine["load_start"].split()[0]) > 1 else []),
         "## a. Scoring kernel (2 threads, |D1| = |D2| = n, 2 n^2 d flops a pass)", "",
         f"Fastest of {rounds} rounds (2 threads, then 1 thread for c, in each round).", "",
         "| n | plain Eigen GEMM, own threads (GFLOP/s) | plain GEMM, library's tiles and kernel (GFLOP/s) | "
         "neighbourhood pass (GFLOP/s) | selection pass (GFLOP/s) | both passes (GFLOP/s) | both / Eigen GEMM | "
         "both / tiled GEMM | one pass, effective (GFLOP/s) | one pass / Eigen GEMM |",
         "|---|---|---|---|---|---|---|---|---|---|"]
ratios, tile_ratios, fused_ratios, gflops = {}, {}, {}, {}
for n in (2000, 10000, 40000):
    eigen, tiles = two["EigenGemm", n][1], two["PlainGemmTiles", n][1]
    means, select = two["NeighbourhoodMeans", n], two["SelectCandidates", n]
    both = 2 * 2.0 * n * n * 300 / (means[0] + select[0]) * 1e-9
    ratios[n], tile_ratios[n] = both / eigen, both / tiles
    fused = two["CslsOnePass", n][1]
    fused_ratios[n] = fused / eigen
    gflops[n] = (both, eigen, tiles, fused)
    lines.append(f"| {n} | {eigen:.1f} | {tiles:.1f} | {means[1]:.1f} | {select[1]:.1f} | {both:.1f} | "
                 f"{ratios[n]:.0%} | {tile_ratios[n]:.0%} | {fused:.1f} | {fused_ratios[n]:.0%} |")
lines += ["", "The plain Eigen GEMM (X in blocks of 2048 rows against all of Z, Eigen's own threads) is the issue's "
          "yardstick; the tiled GEMM runs the library's tiles through the library's tile product without any "
          "top-k work, so it bounds what the passes can reach with that kernel. The one pass (`csls_select`, "
          "what `align` runs) gives the same candidates as the two passes; its effective GFLOP/s count the two "
          "passes' flops (4 n^2 d)."]

align2, align1, numpy = timed("align-20k-2"), timed("align-20k-1"), timed("numpy-20k")
faiss_best = float(open(f"{results}/faiss-20k.txt").read().split("best")[1])
ours_neighbourhood = two["NeighbourhoodMeans", 20000][0]
lines += ["", "## b. End to end, 20k x 20k terms (30000 words per language), 2 threads", "",
          f"Fastest of {runs('align-20k-2')} runs for termalign (1- and 2-thread runs alternating) and of "
          f"{runs('numpy-20k')} for NumPy.", "",
          "| run | wall (s) | peak RSS (MiB) | page faults | AP |", "|---|---|---|---|---|",
          f"| `termalign align` | {align2[0]:.2f} | {align2[1]:.0f} | {align2[2]} | {ap('align-20k-2'):.4f} |",
          f"| NumPy reference (`csls_reference.py --normalize unit-center-unit`) | {numpy[0]:.2f} | {numpy[1]:.0f} | "
          f"{numpy[2]} | {ap('numpy-20k'):.4f} |",
          f"| neighbourhood pass alone, termalign (`neighbourhood_means`, bench_scoring) | {ours_neighbourhood:.2f} "
          "| | | |",
          f"| neighbourhood pass alone, faiss `IndexFlatIP` top-10 both directions (best of 2) | {faiss_best:.2f} "
          "| | | |"]

kernel1 = one["NeighbourhoodMeans", 10000][0] + one["SelectCandidates", 10000][0]
kernel2 = two["NeighbourhoodMeans", 10000][0] + two["SelectCandidates", 10000][0]
fused1, fused2 = one["CslsOnePass", 10000][0], two["CslsOnePass", 10000][0]
gemm1, gemm2 = one["PlainGemmTiles", 10000][0], two["PlainGemmTiles", 10000][0]
lines += ["", "## c. Thread scaling", "", "| run | 1 thread (s) | 2 threads (s) | speed-up |", "|---|---|---|---|",
          f"| both CSLS passes, n = 10000 | {kernel1:.2f} | {kernel2:.2f} | {kernel1 / kernel2:.2f} |",
          f"| one-pass CSLS, n = 10000 | {fused1:.2f} | {fused2:.2f} | {fused1 / fused2:.2f} |",
          f"| GEMM, same tiles, n = 10000 | {gemm1:.2f} | {gemm2:.2f} | {gemm1 / gemm2:.2f} |",
          f"| `termalign align` 20k x 20k | {align1[0]:.2f} | {align2[0]:.2f} | {align1[0] / align2[0]:.2f} |"]

large = None
if machine["large"] != "skip":
    large = timed("align-large")
    n2 = 290000 if machine["large"] == "full" else 29000
    lines += ["", "## d. Large run, 2 threads", "", "| terms | wall (s) | peak RSS (MiB) | AP |", "|---|---|---|---|",
              f"| 130000 x {n2} | {large[0]:.1f} | {large[1]:.0f} | {ap('align-large'):.4f} |"]
    if machine["large"] == "subset":
        lines += ["", "A proportional subset (a tenth of the target side, so a tenth of the scoring flops); the full "
                  "130k x 290k run takes about ten times the scoring part of this wall time (`--large full`)."]

default20 = timed("default-20k-2")
default_large = timed("default-large") if large is not None else None
lines += ["", "## e. The default configuration beside the plain method, 2 threads", "",
          "The default is what `termalign align` runs without options (multi-step mapping, self-learning refinement "
          "checked on held-out seed pairs, orthographic evidence and candidates, each target's best sources, the "
          "bundled re-ranker over the word-level evidence); the plain method is the NumPy "
          f"reference's. 20k: fastest of {runs('default-20k-2')} runs each, alternating.", "",
          "| terms | method | wall (s) | peak RSS (MiB) | AP | time / plain |", "|---|---|---|---|---|---|",
          f"| 20000 x 20000 | plain | {align2[0]:.2f} | {align2[1]:.0f} | {ap('align-20k-2'):.4f} | 1 |",
          f"| 20000 x 20000 | default | {default20[0]:.2f} | {default20[1]:.0f} | {ap('default-20k-2'):.4f} | "
          f"{default20[0] / align2[0]:.2f}x |",
          f"| 20000 x 20000 | NumPy reference | {numpy[0]:.2f} | {numpy[1]:.0f} | {ap('numpy-20k'):.4f} | "
          f"{numpy[0] / align2[0]:.2f}x |"]
if large is not None:
    lines += [f"| 130000 x {n2} | plain | {large[0]:.1f} | {large[1]:.0f} | {ap('align-large'):.4f} | 1 |",
              f"| 130000 x {n2} | default | {default_large[0]:.1f} | {default_large[1]:.0f} | "
              f"{ap('default-large'):.4f} | {default_large[0] / large[0]:.2f}x |"]

# f. The precisions side by side.
identical = dict(((a, b), verdict) for a, b, verdict in
                 (line.split() for line in open(f"{results}/identical.txt") if line.strip()))
same = lambda a, b: identical.get((a, b), "not compared")
pass_speedups, large_fp32 = {}, None
lines += ["", "## f. bf16 tiles against fp32, 2 threads", "",
          f"The default precision here: {machine.get('precision', 'unknown')}. bf16 tiles are rescored in fp32 "
          "wherever their proven error bound cannot decide, so every result is the fp32 one; each bf16 result "
          "below was compared with the fp32 one (bench_scoring fails a benchmark that differs; the `align` "
          "outputs are compared byte for byte).", "",
          "| n | tile product fp32 / bf16 (GFLOP/s) | neighbourhood pass fp32 / bf16 (ms) | selection pass fp32 / bf16 "
          "(ms) | both passes: bf16 speed-up | one pass fp32 / bf16 (ms) | one pass: bf16 speed-up |",
          "|---|---|---|---|---|---|---|"]
has_bf16 = ("Bf16GemmTiles", 10000) in two
if not has_bf16:
    del lines[-2:]
    lines.append("This CPU has no bf16 instructions (AVX512_BF16 or AMX-BF16): bench_scoring skipped its bf16 "
                 "benchmarks, and the default precision is fp32 (the `align` runs below compare it with "
                 "`--precision fp32`).")
for n in (2000, 10000, 40000) if has_bf16 else ():
    fp32_pair = two["NeighbourhoodMeans", n][0] + two["SelectCandidates", n][0]
    bf16_pair = two["NeighbourhoodMeansBf16", n][0] + two["SelectCandidatesBf16", n][0]
    pass_speedups[n] = fp32_pair / bf16_pair
    one_fp32, one_bf16 = two["CslsOnePass", n][0], two["CslsOnePassBf16", n][0]
    lines.append(f"| {n} | {two['PlainGemmTiles', n][1]:.1f} / {two['Bf16GemmTiles', n][1]:.1f} | "
                 f"{two['NeighbourhoodMeans', n][0] * 1e3:.0f} / {two['NeighbourhoodMeansBf16', n][0] * 1e3:.0f} | "
                 f"{two['SelectCandidates', n][0] * 1e3:.0f} / {two['SelectCandidatesBf16', n][0] * 1e3:.0f} | "
                 f"{pass_speedups[n]:.2f}x | {one_fp32 * 1e3:.0f} / {one_bf16 * 1e3:.0f} | {one_fp32 / one_bf16:.2f}x |")
plain20_fp32, default20_fp32 = timed("align-20k-2-fp32"), timed("default-20k-2-fp32")
lines += ["", "| `align` run | fp32 wall (s) / peak (MiB) | default precision wall (s) / peak (MiB) | time ratio | "
          "outputs |", "|---|---|---|---|---|",
          f"| 20000 x 20000, plain method | {plain20_fp32[0]:.2f} / {plain20_fp32[1]:.0f} | {align2[0]:.2f} / "
          f"{align2[1]:.0f} | {align2[0] / plain20_fp32[0]:.2f} | {same('align-20k-2', 'align-20k-2-fp32')} |",
          f"| 20000 x 20000, default configuration | {default20_fp32[0]:.2f} / {default20_fp32[1]:.0f} | "
          f"{default20[0]:.2f} / {default20[1]:.0f} | {default20[0] / default20_fp32[0]:.2f} | "
          f"{same('default-20k-2', 'default-20k-2-fp32')} |"]
if large is not None:
    large_fp32, default_large_fp32 = timed("align-large-fp32"), timed("default-large-fp32")
    lines += [f"| 130000 x {n2}, plain method | {large_fp32[0]:.1f} / {large_fp32[1]:.0f} | {large[0]:.1f} / "
              f"{large[1]:.0f} | {large[0] / large_fp32[0]:.2f} | {same('align-large', 'align-large-fp32')} |",
              f"| 130000 x {n2}, default configuration | {default_large_fp32[0]:.1f} / {default_large_fp32[1]:.0f} | "
              f"{default_large[0]:.1f} / {default_large[1]:.0f} | {default_large[0] / default_large_fp32[0]:.2f} | "
              f"{same('default-large', 'default-large-fp32')} |"]
lines += ["", "Fastest of the runs each (20k: the default precision's runs of b and e, "
          f"{runs('align-20k-2-fp32')} fp32 runs each)."]

real = None
if machine.get("real_size", "skip") == "run":
    real = {name: timed(name) for name in ("real-bin", "real-bin-seedless", "real-vec", "real-corpora",
                                           "real-fasttext", "real-vec-gz", "real-vec-gz-zlib", "real-bin-gz",
                                           "real-bin-gz-zlib")}
    # The induced seed's own seconds: from the log's first line about it to the last term round's; then the ranked
    # rounds', from the first ranking to the last (each a fit, the seed evidence's lexicon, a scoring and a ranking).
    def span(*marks):
        stamps = [re.match(r"\[(\d+):(\d+):([\d.]+)\]", line)
                  for line in open(f"{results}/real-bin-seedless.log") if any(mark in line for mark in marks)]
        stamps = [int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3]) for m in stamps if m]
        return stamps[-1] - stamps[0] if len(stamps) > 1 else float("nan")
    seed_seconds = span("seed of words spelt alike", "seed auto", "seed round")
    ranked_seconds = span("] ranked ")
    gz_identical = all(line.endswith(" identical") for line in open(f"{results}/identical-gz.txt").read().split("\n")
                       if line)
    reference_line = open(sorted(glob.glob(f"{results}/real-fasttext.txt.*"))[-1]).read().strip()
    lines += ["", "## g. The inputs participants really have: real-size vectors, default configuration, 2 threads", "",
              "BUCC test-size lists (1,270 x 9,712 terms, 1,016 gold pairs); vectors shaped as the organisers' "
              "cc.en.300.bin (2M words + 2M character n-gram buckets, minn = maxn = 5, d = 300: 7.2 GB a language) "
              "or a 2M-word .vec (4.8 GB); corpora of 1.1M sentences a language. termalign reads of a .bin its "
              "dictionary and, for each word kept (the terms' and the seed's words, the 20,000 most frequent), "
              f"that word's rows. Fastest of {runs('real-bin')} runs each, alternating: the three cases' files "
              "(26 GB) do not all fit in the page cache of a 24 GiB machine, so a run reads part of its file from "
              "the disk. With the corpora, the corpus pass takes most of the time and the memory (its contexts of "
              "frequent single-word terms).", "",
              "| run | wall (s) | peak RSS (MiB) | AP |", "|---|---|---|---|",
              f"| `align`, .bin both sides | {real['real-bin'][0]:.1f} | {real['real-bin'][1]:.0f} | "
              f"{ap('real-bin'):.4f} |",
              f"| `align`, .bin both sides, no seed lexicon (5 % of the words spelt alike; the seed induced, "
              f"{seed_seconds:.1f} s of it, then {ranked_seconds:.1f} s for two ranked rounds) | "
              f"{real['real-bin-seedless'][0]:.1f} | "
              f"{real['real-bin-seedless'][1]:.0f} | {ap('real-bin-seedless'):.4f} |",
              f"| `align`, .vec both sides | {real['real-vec'][0]:.1f} | {real['real-vec'][1]:.0f} | "
              f"{ap('real-vec'):.4f} |",
              f"| `align`, .bin both sides, with the corpora | {real['real-corpora'][0]:.1f} | "
              f"{real['real-corpora'][1]:.0f} | {ap('real-corpora'):.4f} |",
              f"| libfasttext `loadModel` + `getWordVector` of the same words, one .bin (bench_fasttext_reference) | "
              f"{real['real-fasttext'][0]:.1f} | {real['real-fasttext'][1]:.0f} | |"]
    for name, what in (("real-vec-gz", ".vec.gz both sides (gzip -1), igzip"),
                       ("real-vec-gz-zlib", ".vec.gz both sides, zlib"),
                       ("real-bin-gz", ".bin.gz both sides (gzip -1), igzip"),
                       ("real-bin-gz-zlib", ".bin.gz both sides, zlib")):
        lines.append(f"| `align`, {what} | {real[name][0]:.1f} | {real[name][1]:.0f} | {ap(name):.4f} |")
    lines += ["", "The gzipped files are inflated a block at a time as they are read, both sides at once (igzip: "
              "ISA-L's inflater, the default where libisal-dev is installed; zlib: the build with "
              "-DTERMALIGN_WITH_ISAL=OFF); their outputs are compared byte for byte with the uncompressed runs' "
              "(below).", "", f"The reference printed: `{reference_line}`."]

# h: evaluate's comparison of two runs (bench/significance_bench.sh), fastest of its runs, and the NumPy reference.
significance = None
if glob.glob(f"{results}/significance.txt.*"):
    def significance_run(path):
        text = open(path).read()
        m = re.search(r"wall ([\d.]+) s, CPU ([\d.]+) s user \+ ([\d.]+) s system, peak RSS (\d+) kB", text)
        row = [line for line in text.splitlines() if line.count("\t") > 8 and "[" in line][-1].split("\t")
        return float(m[1]), float(m[2]) + float(m[3]), int(m[4]) / 1024, row
    significance = min(significance_run(path) for path in glob.glob(f"{results}/significance.txt.*"))
    reference = open(f"{results}/significance-reference.txt").read()
    measured = re.search(r"NumPy reference, (\d+) resamples:\n(.*)\nseconds: .*total ([\d.]+)", reference)
    scaled = float(re.search(r"scaled to \d+ resamples: ([\d.]+) s", reference)[1])
    row = significance[3]
    lines += ["", "## h. `evaluate` comparing two runs at BUCC test size, 2 threads", "",
              "20k source terms, a gold of 16k pairs, two ranked lists of 100k pairs (`bench/significance_bench.sh`): "
              "the paired bootstrap's 95 % interval of the AP difference and the paired randomisation test, 10,000 "
              f"resamples each, fastest of {len(glob.glob(f'{results}/significance.txt.*'))} runs (the whole "
              "command: reading the three files, scoring both runs, the two tests). The NumPy reference "
              "(`bench/reference/significance_reference.py`, each resample a pass of cumulative sums over the lists, "
              f"batches of 16 resamples) ran {measured[1]} resamples; its time is scaled to 10,000.", "",
              "| run | wall (s) | CPU (s) | peak RSS (MiB) | difference | 95 % interval | p |", "|---|---|---|---|---|---|---|",
              f"| `termalign evaluate`, two --pred | {significance[0]:.2f} | {significance[1]:.2f} | "
              f"{significance[2]:.0f} | {row[-3]} | {row[-2]} | {row[-1]} |",
              f"| NumPy reference, {measured[1]} resamples (scaled to 10,000: {scaled:.0f} s) | "
              f"{float(measured[3]):.1f} | | | `{measured[2]}` | | |"]

met = lambda ok: "met" if ok else "**not met**"
worst_ratio = min(ratios.values())
lines += ["", "## Targets", "", "| target | measured | |", "|---|---|---|",
          f"| both CSLS passes >= 70 % of the plain Eigen GEMM (n = 2k, 10k, 40k) | "
          f"{', '.join(f'{ratios[n]:.0%}' for n in (2000, 10000, 40000))} (of the tiled GEMM with the library's "
          f"kernel: {', '.join(f'{tile_ratios[n]:.0%}' for n in (2000, 10000, 40000))}) | "
          f"{met(worst_ratio >= 0.7)} |",
          f"| align 20k x 20k >= 10x faster than NumPy | {numpy[0] / align2[0]:.1f}x | {met(numpy[0] / align2[0] >= 10)} |",
          f"| neighbourhood pass faster than faiss | {ours_neighbourhood:.2f} s vs {faiss_best:.2f} s | "
          f"{met(ours_neighbourhood < faiss_best)} |",
          f"| 2 threads >= 1.8x faster than 1 (CSLS passes; align) | {kernel1 / kernel2:.2f}x; "
          f"{align1[0] / align2[0]:.2f}x | {met(kernel1 / kernel2 >= 1.8 and align1[0] / align2[0] >= 1.8)} |"]
if large is not None:
    lines.append(f"| plain method 130k x 290k, 300k-word vocabularies: peak < 1 GiB | {large[1]:.0f} MiB "
                 f"({'full run' if machine['large'] == 'full' else '130k x 29k subset'}) | "
                 f"{met(large[1] < 1024) if machine['large'] == 'full' else 'subset only'} |")
lines += [f"| default AP >= plain AP (rows in unrelated orders), 20k | {ap('default-20k-2'):.4f} vs "
          f"{ap('align-20k-2'):.4f} | {met(ap('default-20k-2') >= ap('align-20k-2'))} |",
          f"| default time <= 1.5x plain, 20k | {default20[0] / align2[0]:.2f}x | "
          f"{met(default20[0] <= 1.5 * align2[0])} |"]
if large is not None:
    lines += [f"| default AP >= plain AP, 130k x {n2 // 1000}k | {ap('default-large'):.4f} vs {ap('align-large'):.4f} | "
              f"{met(ap('default-large') >= ap('align-large'))} |",
              f"| default time <= 1.3x plain and peak < 1 GiB, 130k x {n2 // 1000}k | "
              f"{default_large[0] / large[0]:.2f}x, {default_large[1]:.0f} MiB | "
              f"{met(default_large[0] <= 1.3 * large[0] and default_large[1] < 1024)} |"]
if real is not None:
    lines += [f"| real size, .bin both sides: peak < 1 GiB and wall < 10 s | {real['real-bin'][1]:.0f} MiB, "
              f"{real['real-bin'][0]:.1f} s | {met(real['real-bin'][1] < 1024 and real['real-bin'][0] < 10)} |",
              f"| real size, .bin both sides without a seed lexicon: peak < 1 GiB and wall < 10 s | "
              f"{real['real-bin-seedless'][1]:.0f} MiB, {real['real-bin-seedless'][0]:.1f} s (the induced seed "
              f"{seed_seconds:.1f} s) | "
              f"{met(real['real-bin-seedless'][1] < 1024 and real['real-bin-seedless'][0] < 10)} |"]
    for name, plain, what, seconds in (("real-vec-gz", "real-vec", ".vec.gz", 20),
                                       ("real-bin-gz", "real-bin", ".bin.gz", 30)):
        same = f"{plain} {name} identical" in open(f"{results}/identical-gz.txt").read().splitlines()
        lines.append(f"| real size, {what} both sides: peak < 1 GiB, wall <= {seconds} s, output identical to the "
                     f"uncompressed run's | {real[name][1]:.0f} MiB, {real[name][0]:.1f} s (zlib: "
                     f"{real[name + '-zlib'][0]:.1f} s), {'identical' if same else 'DIFFERENT'} | "
                     f"{met(real[name][1] < 1024 and real[name][0] <= seconds and same)} |")
all_identical = all(verdict == "identical" for verdict in identical.values())
if has_bf16:
    lines += [f"| bf16 both CSLS passes >= 1.7x fp32, n = 10k and 40k | {pass_speedups[10000]:.2f}x, "
              f"{pass_speedups[40000]:.2f}x | {met(min(pass_speedups[10000], pass_speedups[40000]) >= 1.7)} |"]
else:
    lines += ["| bf16 both CSLS passes >= 1.7x fp32, n = 10k and 40k | this CPU has no bf16 instructions | "
              "not measured |"]
if large is not None and has_bf16:
    lines.append(f"| bf16 `align` 130k x {n2 // 1000}k, plain method, <= 0.65x the fp32 time | "
                 f"{large[0] / large_fp32[0]:.2f}x | {met(large[0] <= 0.65 * large_fp32[0])} |")
lines.append(f"| bf16 outputs identical to fp32 in every case | {len(identical)} `align` comparisons, every "
             f"bench_scoring bf16 result | {met(all_identical)} |")
if significance is not None:
    lines.append(f"| evaluate's comparison of two runs, BUCC test size, 10,000 resamples: < 2 s on 2 cores | "
                 f"{significance[0]:.2f} s ({scaled / significance[0]:.0f}x faster than NumPy) | "
                 f"{met(significance[0] < 2)} |")
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))

# The README's summary: the same figures, one row a measure, between its markers.
if readme != "none":
    sizes = (2000, 10000, 40000)
    per_n = lambda column, unit="": " / ".join(f"{gflops[n][column]:.1f}" for n in sizes) + unit
    percents = lambda values: " / ".join(f"{values[n] * 100:.0f} %" for n in sizes)
    block = [f"Last run: {machine['cpu']}, {machine['cores']} cores, load average {machine['load_start'].split()[0]} at the "
             f"start; d = 300, 2 threads, similarity tiles by {machine['kernel']}. All tables: `bench/RESULTS.md`.",
             "", "| measure | termalign | reference |", "|---|---|---|",
             f"| two CSLS passes, n = 2k / 10k / 40k | {per_n(0, ' GFLOP/s')} | plain Eigen GEMM (own threads): "
             f"{per_n(1, ' GFLOP/s')} ({percents(ratios)}); plain GEMM with the library's tiles and kernel: "
             f"{per_n(2, ' GFLOP/s')} ({percents(tile_ratios)}) |",
             f"| one-pass CSLS (`csls_select`, what `align` runs), effective (4 n^2 d flops) | {per_n(3, ' GFLOP/s')} "
             f"| {percents(fused_ratios)} of the Eigen GEMM |",
             f"| `align` 20k x 20k terms, wall / peak memory / page faults (fastest of {runs('align-20k-2')}) | "
             f"{align2[0]:.2f} s / {align2[1]:.0f} MiB / {align2[2]} | NumPy (fastest of {runs('numpy-20k')}): {numpy[0]:.2f} s / {numpy[1]:.0f} MiB "
             f"({numpy[0] / align2[0]:.1f}x) |",
             f"| neighbourhood pass (top-10 both directions), 20k x 20k | {ours_neighbourhood:.2f} s | faiss "
             f"`IndexFlatIP`: {faiss_best:.2f} s |",
             f"| 1 vs 2 threads: two passes n = 10k; one pass; `align` 20k | {kernel1 / kernel2:.2f}x; "
             f"{fused1 / fused2:.2f}x; {align1[0] / align2[0]:.2f}x ({align1[0]:.2f} s / {align2[0]:.2f} s) | GEMM with "
             f"the same tiles: {gemm1 / gemm2:.2f}x |"]
    block.append(f"| default configuration, 20k x 20k: wall / peak memory / AP (plain method: {align2[0]:.2f} s, "
                 f"AP {ap('align-20k-2'):.4f}) | {default20[0]:.2f} s / {default20[1]:.0f} MiB / AP "
                 f"{ap('default-20k-2'):.4f} ({default20[0] / align2[0]:.2f}x the plain time) | NumPy AP "
                 f"{ap('numpy-20k'):.4f} |")
    if large is not None:
        block.append(f"| `align` 130k x {n2 // 1000}k terms, plain method | {large[0]:.1f} s, {large[1]:.0f} MiB peak, "
                     f"AP {ap('align-large'):.4f} | |")
        block.append(f"| `align` 130k x {n2 // 1000}k terms, default configuration | {default_large[0]:.1f} s, "
                     f"{default_large[1]:.0f} MiB peak, AP {ap('default-large'):.4f} ({default_large[0] / large[0]:.2f}x "
                     "the plain time) | |")
    if real is not None:
        block.append(f"| default `align` with the inputs participants have: 1,270 x 9,712 terms, cc.en.300-shaped "
                     f".bin (7.2 GB a language) / 2M-word .vec (4.8 GB) / .bin with 1.1M-sentence corpora | "
                     f"{real['real-bin'][0]:.1f} s, {real['real-bin'][1]:.0f} MiB / {real['real-vec'][0]:.1f} s, "
                     f"{real['real-vec'][1]:.0f} MiB / {real['real-corpora'][0]:.1f} s, "
                     f"{real['real-corpora'][1]:.0f} MiB | libfasttext `loadModel` + `getWordVector`, one .bin: "
                     f"{real['real-fasttext'][0]:.1f} s, {real['real-fasttext'][1]:.0f} MiB |")
        block.append(f"| the same, as downloaded: .vec.gz / .bin.gz (gzip -1) both sides, inflated by igzip (ISA-L) | "
                     f"{real['real-vec-gz'][0]:.1f} s, {real['real-vec-gz'][1]:.0f} MiB / "
                     f"{real['real-bin-gz'][0]:.1f} s, {real['real-bin-gz'][1]:.0f} MiB; outputs "
                     f"{'identical to' if gz_identical else '**DIFFERENT** from'} the uncompressed runs' | zlib: {real['real-vec-gz-zlib'][0]:.1f} s / "
                     f"{real['real-bin-gz-zlib'][0]:.1f} s |")
    if not has_bf16:
        block.append("| bf16 tiles against fp32 | this CPU has no bf16 instructions: fp32 is the default | |")
    else:
      block.append(f"| bf16 tiles (the default precision here) against fp32: both passes n = 10k / 40k; `align` 20k "
                 f"plain / default{'; 130k plain / default' if large is not None else ''} | "
                 f"{pass_speedups[10000]:.2f}x / {pass_speedups[40000]:.2f}x faster; "
                 f"{align2[0] / plain20_fp32[0]:.2f} / {default20[0] / default20_fp32[0]:.2f} of the fp32 time"
                 + (f"; {large[0] / large_fp32[0]:.2f} / {default_large[0] / default_large_fp32[0]:.2f}"
                    if large is not None else "")
                 + f"; outputs {'identical' if all_identical else '**DIFFERENT**'} | tile product "
                 f"{gflops[10000][2]:.1f} (fp32) / {two['Bf16GemmTiles', 10000][1]:.1f} (bf16) GFLOP/s at 10k |")
    begin, end = "<!-- run_benchmarks.sh: begin -->", "<!-- run_benchmarks.sh: end -->"
    text = open(readme).read()
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        open(readme, "w").write(head + begin + "\n" + "\n".join(block) + "\n" + end + tail)
        print(f"updated the summary in {readme}", file=sys.stderr)
    else:
        print(f"{readme} has no '{begin}' ... '{end}' markers: its summary is not updated", file=sys.stderr)
PYTHON
step "done"
