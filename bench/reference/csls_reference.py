#!/usr/bin/python3
"""NumPy reference implementation of the termalign baseline (Procrustes + mean composition + CSLS).

Deliberately plain: it re-derives every step from the task description so the C++ pipeline can be checked
against it (figures, timings). Needs numpy only; run it with /usr/bin/python3.

    /usr/bin/python3 bench/reference/csls_reference.py --src-vectors en.vec --tgt-vectors fr.vec \
        --seed seed-en-fr.txt --src-terms terms-en.txt --tgt-terms terms-fr.txt --out submission.tsv \
        [--k 10] [--top-m 10] [--normalize unit] [--gold terms-en-fr.txt]

Steps:
  1. read the .vec files, by default only the words of the terms (split on spaces) and of the seed lexicon,
     each also lower-cased (--all-words keeps every word);
  2. normalise every loaded vector (none | unit | center | unit-center-unit; centring uses the mean of the
     loaded vectors, so with `center` the result depends on --all-words);
  3. fit W = U V^T from the SVD of Xs^T Zt over the seed pairs whose two words are known (each word matched as
     written, else lower-cased);
  4. compose each term as the mean of its word vectors (source words mapped by W; a token unknown as written is
     tried lower-cased; a term with no known word is left out), then renormalise to unit length;
  5. CSLS(x, y) = 2 cos(x, y) - r_T(x) - r_S(y), with r_T(x) the mean of the k largest cosines of x to the
     target terms and r_S(y) the mean of the k largest cosines of y to the mapped source terms;
  6. keep each source term's top-m targets (ties: lower target index first; --top-m 0 keeps all), rank the
     kept pairs by score (ties: source index, then target index), cut at floor(10 (|D1| + |D2|) / 2), write
     `src<TAB>tgt`.

Similarities are computed in blocks of --block-rows rows, so memory grows with block x n, never with n1 x n2.
With --gold, the uninterpolated average precision is printed to stderr as `AP 0.xxxx`.
"""

import argparse
import sys
import time

import numpy as np

NORMALIZATIONS = ("none", "unit", "center", "unit-center-unit")


def log(message):
    print(message, file=sys.stderr, flush=True)


def fail(path, line, message):
    where = f"{path}:{line}: " if line else f"{path}: "
    sys.exit(f"error: {where}{message}")


def read_lines(path):
    try:
        with open(path, encoding="utf-8", newline="\n") as handle:
            return [line.rstrip("\n").rstrip("\r") for line in handle]
    except OSError as error:
        fail(path, 0, error.strerror)
    except UnicodeDecodeError as error:
        fail(path, 0, f"not valid UTF-8 ({error.reason})")


def read_terms(path):
    """Distinct non-empty terms in file order."""
    terms, seen = [], set()
    for number, line in enumerate(read_lines(path), 1):
        term = line.strip()
        if not term:
            continue
        if term in seen:
            log(f"{path}:{number}: repeated term '{term}' ignored")
            continue
        seen.add(term)
        terms.append(term)
    return terms


def read_pairs(path):
    pairs = []
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0] or not fields[1]:
            fail(path, number, "expected two non-empty TAB-separated fields")
        pairs.append((fields[0], fields[1]))
    return pairs


def read_vec(path, wanted):
    """Returns (words, float32 matrix) of a fastText .vec file; `wanted` None keeps every word."""
    words, rows, index = [], [], {}
    with open(path, encoding="utf-8", newline="\n", errors="strict") as handle:
        header = handle.readline().split()
        if len(header) != 2 or not all(field.isdigit() for field in header):
            fail(path, 1, "expected a header '<number of words> <dim>'")
        dim = int(header[1])
        for number, line in enumerate(handle, 2):
            fields = line.rstrip("\r\n").rstrip(" ").split(" ")
            if len(fields) < dim + 1:
                fail(path, number, f"expected a word and {dim} values, got {len(fields)} fields")
            word = " ".join(fields[:-dim])
            if word in index or (wanted is not None and word not in wanted):
                continue
            try:
                rows.append(np.array(fields[-dim:], dtype=np.float32))
            except ValueError:
                fail(path, number, "a value is not a number")
            index[word] = len(words)
            words.append(word)
    matrix = np.vstack(rows) if rows else np.zeros((0, dim), dtype=np.float32)
    return words, index, matrix


def unit_rows(matrix):
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1
    return matrix / norms


def normalize(matrix, kind):
    if kind in ("unit", "unit-center-unit"):
        matrix = unit_rows(matrix)
    if kind in ("center", "unit-center-unit"):
        matrix = matrix - matrix.mean(axis=0, dtype=np.float64).astype(matrix.dtype)
    if kind == "unit-center-unit":
        matrix = unit_rows(matrix)
    return matrix


