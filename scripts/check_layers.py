#!/usr/bin/env python3
"""Fails when a source file includes a header of a higher layer, and prints each such include.

The layers, low to high: a folder of src/ may include its own headers and those of the folders below it. The
public headers (include/termalign/) are usable everywhere, so they may include only each other; the one public
header that needs the pipeline, termalign/aligner.h (the Aligner), is of the pipeline layer.

    python3 scripts/check_layers.py [ROOT]     (ROOT: the repository, by default this script's parent folder)
"""
import pathlib
import re
import sys

# Low to high; folders on one line are one layer.
LAYERS = [
    ["util"],
    ["io"],
    ["text"],
    ["scoring"],  # below mapping: the self-learning refinement and the induced seeds score with its passes
    ["mapping"],
    ["evidence"],
    ["rerank"],
    ["evaluation"],
    ["pipeline"],
    ["cli", "python", "mpi"],  # the shells, and the MPI process group the CLI makes
]
RANK = {folder: rank for rank, folders in enumerate(LAYERS) for folder in folders}
PUBLIC = -1  # include/termalign/: below every folder
PUBLIC_RANK = {"termalign/aligner.h": RANK["pipeline"]}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def header_layer(header):
    """The layer of an included header ("scoring/topk.h", "termalign/aligner.h"); None for a header of the
    including file's own folder (no folder in its name)."""
    if header.startswith("termalign/"):
        return PUBLIC_RANK.get(header, PUBLIC)
    folder = header.split("/", 1)[0] if "/" in header else None
    if folder is None:
        return None
    if folder not in RANK:
        raise SystemExit(f"check_layers.py: the folder of {header} is in no layer: add it to LAYERS")
    return RANK[folder]


def file_layer(root, path):
    relative = path.relative_to(root)
    if relative.parts[0] == "include":
        return PUBLIC_RANK.get("/".join(relative.parts[1:]), PUBLIC)
    folder = relative.parts[1] if relative.parts[0] == "src" else relative.parts[0]
    if folder not in RANK:
        raise SystemExit(f"check_layers.py: {relative} is in no layer: add its folder to LAYERS")
    return RANK[folder]


def name(rank):
    return "public" if rank == PUBLIC else "/".join(LAYERS[rank])


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    files = sorted(
        p
        for pattern in ("src/*/*.h", "src/*/*.cpp", "include/termalign/*.h", "python/*.h", "python/*.cpp")
        for p in root.glob(pattern)
    )
    if not files:
        raise SystemExit(f"check_layers.py: no source files under {root}")
    offending = 0
    for path in files:
        own = file_layer(root, path)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            included = header_layer(match.group(1))
            if included is not None and included > own:
                offending += 1
                print(f"{path.relative_to(root)}:{number}: {line.strip()}  "
                      f"({name(own)} includes {name(included)})")
    if offending:
        print(f"{offending} includes of a higher layer (order, low to high: public headers, "
              + " < ".join("/".join(layer) for layer in LAYERS) + ")")
        return 1
    print(f"{len(files)} files: no include of a higher layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
