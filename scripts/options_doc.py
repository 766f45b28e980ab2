#!/usr/bin/python3
"""Writes docs/options.md, the option reference, from the CLI's own `--help` of each sub-command.

    /usr/bin/python3 scripts/options_doc.py [--cli build/termalign] [--out docs/options.md] [--check FILE]

The option table in the library is the one source of every flag, default and sentence; this page only collects
what `termalign COMMAND --help` prints, so it cannot drift from the binary. Sub-commands the binary lacks are left
out. With --check FILE it writes --out, then exits 1 (with the difference) when FILE is not the same text: the
ctest test `docs.options_current` runs it so, and a changed option then asks for this script to be run again.
"""

import argparse
import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMANDS = ("align", "evaluate", "report", "ablate", "train-reranker", "train-vectors")

HEADER = """# Option reference

Written by `scripts/options_doc.py` from `termalign COMMAND --help`; do not edit by hand (the test
`docs.options_current` fails when this page and the CLI differ: run the script again).

Every `align` option is also a TOML key of a configuration file (`configs/default.toml` lists them with their
defaults) and a Python keyword: the key `section.key` is the flag `--key` with dashes for underscores
(`ranking.top_m` is `--top-m`; `orthography.weight` and `orthography.candidates` are `--orthographic-weight` and
`--orthographic-candidates`), and the Python keyword is the flag with underscores (`top_m=`).
`termalign.option_names()` lists each keyword with its key. Flags override the file; `train-reranker` takes the
`align` options too.
"""


def help_text(cli, command):
    """`cli [command] --help` with the paths of this checkout made relative; None when the command is unknown."""
    args = [cli] + ([command] if command else []) + ["--help"]
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    text = result.stdout
    usage = re.search(r"^Usage: \S*termalign(?: (\S+))?", text, re.MULTILINE)
    # CLI11 answers an unknown sub-command's --help with the main help.
    if result.returncode != 0 or usage is None or (command and usage.group(1) != command):
        return None
    text = re.sub(r"^Usage: \S*termalign", "Usage: termalign", text, flags=re.MULTILINE)
    text = text.replace(ROOT + os.sep, "")  # defaults that name files of the checkout (the plot script)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def render(cli):
    parts = [HEADER, "## Global options\n", "```", help_text(cli, None), "```\n"]
    for command in COMMANDS:
        text = help_text(cli, command)
        if text is not None:
            parts += [f"## termalign {command}\n", "```", text, "```\n"]
    return "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", default=os.path.join(ROOT, "build", "termalign"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "options.md"))
    parser.add_argument("--check", help="the committed page to compare the written one with")
    args = parser.parse_args()
    if help_text(args.cli, None) is None:
        print(f"options_doc.py: {args.cli} does not answer --help as termalign does", file=sys.stderr)
        return 2
    text = render(args.cli)
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(text)
    if args.check:
        with open(args.check, encoding="utf-8") as committed:
            old = committed.read()
        if old != text:
            sys.stderr.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                       args.check, args.out, n=1))
            print(f"\n{args.check} is not the CLI's current --help: run\n"
                  f"  /usr/bin/python3 scripts/options_doc.py --cli {args.cli}\nand commit docs/options.md",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
