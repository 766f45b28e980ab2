"""The paired comparison of runs (termalign.compare, `termalign evaluate` with several --pred) against a NumPy
reference: the same statistic, resampled by NumPy's own generator, gives the same 95 % interval within 0.005.

Run by ctest (python.pytest) with PYTHONPATH=build/python and TERMALIGN_CLI set.
"""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import termalign

ROOT = pathlib.Path(os.environ.get("TERMALIGN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CLI = os.environ.get("TERMALIGN_CLI", str(ROOT / "build" / "termalign"))
RESAMPLES = 10000


def synthetic_runs(seed=7, n_gold_terms=400, n_extra_terms=150):
    """A gold of 1 or 2 pairs per source term, and two ranked lists of 3 candidates per source term (the gold's and
    others), the second a little better; both with pairs of source terms outside the gold."""
    rng = np.random.default_rng(seed)
    gold = []
    for s in range(n_gold_terms):
        gold += [(f"s{s}", f"t{s}_{j}") for j in range(1 + (rng.random() < 0.3))]
    gold_set = set(gold)
    runs = []
    for skill in (0.9, 1.2):
        scored = []
        for s in range(n_gold_terms + n_extra_terms):
            for j in range(3):
                pair = (f"s{s}", f"t{s}_{j}")
                scored.append((rng.normal() + skill * (pair in gold_set), pair))
        scored.sort(key=lambda item: -item[0])
        runs.append([pair for _, pair in scored])
    return gold, runs


def resampled_ap(source_ids, hits, gold_count, copies):
    """AP of one ranked list (source ids, hit flags) when source term s counts copies[s] times: each pair enters
    copies[s] times at consecutive positions, against the drawn terms' gold pairs."""
    weight = copies[source_ids]
    n_gold = np.dot(copies, gold_count)
    if n_gold == 0:
        return 0.0
    position_before = np.cumsum(weight) - weight
    tp_before = np.cumsum(weight * hits) - weight * hits
    total = 0.0
    for copy in range(1, int(weight.max(initial=0)) + 1):
        at = hits & (weight >= copy)
        total += np.sum((tp_before[at] + copy) / (position_before[at] + copy))
    return total / n_gold


def reference_interval(gold, runs, seed=12345):
    terms = sorted({s for s, _ in gold} | {s for run in runs for s, _ in run})
    index = {term: i for i, term in enumerate(terms)}
    gold_count = np.zeros(len(terms), dtype=np.int64)
    for s, _ in set(gold):
        gold_count[index[s]] += 1
    gold_set = set(gold)
    lists = [(np.array([index[s] for s, _ in run]), np.array([pair in gold_set for pair in run])) for run in runs]
    once = np.ones(len(terms), dtype=np.int64)
    observed = resampled_ap(*lists[1], gold_count, once) - resampled_ap(*lists[0], gold_count, once)
    rng = np.random.default_rng(seed)
    differences = np.empty(RESAMPLES)
    for b in range(RESAMPLES):
        copies = np.bincount(rng.integers(0, len(terms), len(terms)), minlength=len(terms))
        differences[b] = (resampled_ap(*lists[1], gold_count, copies)
                          - resampled_ap(*lists[0], gold_count, copies))
    return observed, np.percentile(differences, [2.5, 97.5])


def test_compare_interval_agrees_with_a_numpy_bootstrap():
    gold, runs = synthetic_runs()
    result = termalign.compare(gold, runs, resamples=RESAMPLES)
    assert [run["run"] for run in result] == ["run1", "run2"]
    assert "difference" not in result[0]
    difference = result[1]["difference"]
    assert difference["resamples"] == RESAMPLES
    observed, (low, high) = reference_interval(gold, runs)
    assert difference["ap"] == pytest.approx(result[1]["ap"] - result[0]["ap"], abs=1e-12)
    assert difference["ap"] == pytest.approx(observed, abs=1e-12)
    lo, hi = difference["interval"]
    assert lo < difference["ap"] < hi
    assert abs(lo - low) < 0.005 and abs(hi - high) < 0.005, (lo, hi, low, high)
    assert 0 < difference["p_value"] <= 1


def reference_ap_interval(gold, run, seed=2468):
    """The bootstrap interval of one run's AP over the source terms of the gold and of that run alone."""
    terms = sorted({s for s, _ in gold} | {s for s, _ in run})
    index = {term: i for i, term in enumerate(terms)}
    gold_count = np.zeros(len(terms), dtype=np.int64)
    for s, _ in set(gold):
        gold_count[index[s]] += 1
    gold_set = set(gold)
    ids, hits = np.array([index[s] for s, _ in run]), np.array([pair in gold_set for pair in run])
    rng = np.random.default_rng(seed)
    aps = np.empty(RESAMPLES)
    for b in range(RESAMPLES):
        copies = np.bincount(rng.integers(0, len(terms), len(terms)), minlength=len(terms))
        aps[b] = resampled_ap(ids, hits, gold_count, copies)
    return np.percentile(aps, [2.5, 97.5])


def test_each_runs_ap_interval_agrees_with_a_numpy_bootstrap():
    gold, runs = synthetic_runs(seed=11)
    result = termalign.compare(gold, runs, resamples=RESAMPLES, intervals=True)
    for run, pairs in zip(result, runs):
        low, high = reference_ap_interval(gold, pairs)
        lo, hi = run["ap_interval"]
        assert lo < run["ap"] < hi
        assert abs(lo - low) < 0.005 and abs(hi - high) < 0.005, (lo, hi, low, high)
    # Without intervals=True the dicts carry none, as evaluate without --intervals.
    assert all("ap_interval" not in run for run in termalign.compare(gold, runs, resamples=100))


def test_compare_matches_evaluate_with_several_pred(tmp_path):
    gold, runs = synthetic_runs(seed=3, n_gold_terms=80, n_extra_terms=20)
    gold_file = tmp_path / "gold.tsv"
    gold_file.write_text("".join(f"{s}\t{t}\n" for s, t in gold), encoding="utf-8")
    files = []
    for r, run in enumerate(runs):
        files.append(tmp_path / f"run{r + 1}.tsv")
        files[-1].write_text("".join(f"{s}\t{t}\n" for s, t in run), encoding="utf-8")
    cli = subprocess.run([CLI, "-q", "evaluate", "--gold", str(gold_file), "--pred", str(files[0]), "--pred",
                          str(files[1]), "--json", "--resamples", "500", "--seed", "5"],
                         check=True, capture_output=True, text=True)
    assert termalign.compare(gold_file, files, resamples=500, seed=5) == json.loads(cli.stdout)
    # Each run's own interval: the same from both, and it holds the run's AP.
    cli = subprocess.run([CLI, "-q", "evaluate", "--gold", str(gold_file), "--pred", str(files[0]), "--pred",
                          str(files[1]), "--json", "--intervals", "--resamples", "500", "--seed", "5"],
                         check=True, capture_output=True, text=True)
    with_intervals = termalign.compare(gold_file, files, resamples=500, seed=5, intervals=True)
    assert with_intervals == json.loads(cli.stdout)
    for run in with_intervals:
        low, high = run["ap_interval"]
        assert low < run["ap"] < high
    with pytest.raises(termalign.UsageError, match="two or more"):
        termalign.compare(gold_file, files[:1])
    with pytest.raises(termalign.UsageError, match="resamples"):
        termalign.compare(gold_file, files, resamples=0)
