"""termalign.report: the page of `termalign report`, from the same library function."""
import json
import os
import pathlib
import random
import re
import subprocess

import pytest

import termalign

ROOT = pathlib.Path(os.environ.get("TERMALIGN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CLI = os.environ.get("TERMALIGN_CLI", str(ROOT / "build" / "termalign"))
SAMPLE = ROOT / "data" / "sample"
GOLD, SRC_TERMS, TGT_TERMS = SAMPLE / "terms-en-fr.txt", SAMPLE / "terms-en.txt", SAMPLE / "terms-fr.txt"


def noisy_runs(folder):
    """Two lists from the sample gold, shuffled, with every third (every fourth) target replaced."""
    gold = GOLD.read_text(encoding="utf-8").splitlines()
    paths = []
    for seed, every in ((1, 3), (2, 4)):
        lines = gold[:]
        random.Random(seed).shuffle(lines)
        text = "".join((line.split("\t")[0] + "\tpas une traduction" if i % every == 0 else line) + "\n"
                       for i, line in enumerate(lines))
        path = folder / f"run{seed}.tsv"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return paths


def evaluation_block(page):
    return json.loads(re.search(r'<script type="application/json" id=evaluation>(.*?)</script>', page, re.S)[1])


def test_report_holds_evaluate_json_and_matches_the_cli(tmp_path):
    runs = noisy_runs(tmp_path)
    lists = ["--src-terms", str(SRC_TERMS), "--tgt-terms", str(TGT_TERMS)]
    pred = [argument for path in runs for argument in ("--pred", path)]
    expected = json.loads(subprocess.run([CLI, "-q", "evaluate", "--gold", str(GOLD), *lists, *pred, "--breakdown",
                                          "--intervals", "--json"], check=True, capture_output=True, text=True).stdout)
    page = termalign.report(runs, gold=GOLD, src_terms=SRC_TERMS, tgt_terms=TGT_TERMS)
    assert evaluation_block(page) == expected
    assert expected[0]["ap"] != expected[1]["ap"]
    # Each run's AP with its own interval, shown beside it in the scores table.
    for run in expected:
        low, high = run["ap_interval"]
        assert low < run["ap"] < high
        assert f"<td class=interval>[{low:.4f}, {high:.4f}]</td>" in page
    subprocess.run([CLI, "-q", "report", "--gold", str(GOLD), *lists, *pred, "--out", str(tmp_path / "cli.html")],
                   check=True)
    assert (tmp_path / "cli.html").read_text(encoding="utf-8") == page
    assert termalign.report(runs, gold=GOLD, src_terms=SRC_TERMS, tgt_terms=TGT_TERMS,
                            out=tmp_path / "module.html") is None
    assert (tmp_path / "module.html").read_text(encoding="utf-8") == page
    # The dataset folder gives the same lists and gold.
    assert evaluation_block(termalign.report(runs, data_dir=SAMPLE)) == expected
    # One path alone is one run.
    assert len(evaluation_block(termalign.report(runs[0], gold=GOLD))) == 1


def test_report_errors_are_the_library_errors(tmp_path):
    with pytest.raises(termalign.UsageError, match="at least one ranked list"):
        termalign.report([], gold=GOLD)
    with pytest.raises(termalign.UsageError, match="go together"):
        termalign.report(noisy_runs(tmp_path), gold=GOLD, src_terms=SRC_TERMS)
    bad = tmp_path / "bad.explain.tsv"
    bad.write_text("rank\tsource\ttarget\tscore\n1\tx\ty\t0.5\n", encoding="utf-8")
    with pytest.raises(termalign.InputError, match=re.escape(f"{bad}:2:")):
        termalign.report(noisy_runs(tmp_path), gold=GOLD, explain=[bad])
