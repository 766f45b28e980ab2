#!/usr/bin/python3
"""Seeded synthetic data for the termalign benchmarks: vectors, term lists, a seed lexicon and a gold.

    /usr/bin/python3 bench/generate_synthetic.py --out DIR --src-terms 20000 --tgt-terms 20000 \
        [--words 30000] [--dim 300] [--seed 1] [--seed-pairs 5000] [--gold-fraction 0.8] [--noise 4.0]
        [--shared-words 0.0]

writes into DIR (created if needed):
  en.vec, fr.vec        fastText text format: header `<words> <dim>`, then `word v1 ... vdim ` (5 significant
                        figures, trailing space, as fastText writes), most frequent words first;
  terms-en.txt          D1: --src-terms distinct terms of 1 to 5 words (about 45 % single-word);
  terms-fr.txt          D2: --tgt-terms distinct terms: the translations of the gold source terms plus distractors;
  terms-en-fr.txt       the gold: one pair per gold source term (--gold-fraction of D1);
  seed-en-fr.txt        --seed-pairs word translation pairs among the 20000 most frequent words;
  en.bin, fr.bin        with --bin: fastText 0.9 models (format version 12) of the same words, shaped as the
                        organisers' cc.en.300.bin: --buckets character n-gram rows (minn = maxn = 5), an output
                        matrix of zeros (left as a hole in the file: nothing reads it but fastText's own loader);
                        a word's vector (the mean of its row and its n-grams' rows) is its .vec vector plus
                        small noise;
  corpus-en.txt, corpus-fr.txt
                        with --corpus-sentences N: N sentences a language of words drawn by a Zipf-like law
                        among the 200000 most frequent, a term of the list in about one sentence in three.

With --row-order shuffled, the rows of each .vec are written in an order of their own (a seeded permutation per
language) instead of by frequency: the first rows of the two files are then not translations of each other, as
with vectors not sorted by frequency or corpora of different domains (the words, vectors, terms and seed are the
same as with the default order, `frequency`).

The model: English word i has a Gaussian vector e_i plus a direction shared by all words (real embeddings are not
centred); its translation is French word i, with vector e_i R + noise (R a random rotation, the noise of
--noise times the signal's scale). A term's translation is its words' translations, in reverse order for two
words (as French often puts the adjective second). Words are drawn half from a Zipf-like law over the frequency
ranks and half uniformly, so frequent words occur in many terms. Each language's words are spelt apart, but with
--shared-words F a seeded share F of the French words take their English word's spelling (the names, numbers
and code that real vocabularies share): a run without a seed lexicon then has a start (`--seed auto`). Same
arguments, same files, on any machine (NumPy's PCG64 generator, no dependence on the thread count).
"""

import argparse
import os
import struct
import sys
import time

import numpy as np

CONSONANTS = "bcdfghjklmnpqrstvwxz"
VOWELS = "aeiou"
TERM_LENGTHS = np.array([1, 2, 3, 4, 5])
TERM_LENGTH_SHARES = np.array([0.45, 0.33, 0.14, 0.06, 0.02])
SEED_POOL = 20000      # seed pairs are drawn among this many most frequent words
ROWS_PER_CHUNK = 20000  # .vec rows formatted at once


def log(message):
    print(message, file=sys.stderr, flush=True)


