#!/usr/bin/python3
"""NumPy reference of `termalign evaluate`'s comparison of two runs: the paired bootstrap's 95 % interval of the AP
difference and the paired approximate randomisation test's p-value, each resample a pass over the ranked lists,
vectorised over a batch of resamples (cumulative sums along the lists). Its own NumPy generator draws the resamples,
so its figures agree with termalign's within the resampling noise, not to the last digit.

Usage: /usr/bin/python3 bench/reference/significance_reference.py GOLD RUN1 RUN2 [--resamples R] [--batch B]
                                                                [--seed S]
Prints the difference, the interval, the p-value and the wall time of each part to stdout.
"""
import argparse
import sys
import time

import numpy as np


def read_pairs(path):
    """The file's pairs in order, each once (its first line), as evaluate ranks them."""
    seen, pairs = set(), []
    with open(path, encoding="utf-8") as stream:
        for line in stream:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 2:
                continue
            pair = (fields[0].strip(), fields[1].strip())
            if pair not in seen:
                seen.add(pair)
                pairs.append(pair)
    return pairs


def prepare(gold, runs):
    """Source ids over the gold and both runs; each gold term's pair count; each run as (ids, hit flags)."""
    index = {}
    for source, _ in gold:
        index.setdefault(source, len(index))
    for run in runs:
        for source, _ in run:
            index.setdefault(source, len(index))
    gold_count = np.zeros(len(index), dtype=np.int64)
    for source, _ in gold:
        gold_count[index[source]] += 1
    gold_set = set(gold)
    lists = [(np.fromiter((index[s] for s, _ in run), dtype=np.int64, count=len(run)),
              np.fromiter((pair in gold_set for pair in run), dtype=bool, count=len(run))) for run in runs]
    return len(index), gold_count, lists


def batch_precision_sum(ids, hits, copies):
    """For each row of copies (B x n_sources): the sum over the hits of the list of the precision at each copy, a
    source term's pairs entering copies[s] times at consecutive positions."""
    weight = copies[:, ids]                        # B x E
    position_before = np.cumsum(weight, axis=1) - weight
    hit_weight = weight * hits
    tp_before = np.cumsum(hit_weight, axis=1) - hit_weight
    columns = np.flatnonzero(hits)
    weight, position_before, tp_before = weight[:, columns], position_before[:, columns], tp_before[:, columns]
    total = np.zeros(copies.shape[0])
    for copy in range(1, int(weight.max(initial=0)) + 1):
        at = weight >= copy
        total += np.where(at, (tp_before + copy) / np.maximum(position_before + copy, 1), 0.0).sum(axis=1)
    return total


def bootstrap(n_sources, gold_count, lists, resamples, batch, rng):
    differences = np.empty(resamples)
    for start in range(0, resamples, batch):
        b = min(batch, resamples - start)
        draws = rng.integers(0, n_sources, size=(b, n_sources))
        rows = np.arange(b, dtype=np.int64)[:, None] * n_sources
        copies = np.bincount((rows + draws).ravel(), minlength=b * n_sources).reshape(b, n_sources)
        n_gold = copies @ gold_count
        base = batch_precision_sum(*lists[0], copies)
        other = batch_precision_sum(*lists[1], copies)
        differences[start:start + b] = np.where(n_gold > 0, (other - base) / np.maximum(n_gold, 1), 0.0)
    return np.percentile(differences, [2.5, 97.5])


def merged(lists):
    """The two lists merged by rank, the baseline's pair first at equal ranks: (ids, hits, run)."""
    (ids0, hits0), (ids1, hits1) = lists
    n = max(len(ids0), len(ids1))
    rank = np.concatenate([np.arange(len(ids0)), np.arange(len(ids1))])
    run = np.concatenate([np.zeros(len(ids0), dtype=np.int64), np.ones(len(ids1), dtype=np.int64)])
    order = np.lexsort((run, rank))
    assert n == 0 or order.size == len(ids0) + len(ids1)
    return (np.concatenate([ids0, ids1])[order], np.concatenate([hits0, hits1])[order], run[order])


def side_precision_sums(side, hits):
    """B x E 0/1 side assignment (1: the second run's side): each row's sums over each side's hits of the
    precision there, (side 0, side 1). Only the hits' columns are kept after the cumulative sums."""
    position1 = np.cumsum(side, axis=1)
    tp1 = np.cumsum(side * hits, axis=1)
    columns = np.flatnonzero(hits)
    side, position1, tp1 = side[:, columns], position1[:, columns], tp1[:, columns]
    position0 = columns[None, :] + 1 - position1   # every pair up to here is on one side or the other
    tp0 = np.arange(1, columns.size + 1)[None, :] - tp1
    on1 = side.astype(bool)
    sum1 = np.where(on1, tp1 / np.maximum(position1, 1), 0.0).sum(axis=1)
    sum0 = np.where(on1, 0.0, tp0 / np.maximum(position0, 1)).sum(axis=1)
    return sum0, sum1


def randomisation(n_sources, n_gold, lists, resamples, batch, rng):
    ids, hits, run = merged(lists)
    sum0, sum1 = side_precision_sums(run[None, :], hits)
    observed = (sum1 - sum0)[0] / n_gold
    as_large = 0
    for start in range(0, resamples, batch):
        b = min(batch, resamples - start)
        swapped = rng.integers(0, 2, size=(b, n_sources))
        side = run[None, :] ^ swapped[:, ids]
        sum0, sum1 = side_precision_sums(side, hits)
        permuted = (sum1 - sum0) / n_gold
        as_large += int(np.count_nonzero(np.abs(permuted) >= abs(observed) - 1e-12))
    return observed, (1 + as_large) / (1 + resamples)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gold")
    parser.add_argument("run1")
    parser.add_argument("run2")
    parser.add_argument("--resamples", type=int, default=10000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seed", type=int, default=61)
    args = parser.parse_args(argv[1:])
    start = time.perf_counter()
    gold = read_pairs(args.gold)
    runs = [read_pairs(args.run1), read_pairs(args.run2)]
    n_sources, gold_count, lists = prepare(gold, runs)
    read = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    low, high = bootstrap(n_sources, gold_count, lists, args.resamples, args.batch, rng)
    booted = time.perf_counter()
    observed, p_value = randomisation(n_sources, len(set(gold)), lists, args.resamples, args.batch, rng)
    done = time.perf_counter()
    print(f"difference {observed:+.6f} interval [{low:+.6f}, {high:+.6f}] p {p_value:.6f} "
          f"resamples {args.resamples}")
    print(f"seconds: read {read - start:.2f}, bootstrap {booted - read:.2f}, randomisation {done - booted:.2f}, "
          f"total {done - start:.2f}")


if __name__ == "__main__":
    main(sys.argv)
