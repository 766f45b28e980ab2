#!/usr/bin/python3
"""Writes the seedless stand-ins of docs/accuracy.md from ../shared/data, outside the repository.

  enfr-noseed/           enfr/train as the task ships its folders: term lists, corpora and gold, no seed lexicon
  enfr-cyrillic/         enfr/train with the French side written in Cyrillic letters by a one-to-one map of
                         letters (term lists, gold, corpora, seed lexicon, word pairs), and fr.vec mapped alike
  enfr-cyrillic-noseed/  the same without its seed lexicon
  enfr-half-a/, enfr-half-b/
                         enfr/train's source terms in two halves (a seeded shuffle), each with its gold, the whole
                         French list and both corpora, no seed lexicon: a seedless model trained on one half
                         (`train-reranker --seed auto`) applied to the other (`align --data-dir ... --reranker
                         MODEL`) measures a seedless run held out, ranked rounds included

Each folder aligns with `termalign align --data-dir FOLDER`; the Cyrillic ones with the vectors en.vec and the
folder's fr-cyrillic.vec (a .bin's subword n-grams cannot be rewritten). The map sends each French letter to its
own Cyrillic letter (and the Cyrillic letters already there back), so nothing of the French spelling is lost, but no word is written alike in the two languages
any more: words match across the scripts only after transliteration, as English and Russian do.

Usage: /usr/bin/python3 scripts/standins.py [OUT_DIR] [DATA_DIR]   (defaults: /tmp/termalign-standins,
../shared/data relative to the repository). Deterministic: the same inputs give the same files.
"""
import os
import random
import shutil
import sys

# Lower-case French letters to Cyrillic ones: the usual counterpart where there is one (ICU's transliteration
# back to Latin then gives a near spelling), else a letter of another Cyrillic alphabet. No `ё`, which termalign
# folds into `е` for Russian.
LOWER = {
    "a": "а", "b": "б", "c": "ц", "d": "д", "e": "е", "f": "ф", "g": "г", "h": "һ", "i": "и", "j": "ј",
    "k": "к", "l": "л", "m": "м", "n": "н", "o": "о", "p": "п", "q": "ԛ", "r": "р", "s": "с", "t": "т",
    "u": "у", "v": "в", "w": "ԝ", "x": "х", "y": "ы", "z": "з",
    "à": "я", "â": "ю", "ä": "ӓ", "ç": "ч", "é": "э", "è": "є", "ê": "ѣ", "ë": "ӭ", "î": "ї", "ï": "і",
    "ô": "ө", "ö": "ӧ", "ù": "ұ", "û": "ү", "ü": "ӱ", "ÿ": "ӹ", "œ": "ѡ", "æ": "ӕ",
}
MAP = dict(LOWER)
for latin, cyrillic in LOWER.items():
    MAP[latin.upper()] = cyrillic.upper()
assert len(set(MAP.values())) == len(MAP), "the map must be one-to-one"
assert not set(MAP.values()) & set(MAP), "no letter may be both a source and a target of the map"
# The few Cyrillic letters already in the French text (quoted Russian in the man pages) go the other way, so that
# the map stays one-to-one on whole words (`г` of the vectors does not meet `g` written in Cyrillic).
TABLE = str.maketrans({**MAP, **{cyrillic: latin for latin, cyrillic in MAP.items()}})


def cyrillic(text):
    return text.translate(TABLE)


def copy(source, target):
    shutil.copyfile(source, target)


def write_mapped(source, target, column=None):
    """The file with its text mapped: whole lines, or only the TAB-separated column `column`."""
    with open(source, encoding="utf-8", newline="") as read, \
            open(target, "w", encoding="utf-8", newline="") as write:
        for line in read:
            if column is None:
                write.write(cyrillic(line))
            else:
                end = "\n" if line.endswith("\n") else ""
                fields = line[:len(line) - len(end)].split("\t")
                fields[column] = cyrillic(fields[column])
                write.write("\t".join(fields) + end)


