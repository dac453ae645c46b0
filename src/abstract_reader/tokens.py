"""Splitting documents into distinct whitespace-separated pieces, fast.

Kept free of numpy and of the rest of the package (standard library only), so that the
helper process that tokenises half of a large corpus (see
``search.postings._tokenise_in_two``) starts in milliseconds — and runs *this file* as a
script in isolated mode (``python -I tokens.py``): no package import, nothing from the
working directory, ``PYTHON*`` variables or user site-packages.
"""

from __future__ import annotations

import array
import itertools
import os
import shutil
import struct
import sys
import threading
from collections import defaultdict
from collections.abc import Sequence


def tokenise_chunk(texts: Sequence[str]) -> tuple[dict[str, int], bytes, bytes]:
    """(piece → id, the piece ids of every document as int64 bytes, pieces per document).

    Per document only C-speed work: split on whitespace, de-duplicate, and map each raw
    piece ("(RSE),", "$\\hat") to an id through a defaultdict whose factory counts. The
    word regex later runs once per distinct piece, not once per occurrence.
    """
    pieces: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    lookup = pieces.__getitem__
    ids: array.array[int] = array.array("q")
    extend = ids.extend
    lengths: array.array[int] = array.array("q", bytes(8 * len(texts)))
    for n, text in enumerate(texts):
        raw = set(text.split())
        lengths[n] = len(raw)
        extend(map(lookup, raw))
    # the defaultdict itself, not a copy (a few hundred MB at 100k documents): looking up a
    # new piece in it gives the next id, which merging the helper's pieces relies on
    return pieces, ids.tobytes(), lengths.tobytes()


def worker() -> None:
    """The helper's side: NUL-separated texts in (file argv[1]), three blobs out (argv[2]).

    It dies with its parent: the parent holds our stdin pipe open and never writes to it, so
    EOF on stdin means the parent is gone (killed, even with SIGKILL) — then the helper
    removes its temporary folder (the parent cannot any more) and exits at once."""
    source, answer = sys.argv[1], sys.argv[2]
    threading.Thread(
        target=_exit_when_orphaned, args=(os.path.dirname(source),), daemon=True
    ).start()
    with open(source, "rb") as handle:
        data = handle.read().decode("utf-8")
    pieces, ids, lengths = tokenise_chunk(data.split("\0"))
    names = "\0".join(pieces).encode("utf-8")  # pieces hold no whitespace and no NUL
    with open(answer, "wb") as out:
        out.write(struct.pack("<3q", len(names), len(ids), len(lengths)))
        for blob in (names, ids, lengths):
            out.write(blob)
    os._exit(0)  # done; no interpreter shutdown racing the watching thread


def _exit_when_orphaned(folder: str) -> None:
    try:
        while os.read(0, 65536):  # the raw descriptor: no buffer lock held at shutdown
            pass
    except OSError:
        pass
    shutil.rmtree(folder, ignore_errors=True)
    os._exit(1)


if __name__ == "__main__":
    worker()
