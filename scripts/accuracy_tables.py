#!/usr/bin/python3
"""Writes the accuracy tables of docs/accuracy.md on enfr/train, every figure measured by this run:

- methods: the NumPy reference of the plain method (bench/reference/csls_reference.py, with each normalisation
  named), the plain method in termalign, the unsupervised score with and without a seed lexicon, and the
  re-rankers' 2-fold cross-validated AP (`termalign train-reranker` with the shipped recipe: the logistic
  regression and the trees in one stage, the default's trees in two stages, with and without the corpora), each
  also as a multiple of the plain method;
- groups: the re-rankers' cross-validated AP with each feature group left out (`train-reranker --ablation true`);
- ablations: one `termalign ablate` run per configs/ablations/*.toml (each one change to the default, scored by the
  unsupervised score, `--reranker none`, since the bundled re-ranker was trained on these data) plus the default
  itself, with the scorer's breakdown.

    /usr/bin/python3 scripts/accuracy_tables.py [--build build] [--data ../shared/data] [--doc docs/accuracy.md]

Each table goes between the page's "accuracy_tables.py: NAME begin" and "end" markers (nothing else is changed)
and to stdout. Each ablation file's first comment sentence names its row. Exit 77 when the data are absent.
About 10 minutes on 2 cores: the
`train-reranker --ablation true` runs are most of it.
"""

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The shipped recipe's row in train-reranker's report (the chosen learner in two stages).
SHIPPED = "trees, two stages"
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


def run_ablation(build, train, vectors, base, scratch, name, seed=None):
    """One ablate run of the default (or `base` over it) with the unsupervised score: its results.csv row."""
    out = os.path.join(scratch, name)
    grid = os.path.join(scratch, name + ".toml")
    with open(grid, "w", encoding="utf-8") as f:
        f.write(f"""[base.input]
src_vectors = {toml_string(os.path.join(vectors, "en.bin"))}
tgt_vectors = {toml_string(os.path.join(vectors, "fr.bin"))}
seed = {toml_string(seed or os.path.join(train, "seed-en-fr.txt"))}
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


def numpy_reference(train, vectors, scratch, normalize):
    """The NumPy reference's AP with `normalize` (it prints `AP 0.xxxx` to stderr)."""
    command = [sys.executable, os.path.join(ROOT, "bench", "reference", "csls_reference.py"),
               "--src-vectors", os.path.join(vectors, "en.vec"), "--tgt-vectors", os.path.join(vectors, "fr.vec"),
               "--seed", os.path.join(train, "seed-en-fr.txt"), "--src-terms", os.path.join(train, "terms-en.txt"),
               "--tgt-terms", os.path.join(train, "terms-fr.txt"), "--gold", os.path.join(train, "terms-en-fr.txt"),
               "--normalize", normalize, "--out", os.path.join(scratch, f"numpy-{normalize}.tsv")]
    errors = subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True).stderr
    found = re.findall(r"^AP ([0-9.]+)", errors, re.MULTILINE)
    if not found:
        raise RuntimeError(f"csls_reference.py printed no AP:\n{errors}")
    return float(found[-1])


def train_reranker(build, train, vectors, scratch, corpora):
    """`termalign train-reranker` with the shipped recipe and every group left out in turn: {row: CV AP}."""
    name = "corpus" if corpora else "plain"
    report = os.path.join(scratch, f"reranker-{name}.md")
    command = [os.path.join(build, "termalign"), "-q", "train-reranker",
               "--src-vectors", os.path.join(vectors, "en.bin"), "--tgt-vectors", os.path.join(vectors, "fr.bin"),
               "--seed", os.path.join(train, "seed-en-fr.txt"), "--src-terms", os.path.join(train, "terms-en.txt"),
               "--tgt-terms", os.path.join(train, "terms-fr.txt"), "--gold", os.path.join(train, "terms-en-fr.txt"),
               "--ablation", "true", "--out", os.path.join(scratch, f"reranker-{name}.txt"), "--report", report]
    if corpora:
        command += ["--src-corpus", os.path.join(train, "corpus-en.txt"),
                    "--tgt-corpus", os.path.join(train, "corpus-fr.txt")]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    rows = {}
    with open(report, encoding="utf-8") as f:
        for line in f:
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) == 2 and re.fullmatch(r"[0-9.]+", cells[1]):
                rows[cells[0]] = float(cells[1])
    return rows


def group_figure(rows, group):
    """The CV AP of the chosen learner without `group` ("" if the report has no such row)."""
    for name, value in rows.items():
        if name.startswith(f"{SHIPPED} without the {group} features"):
            return f"{value:.3f}"
    return ""


