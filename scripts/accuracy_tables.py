#!/usr/bin/python3
"""Writes the README's ablation table on enfr/train: one `termalign ablate` run per configs/ablations/*.toml (each
one change to the default, scored by the unsupervised score, `--reranker none`, since the bundled re-ranker was
trained on these data) plus the default itself, with the scorer's breakdown.

    /usr/bin/python3 scripts/accuracy_tables.py [--build build] [--data ../shared/data] [--readme README.md]

The table goes between the README's "accuracy_tables.py: begin" and "end" markers (nothing else is changed) and to
stdout. Each ablation file's first comment sentence names its row. Exit 77 when the data are absent.
"""

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- accuracy_tables.py: begin -->", "<!-- accuracy_tables.py: end -->"
COLUMNS = ["AP", "AP identical", "AP close", "AP far", "AP single-word", "AP multi-word", "TP"]


def toml_string(path):
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def row_name(path):
    """The ablation's first comment sentence, after "Ablation: " (the file name when there is none)."""
    text = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                break
            text.append(line[1:].strip())
    sentence = " ".join(text).split(". ")[0].rstrip(".")
    sentence = re.sub(r"^Ablation:\s*", "", sentence)
    return sentence or os.path.basename(path)


def run_ablation(build, train, vectors, base, scratch, name):
    """One ablate run of the default (or `base` over it) with the unsupervised score: its results.csv row."""
    out = os.path.join(scratch, name)
    grid = os.path.join(scratch, name + ".toml")
    with open(grid, "w", encoding="utf-8") as f:
        f.write(f"""[base.input]
src_vectors = {toml_string(os.path.join(vectors, "en.bin"))}
tgt_vectors = {toml_string(os.path.join(vectors, "fr.bin"))}
seed = {toml_string(os.path.join(train, "seed-en-fr.txt"))}
src_terms = {toml_string(os.path.join(train, "terms-en.txt"))}
tgt_terms = {toml_string(os.path.join(train, "terms-fr.txt"))}
reranker = "none"
[dataset]
gold = {toml_string(os.path.join(train, "terms-en-fr.txt"))}
[grid]
"scoring.threads" = [0]  # one run: the output does not depend on the thread count
[output]
dir = {toml_string(out)}
""")
    command = [os.path.join(build, "termalign"), "-q", "ablate", "--grid", grid]
    if base:
        command += ["--base", base]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "results.csv"), encoding="utf-8") as f:
        return next(csv.DictReader(f))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    parser.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    args = parser.parse_args()
    train, vectors = os.path.join(args.data, "enfr", "train"), os.path.join(args.data, "vectors")
    if not os.path.exists(os.path.join(train, "terms-en-fr.txt")):
        print(f"accuracy_tables.py: {train} is absent: skipped", file=sys.stderr)
        return 77
    ablations = sorted(os.path.join(ROOT, "configs", "ablations", f)
                       for f in os.listdir(os.path.join(ROOT, "configs", "ablations")) if f.endswith(".toml"))
    # The plain method first, the default last, as the README reads.
    ablations.sort(key=lambda path: os.path.basename(path) != "baseline.toml")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for path in ablations + [None]:
            name = os.path.splitext(os.path.basename(path))[0] if path else "default"
            print(f"accuracy_tables.py: {name}", file=sys.stderr)
            result = run_ablation(args.build, train, vectors, path, scratch, name)
            rows.append((row_name(path) if path else "**default** (`--reranker none`)", path, result))
    lines = ["| configuration (`configs/ablations/`) | " + " | ".join(COLUMNS) + " |",
             "|---|" + "---:|" * len(COLUMNS)]
    for name, path, result in rows:
        cells = [result["TP"] if c == "TP" else f"{float(result[c]):.3f}" for c in COLUMNS]
        if path is None:
            cells[0] = f"**{cells[0]}**"
        label = f"{name} (`{os.path.basename(path)}`)" if path else name
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print(table)
    with open(args.readme, encoding="utf-8") as f:
        readme = f.read()
    if BEGIN in readme and END in readme:
        head, rest = readme.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        new = f"{head}{BEGIN}\n{table}\n{END}{tail}"
        temporary = args.readme + ".tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(new)
        os.replace(temporary, args.readme)
    else:
        print(f"accuracy_tables.py: no markers in {args.readme}: the table is on stdout only", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