def lookup(word, index):
    """Row of `word` as written, else lower-cased; None when unknown."""
    row = index.get(word)
    return row if row is not None else index.get(word.lower())


def procrustes(source, target):
    """W (d x d, orthogonal) minimising |source W - target|; source, target: n x d, row i a seed pair."""
    u, _, vt = np.linalg.svd(source.astype(np.float64).T @ target.astype(np.float64))
    return (u @ vt).astype(source.dtype)


def compose(terms, index, vectors):
    """Unit mean word vector of each term with a known word: (kept term ids, matrix)."""
    kept, rows = [], []
    for term_id, term in enumerate(terms):
        found = [row for row in (lookup(token, index) for token in term.split(" ") if token) if row is not None]
        if found:
            kept.append(term_id)
            rows.append(vectors[found].mean(axis=0))
    matrix = np.vstack(rows) if rows else np.zeros((0, vectors.shape[1]), dtype=vectors.dtype)
    return np.array(kept, dtype=np.int64), unit_rows(matrix)


def neighbourhood_means(queries, database, k, block_rows):
    """Mean of the k largest cosines of each query row to the database rows (k capped at the database size)."""
    means = np.zeros(len(queries), dtype=queries.dtype)
    k = min(k, len(database))
    if k == 0:
        return means
    for start in range(0, len(queries), block_rows):
        cosines = queries[start:start + block_rows] @ database.T
        top = np.partition(cosines, cosines.shape[1] - k, axis=1)[:, -k:]
        means[start:start + len(cosines)] = top.mean(axis=1, dtype=np.float64)
    return means


def best_with_ties(values, count):
    """Mask of the entries whose value is at least the count-th largest (ties at the border all kept)."""
    if count >= values.size:
        return np.ones(values.shape, dtype=bool)
    threshold = np.partition(values.ravel(), values.size - count)[values.size - count]
    return values >= threshold


def order(scores, sources, targets):
    """Permutation ranking by score descending, then source index, then target index."""
    return np.lexsort((targets, sources, -scores))


def select_pairs(source_vectors, target_vectors, r_source, r_target, top_m, cap, block_rows):
    """The cap best (score, source row, target row) after the per-source top-m limit, in rank order."""
    scores = np.zeros(0, dtype=source_vectors.dtype)
    sources = np.zeros(0, dtype=np.int64)
    targets = np.zeros(0, dtype=np.int64)
    n_targets = len(target_vectors)
    for start in range(0, len(source_vectors), block_rows):
        csls = 2 * (source_vectors[start:start + block_rows] @ target_vectors.T)
        csls -= r_source[start:start + block_rows, None]
        csls -= r_target[None, :]
        if 0 < top_m < n_targets:
            m_th_best = np.partition(csls, n_targets - top_m, axis=1)[:, n_targets - top_m]
            rows, cols = np.nonzero(csls >= m_th_best[:, None])
            values = csls[rows, cols]
            # Row-major nonzero plus a stable sort keeps the lower target index first among ties.
            ranked = np.lexsort((cols, -values, rows))
            rows, cols, values = rows[ranked], cols[ranked], values[ranked]
            row_starts = np.searchsorted(rows, rows, side="left")
            within = np.arange(len(rows)) - row_starts < top_m
            rows, cols, values = rows[within], cols[within], values[within]
        else:
            keep = best_with_ties(csls, cap)
            rows, cols = np.nonzero(keep)
            values = csls[rows, cols]
        scores = np.concatenate([scores, values])
        sources = np.concatenate([sources, rows + start])
        targets = np.concatenate([targets, cols])
        keep = best_with_ties(scores, cap)
        scores, sources, targets = scores[keep], sources[keep], targets[keep]
    ranked = order(scores, sources, targets)[:cap]
    return scores[ranked], sources[ranked], targets[ranked]


