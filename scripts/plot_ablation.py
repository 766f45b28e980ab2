#!/usr/bin/python3
"""Plot the results.csv of `termalign ablate`: one horizontal bar of AP per run, best at the top, with the APs of
the identical / close / far gold subsets as markers.

Usage: /usr/bin/python3 scripts/plot_ablation.py results.csv OUT.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

SUBSETS = [("AP identical", "o"), ("AP close", "s"), ("AP far", "^")]


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    with open(argv[1], newline="", encoding="utf-8") as stream:
        reader = csv.DictReader(stream)
        rows = list(reader)
        columns = reader.fieldnames or []
    if not rows or "AP" not in columns:
        sys.exit(f"{argv[1]}: not a termalign ablation table (empty, or no AP column)")
    options = columns[1 : columns.index("AP")]  # between "run" and "AP": the varied options
    labels = [" ".join(f"{option}={row[option]}" for option in options) or f"run {row['run']}" for row in rows]
    positions = range(len(rows))[::-1]  # the file is sorted best first: put the best at the top
    figure, axis = plt.subplots(figsize=(8, 1.5 + 0.35 * len(rows)))
    axis.barh(positions, [float(row["AP"]) for row in rows], color="#9ecae1", label="AP")
    for column, marker in SUBSETS:
        axis.plot([float(row[column]) for row in rows], positions, marker, linestyle="none", label=column)
    axis.set_yticks(list(positions))
    axis.set_yticklabels(labels, fontsize=8)
    axis.set_xlim(0, 1)
    axis.set_xlabel("average precision")
    axis.grid(True, axis="x", alpha=0.4)
    axis.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    figure.savefig(argv[2], dpi=110)


if __name__ == "__main__":
    main(sys.argv)
