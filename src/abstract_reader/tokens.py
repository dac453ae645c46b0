"""A chunk of documents → its postings in both search vocabularies, fast; and the helper
process that does it for every other chunk of a large corpus.

Kept free of the rest of the package (numpy, the standard library, and ``text/fold.py``
loaded by its path), so that the helper process (see ``search.postings._Helper``) runs
*this file* as a script in isolated mode (``python -I tokens.py``): no package import,
nothing from the working directory, ``PYTHON*`` variables or user site-packages.

How a chunk is read (`index_chunk`): its texts are joined as UTF-8 bytes and the words found
by numpy (a word is a run of letters and digits, with the backslash before it if there is
one: what ``TOKEN_RE`` finds). A word of ASCII letters and digits — nearly all — is packed
into an integer, six bits a letter, together with its document: ``sort`` then gives each
word's documents with no Python object per occurrence. Words of up to 8 letters are one
64-bit key (48 bits of letters, 16 of document), words of 9 to 16 letters two keys. Anything
else (a letter outside ASCII, a LaTeX command, a word longer than 16) goes through
``TOKEN_RE`` and `normalise` in Python: few words, and their search forms join the packed
ones when they are ASCII themselves (``Köhler`` → ``Kohler``, ``\\alpha`` → ``alpha``).
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import os
import re
import shutil
import struct
import sys
import types
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

#: A word; a LaTeX command keeps its backslash so it can be told apart from prose.
TOKEN_RE = re.compile(r"\\?[^\W_]+")
#: Documents per block of the byte-level pass (about 1.3 MB of abstracts: each C-level
#: step — a join, an encode — holds the GIL well under a few milliseconds; numpy's passes
#: release it).
STEP = 1024
#: Words are indexed by their first ``MAX_WORD`` letters (as ``search.query.MAX_WORD``).
MAX_WORD = 256

U16 = npt.NDArray[np.uint16]
I32 = npt.NDArray[np.int32]
U64 = npt.NDArray[np.uint64]
#: One vocabulary's postings of a chunk: its distinct forms — those of up to 8 ASCII letters
#: and digits packed (`_pack`: one integer each, rising), then the others as text —; how many
#: documents each form has (the packed ones first); those documents (offsets in the chunk),
#: form by form, rising. (A form of up to 8 ASCII letters and digits is always packed: a
#: build numbers the packed forms by numpy, never as Python strings.)
Postings = tuple[U64, list[str], I32, U16]
#: `index_chunk`'s answer: how many documents, the folded (case-insensitive) and the
#: case-kept postings.
Answer = tuple[int, Postings, Postings]
#: A bytes-like object (bytes, a memoryview, a mapped file)
Buffer = Any


def _fold_module() -> types.ModuleType:
    """``text/fold.py``: imported with the package, or loaded by its path in the helper."""
    if __package__:
        return importlib.import_module(".text.fold", __package__)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "text", "fold.py")
    spec = importlib.util.spec_from_file_location("_abstract_reader_fold", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_fold = _fold_module()
GREEK_NAMES: frozenset[str] = _fold.GREEK_NAMES
TEXT_COMMANDS: frozenset[str] = _fold.TEXT_COMMANDS
#: `fold_accents` without its memo: a build folds each word once per chunk.
_fold_accents = _fold.fold_accents.__wrapped__


def normalise(token: str) -> tuple[str, str]:
    """A raw token → (case-kept form, folded form); '' for LaTeX commands showing no text."""
    if token.startswith("\\"):
        name = token[1:]
        token = name if name.lower() in GREEK_NAMES or name in TEXT_COMMANDS else ""
        if token.startswith("var"):
            token = token[3:]
    form = _fold_accents(token)[:MAX_WORD] if token else ""
    return form, form.lower()[:MAX_WORD]


# -- packing ASCII words -------------------------------------------------------------------
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SPECIAL = 63  #: the code of a byte outside ASCII (a word with one goes through Python)
_UPPER = 37  #: codes from here up to 62 are capitals
#: each byte's code: 0 not in a word, 1-62 an ASCII letter or digit, 63 outside ASCII
_CODE = np.zeros(256, np.uint8)
for _i, _c in enumerate(_ALPHABET):
    _CODE[ord(_c)] = _i + 1
_CODE[0x80:] = _SPECIAL
#: a code's character (0: none)
_CHARS = np.zeros(64, np.uint8)
_CHARS[1:63] = np.frombuffer(_ALPHABET.encode(), np.uint8)
_CODE_OF = {c: i + 1 for i, c in enumerate(_ALPHABET)}
_BACKSLASH = ord("\\")
_M8 = np.uint64(0x00FF00FF00FF00FF)
_M16 = np.uint64(0x0000FFFF0000FFFF)
_M32 = np.uint64(0x00000000FFFFFFFF)


def _pack(x: U64) -> U64:
    """8 codes below 64 (one a byte, first lowest) → one integer, code ``i`` at bit ``6 * i``."""
    x = (x & _M8) | ((x & ~_M8) >> np.uint64(2))
    x = (x & _M16) | ((x & ~_M16) >> np.uint64(4))
    return (x & _M32) | ((x & ~_M32) >> np.uint64(8))


def _pack_str(word: str) -> int:
    """`_pack` of an ASCII word of at most 8 letters and digits."""
    return sum(_CODE_OF[c] << (6 * i) for i, c in enumerate(word))


def _unpack(packed: U64, width: int = 8) -> npt.NDArray[np.uint8]:
    """`_pack`'s inverse: rows of ``width`` characters (NUL after a word's end)."""
    out = np.empty((packed.size, width), np.uint8)
    for i in range(width):
        out[:, i] = _CHARS[((packed >> np.uint64(6 * i)) & np.uint64(63)).astype(np.intp)]
    return out


def unpack_words(packed: U64) -> list[str]:
    """Packed forms (`Postings`) → the forms."""
    return _words(_unpack(packed))


def unpack_rows(packed: U64) -> npt.NDArray[np.uint8]:
    """Packed forms → their characters, 8 a row (NUL after a form's end)."""
    return _unpack(packed)


def rows_words(rows: npt.NDArray[np.uint8]) -> list[str]:
    """`unpack_rows`' rows → the forms."""
    return _words(rows)


def forms_of(part: Postings) -> list[str]:
    """Every form of one vocabulary's postings of a chunk, in the order of its counts."""
    return unpack_words(part[0]) + part[1]


def packable(form: str) -> bool:
    """Is ``form`` one that `Postings` packs (up to 8 ASCII letters and digits)?"""
    return len(form) <= 8 and form.isascii() and form.isalnum()


def _words(rows: npt.NDArray[np.uint8]) -> list[str]:
    """Rows of characters, NUL-padded → the words."""
    if not rows.shape[0]:
        return []
    lines = np.empty((rows.shape[0], rows.shape[1] + 1), np.uint8)
    lines[:, :-1] = rows
    lines[:, -1] = 10
    return lines.tobytes().replace(b"\0", b"")[:-1].decode("ascii").split("\n")


_Target = tuple[list[int], int, list[int] | None, int]


class _Keys:
    """One vocabulary's (word, document) pairs of a chunk while it is read: words of up to
    8 letters as one key, of 9 to 16 as two, any other form numbered in a dict."""

    def __init__(self) -> None:
        self.short: list[U64] = []
        self.long_hi: list[U64] = []
        self.long_lo: list[U64] = []
        self.other: dict[str, int] = {}
        self.other_keys: list[int] = []
        self.py_short: list[int] = []
        self.py_hi: list[int] = []
        self.py_lo: list[int] = []

    def target(self, form: str) -> _Target:
        """Where a form found by the Python path goes: (list, key without its document,
        second list or None, its value) — its document is or-ed into the key."""
        if len(form) <= 16 and form.isascii() and form.isalnum():
            if len(form) <= 8:
                return self.py_short, _pack_str(form) << 16, None, 0
            return self.py_lo, _pack_str(form[8:]) << 16, self.py_hi, _pack_str(form[:8])
        n = self.other.setdefault(form, len(self.other))
        return self.other_keys, n << 16, None, 0

    def postings(self) -> Postings:
        forms: list[str] = []
        counts: list[I32] = []
        docs: list[U16] = []
        # words of up to 8 letters
        keys = np.concatenate([*self.short, np.array(self.py_short, np.uint64)])
        self.short.clear()
        keys.sort()  # (whole keys: any sort gives the same order)
        keys = _distinct(keys)
        words = keys >> np.uint64(16)
        first = _starts(words)
        short = words[first]
        counts.append(np.diff(first, append=words.size).astype(np.int32))
        docs.append((keys & np.uint64(0xFFFF)).astype(np.uint16))
        del keys, words
        # 9 to 16 letters: (first 8, the rest and the document)
        hi = np.concatenate([*self.long_hi, np.array(self.py_hi, np.uint64)])
        lo = np.concatenate([*self.long_lo, np.array(self.py_lo, np.uint64)])
        self.long_hi.clear()
        self.long_lo.clear()
        order = np.lexsort((lo, hi))
        hi, lo = hi[order], lo[order]
        del order
        if hi.size:
            keep = np.empty(hi.size, bool)
            keep[0] = True
            keep[1:] = (hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1])
            hi, lo = hi[keep], lo[keep]
        rest = lo >> np.uint64(16)
        new = np.empty(hi.size, bool)
        new[:1] = True
        new[1:] = (hi[1:] != hi[:-1]) | (rest[1:] != rest[:-1])
        first = np.flatnonzero(new)
        rows = np.concatenate([_unpack(hi[first]), _unpack(rest[first])], axis=1)
        forms += _words(rows)
        counts.append(np.diff(first, append=hi.size).astype(np.int32))
        docs.append((lo & np.uint64(0xFFFF)).astype(np.uint16))
        del hi, lo, rest
        # any other form
        other = np.array(self.other_keys, np.int64)
        other.sort()
        other = _distinct(other)
        ids = other >> 16
        first = _starts(ids)
        names = list(self.other)
        forms += [names[i] for i in ids[first].tolist()]
        counts.append(np.diff(first, append=ids.size).astype(np.int32))
        docs.append((other & 0xFFFF).astype(np.uint16))
        return short, forms, np.concatenate(counts), np.concatenate(docs)


