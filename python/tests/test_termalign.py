"""Tests of the Python module `termalign` on the bundled sample (data/sample, models/sample).

Run by ctest (python.pytest) with PYTHONPATH=build/python, TERMALIGN_CLI (the CLI built beside the module) and
TERMALIGN_SOURCE_DIR set; the CLI's output is the reference wherever the module must give the same.
"""
import gzip
import json
import logging
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import termalign

ROOT = pathlib.Path(os.environ.get("TERMALIGN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CLI = os.environ.get("TERMALIGN_CLI", str(ROOT / "build" / "termalign"))
CONFIG = ROOT / "configs" / "sample.toml"
SAMPLE = ROOT / "data" / "sample"
SRC_TERMS = SAMPLE / "terms-en.txt"
TGT_TERMS = SAMPLE / "terms-fr.txt"
GOLD = SAMPLE / "terms-en-fr.txt"


def read_lines(path):
    return pathlib.Path(path).read_text(encoding="utf-8").splitlines()


def run_cli(out, kernel=None):
    env = dict(os.environ)
    if kernel:
        env["TERMALIGN_TILE_KERNEL"] = kernel
    subprocess.run([CLI, "-q", "align", "--config", str(CONFIG), "--out", str(out / "submission.tsv"),
                    "--scores", str(out / "scores.tsv")], check=True, env=env)
    return out


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """The CLI's submission and score list on the sample with the default configuration."""
    return run_cli(tmp_path_factory.mktemp("cli"))


@pytest.fixture(scope="module")
def sample_pairs():
    return termalign.align(config=str(CONFIG))


def test_align_gives_the_cli_submission_pair_for_pair(cli_run, sample_pairs):
    expected = [tuple(line.split("\t")) for line in read_lines(cli_run / "submission.tsv")]
    assert len(expected) > 3
    assert [(s, t) for s, t, _ in sample_pairs] == expected
    # The scores are the CLI's score column (printed with fewer digits).
    printed = [float(line.split("\t")[2]) for line in read_lines(cli_run / "scores.tsv")]
    assert np.allclose([score for _, _, score in sample_pairs], printed, atol=1e-5)
    assert all(isinstance(s, str) and isinstance(t, str) and isinstance(x, float) for s, t, x in sample_pairs)


def test_the_same_list_with_either_tile_kernel(tmp_path, sample_pairs):
    # The module leaves OpenBLAS's threads (NumPy's too) alone, so its tiles may use Eigen's product where the CLI
    # uses OpenBLAS's: each kernel gives the CLI's list with that kernel.
    try:
        for kernel in ("eigen", "openblas"):
            if kernel == "openblas":
                termalign.use_single_threaded_blas()
            termalign.set_tile_kernel(kernel)
            try:
                termalign.similarity_kernel()
            except termalign.UsageError as error:
                # this build has no OpenBLAS, or its kernel on this machine rounds by position
                assert kernel == "openblas" and "OpenBLAS" in str(error)
                continue
            (tmp_path / kernel).mkdir()
            out = run_cli(tmp_path / kernel, kernel)
            expected = [tuple(line.split("\t")) for line in read_lines(out / "submission.tsv")]
            assert [(s, t) for s, t, _ in termalign.align(config=CONFIG)] == expected
    finally:
        termalign.set_tile_kernel("auto")
    with pytest.raises(termalign.UsageError, match="'auto', 'eigen' or 'openblas'"):
        termalign.set_tile_kernel("blas")


def test_options_override_the_configuration_file(sample_pairs):
    one_each = termalign.align(config=CONFIG, top_m=1, orthographic_candidates=0)
    sources = [s for s, _, _ in one_each]
    assert len(sources) == len(set(sources))  # top_m = 1: each source term once
    assert len(one_each) < len(sample_pairs)
    capped = termalign.align(config=CONFIG, cap=5)
    assert capped == sample_pairs[:5]


def test_options_without_a_configuration_file(sample_pairs):
    pairs = termalign.align(src_vectors=str(ROOT / "models/sample/en.vec"),
                            tgt_vectors=ROOT / "models/sample/fr.vec",  # os.PathLike is taken too
                            seed=str(SAMPLE / "seed-en-fr.txt"), src_terms=str(SRC_TERMS), tgt_terms=str(TGT_TERMS),
                            src_corpus=str(SAMPLE / "corpus-en.txt"), tgt_corpus=str(SAMPLE / "corpus-fr.txt"))
    assert pairs == sample_pairs


def test_the_version_and_bundled_models_are_the_cli_s_and_the_config_s():
    printed = subprocess.run([CLI, "--version"], check=True, capture_output=True, text=True).stdout
    assert printed.startswith(f"termalign {termalign.__version__} (bundled re-ranker models: "
                              f"{termalign.bundled_models_id()}; re-ranker feature revision "
                              f"{termalign.feature_revision};")
    assert termalign.resolve_config().endswith(f"[provenance]\ntermalign = '{termalign.__version__}'\n"
                                               f"bundled_models = '{termalign.bundled_models_id()}'\n")


def test_a_dataset_folder_gives_its_files_and_its_pair(sample_pairs):
    # data/sample names one pair (seed-en-fr.txt, terms-en-fr.txt): its lists, seed and corpora are the run's.
    pairs = termalign.align(src_vectors=ROOT / "models/sample/en.vec", tgt_vectors=ROOT / "models/sample/fr.vec",
                            data_dir=SAMPLE)
    assert pairs == sample_pairs
    with pytest.raises(termalign.InputError, match="the dataset folder has no terms-de.txt"):
        termalign.align(src_vectors=ROOT / "models/sample/en.vec", tgt_vectors=ROOT / "models/sample/fr.vec",
                        data_dir=SAMPLE, pair="en-de")


def test_errors_are_python_exceptions_with_the_message(tmp_path):
    with pytest.raises(termalign.UsageError, match="no_such_option"):
        termalign.align(config=CONFIG, no_such_option=3)
    # A near miss gets the keyword it likely meant, in the style typed.
    with pytest.raises(termalign.UsageError, match="Unknown option 'top_n'; did you mean 'top_m'"):
        termalign.align(config=CONFIG, top_n=3)
    with pytest.raises(termalign.UsageError, match="`top_m` must be an integer"):
        termalign.align(config=CONFIG, top_m="ten")
    with pytest.raises(termalign.UsageError, match="cannot be negative"):
        termalign.align(config=CONFIG, top_m=-1)
    with pytest.raises(termalign.UsageError, match="Unknown normalisation 'sideways'"):
        termalign.align(config=CONFIG, normalization="sideways")
    missing = tmp_path / "missing-terms.txt"
    with pytest.raises(termalign.InputError, match="missing-terms.txt"):
        termalign.align(config=CONFIG, src_terms=str(missing))
    assert issubclass(termalign.InputError, termalign.Error)
    assert issubclass(termalign.Error, RuntimeError)


def test_numpy_scalars_are_option_values_and_a_rejected_keyword_changes_nothing():
    # A grid's values drawn from a NumPy array: np.int64, np.float32, np.bool_ as their Python values.
    resolved = termalign.resolve_config(config=CONFIG, top_m=np.int64(5), orthographic_weight=np.float32(0.25),
                                        whiten=np.bool_(False))
    assert "top_m = 5" in resolved and "weight = 0.25" in resolved and "whiten = false" in resolved
    aligner = termalign.Aligner(config=CONFIG)
    before = aligner.config
    with pytest.raises(termalign.UsageError, match="`k` must be an integer"):
        aligner.set_options(top_m=1, k="three")
    assert aligner.config == before


def test_an_aligner_takes_a_new_dataset_folder_whole(tmp_path):
    # The first folder's lists, seed and corpora are not kept under the new folder's name.
    other = tmp_path / "other"
    other.mkdir()
    for name in ("terms-en.txt", "terms-fr.txt", "seed-en-fr.txt", "corpus-en.txt", "corpus-fr.txt"):
        (other / name).write_bytes((SAMPLE / name).read_bytes())
    aligner = termalign.Aligner(src_vectors=ROOT / "models/sample/en.vec", tgt_vectors=ROOT / "models/sample/fr.vec",
                                data_dir=SAMPLE)
    assert f"src_terms = '{SRC_TERMS}'" in aligner.config
    aligner.set_options(data_dir=other)
    for name in ("terms-en.txt", "terms-fr.txt", "seed-en-fr.txt", "corpus-en.txt", "corpus-fr.txt"):
        assert f"'{other / name}'" in aligner.config
    assert str(SAMPLE) + "/" not in aligner.config.replace(f"data_dir = '{other}'", "")
    fresh = termalign.Aligner(src_vectors=ROOT / "models/sample/en.vec", tgt_vectors=ROOT / "models/sample/fr.vec")
    fresh.set_options(data_dir=SAMPLE)
    assert f"src_terms = '{SRC_TERMS}'" in fresh.config


def test_outputs_are_refused_where_nothing_writes_them(tmp_path):
    for keyword in ("out", "scores", "explain"):
        with pytest.raises(termalign.UsageError, match=f"writes no file, so it takes no {keyword}="):
            termalign.Aligner(config=CONFIG, **{keyword: str(tmp_path / "x.tsv")})
        with pytest.raises(termalign.UsageError, match=f"writes no file, so it takes no {keyword}="):
            termalign.explain(config=CONFIG, **{keyword: str(tmp_path / "x.tsv")})
        aligner = termalign.Aligner(config=CONFIG)
        with pytest.raises(termalign.UsageError, match=f"writes no file, so it takes no {keyword}="):
            aligner.set_options(**{keyword: str(tmp_path / "x.tsv")})
    assert not any(tmp_path.iterdir())


def test_bad_arrays_and_scores_are_usage_errors():
    aligner = termalign.Aligner(config=CONFIG)
    good = np.ones((2, 3), np.float32)
    for bad in (np.nan, np.inf):
        rows = good.copy()
        rows[1, 2] = bad
        with pytest.raises(termalign.UsageError, match=r"X holds a NaN or infinite value \(row 1\)"):
            aligner.score(rows, good)
    one = np.ones((1, 3), np.float32)

    def evidence(scores):
        return aligner.collect_evidence(["a"], ["b"], one, [0], one, [0], scores)

    with pytest.raises(termalign.UsageError, match="scores has no 'csls'"):
        evidence({"source": [0], "target": [0]})
    with pytest.raises(termalign.UsageError, match=r"scores\['target'\] must be a sequence of non-negative"):
        evidence({"source": [0], "target": [0.5], "csls": [1.0], "cosine": [1.0]})
    with pytest.raises(termalign.UsageError, match=r"scores\['source'\] must be a sequence of non-negative"):
        evidence({"source": np.array([-1]), "target": [0], "csls": [1.0], "cosine": [1.0]})


DEADLOCK_SCRIPT = """
import logging, sys, threading
import termalign
root, sample = sys.argv[1], sys.argv[2]
logging.basicConfig(level=logging.INFO, stream=open("/dev/null", "w"))
done = threading.Event()

def work():
    for _ in range(3):
        termalign.align(config=root + "/configs/sample.toml", refine_iterations=0, threads=1)
    done.set()

threading.Thread(target=work).start()
resolves = 0
while not done.is_set():
    termalign.resolve_config(src_vectors=root + "/models/sample/en.vec", tgt_vectors=root + "/models/sample/fr.vec",
                             data_dir=sample)
    resolves += 1
print(resolves)
"""


def test_logging_from_two_threads_does_not_deadlock():
    # One thread aligns (its log lines come from the library's threads, which take the GIL to log) while the main
    # thread holds the GIL and logs through termalign (resolve_config's "language pair ... read from the file
    # names"): the sink must not hold a lock while it waits for the GIL. In a process of its own, so that a
    # deadlock fails the test at the timeout instead of hanging the suite.
    finished = subprocess.run([sys.executable, "-c", DEADLOCK_SCRIPT, str(ROOT), str(SAMPLE)], timeout=120,
                              capture_output=True, text=True, env=dict(os.environ))
    assert finished.returncode == 0, finished.stderr
    assert int(finished.stdout) > 0


INTERRUPT_SCRIPT = """
import sys, time
import numpy as np
import termalign
root, rows = sys.argv[1], int(sys.argv[2])
aligner = termalign.Aligner(config=root + "/configs/sample.toml", threads=2)
vectors = np.random.default_rng(1).standard_normal((2 * rows, 300), dtype=np.float32)
vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
print("scoring", flush=True)
try:
    aligner.score(vectors[:rows], vectors[rows:])
    print("finished", flush=True)
except KeyboardInterrupt:
    print(f"interrupted at {time.monotonic()}", flush=True)
    # The request to stop ends with the call: the next call runs whole.
    print(len(aligner.score(vectors[:100], vectors[100:300])["source"]), flush=True)
    raise
"""


def test_ctrl_c_stops_a_long_call_with_keyboard_interrupt():
    # CSLS of 30000 x 30000 random unit rows (d = 300) takes about 10 s on 2 cores; SIGINT a second into it
    # raises KeyboardInterrupt (not termalign.Error) within about a second of work, and the process ends as
    # Python ends on an uncaught KeyboardInterrupt. In a process of its own, so that the signal reaches it alone.
    child = subprocess.Popen([sys.executable, "-c", INTERRUPT_SCRIPT, str(ROOT), "30000"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert child.stdout.readline() == "scoring\n"
        time.sleep(1.0)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, errors = child.communicate(timeout=120)
    finally:
        child.kill()
    lines = out.splitlines()
    assert lines and lines[0].startswith("interrupted at "), (out, errors)
    latency = float(lines[0].split()[-1]) - sent
    assert latency < 1.5, f"KeyboardInterrupt {latency:.2f} s after SIGINT"
    assert int(lines[1]) > 0
    assert child.returncode == -signal.SIGINT
    assert "KeyboardInterrupt" in errors and "termalign.Error" not in errors


SIGNAL_IN_LOGGING_SCRIPT = """
import logging, signal, sys
import termalign
# Python runs a signal's handler on the thread that runs Python: here, inside the first termalign log line handed
# to logging, while align() runs. Its KeyboardInterrupt must stop the call, not be lost in the log line.
class RaiseOnce(logging.Handler):
    raised = False
    def emit(self, record):
        if not RaiseOnce.raised:
            RaiseOnce.raised = True
            signal.raise_signal(signal.SIGINT)
logging.getLogger("termalign").addHandler(RaiseOnce())
logging.getLogger("termalign").setLevel(logging.INFO)
try:
    termalign.align(config=sys.argv[1] + "/configs/sample.toml")
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_ctrl_c_during_a_log_line_stops_the_call():
    child = subprocess.run([sys.executable, "-c", SIGNAL_IN_LOGGING_SCRIPT, str(ROOT)], capture_output=True,
                           text=True, timeout=300)
    assert child.stdout == "interrupted\n", (child.stdout, child.stderr)


def test_every_option_has_a_keyword():
    names = dict(termalign.option_names())
    assert names["top_m"] == "ranking.top_m"
    assert names["orthographic_weight"] == "orthography.weight"
    assert names["src_vectors"] == "input.src_vectors"
    resolved = termalign.resolve_config(CONFIG, top_m=4, whiten=False, corpus_weight=1)
    assert "top_m = 4" in resolved and "whiten = false" in resolved and "corpus_weight = 1.0" in resolved


def test_evaluate_gives_the_keys_and_values_of_evaluate_json(cli_run):
    submission = cli_run / "submission.tsv"
    cli = subprocess.run([CLI, "evaluate", "--gold", str(GOLD), "--pred", str(submission), "--src-terms",
                          str(SRC_TERMS), "--tgt-terms", str(TGT_TERMS), "--json"],
                         check=True, capture_output=True, text=True)
    expected = json.loads(cli.stdout)
    result = termalign.evaluate(str(GOLD), str(submission), src_terms=str(SRC_TERMS), tgt_terms=str(TGT_TERMS))
    assert result == expected
    assert 0 < result["ap"] < 1
    # The pairs of align() score as their file does.
    pairs = [(s, t) for s, t, _ in termalign.align(config=CONFIG)]
    assert termalign.evaluate(GOLD, pairs, src_terms=SRC_TERMS, tgt_terms=TGT_TERMS) == expected
    with pytest.raises(termalign.UsageError):
        termalign.evaluate(GOLD, submission, ignore_oov=True)  # needs the term lists
    # align()'s own triples score alike.
    triples = termalign.align(config=CONFIG)
    assert termalign.evaluate(GOLD, triples, src_terms=SRC_TERMS, tgt_terms=TGT_TERMS) == expected


def test_inflected_first_lists_what_evaluate_forms_language_writes(tmp_path):
    # A Hunspell dictionary of two Russian nouns and their forms, written here.
    (tmp_path / "ru_RU.aff").write_text("SET UTF-8\nSFX A Y 3\nSFX A 0 а .\nSFX A 0 ы .\nSFX A 0 ов .\n",
                                        encoding="utf-8")
    (tmp_path / "ru_RU.dic").write_text("2\nфайл/A\nцвет/A\n", encoding="utf-8")
    gold = [("files", "файлы"), ("color", "цвет"), ("file", "файл")]
    pred = [("files", "файлов"), ("files", "файлы"), ("color", "цвет"), ("file", "цвета")]
    counted = termalign.inflected_first(gold, pred, "ru", hunspell_dir=tmp_path)
    assert counted["analyser"].startswith("hunspell ru_RU")
    assert (counted["source_terms"], counted["with_candidate"], counted["correct"], counted["inflected"]) == (3, 3, 1, 1)
    assert counted["cases"] == [("files", "файлов", "файлы")]
    # The CLI's --inflected file holds the same case.
    (tmp_path / "gold.tsv").write_text("".join(f"{s}\t{t}\n" for s, t in gold), encoding="utf-8")
    (tmp_path / "run.tsv").write_text("".join(f"{s}\t{t}\n" for s, t in pred), encoding="utf-8")
    subprocess.run([CLI, "-q", "evaluate", "--gold", str(tmp_path / "gold.tsv"), "--pred", str(tmp_path / "run.tsv"),
                    "--forms-language", "ru", "--hunspell-dir", str(tmp_path), "--inflected",
                    str(tmp_path / "cases.tsv")], check=True, capture_output=True)
    assert read_lines(tmp_path / "cases.tsv")[1:] == [f"{tmp_path / 'run.tsv'}\tfiles\tфайлов\tфайлы"]


@pytest.mark.parametrize("pairs, message", [
    (["1st key\t1er mot-clé"], "Pair 1 is a string"),  # lines of a file are no pairs
    ([("a", "b"), "ab"], "Pair 2 is a string"),  # nor is a string of two letters
    ([("a", "b", "c", "d")], "Pair 1 has 4 items"),
    ([("a",)], "Pair 1 has 1 items"),
    ([("a", 1)], "Pair 1: its source and target must be strings"),
    ([("a", "b", "high")], "its score a number"),
    ([3], "Pair 1 is not a"),
])
def test_evaluate_rejects_what_is_not_a_pair(pairs, message):
    with pytest.raises(termalign.UsageError, match=message):
        termalign.evaluate([("a", "b")], pairs)
    with pytest.raises(termalign.UsageError, match=message):
        termalign.evaluate(pairs, [("a", "b")])


def test_align_writes_no_file_and_says_so_when_asked_to(tmp_path):
    for keyword in ("out", "scores", "explain"):
        with pytest.raises(termalign.UsageError, match=f"writes no file, so it takes no {keyword}="):
            termalign.align(config=CONFIG, **{keyword: str(tmp_path / "x.tsv")})
    assert not any(tmp_path.iterdir())


def test_aligner_stages_with_numpy(sample_pairs):
    aligner = termalign.Aligner(config=CONFIG)
    (source_words, S), (target_words, T) = aligner.load_vectors()
    assert S.dtype == np.float32 and S.ndim == 2 and S.shape[0] == len(source_words)
    assert T.shape[1] == S.shape[1] and len(target_words) == T.shape[0]
    mapping = aligner.fit_mapping()
    d = S.shape[1]
    assert mapping["source_transform"].shape[0] == d and mapping["normalization"] == "center"
    source_terms, target_terms = read_lines(SRC_TERMS), read_lines(TGT_TERMS)
    X, x_ids = aligner.compose(source_terms, "source")
    Z, z_ids = aligner.compose(target_terms, side="target")
    assert X.shape == (len(x_ids), mapping["source_transform"].shape[1]) and Z.shape[0] == len(z_ids)
    assert np.allclose(np.linalg.norm(X, axis=1), 1, atol=1e-5)
    scored = aligner.score(X, Z)
    # CSLS against NumPy's brute force: 2 x.z - r_T(x) - r_S(z), k = 3 nearest on the other side.
    sims = X.astype(np.float64) @ Z.T.astype(np.float64)
    r_t = np.sort(sims, axis=1)[:, -3:].mean(axis=1)
    r_s = np.sort(sims, axis=0)[-3:, :].mean(axis=0)
    assert np.allclose(scored["source_means"], r_t, atol=1e-4)
    assert np.allclose(scored["target_means"], r_s, atol=1e-4)
    rows, cols = scored["source"], scored["target"]
    assert np.allclose(scored["csls"], 2 * sims[rows, cols] - r_t[rows] - r_s[cols], atol=1e-4)
    best = np.argmax(2 * sims - r_s[None, :], axis=1)  # each row's best target by CSLS
    first = {}
    for r, c in zip(rows, cols):
        first.setdefault(int(r), int(c))
    assert all(first[r] == best[r] or np.isclose(2 * sims[r, first[r]] - r_s[first[r]], 2 * sims[r, best[r]] - r_s[best[r]])
               for r in first)
    # The stage takes its neighbourhoods within X and Z: "vocabulary" is align()'s alone, and says so.
    aligner.set_options(neighbourhood="vocabulary")
    with pytest.raises(termalign.UsageError, match="run align\\(\\) instead"):
        aligner.score(X, Z)
    aligner.set_options(neighbourhood="terms")
    # With a re-ranker (the default) the scoring also gives each target's best sources, its evidence.
    assert len(scored["reverse_source"]) == len(scored["reverse_csls"]) > 0
    candidates = aligner.collect_evidence(source_terms, target_terms, X, x_ids, Z, z_ids, scored)
    assert len(candidates) >= len(rows)  # the targets' own and the orthographic candidates added
    # The stages with the default options give the pipeline's list, pair for pair: re-ranker and orthography too.
    ranked = aligner.rank(candidates)
    assert ranked == aligner.align() == sample_pairs
    # Without them as well (the scoring then gives no reverse lists).
    aligner.set_options(orthographic_weight=0, orthographic_candidates=0, reranker="none")
    plain = aligner.score(X, Z)
    assert "reverse_source" not in plain
    plain_ranked = aligner.rank(aligner.collect_evidence(source_terms, target_terms, X, x_ids, Z, z_ids, plain))
    assert plain_ranked == aligner.align() != ranked
    # Candidates whose rows have no term id are refused.
    broken = dict(plain, source=plain["source"] + len(x_ids))
    with pytest.raises(termalign.UsageError, match="no term id"):
        aligner.collect_evidence(source_terms, target_terms, X, x_ids, Z, z_ids, broken)


@pytest.mark.parametrize("way", ["seed lexicon", "induced seed", "dictionary", "bin.gz"])
def test_every_way_of_running_gives_one_list(way, tmp_path):
    # termalign.align, the Aligner's steps (the ranked rounds included) and the CLI give one list, for a seed
    # lexicon, an induced seed, a dictionary without a seed lexicon and gzipped .bin models with corpora.
    options = {"config": CONFIG, "threads": 2, "src_corpus": "", "tgt_corpus": ""}
    if way == "induced seed":
        options["seed"] = "auto"
    elif way == "dictionary":
        options.update(seed="auto", dictionary=[str(SAMPLE / "seed-en-fr.txt")])
    elif way == "bin.gz":
        for language in ("en", "fr"):
            with open(ROOT / "models" / "sample" / f"{language}.bin", "rb") as model, \
                    gzip.open(tmp_path / f"{language}.bin.gz", "wb") as packed:
                packed.write(model.read())
        options.update(src_vectors=str(tmp_path / "en.bin.gz"), tgt_vectors=str(tmp_path / "fr.bin.gz"),
                       src_corpus=str(SAMPLE / "corpus-en.txt"), tgt_corpus=str(SAMPLE / "corpus-fr.txt"))
    aligned = termalign.align(**options)
    assert len(aligned) > 100
    aligner = termalign.Aligner(**options)
    source_terms, target_terms = read_lines(SRC_TERMS), read_lines(TGT_TERMS)
    aligner.fit_mapping()
    assert aligner.ranked_rounds == (2 if way == "induced seed" else 0)
    candidates = None
    for run in range(aligner.ranked_rounds + 1):
        if run:
            aligner.fit_ranked_round(candidates)
        X, x_ids = aligner.compose(source_terms, "source")
        Z, z_ids = aligner.compose(target_terms, "target")
        candidates = aligner.collect_evidence(source_terms, target_terms, X, x_ids, Z, z_ids, aligner.score(X, Z))
    assert candidates.decisions["earlier_runs"] == aligner.ranked_rounds
    assert candidates.decisions["seed"] == {"seed lexicon": "lexicon", "induced seed": "induced",
                                            "dictionary": "dictionary", "bin.gz": "lexicon"}[way]
    assert aligner.rank(candidates) == aligned
    # The CLI's list, from the configuration termalign.align's options make.
    flags = ["--threads", "2", "--src-corpus", options["src_corpus"], "--tgt-corpus", options["tgt_corpus"]]
    for key in ("seed", "src_vectors", "tgt_vectors"):
        if key in options:
            flags += ["--" + key.replace("_", "-"), str(options[key])]
    for dictionary in options.get("dictionary", []):
        flags += ["--dictionary", dictionary]
    subprocess.run([CLI, "-q", "align", "--config", str(CONFIG), *flags, "--out", str(tmp_path / "cli.tsv"),
                    "--scores", str(tmp_path / "cli.scores.tsv")], check=True)
    cli = [line.split("\t") for line in read_lines(tmp_path / "cli.scores.tsv")]
    assert [(s, t) for s, t, _ in cli] == [(s, t) for s, t, _ in aligned]
    assert all(abs(float(score) - mine) <= 5e-7 for (_, _, score), (_, _, mine) in zip(cli, aligned))


def test_aligner_composes_closed_compounds_as_align_does_for_its_list():
    # styleremplissage (style + remplissage) is one of the sample French list's few closed compounds: too few
    # (under 2 % of its words) for the list to split them, so align() gives it no vector, nor does compose(), alone
    # or in its list. A list of many (closed_compound_share=0: any) splits it.
    aligner = termalign.Aligner(config=CONFIG)
    aligner.fit_mapping()
    target_terms = read_lines(TGT_TERMS)
    _, ids = aligner.compose(target_terms, "target")
    assert target_terms.index("styleremplissage") not in set(ids.tolist())
    alone, _ = aligner.compose(["styleremplissage"], "target")
    assert alone.shape[0] == 0
    aligner.set_options(closed_compound_share=0)
    alone, _ = aligner.compose(["styleremplissage"], "target")
    assert alone.shape[0] == 1
    # Vectors given in memory: the configured list still decides.
    (source_words, S), (target_words, T) = termalign.Aligner(config=CONFIG).load_vectors()
    given = termalign.Aligner(config=CONFIG)
    given.set_vectors(source_words, S, target_words, T)
    given.fit_mapping()
    alone, _ = given.compose(["styleremplissage"], "target")
    assert alone.shape[0] == 0


def test_aligner_keeps_its_vectors(caplog):
    aligner = termalign.Aligner(config=CONFIG)
    first = aligner.align()
    with caplog.at_level(logging.INFO, logger="termalign"):
        second = aligner.align(top_m=5)
    assert aligner.files_read == 2  # one source and one target file, for both runs
    assert any("reused" in record.getMessage() for record in caplog.records)
    assert first == termalign.align(config=CONFIG)
    assert second == termalign.align(config=CONFIG, top_m=5)


def test_an_aligner_reads_a_file_rewritten_since_its_last_run(tmp_path):
    # A notebook fixes a term list (or the vectors) between two runs: the second run reads the files as they are.
    terms = tmp_path / "terms-en.txt"
    vectors = tmp_path / "en.vec"
    terms.write_bytes(SRC_TERMS.read_bytes())
    vectors.write_bytes((ROOT / "models/sample/en.vec").read_bytes())
    options = dict(config=CONFIG, src_terms=terms, src_vectors=vectors, refine_iterations=0)
    aligner = termalign.Aligner(**options)
    assert aligner.align() == termalign.align(**options)
    kept = read_lines(SRC_TERMS)[:40]
    terms.write_text("\n".join(kept) + "\n", encoding="utf-8")
    lines = (ROOT / "models/sample/en.vec").read_text(encoding="utf-8").splitlines()
    rows = [line for line in lines[1:] if not line.startswith("file ")]  # one word fewer
    vectors.write_text(f"{len(rows)} {lines[0].split()[1]}\n" + "\n".join(rows) + "\n", encoding="utf-8")
    second = aligner.align()
    assert {source for source, _, _ in second} <= set(kept)
    assert second == termalign.align(**options)
    assert aligner.files_read == 3  # the source vectors twice, the target vectors once


def test_vectors_given_as_numpy_arrays(sample_pairs):
    loaded = termalign.Aligner(config=CONFIG)
    (source_words, S), (target_words, T) = loaded.load_vectors()
    given = termalign.Aligner(config=CONFIG)
    given.set_vectors(source_words, S, target_words, T)
    assert given.align() == sample_pairs
    assert given.files_read == 0
    with pytest.raises(termalign.UsageError, match="dimension"):
        given.set_vectors(source_words, S, target_words, T[:, :-1])


def test_logs_go_through_python_logging(caplog):
    with caplog.at_level(logging.INFO, logger="termalign"):
        termalign.align(config=CONFIG)
    messages = [record.getMessage() for record in caplog.records if record.name == "termalign"]
    assert any("ranked" in message for message in messages)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="termalign"):
        termalign.align(config=CONFIG)
    assert not [r for r in caplog.records if r.name == "termalign" and r.levelno < logging.WARNING]


def test_the_gil_is_released_during_the_work():
    # Another Python thread keeps running while align works: the longest gap between its ticks is well below the
    # alignment's time (with the GIL held, the gap would be the whole alignment).
    done = threading.Event()
    span = {}

    def work():
        start = time.perf_counter()
        for _ in range(3):
            termalign.align(config=CONFIG, threads=1)
        span["seconds"] = time.perf_counter() - start
        done.set()

    ticks = []
    worker = threading.Thread(target=work)
    worker.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    worker.join()
    if span["seconds"] < 0.05:
        pytest.skip("the alignment is too quick to tell")
    gaps = np.diff(ticks)
    assert len(ticks) > 5 and gaps.max() < span["seconds"] / 2


def test_train_reranker_reports_its_cross_validated_list_and_its_model_aligns(tmp_path):
    result = termalign.train_reranker(config=ROOT / "configs" / "sample.toml", learner="logistic", folds=3,
                                      src_corpus="", tgt_corpus="", gold=GOLD)
    assert result["learner"] == "logistic"
    assert set(result["learners"]) == {"logistic"}
    held_out = result["held_out"]
    assert held_out and all(len(row) == 5 for row in held_out)
    scores = [row[4] for row in held_out]
    assert scores == sorted(scores, reverse=True)
    # Capped as align's list: the gold pairs among its rows are at most the candidates' positives.
    assert sum(row[2] for row in held_out) <= result["positives"]
    gold = {tuple(line.split("\t")) for line in pathlib.Path(GOLD).read_text(encoding="utf-8").splitlines()}
    assert all(row[2] == ((row[0], row[1]) in gold) for row in held_out)
    # The list's AP, by the scorer, is the cross-validated AP reported.
    report = termalign.evaluate(GOLD, [(row[0], row[1]) for row in held_out], SRC_TERMS, TGT_TERMS)
    assert report["ap"] == pytest.approx(result["cross_validated_ap"], abs=1e-9)
    assert 0 < result["candidate_recall"] <= 1
    # The model text is a model file align reads.
    model = tmp_path / "model.txt"
    model.write_text(result["model"])
    pairs = termalign.align(config=ROOT / "configs" / "sample.toml", src_corpus="", tgt_corpus="",
                            reranker=str(model))
    assert pairs and pairs[0][2] >= pairs[-1][2]
    # Two stages by default (after the lines that say how the model was made); one on request, whose
    # cross-validated AP is the first stage's of the run above.
    body = [line for line in result["model"].splitlines() if not line.startswith("#")]
    assert result["stages"] == 2 and body[0] == "termalign-reranker-stages 2"
    assert "\n# feature revision 1\n" in result["model"] and "\n# input gold: terms-en-fr.txt, " in result["model"]
    single = termalign.train_reranker(config=ROOT / "configs" / "sample.toml", learner="logistic", folds=3,
                                      src_corpus="", tgt_corpus="", gold=GOLD, stages=1)
    assert single["stages"] == 1
    assert single["cross_validated_ap"] == pytest.approx(result["one_stage_ap"], abs=1e-12)


def test_train_reranker_needs_a_gold():
    with pytest.raises(termalign.UsageError, match="needs the gold"):
        termalign.train_reranker(config=ROOT / "configs" / "sample.toml", learner="logistic")


@pytest.mark.parametrize("options, message", [
    ({"rounds": 0}, r"rounds \(--rounds\) must be at least 1"),
    ({"eta": 0.0}, r"eta \(--eta\) must be in \(0, 1\]"),
    ({"l2": -1.0}, r"l2 \(--l2\) must be 0 or more"),
    ({"learner": "forest"}, "expected logistic, trees, ranking or auto"),
])
def test_train_reranker_rejects_values_that_would_train_nothing(options, message):
    with pytest.raises(termalign.UsageError, match=message):
        termalign.train_reranker(config=ROOT / "configs" / "sample.toml", gold=GOLD, **options)


def sample_grid(tmp_path, grid_section):
    """A grid file over the sample (unsupervised score, no refinement) with this [grid] section."""
    models = ROOT / "models" / "sample"
    grid = tmp_path / "grid.toml"
    grid.write_text(
        "[base.input]\n"
        f'src_vectors = "{models / "en.vec"}"\ntgt_vectors = "{models / "fr.vec"}"\n'
        f'seed = "{SAMPLE / "seed-en-fr.txt"}"\nsrc_terms = "{SRC_TERMS}"\ntgt_terms = "{TGT_TERMS}"\n'
        'reranker = "none"\n[base.mapping]\nrefine_iterations = 0\n'
        f'[dataset]\ngold = "{GOLD}"\n[output]\ndir = "out"\n' + grid_section)
    return grid


def test_ablate_gives_options_varied_together_each_under_its_name(tmp_path):
    grid = sample_grid(tmp_path, '[grid]\nreweight = [{mapping.src_reweight = 0.5, mapping.tgt_reweight = 0.5}, '
                                 '{mapping.src_reweight = 0.25, mapping.tgt_reweight = 1.0}]\n')
    runs = sorted(termalign.ablate(grid), key=lambda run: run["run"])
    assert [run["options"] for run in runs] == [
        {"mapping.src_reweight": 0.5, "mapping.tgt_reweight": 0.5},
        {"mapping.src_reweight": 0.25, "mapping.tgt_reweight": 1.0}]
    assert [run["labels"] for run in runs] == [{"reweight": "0.5 / 0.5"}, {"reweight": "0.25 / 1.0"}]


def test_ablate_runs_a_grid_and_each_run_scores_as_align_does(tmp_path):
    models = ROOT / "models" / "sample"
    grid = sample_grid(tmp_path, '[grid]\n"scoring.k" = [3, 10]\n"orthography.weight" = [0.0, 0.1]\n')
    runs = termalign.ablate(grid)
    assert len(runs) == 4
    assert [r["ap"] for r in runs] == sorted((r["ap"] for r in runs), reverse=True)
    assert sorted(r["run"] for r in runs) == [1, 2, 3, 4]
    for run in runs:
        k, weight = run["options"]["scoring.k"], run["options"]["orthography.weight"]
        assert type(k) is int and type(weight) is float
        assert run["labels"] == {"scoring.k": str(k), "orthography.weight": str(weight)}
        pairs = termalign.align(src_vectors=models / "en.vec", tgt_vectors=models / "fr.vec",
                                seed=SAMPLE / "seed-en-fr.txt", src_terms=SRC_TERMS, tgt_terms=TGT_TERMS,
                                reranker="none", refine_iterations=0, k=k, orthographic_weight=weight)
        direct = termalign.evaluate(GOLD, pairs, src_terms=SRC_TERMS, tgt_terms=TGT_TERMS)
        assert run["ap"] == pytest.approx(direct["ap"], abs=1e-12)
        assert run["seconds"] > 0
    # The same files as the CLI's runner, the best run first in results.csv.
    out = tmp_path / "out"
    assert (out / "results.md").exists() and (out / "best.config.toml").exists()
    assert not (out / "best.curve.png").exists()  # no plot_script given
    best_line = (out / "results.csv").read_text().splitlines()[1]
    assert best_line.startswith(f"{runs[0]['run']},")
    with pytest.raises(termalign.InputError, match="cannot open file"):
        termalign.ablate(tmp_path / "missing.toml")


def test_ablate_repeats_give_mean_sd_and_the_marks_in_the_dicts_and_the_plot(tmp_path):
    # Without refinement the split seed plays no part: the repeats agree and the sd is 0. k = 1 against k = 10
    # moves the unsupervised AP; the identical point (k = 10 again, through a tied axis) is never marked.
    grid = sample_grid(tmp_path, '[grid]\nvariant = [{scoring.k = 10}, {scoring.k = 1}, '
                                 '{scoring.k = 10, scoring.threads = 1}]\n')
    runs = sorted(termalign.ablate(grid, repeats=2, resamples=2000, level=0.05,
                                   plot_script=ROOT / "scripts" / "plot_curve.py"),
                  key=lambda run: run["run"])
    for run in runs:
        assert run["ap_repeats"] == [run["ap"], run["ap"]]
        assert run["ap_mean"] == pytest.approx(run["ap"], abs=1e-15)
        assert run["ap_sd"] == 0
    assert runs[0]["baseline"] and not runs[0]["compared"] and runs[0]["p_value"] is None
    assert runs[2]["compared"] and runs[2]["difference"] == 0 and runs[2]["p_value"] == 1
    assert not runs[2]["significant"]
    assert runs[1]["difference"] == pytest.approx(runs[1]["ap_mean"] - runs[0]["ap_mean"], abs=1e-15)
    assert runs[1]["significant"] == (runs[1]["p_value"] < 0.05)
    out = tmp_path / "out"
    document = json.loads((out / "results.json").read_text())
    assert document["repeats"] == 2 and document["level"] == 0.05 and document["baseline"] == 1
    assert {row["run"]: row["significant"] for row in document["runs"]} == {
        run["run"]: run["significant"] for run in runs}
    assert (out / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(termalign.UsageError, match="--repeats must be at least 1"):
        termalign.ablate(grid, repeats=0)


def test_plot_ablation_labels_mark_the_significant_runs_and_the_baseline():
    import importlib.util
    spec = importlib.util.spec_from_file_location("plot_ablation", ROOT / "scripts" / "plot_ablation.py")
    plot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plot)
    row = {"run": "2", "scoring.k": "3"}
    assert plot.run_label({**row, "significant": "yes"}, ["scoring.k"]) == "scoring.k=3 *"
    assert plot.run_label({**row, "significant": "no"}, ["scoring.k"]) == "scoring.k=3"
    assert plot.run_label({**row, "significant": "baseline"}, ["scoring.k"]) == "scoring.k=3 (baseline)"
    assert plot.run_label(row, []) == "run 2"  # an older table without the column
    assert plot.bar_colour({"significant": "yes"}) != plot.bar_colour({"significant": "no"})


def test_explain_gives_the_parts_of_each_pair_of_align(sample_pairs):
    rows = termalign.explain(config=CONFIG)
    assert [(r["source"], r["target"]) for r in rows] == [(s, t) for s, t, _ in sample_pairs]
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    for row, (_, _, score) in zip(rows, sample_pairs):
        assert row["score"] == pytest.approx(score, abs=1e-5)
        parts = row["reranker_bias"] + sum(v for k, v in row.items() if k.startswith("contribution:"))
        parts += row["form_order_shift"]  # the agreement order's
        assert parts == pytest.approx(row["score"], abs=1e-4)  # the re-ranker's parts sum to its score
    plain = termalign.explain(config=CONFIG, reranker="none")
    for row in plain:
        assert row["csls"] == pytest.approx(2 * row["cosine"] - row["r_T"] - row["r_S"], abs=1e-5)
        assert row["score"] == pytest.approx(row["csls"] + row["orthographic_bonus"], abs=1e-5)


def test_train_vectors_writes_the_cli_files(tmp_path):
    small = dict(dim=8, epoch=1, min_count=2, bucket=1000, threads=1, seed=3)
    report = termalign.train_vectors(SAMPLE / "corpus-en.txt", tmp_path / "py", terms=SRC_TERMS, **small)
    assert report["vec"] == str(tmp_path / "py.vec") and (tmp_path / "py.bin").exists()
    header = (tmp_path / "py.vec").read_text().splitlines()[0].split()
    assert int(header[0]) == report["vocabulary"] - 1 or int(header[0]) == report["vocabulary"]
    assert int(header[1]) == 8
    assert report["lines"] > 0 and report["joined_terms"] > 0
    # One thread and a fixed seed: the CLI writes the same vectors.
    subprocess.run([CLI, "train-vectors", "--corpus", str(SAMPLE / "corpus-en.txt"), "--out", str(tmp_path / "cli"),
                    "--terms", str(SRC_TERMS), "--dim", "8", "--epoch", "1", "--min-count", "2", "--bucket", "1000",
                    "--threads", "1", "--seed", "3"], check=True, capture_output=True)
    assert (tmp_path / "py.vec").read_bytes() == (tmp_path / "cli.vec").read_bytes()
    with pytest.raises(termalign.UsageError, match="dim"):
        termalign.train_vectors(SAMPLE / "corpus-en.txt", tmp_path / "bad", dim=0)