def word_names(count, language):
    """`count` distinct pronounceable words: the index in base 100 as syllables, consonant-vowel for English and
    vowel-consonant for French, so that no word is spelt alike in both languages."""
    names = []
    for index in range(count):
        syllables, rest = [], index
        while True:
            consonant, vowel = CONSONANTS[rest % 20], VOWELS[(rest // 20) % 5]
            syllables.append(consonant + vowel if language == "en" else vowel + consonant)
            rest //= 100
            if rest == 0:
                break
        names.append("".join(syllables))
    return names


def format_values(values):
    """n x d floats in (-1, 1) as fixed-width fields 'v ' (8 bytes each): '0.ddddd ' or '-0.dddd '."""
    negative = values < 0
    scale = np.where(negative, 1e4, 1e5)
    digits_value = np.minimum(np.rint(np.abs(values) * scale), scale - 1).astype(np.int64)
    fields = np.empty(values.shape + (8,), dtype=np.uint8)
    for position, divisor in enumerate((10000, 1000, 100, 10, 1)):
        fields[..., 2 + position] = ord("0") + digits_value // divisor % 10
    # A negative value has 4 digits (below 10000): its leading '0' digit becomes the '.' of '-0.dddd'.
    fields[..., 0] = np.where(negative, ord("-"), ord("0"))
    fields[..., 1] = np.where(negative, ord("0"), ord("."))
    fields[..., 2] = np.where(negative, ord("."), fields[..., 2])
    fields[..., 7] = ord(" ")
    return fields.reshape(values.shape[0], -1)


def write_vec(path, names, vector_chunks, dim, order=None):
    """Streams the rows given chunk by chunk (float32, n x dim each) into a fastText .vec file; with `order` (a
    permutation of the rows), row order[i] of the vectors is written i-th (all rows are then held at once)."""
    if order is not None:
        everything = np.concatenate(list(vector_chunks))[order]
        names = [names[i] for i in order]
        vector_chunks = (everything[first:first + ROWS_PER_CHUNK] for first in range(0, len(names), ROWS_PER_CHUNK))
    with open(path + ".partial", "wb") as handle:
        handle.write(f"{len(names)} {dim}\n".encode())
        first = 0
        for chunk in vector_chunks:
            rows = format_values(np.clip(chunk, -0.99994, 0.99994))
            handle.write(b"".join(name.encode() + b" " + row.tobytes() + b"\n"
                                 for name, row in zip(names[first:first + len(chunk)], rows)))
            first += len(chunk)
    os.replace(path + ".partial", path)


FASTTEXT_MAGIC, FASTTEXT_VERSION = 793712314, 12
NGRAM_LENGTH = 5  # minn = maxn, as in cc.en.300.bin


def ngram_count(name):
    """The character n-grams of an ASCII word within '<' and '>' (minn = maxn = 5)."""
    return max(0, len(name) + 2 - NGRAM_LENGTH + 1)


def write_bin(path, names, vector_chunks, dim, buckets, rng_seed):
    """A fastText .bin (version 12, skipgram arguments of cc.en.300: bucket, minn = maxn = 5, dim) holding `names`
    with counts falling with the rank. Each word's own row is its vector times its number of rows, so that the
    mean fastText computes is that vector plus the mean of its n-gram rows (small noise)."""
    with open(path + ".partial", "wb") as handle:
        # Args::save: dim, ws, epoch, minCount, neg, wordNgrams, loss (ns), model (cbow), bucket, minn, maxn,
        # lrUpdateRate, then t.
        handle.write(struct.pack("<ii", FASTTEXT_MAGIC, FASTTEXT_VERSION))
        handle.write(struct.pack("<12i", dim, 5, 5, 5, 10, 1, 2, 1, buckets, NGRAM_LENGTH, NGRAM_LENGTH, 100))
        handle.write(struct.pack("<d", 1e-5))
        counts = (1e9 / (np.arange(len(names)) + 10.0)).astype(np.int64) + 1
        handle.write(struct.pack("<iiiqq", len(names), len(names), 0, int(counts.sum()), -1))
        handle.write(b"".join(name.encode() + b"\0" + struct.pack("<qb", int(count), 0)
                              for name, count in zip(names, counts)))
        handle.write(struct.pack("<?qq", False, len(names) + buckets, dim))
        first = 0
        for chunk in vector_chunks:
            scale = np.array([1 + ngram_count(name) for name in names[first:first + len(chunk)]], np.float32)
            handle.write((chunk * scale[:, None]).astype("<f4").tobytes())
            first += len(chunk)
        for index, start in enumerate(range(0, buckets, ROWS_PER_CHUNK)):
            rows = min(ROWS_PER_CHUNK, buckets - start)
            noise = np.random.default_rng([rng_seed, 6, index]).standard_normal((rows, dim), np.float32)
            handle.write((noise * np.float32(0.01)).astype("<f4").tobytes())
        handle.write(struct.pack("<?qq", False, len(names), dim))
        handle.truncate(handle.tell() + len(names) * dim * 4)  # the output matrix: zeros, a hole in the file
    os.replace(path + ".partial", path)


CORPUS_TYPES = 200000  # words of a corpus besides its terms': Heaps' law gives about 10^5 for 1M sentences


def write_corpus(path, rng, names, terms, sentences):
    """`sentences` lines of 4 to 20 words drawn by a Zipf-like law, p(r) ~ 1 / (r + 10), over the CORPUS_TYPES most
    frequent words (real text of this size has a few hundred thousand types, not a vocabulary's millions); about
    one in three holds one of `terms` as well."""
    lengths = rng.integers(4, 21, sentences)
    words = WordSampler(rng, min(CORPUS_TYPES, len(names))).draw_zipf(int(lengths.sum()))
    with_term = rng.random(sentences) < 0.35
    term_of = rng.integers(0, len(terms), sentences)
    ends = np.cumsum(lengths)
    with open(path + ".partial", "w", encoding="utf-8", newline="\n") as handle:
        lines, begin = [], 0
        for index, end in enumerate(ends):
            line = " ".join(names[w] for w in words[begin:end])
            if with_term[index]:
                line += " " + terms[term_of[index]]
            lines.append(line)
            begin = end
            if len(lines) == 100000:
                handle.write("\n".join(lines) + "\n")
                lines = []
        if lines:
            handle.write("\n".join(lines) + "\n")
    os.replace(path + ".partial", path)


def random_rotation(rng, dim):
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    return q * np.sign(np.diag(r))


def vector_chunks(rng_seed, words, dim, noise, language):
    """The vectors of one language, chunk by chunk; both languages draw the same English vectors (same seeds)."""
    setup = np.random.default_rng([rng_seed, 1])
    shared_direction = setup.standard_normal(dim) * 0.5
    rotation = random_rotation(setup, dim)
    scale = 0.15
    for chunk_index, first in enumerate(range(0, words, ROWS_PER_CHUNK)):
        rows = min(ROWS_PER_CHUNK, words - first)
        signal = np.random.default_rng([rng_seed, 2, chunk_index]).standard_normal((rows, dim))
        english = signal + shared_direction
        if language == "en":
            yield (english * scale).astype(np.float32)
        else:
            french_noise = np.random.default_rng([rng_seed, 3, chunk_index]).standard_normal((rows, dim))
            yield ((english @ rotation + noise * french_noise) * scale / np.sqrt(1 + noise * noise)).astype(
                np.float32)


class WordSampler:
    """Word ranks: half from p(r) ~ 1 / (r + 10), half uniform over the vocabulary."""

    def __init__(self, rng, words):
        self.rng, self.words = rng, words
        weights = 1.0 / (np.arange(words) + 10.0)
        self.cumulative = np.cumsum(weights / weights.sum())

    def draw_zipf(self, count):
        return np.minimum(np.searchsorted(self.cumulative, self.rng.random(count)), self.words - 1)

    def draw(self, count):
        zipf = self.draw_zipf(count)
        uniform = self.rng.integers(0, self.words, count)
        return np.where(self.rng.random(count) < 0.5, zipf, uniform)


def draw_terms(rng, sampler, count, taken):
    """`count` new distinct terms (tuples of word ranks) not in `taken` (updated). A term that repeats one already
    drawn is redrawn one word longer, so small vocabularies still yield enough distinct terms."""
    terms = []
    lengths = rng.choice(TERM_LENGTHS, size=count, p=TERM_LENGTH_SHARES)
    for length in lengths:
        length = int(length)
        while True:
            term = tuple(int(w) for w in sampler.draw(length))
            if len(set(term)) == length and term not in taken:
                break
            length = min(length + 1, 5) if rng.random() < 0.2 else length
        taken.add(term)
        terms.append(term)
    return terms


def translate(term):
    return term[::-1] if len(term) == 2 else term


def write_lines(path, lines):
    with open(path + ".partial", "w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(line + "\n" for line in lines)
    os.replace(path + ".partial", path)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--src-terms", type=int, required=True, help="|D1|, English terms")
    parser.add_argument("--tgt-terms", type=int, required=True, help="|D2|, French terms")
    parser.add_argument("--words", type=int, default=30000, help="words per language in the .vec files")
    parser.add_argument("--dim", type=int, default=300, help="vector dimension (default 300)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--seed-pairs", type=int, default=5000, help="seed lexicon size (default 5000)")
    parser.add_argument("--gold-fraction", type=float, default=0.8,
                        help="share of D1 whose translation is in D2 and in the gold (default 0.8)")
    parser.add_argument("--noise", type=float, default=4.0,
                        help="noise of the French vectors relative to the signal (default 4.0: the baseline's "
                             "AP is about 0.6 at 4000 x 8000 terms)")
    parser.add_argument("--shared-words", type=float, default=0.0,
                        help="share of the French words spelt as their English translation (default 0: none)")
    parser.add_argument("--no-vectors", action="store_true", help="write the lists only (vectors already there)")
    parser.add_argument("--bin", action="store_true", help="also write en.bin and fr.bin (fastText models)")
    parser.add_argument("--buckets", type=int, default=2000000,
                        help="character n-gram rows of the .bin models (default 2000000, as cc.en.300.bin)")
    parser.add_argument("--no-vec", action="store_true", help="with --bin: write no .vec files")
    parser.add_argument("--corpus-sentences", type=int, default=0,
                        help="also write corpus-en.txt and corpus-fr.txt of this many sentences each")
    parser.add_argument("--row-order", choices=("frequency", "shuffled"), default="frequency",
                        help="rows of the .vec files: most frequent first (default), or each file in an unrelated "
                             "order of its own")
    arguments = parser.parse_args(argv)
    if arguments.words < 2 or arguments.dim < 1:
        parser.error("--words must be at least 2 and --dim at least 1.")
    if arguments.src_terms < 1 or arguments.tgt_terms < 1:
        parser.error("--src-terms and --tgt-terms must be at least 1.")
    if not 0 <= arguments.shared_words <= 1:
        parser.error(f"--shared-words must be between 0 and 1 (got {arguments.shared_words}).")
    if not 0 <= arguments.gold_fraction <= 1:
        parser.error(f"--gold-fraction must be between 0 and 1 (got {arguments.gold_fraction}).")
    gold_terms = round(arguments.gold_fraction * arguments.src_terms)
    if gold_terms > arguments.tgt_terms:
        parser.error(f"D2 must hold the {gold_terms} gold translations: give --tgt-terms >= {gold_terms}.")
    if arguments.src_terms + arguments.tgt_terms > 5 * arguments.words ** 2:
        parser.error("Too few words for that many distinct terms: raise --words.")
    return arguments


def main(argv):
    arguments = parse_arguments(argv)
    started = time.perf_counter()
    os.makedirs(arguments.out, exist_ok=True)
    path = lambda name: os.path.join(arguments.out, name)
    english, french = word_names(arguments.words, "en"), word_names(arguments.words, "fr")
    if arguments.shared_words > 0:
        shared = np.random.default_rng([arguments.seed, 6]).random(arguments.words) < arguments.shared_words
        french = [english[i] if shared[i] else name for i, name in enumerate(french)]

    if not arguments.no_vectors:
        for index, (language, names) in enumerate((("en", english), ("fr", french))):
            chunks = lambda: vector_chunks(arguments.seed, arguments.words, arguments.dim, arguments.noise, language)
            if not arguments.no_vec:
                order = None
                if arguments.row_order == "shuffled":
                    order = np.random.default_rng([arguments.seed, 5, index]).permutation(arguments.words)
                write_vec(path(f"{language}.vec"), names, chunks(), arguments.dim, order)
                log(f"wrote {language}.vec: {arguments.words} x {arguments.dim} "
                    f"({time.perf_counter() - started:.1f} s)")
            if arguments.bin:
                write_bin(path(f"{language}.bin"), names, chunks(), arguments.dim, arguments.buckets,
                          arguments.seed * 2 + index)
                log(f"wrote {language}.bin: {arguments.words} words + {arguments.buckets} buckets x "
                    f"{arguments.dim} ({time.perf_counter() - started:.1f} s)")

    rng = np.random.default_rng([arguments.seed, 4])
    sampler = WordSampler(rng, arguments.words)
    source = draw_terms(rng, sampler, arguments.src_terms, set())
    gold_count = round(arguments.gold_fraction * arguments.src_terms)
    gold_sources = [source[i] for i in sorted(rng.choice(len(source), gold_count, replace=False))]
    # Distractors of D2 never equal the translation of any D1 term, so the gold is complete.
    taken = {translate(term) for term in source}
    targets = [translate(term) for term in gold_sources]
    targets += draw_terms(rng, sampler, arguments.tgt_terms - gold_count, taken)
    targets = [targets[i] for i in rng.permutation(len(targets))]

    spell = lambda term, names: " ".join(names[w] for w in term)
    write_lines(path("terms-en.txt"), (spell(term, english) for term in source))
    write_lines(path("terms-fr.txt"), (spell(term, french) for term in targets))
    write_lines(path("terms-en-fr.txt"),
                (spell(term, english) + "\t" + spell(translate(term), french) for term in gold_sources))
    pool = min(SEED_POOL, arguments.words)
    seed_words = rng.choice(pool, min(arguments.seed_pairs, pool), replace=False)
    write_lines(path("seed-en-fr.txt"), (english[w] + "\t" + french[w] for w in seed_words))
    log(f"wrote {arguments.src_terms} / {arguments.tgt_terms} terms, {gold_count} gold pairs, "
        f"{len(seed_words)} seed pairs to {arguments.out} ({time.perf_counter() - started:.1f} s)")
    if arguments.corpus_sentences > 0:
        for language, names, terms in (("en", english, source), ("fr", french, targets)):
            write_corpus(path(f"corpus-{language}.txt"), rng, names, [spell(t, names) for t in terms],
                         arguments.corpus_sentences)
            log(f"wrote corpus-{language}.txt: {arguments.corpus_sentences} sentences "
                f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