def _distinct(keys: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A sorted array without its repeats."""
    if keys.size < 2:
        return keys
    keep = np.empty(keys.size, bool)
    keep[0] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]


def _starts(sorted_values: npt.NDArray[Any]) -> npt.NDArray[np.intp]:
    """Where each run of equal values of a sorted array starts."""
    new = np.empty(sorted_values.size, bool)
    new[:1] = True
    np.not_equal(sorted_values[1:], sorted_values[:-1], out=new[1:])
    return np.flatnonzero(new)


def index_chunk(texts: Sequence[str]) -> Answer:
    """The postings of a chunk of at most 65,536 documents in both vocabularies: each
    folded form (accents and Greek letters folded, lower case) and each case-kept form with
    a capital, with the documents whose text has a word of that form."""
    if len(texts) > 1 << 16:
        raise ValueError("a chunk holds at most 65,536 documents")
    folded, cased = _Keys(), _Keys()
    known: dict[bytes, list[_Target]] = {}  #: the targets of each word read by Python
    for at in range(0, len(texts), STEP):
        encoded = [t.encode("utf-8", "surrogatepass") for t in texts[at : at + STEP]]
        _read_block(encoded, at, folded, cased, known)
    return len(texts), folded.postings(), cased.postings()


def index_chunk_raw(pieces: Sequence[tuple[Buffer, Sequence[int]]]) -> Answer:
    """`index_chunk` of texts given as UTF-8 bytes, in pieces: in a piece ``(data, cut)``,
    text ``j`` is ``data[cut[j]:cut[j + 1]]`` (no decoding and encoding again: what a
    corpus keeps, read as it is). The same answer as `index_chunk` of the decoded texts."""
    views: list[memoryview] = []
    for data, cut in pieces:
        view = memoryview(data).cast("B")
        bounds = [int(x) for x in cut]
        views += [view[a:b] for a, b in itertools.pairwise(bounds)]
    if len(views) > 1 << 16:
        raise ValueError("a chunk holds at most 65,536 documents")
    folded, cased = _Keys(), _Keys()
    known: dict[bytes, list[_Target]] = {}
    for at in range(0, len(views), STEP):
        _read_block(views[at : at + STEP], at, folded, cased, known)
    return len(views), folded.postings(), cased.postings()


def _read_block(
    encoded: Sequence[Buffer],
    doc0: int,
    folded: _Keys,
    cased: _Keys,
    known: dict[bytes, list[_Target]],
) -> None:
    """Read a block of texts (UTF-8 bytes each) whose first is document ``doc0``."""
    # NUL before, between and after the texts: never in a word
    blob = b"\0" + b"\0".join(encoded) + b"\0" * 24
    ends = np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)) + 1)
    del encoded
    raw = np.frombuffer(blob, np.uint8)
    code = _CODE.take(raw)
    inside = code != 0
    edges = np.flatnonzero(inside[1:] != inside[:-1]) + 1  # a run's start, then its end
    del inside
    if not edges.size:
        return
    starts, stops = edges[0::2], edges[1::2]
    lengths = stops - starts
    # each run's document: text ``i`` holds the runs starting before its end and after the last's
    per_text = np.diff(np.searchsorted(starts, ends), prepend=0)
    doc = np.repeat(np.arange(doc0, doc0 + ends.size, dtype=np.uint64), per_text)
    # by Python: a LaTeX command, a word longer than 16, a run with a byte outside ASCII
    by_python = (raw[starts - 1] == _BACKSLASH) | (lengths > 16)
    if not blob.isascii():
        runs = np.searchsorted(starts, np.flatnonzero(raw >= 0x80), side="right") - 1
        by_python[runs] = True  # (such a byte is always inside a run: its code is not 0)
    for start, stop, d in zip(
        starts[by_python].tolist(),
        stops[by_python].tolist(),
        doc[by_python].tolist(),
        strict=True,
    ):
        if raw[start - 1] == _BACKSLASH:
            start -= 1
        piece = blob[start:stop]
        targets = known.get(piece)
        if targets is None:
            targets = known[piece] = []
            for token in TOKEN_RE.findall(piece.decode("utf-8", "surrogatepass")):
                case_form, folded_form = normalise(token)
                if folded_form:
                    targets.append(folded.target(folded_form))
                if case_form != case_form.lower():
                    targets.append(cased.target(case_form))
        for keys, key, more, value in targets:
            keys.append(key | d)
            if more is not None:
                more.append(value)
    fast = ~by_python
    starts, lengths, doc = starts[fast], lengths[fast], doc[fast]
    del fast, by_python
    long = lengths > 8
    # each run's first 8 codes (and the next 8 of the long ones), cut at its end: a code a
    # byte; capitals' codes lowered in each byte at once (they are 37 to 62: +27 sets bit 6)
    eights = _eights(code)
    first = eights[starts] & _BYTES[np.minimum(lengths, 8)]
    second = eights[starts[long] + 8] & _BYTES[lengths[long] - 8]
    del eights, code, lengths, starts
    first_up = ((first + _ADD27) >> np.uint64(6)) & _ONES
    second_up = ((second + _ADD27) >> np.uint64(6)) & _ONES
    capital = first_up != 0
    capital[long] |= second_up != 0
    head_case, tail_case = _pack(first), _pack(second)
    head, tail = _pack(first - first_up * np.uint64(26)), _pack(second - second_up * np.uint64(26))
    del first, second, first_up, second_up
    _add_keys(folded, head, tail, doc, long)
    _add_keys(cased, head_case[capital], tail_case[capital[long]], doc[capital], long[capital])


def _add_keys(keys: _Keys, head: U64, tail: U64, doc: U64, long: npt.NDArray[np.bool_]) -> None:
    short = ~long
    keys.short.append(head[short] << np.uint64(16) | doc[short])
    keys.long_hi.append(head[long])
    keys.long_lo.append(tail << np.uint64(16) | doc[long])


#: ``_BYTES[n]``: the first ``n`` bytes of eight
_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], np.uint64)
_ONES = np.uint64(0x0101010101010101)
_ADD27 = np.uint64(0x0101010101010101 * (64 - _UPPER))  #: a capital's code + 27 ≥ 64


def _eights(codes: npt.NDArray[np.uint8]) -> U64:
    """The 8 bytes from each position as one integer (an unaligned view: no copy)."""
    return np.ndarray(
        (codes.size - 7,), np.dtype("<u8"), buffer=np.ascontiguousarray(codes), strides=(1,)
    )


# -- the helper process -------------------------------------------------------------------
#: `encode_answer`'s head: the number of documents, then five sizes per vocabulary
ANSWER_HEAD = struct.Struct("<11q")


def encode_answer(answer: Answer) -> bytes:
    """`index_chunk`'s answer as one blob (what the helper writes): the number of documents;
    per vocabulary, the number of packed forms and of other forms, and the sizes in bytes of
    the other forms' names, the counts and the documents; then the parts (the packed forms
    as 64-bit integers)."""
    papers, *both = answer
    head: list[int] = [papers]
    parts: list[bytes] = []
    for short, forms, counts, docs in both:
        names = "\0".join(forms).encode("utf-8", "surrogatepass")  # forms hold no NUL
        head += [short.size, len(forms), len(names), counts.nbytes, docs.nbytes]
        parts += [short.astype(np.uint64).tobytes(), names, counts.tobytes(), docs.tobytes()]
    return ANSWER_HEAD.pack(*head) + b"".join(parts)


def chunk_header(offsets: npt.NDArray[np.int64]) -> bytes:
    """The start of a chunk's file for the helper: its number of texts and their offsets
    (``n + 1`` of them, from 0) in the UTF-8 bytes that follow (see `read_chunk_file`)."""
    return struct.pack("<q", offsets.size - 1) + offsets.astype("<i8").tobytes()


def read_chunk_file(blob: bytes) -> tuple[memoryview, npt.NDArray[np.int64]]:
    """(the texts' bytes, their offsets) of a chunk file (ValueError if it is not one)."""
    (n,) = struct.unpack_from("<q", blob) if len(blob) >= 8 else (-1,)
    if not 0 <= n <= 1 << 16 or len(blob) < 16 + 8 * n:
        raise ValueError("not a chunk file")
    offsets = np.frombuffer(blob, "<i8", n + 1, 8).astype(np.int64)
    data = memoryview(blob)[16 + 8 * n :]
    if offsets[0] != 0 or offsets[-1] != len(data) or np.any(offsets[1:] < offsets[:-1]):
        raise ValueError("not a chunk file")
    return data, offsets


def worker() -> None:
    """The helper's side. Each line on stdin names a chunk ``k``: it reads the texts in
    ``<folder>/in-<k>`` (`chunk_header`, then their UTF-8 bytes), writes `encode_answer`
    to ``<folder>/out-<k>`` and says ``k`` on stdout.

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
                    texts, offsets = read_chunk_file(handle.read())
                os.unlink(source)
                blob = encode_answer(index_chunk_raw([(texts, offsets.tolist())]))
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