def average_precision(predicted, gold, source_terms, target_terms):
    """Uninterpolated AP: sum over hit ranks of hits so far / rank, over the distinct gold pairs in D1 x D2."""
    source_set, target_set = set(source_terms), set(target_terms)
    gold = {pair for pair in gold if pair[0] in source_set and pair[1] in target_set}
    if not gold:
        return 0.0, 0, 0
    hits, total, seen = 0, 0.0, set()
    rank = 0
    for pair in predicted:
        if pair in seen:
            continue
        seen.add(pair)
        rank += 1
        if pair in gold:
            hits += 1
            total += hits / rank
    return total / len(gold), hits, len(gold)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--src-vectors", required=True, help="source .vec file")
    parser.add_argument("--tgt-vectors", required=True, help="target .vec file")
    parser.add_argument("--seed", required=True, help="seed lexicon, src<TAB>tgt")
    parser.add_argument("--src-terms", required=True, help="source term list D1, one per line")
    parser.add_argument("--tgt-terms", required=True, help="target term list D2, one per line")
    parser.add_argument("--out", required=True, help="submission to write, src<TAB>tgt")
    parser.add_argument("--k", type=int, default=10, help="CSLS neighbourhood size (default 10)")
    parser.add_argument("--top-m", type=int, default=10,
                        help="targets kept per source term, 0 = no per-source limit (default 10)")
    parser.add_argument("--normalize", choices=NORMALIZATIONS, default="unit", help="default unit")
    parser.add_argument("--all-words", action="store_true", help="load every word of the .vec files")
    parser.add_argument("--block-rows", type=int, default=4096, help="rows per similarity block (default 4096)")
    parser.add_argument("--float64", action="store_true",
                        help="compute in double precision (default float32, as the C++ code; twice the memory)")
    parser.add_argument("--gold", help="gold pairs, src<TAB>tgt: print AP to stderr")
    arguments = parser.parse_args(argv)
    if arguments.k < 1:
        parser.error(f"The CSLS neighbourhood k must be at least 1 (got {arguments.k}).")
    if arguments.top_m < 0:
        parser.error(f"--top-m must be 0 (no limit) or positive (got {arguments.top_m}).")
    if arguments.block_rows < 1:
        parser.error(f"--block-rows must be at least 1 (got {arguments.block_rows}).")
    return arguments


def wanted_words(terms, seed_words):
    words = {token for term in terms for token in term.split(" ") if token} | set(seed_words)
    return words | {word.lower() for word in words}


def main(argv):
    arguments = parse_arguments(argv)
    started = time.perf_counter()
    source_terms = read_terms(arguments.src_terms)
    target_terms = read_terms(arguments.tgt_terms)
    seed = read_pairs(arguments.seed)

    source_wanted = None if arguments.all_words else wanted_words(source_terms, (s for s, _ in seed))
    target_wanted = None if arguments.all_words else wanted_words(target_terms, (t for _, t in seed))
    _, source_index, source_vectors = read_vec(arguments.src_vectors, source_wanted)
    _, target_index, target_vectors = read_vec(arguments.tgt_vectors, target_wanted)
    if source_vectors.shape[1] != target_vectors.shape[1]:
        sys.exit(f"error: dimensions differ: {source_vectors.shape[1]} (source) and "
                 f"{target_vectors.shape[1]} (target)")
    if arguments.float64:
        source_vectors, target_vectors = source_vectors.astype(np.float64), target_vectors.astype(np.float64)
    log(f"loaded {len(source_vectors)} source and {len(target_vectors)} target words, "
        f"dim {source_vectors.shape[1]}")

    source_vectors = normalize(source_vectors, arguments.normalize)
    target_vectors = normalize(target_vectors, arguments.normalize)
    seed_rows = [(lookup(s, source_index), lookup(t, target_index)) for s, t in seed]
    seed_rows = [(s, t) for s, t in seed_rows if s is not None and t is not None]
    if not seed_rows:
        sys.exit(f"error: {arguments.seed}: no seed pair has both words in the vectors")
    seed_sources, seed_targets = (np.array(column) for column in zip(*seed_rows))
    mapping = procrustes(source_vectors[seed_sources], target_vectors[seed_targets])
    log(f"Procrustes fitted on {len(seed_rows)} of {len(seed)} seed pairs")
    mapped_sources = source_vectors @ mapping

    source_ids, source_matrix = compose(source_terms, source_index, mapped_sources)
    target_ids, target_matrix = compose(target_terms, target_index, target_vectors)
    log(f"composed {len(source_ids)} of {len(source_terms)} source and {len(target_ids)} of "
        f"{len(target_terms)} target terms")

    r_source = neighbourhood_means(source_matrix, target_matrix, arguments.k, arguments.block_rows)
    r_target = neighbourhood_means(target_matrix, source_matrix, arguments.k, arguments.block_rows)
    cap = 10 * (len(source_terms) + len(target_terms)) // 2
    scores, sources, targets = select_pairs(source_matrix, target_matrix, r_source, r_target, arguments.top_m,
                                            cap, arguments.block_rows)
    predicted = [(source_terms[source_ids[s]], target_terms[target_ids[t]]) for s, t in zip(sources, targets)]
    with open(arguments.out, "w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(f"{s}\t{t}\n" for s, t in predicted)
    log(f"wrote {len(predicted)} pairs (cap {cap}) to {arguments.out}")

    if arguments.gold:
        ap, hits, n_gold = average_precision(predicted, read_pairs(arguments.gold), source_terms, target_terms)
        log(f"hits {hits} of {n_gold} gold pairs")
        log(f"AP {ap:.4f}")
    log(f"wall {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
