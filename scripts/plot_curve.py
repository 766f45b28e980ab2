#!/usr/bin/python3
"""Plot a `termalign evaluate --curve` TSV: precision, recall, F1 and AP against rank (log-scale x axis).

Usage: /usr/bin/python3 scripts/plot_curve.py CURVE.tsv OUT.png

One panel per score, as in the BUCC 2022 organisers' figures (score against the number of ranked term pairs).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

SCORES = [("precision", "P"), ("recall", "R"), ("f1", "F1"), ("ap", "AP (so far)")]


def read_curve(path):
    with open(path, newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream, delimiter="\t"))
    missing = {"rank"} | {column for column, _ in SCORES}
    if rows:
        missing -= set(rows[0])
    if not rows or missing:
        sys.exit(f"{path}: not a termalign curve (empty, or missing columns {sorted(missing)})")
    ranks = [int(row["rank"]) for row in rows]
    return ranks, {column: [float(row[column]) for row in rows] for column, _ in SCORES}


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    curve_path, output_path = argv[1], argv[2]
    ranks, scores = read_curve(curve_path)
    figure, axes = plt.subplots(1, len(SCORES), figsize=(4 * len(SCORES), 3.6), sharex=True)
    for axis, (column, label) in zip(axes, SCORES):
        axis.plot(ranks, scores[column], lw=2)
        axis.set_xscale("log")
        axis.set_ylim(0, 1.02)
        axis.set_title(label)
        axis.set_xlabel("ranked term pairs")
        axis.grid(True, which="major", alpha=0.4)
    axes[0].set_ylabel("score")
    figure.suptitle(f"{os.path.basename(curve_path)}: final AP {scores['ap'][-1]:.4f} over {ranks[-1]} pairs", fontsize=10)
    figure.tight_layout()
    figure.savefig(output_path, dpi=110)


if __name__ == "__main__":
    main(sys.argv)