def replace_between(page, name, table):
    """`page` with `table` between the markers of `name`; unchanged (and a note) without the markers."""
    begin, end = f"<!-- accuracy_tables.py: {name} begin -->", f"<!-- accuracy_tables.py: {name} end -->"
    if begin not in page or end not in page:
        print(f"accuracy_tables.py: no {name} markers in the page: that table is on stdout only", file=sys.stderr)
        return page
    head, rest = page.split(begin, 1)
    return f"{head}{begin}\n{table}\n{end}{rest.split(end, 1)[1]}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    parser.add_argument("--doc", default=os.path.join(ROOT, "docs", "accuracy.md"))
    args = parser.parse_args()
    train, vectors = os.path.join(args.data, "enfr", "train"), os.path.join(args.data, "vectors")
    if not os.path.exists(os.path.join(train, "terms-en-fr.txt")):
        print(f"accuracy_tables.py: {train} is absent: skipped", file=sys.stderr)
        return 77
    ablations = sorted(os.path.join(ROOT, "configs", "ablations", f)
                       for f in os.listdir(os.path.join(ROOT, "configs", "ablations")) if f.endswith(".toml"))
    # The plain method first, the default last, as the page reads.
    ablations.sort(key=lambda path: os.path.basename(path) != "baseline.toml")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for path in ablations + [None]:
            name = os.path.splitext(os.path.basename(path))[0] if path else "default"
            print(f"accuracy_tables.py: {name}", file=sys.stderr)
            result = run_ablation(args.build, train, vectors, path, scratch, name)
            rows.append((row_name(path) if path else "**default** (`--reranker none`)", path, result))
        print("accuracy_tables.py: --seed identical", file=sys.stderr)
        identical = run_ablation(args.build, train, vectors, None, scratch, "identical", seed="identical")
        print("accuracy_tables.py: NumPy reference", file=sys.stderr)
        numpy_unit = numpy_reference(train, vectors, scratch, "unit")
        numpy_ucu = numpy_reference(train, vectors, scratch, "unit-center-unit")
        print("accuracy_tables.py: re-rankers (cross-validated)", file=sys.stderr)
        plain_model = train_reranker(args.build, train, vectors, scratch, False)
        corpus_model = train_reranker(args.build, train, vectors, scratch, True)
    plain = float(rows[0][2]["AP"])
    unsupervised = float(rows[-1][2]["AP"])
    methods = [
        ("NumPy reference of the plain method with the `.vec` files (`bench/reference/csls_reference.py`, "
         "`--normalize unit`, its default)", numpy_unit, False),
        ("the same NumPy reference with `--normalize unit-center-unit` (the plain method's normalisation)",
         numpy_ucu, False),
        ("plain method in termalign (`configs/ablations/baseline.toml`: unit-center-unit, Procrustes, CSLS k = 10)",
         plain, False),
        ("unsupervised score (`--reranker none`)", unsupervised, False),
        ("unsupervised, without a seed lexicon (`--seed identical --reranker none`)", float(identical["AP"]), False),
        ("logistic regression over the default's features, 2-fold cross-validated over source terms",
         plain_model["learner logistic"], False),
        ("the same features, trees (one stage), 2-fold cross-validated", plain_model["learner trees"], False),
        ("**default** (the bundled re-ranker without corpora: trees in two stages), 2-fold cross-validated over "
         "source terms", plain_model[SHIPPED], True),
        ("**default with the corpora** (`--src-corpus corpus-en.txt --tgt-corpus corpus-fr.txt`), 2-fold "
         "cross-validated", corpus_model[SHIPPED], True),
    ]
    method_lines = ["| method | AP | x plain |", "|---|---:|---:|"]
    for name, value, bold in methods:
        figure = f"**{value:.3f}**" if bold else f"{value:.3f}"
        method_lines.append(f"| {name} | {figure} | {value / plain:.2f}x |")
    group_lines = ["| model | all features | without base | without compositional | without word forms | "
                   "without corpus frequency | without corpus context |", "|---|---:|---:|---:|---:|---:|---:|"]
    for label, model in (("without corpora", plain_model), ("with the corpora", corpus_model)):
        others = ", ".join(f"{learner} {model[f'learner {learner}']:.3f}"
                           for learner in ("logistic", "trees", "ranking"))
        group_lines.append(f"| {label} (trees, two stages; one stage: {others}) | {model[SHIPPED]:.3f} | "
                           + " | ".join(group_figure(model, group) for group in
                                        ("base", "compositional", "word-forms", "corpus-frequency",
                                         "corpus-context")) + " |")
    lines = ["| configuration (`configs/ablations/`) | " + " | ".join(COLUMNS) + " |",
             "|---|" + "---:|" * len(COLUMNS)]
    for name, path, result in rows:
        cells = [result["TP"] if c == "TP" else f"{float(result[c]):.3f}" for c in COLUMNS]
        if path is None:
            cells[0] = f"**{cells[0]}**"
        label = f"{name} (`{os.path.basename(path)}`)" if path else name
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    tables = {"methods": "\n".join(method_lines), "groups": "\n".join(group_lines), "ablations": "\n".join(lines)}
    with open(args.doc, encoding="utf-8") as f:
        page = f.read()
    for name, table in tables.items():
        print(table + "\n")
        page = replace_between(page, name, table)
    temporary = args.doc + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(temporary, args.doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
