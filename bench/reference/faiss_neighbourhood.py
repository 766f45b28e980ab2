#!/usr/bin/python3
"""The CSLS neighbourhood pass with faiss: exact inner-product top-k in both directions, for timing.

    /usr/bin/python3 bench/reference/faiss_neighbourhood.py --n1 20000 --n2 20000 [--dim 300] [--k 10] \
        [--threads 2] [--seed 1] [--repeat 1]

X (n1 x dim) and Z (n2 x dim) are Gaussian rows normalised to unit length (float32), like bench_scoring's. One
faiss.IndexFlatIP per side; searching X's rows in Z's index gives r_T (mean of each source row's k largest
cosines), searching Z's rows in X's index gives r_S: the two searches are what termalign's neighbourhood_means()
does in one pass over the tiles. Prints one line per repetition to stdout, `faiss_neighbourhood n1 n2 dim k
threads seconds GFLOP/s` (2 n1 n2 dim flops per direction), and the best time last as `best <seconds>`.
Needs python3-faiss (Debian) and NumPy; run it with /usr/bin/python3.
"""

import argparse
import sys
import time

import faiss
import numpy as np


def unit_gaussian_rows(rng, rows, dim):
    matrix = rng.standard_normal((rows, dim), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def neighbourhood_means(X, Z, k):
    """(r_T, r_S): mean of each row's k largest inner products with the other side's rows (k capped)."""
    means = []
    for queries, database in ((X, Z), (Z, X)):
        index = faiss.IndexFlatIP(database.shape[1])
        index.add(database)
        similarities, _ = index.search(queries, min(k, len(database)))
        means.append(similarities.mean(axis=1, dtype=np.float64).astype(np.float32))
    return means


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n1", type=int, required=True, help="rows of X (source terms)")
    parser.add_argument("--n2", type=int, required=True, help="rows of Z (target terms)")
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0, help="OpenMP threads of faiss (0 = its default)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1, help="time the pass this many times")
    arguments = parser.parse_args(argv)
    if min(arguments.n1, arguments.n2, arguments.dim, arguments.k, arguments.repeat) < 1:
        parser.error("--n1, --n2, --dim, --k and --repeat must be at least 1.")
    if arguments.threads > 0:
        faiss.omp_set_num_threads(arguments.threads)
    rng = np.random.default_rng(arguments.seed)
    X = unit_gaussian_rows(rng, arguments.n1, arguments.dim)
    Z = unit_gaussian_rows(rng, arguments.n2, arguments.dim)
    flops = 2 * 2.0 * arguments.n1 * arguments.n2 * arguments.dim
    times = []
    for _ in range(arguments.repeat):
        started = time.perf_counter()
        r_source, r_target = neighbourhood_means(X, Z, arguments.k)
        times.append(time.perf_counter() - started)
        print(f"faiss_neighbourhood {arguments.n1} {arguments.n2} {arguments.dim} {arguments.k} "
              f"{faiss.omp_get_max_threads()} {times[-1]:.3f} {flops / times[-1] * 1e-9:.1f}", flush=True)
    print(f"best {min(times):.3f}")
    print(f"mean r_T {r_source.mean():.6f}, mean r_S {r_target.mean():.6f}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
