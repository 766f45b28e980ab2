#!/usr/bin/python3
"""Plot the results.csv of `termalign ablate`: one horizontal bar of AP per run (the mean over the repeats, with
its sd as an error bar), best at the top, with the APs of the identical / close / far gold subsets as markers. A run
whose difference to the baseline is significant is drawn in purple and its label ends with " *"; the baseline is
grey and its label ends with " (baseline)". Each bar is labelled with its mean AP and sd.

Usage: /usr/bin/python3 scripts/plot_ablation.py results.csv OUT.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

SUBSETS = [("AP identical", "o"), ("AP close", "s"), ("AP far", "^")]
PLAIN, SIGNIFICANT, BASELINE = "#c6dbef", "#9e9ac8", "#d9d9d9"  # the markers keep the default blue, orange, green


def run_label(row, options):
    """The run's label on the plot: its options, and its mark against the baseline."""
    label = " ".join(f"{option}={row[option]}" for option in options) or f"run {row['run']}"
    mark = row.get("significant", "")
    if mark == "yes":
        return label + " *"
    if mark == "baseline":
        return label + " (baseline)"
    return label


def bar_colour(row):
    return {"yes": SIGNIFICANT, "baseline": BASELINE}.get(row.get("significant", ""), PLAIN)


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
    labels = [run_label(row, options) for row in rows]
    positions = range(len(rows))[::-1]  # the file is sorted best first: put the best at the top
    figure, axis = plt.subplots(figsize=(8, 2.4 + 0.35 * len(rows)))
    sd = [float(row["AP sd"]) for row in rows] if "AP sd" in columns else None
    aps = [float(row["AP"]) for row in rows]
    axis.barh(positions, aps, xerr=sd, capsize=3, color=[bar_colour(row) for row in rows],
              label="AP (mean ± sd over the repeats)")
    for position, ap, deviation in zip(positions, aps, sd or [None] * len(rows)):
        text = f"{ap:.4f}" + (f" ± {deviation:.4f}" if deviation is not None else "")
        axis.text(0.01, position, text, va="center", fontsize=7)
    for column, marker in SUBSETS:
        axis.plot([float(row[column]) for row in rows], positions, marker, linestyle="none", label=column)
    axis.set_yticks(list(positions))
    axis.set_yticklabels(labels, fontsize=8)
    axis.set_xlim(0, 1)
    axis.set_xlabel("average precision")
    if "significant" in columns:
        axis.set_title("* significant difference to the baseline (purple bars; the baseline grey)", fontsize=9)
    axis.grid(True, axis="x", alpha=0.4)
    axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 1.0 / (2 + len(rows))), ncol=4)
    figure.tight_layout()
    figure.savefig(argv[2], dpi=110)


if __name__ == "__main__":
    main(sys.argv)
