"""Splitting documents into distinct whitespace-separated pieces, fast.

Kept free of numpy and of the rest of the package, so that the helper process that
tokenises half of a large corpus (see ``search.postings._tokenise_in_two``) starts in milliseconds.
"""

from __future__ import annotations

import array
import itertools
import struct
import sys
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
    return dict(pieces), ids.tobytes(), lengths.tobytes()


def worker() -> None:
    """The helper's side: NUL-separated texts in (file argv[1]), three blobs out (argv[2])."""
    source, answer = sys.argv[1], sys.argv[2]
    with open(source, "rb") as handle:
        data = handle.read().decode("utf-8")
    pieces, ids, lengths = tokenise_chunk(data.split("\0"))
    names = "\0".join(pieces).encode("utf-8")  # pieces hold no whitespace and no NUL
    with open(answer, "wb") as out:
        out.write(struct.pack("<3q", len(names), len(ids), len(lengths)))
        for blob in (names, ids, lengths):
            out.write(blob)