def write_mapped_vec(source, target):
    """A fastText .vec with each word mapped (the header and the numbers as they are)."""
    with open(source, encoding="utf-8", newline="") as read, \
            open(target, "w", encoding="utf-8", newline="") as write:
        write.write(read.readline())
        for line in read:
            word, _, numbers = line.partition(" ")
            write.write(cyrillic(word) + " " + numbers)


def write_halves(train, out):
    """enfr-half-a and enfr-half-b: the source terms shuffled by random.Random(7), the first half in a."""
    with open(os.path.join(train, "terms-en.txt"), encoding="utf-8") as read:
        terms = [line.rstrip("\n") for line in read]
    with open(os.path.join(train, "terms-en-fr.txt"), encoding="utf-8") as read:
        gold = [line.rstrip("\n").split("\t") for line in read]
    order = list(range(len(terms)))
    random.Random(7).shuffle(order)
    halves = {"a": order[:len(terms) // 2], "b": order[len(terms) // 2:]}
    for name, rows in halves.items():
        folder = os.path.join(out, "enfr-half-" + name)
        os.makedirs(folder, exist_ok=True)
        kept = {terms[row] for row in rows}
        with open(os.path.join(folder, "terms-en.txt"), "w", encoding="utf-8", newline="") as write:
            write.writelines(term + "\n" for term in terms if term in kept)
        with open(os.path.join(folder, "terms-en-fr.txt"), "w", encoding="utf-8", newline="") as write:
            write.writelines(source + "\t" + target + "\n" for source, target in gold if source in kept)
        for file in ("terms-fr.txt", "corpus-en.txt", "corpus-fr.txt"):
            copy(os.path.join(train, file), os.path.join(folder, file))


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/termalign-standins"
    data = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "..", "shared", "data")
    train = os.path.join(data, "enfr", "train")
    if not os.path.isfile(os.path.join(train, "terms-en-fr.txt")):
        sys.exit(f"{train}: no enfr/train dataset there (give DATA_DIR, the folder of ../shared/data)")

    noseed = os.path.join(out, "enfr-noseed")
    os.makedirs(noseed, exist_ok=True)
    for name in ("terms-en.txt", "terms-fr.txt", "terms-en-fr.txt", "corpus-en.txt", "corpus-fr.txt"):
        copy(os.path.join(train, name), os.path.join(noseed, name))

    seeded, unseeded = os.path.join(out, "enfr-cyrillic"), os.path.join(out, "enfr-cyrillic-noseed")
    for folder in (seeded, unseeded):
        os.makedirs(folder, exist_ok=True)
        copy(os.path.join(train, "terms-en.txt"), os.path.join(folder, "terms-en.txt"))
        copy(os.path.join(train, "corpus-en.txt"), os.path.join(folder, "corpus-en.txt"))
        write_mapped(os.path.join(train, "terms-fr.txt"), os.path.join(folder, "terms-fr.txt"))
        write_mapped(os.path.join(train, "corpus-fr.txt"), os.path.join(folder, "corpus-fr.txt"))
        write_mapped(os.path.join(train, "terms-en-fr.txt"), os.path.join(folder, "terms-en-fr.txt"), column=1)
    write_mapped(os.path.join(train, "seed-en-fr.txt"), os.path.join(seeded, "seed-en-fr.txt"), column=1)
    write_mapped(os.path.join(train, "words-test-en-fr.txt"), os.path.join(seeded, "words-test-en-fr.txt"),
                 column=1)
    write_mapped_vec(os.path.join(data, "vectors", "fr.vec"), os.path.join(seeded, "fr-cyrillic.vec"))
    shutil.copyfile(os.path.join(seeded, "fr-cyrillic.vec"), os.path.join(unseeded, "fr-cyrillic.vec"))
    write_halves(train, out)
    print(f"wrote {noseed}, {seeded}, {unseeded}, and enfr-half-a and enfr-half-b in {out}")


if __name__ == "__main__":
    main()
