"""Splitting a chunk of documents into words, fast; and the helper process that does it.

Kept free of numpy and of the rest of the package (standard library only), so that the
helper process that tokenises every other chunk of a large corpus (see
``search.postings._Helper``) starts in milliseconds — and runs *this file* as a script in
isolated mode (``python -I tokens.py``): no package import, nothing from the working
directory, ``PYTHON*`` variables or user site-packages.
"""

from __future__ import annotations

import array
import itertools
import os
import re
import shutil
import struct
import sys
from collections import defaultdict
from collections.abc import Sequence

#: A word; a LaTeX command keeps its backslash so it can be told apart from prose.
TOKEN_RE = re.compile(r"\\?[^\W_]+")
#: Pieces per step of the C-level loops of `tokenise_words` (a few milliseconds each).
STEP = 4096


def tokenise_words(texts: Sequence[str]) -> tuple[list[str], bytes, bytes, bytes, bytes]:
    """The words of a chunk of documents, as flat arrays (int32 bytes) for numpy:

    ``(words, piece_starts, piece_words, pair_pieces, doc_pieces)``: the chunk's distinct
    words; for each distinct whitespace piece ("(RSE),", "$\\hat", "Split-RL,") where its
    word ids start in ``piece_words`` (one more entry than pieces); the words of every
    piece; the piece of every distinct (document, piece) pair, document by document; and
    how many pieces each document has.

    Per document only C-speed work: split on whitespace, de-duplicate, and map each piece
    to an id through a defaultdict whose factory counts. The word regex then runs once per
    distinct piece of the chunk, not once per occurrence.
    """
    pieces: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    lookup = pieces.__getitem__
    pairs: array.array[int] = array.array("i")
    extend = pairs.extend
    lengths: array.array[int] = array.array("i", bytes(4 * len(texts)))
    for n, text in enumerate(texts):
        raw = set(text.split())
        lengths[n] = len(raw)
        extend(map(lookup, raw))
    words: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    # C-level loops only, from here on — in steps of `STEP` pieces: a C loop never lets
    # another thread have the GIL, and one over a whole chunk's pieces held it 100-160 ms
    # (the reader's UI thread, echoing a key, waited for it)
    found: list[list[str]] = []
    every = list(pieces)
    for at in range(0, len(every), STEP):
        found += map(TOKEN_RE.findall, every[at : at + STEP])
    starts: array.array[int] = array.array("i", [0])
    starts.extend(itertools.accumulate(map(len, found)))
    flat: array.array[int] = array.array("i")
    word_id = words.__getitem__
    for at in range(0, len(found), STEP):
        flat.extend(map(word_id, itertools.chain.from_iterable(found[at : at + STEP])))
    return list(words), starts.tobytes(), flat.tobytes(), pairs.tobytes(), lengths.tobytes()


def encode_answer(answer: tuple[list[str], bytes, bytes, bytes, bytes]) -> bytes:
    """`tokenise_words`' answer as one blob (what the helper writes)."""
    words, *blobs = answer
    names = "\0".join(words).encode("utf-8")  # words hold no NUL
    parts = [names, *blobs]
    return struct.pack("<6q", len(words), *map(len, parts)) + b"".join(parts)


def worker() -> None:
    """The helper's side. Each line on stdin names a chunk ``k``: it reads the NUL-separated
    texts in ``<folder>/in-<k>``, writes `encode_answer` to ``<folder>/out-<k>`` and says
    ``k`` on stdout.

    It dies with its parent: only the parent holds our stdin pipe, so EOF on stdin means the
    parent is done or gone (killed, even with SIGKILL) — then the helper removes its
    temporary folder (the parent may not be able to any more) and exits. A chunk being
    tokenised when that happens is finished first (a fraction of a second)."""
    folder = sys.argv[1]
    stdin = os.fdopen(0, "rb", buffering=0)
    pending = b""
    try:
        while True:
            data = stdin.read(65536)
            if not data:
                break
            pending += data
            while b"\n" in pending:
                line, _, pending = pending.partition(b"\n")
                k = int(line)
                source = os.path.join(folder, f"in-{k}")
                with open(source, "rb") as handle:
                    texts = handle.read().decode("utf-8").split("\0")
                os.unlink(source)
                blob = encode_answer(tokenise_words(texts))
                del texts
                part = os.path.join(folder, f".out-{k}")
                with open(part, "wb") as out:
                    out.write(blob)
                os.replace(part, os.path.join(folder, f"out-{k}"))
                os.write(1, b"%d\n" % k)
    except (OSError, ValueError):
        pass
    shutil.rmtree(folder, ignore_errors=True)
    os._exit(0)  # no interpreter shutdown work


if __name__ == "__main__":
    worker()
