"""The vocabulary index of one field: sorted words with CSR postings, and its build.

The index is a sorted vocabulary with postings in CSR form (one numpy array of paper
positions, one array of offsets). Because the vocabulary is sorted, every prefix is one
contiguous slice of it — and so one contiguous slice of the postings: a prefix query costs
one numpy fancy-index, whatever the number of words it covers. Typo candidates come from
rapidfuzz over the words with the same first letter and a similar length.

The vocabulary is one UTF-8 blob (each word followed by a newline) with the words' start
offsets, not a list of Python strings: bisection compares bytes (UTF-8 sorts as code
points do), and only the first letter being typed is decoded into strings for rapidfuzz.

The build reads the papers in chunks of `CHUNK_DOCS`: `tokens.index_chunk` gives each
chunk's postings (its distinct forms, their papers as 16-bit offsets into the chunk), kept
as small arrays with the forms numbered here (those of up to 8 ASCII letters and digits —
nearly all — packed into integers and numbered by numpy, never as Python strings), and the
final arrays are assembled at the end, so the peak is the index plus one chunk's temporaries — not every word of the corpus
at once. From `PARALLEL_MIN_DOCS` papers on, a helper process does chunks too (more than
half: this process also numbers every chunk's forms and assembles the arrays).
"""

from __future__ import annotations

import bisect
import collections
import functools
import itertools
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from .. import tokens
from ..tokens import TOKEN_RE
from ..tokens import index_chunk as _index_chunk
from .query import MAX_WORD

IntArray = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]

_TOKEN_RE = TOKEN_RE  #: a word (similar.py tokenises a paper as the index does)

#: Papers per chunk of the build (at most 65,536: a chunk's papers are 16-bit offsets).
CHUNK_DOCS = 8192
#: Progress callback of a build: (papers done, papers in all).
Progress = Callable[[int, int], object]


class _BytesAt(Sequence[bytes]):
    """The vocabulary's words as UTF-8 bytes, for bisection (no decoding)."""

    __slots__ = ("_blob", "_starts")

    def __init__(self, blob: bytes, starts: memoryview) -> None:
        self._blob = blob
        self._starts = starts

    def __len__(self) -> int:
        return len(self._starts) - 1

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | Sequence[bytes]:
        if isinstance(i, slice):
            raise TypeError("no slices")
        return self._blob[self._starts[i] : self._starts[i + 1] - 1]


class Vocabulary(Sequence[str]):
    """Sorted, distinct words as one UTF-8 blob, each word followed by ``\n``, with start
    offsets (``len + 1``, the last one the blob's end). Reads like a list of strings."""

    __slots__ = ("_at", "_groups", "blob", "lengths", "starts")

    def __init__(self, blob: bytes, starts: IntArray | None = None) -> None:
        raw = np.frombuffer(blob, np.uint8)
        if starts is None:
            starts = np.zeros(np.count_nonzero(raw == 10) + 1, np.int64)
            starts[1:] = np.flatnonzero(raw == 10) + 1
        self.blob = blob
        self.starts: IntArray = starts
        self._at = _BytesAt(blob, np.ascontiguousarray(starts).data)
        #: each word's length in characters (UTF-8 continuation bytes are not characters)
        lengths = np.diff(starts) - 1
        if raw.size and int(raw.max()) >= 0x80:
            continuation = np.zeros(raw.size + 1, np.int32)
            np.cumsum((raw & 0xC0) == 0x80, out=continuation[1:])
            lengths -= continuation[starts[1:]] - continuation[starts[:-1]]
        self.lengths: npt.NDArray[np.int32] = lengths.astype(np.int32)
        self._groups: dict[str, list[str]] = {}  #: decoded first-letter groups (a few)

    @classmethod
    def from_sorted(cls, words: Iterable[str]) -> Vocabulary:
        return cls("".join(f"{w}\n" for w in words).encode("utf-8"))

    def __len__(self) -> int:
        return len(self.starts) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        return self._at[i].decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        if len(self):
            yield from self.blob[:-1].decode("utf-8").split("\n")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Vocabulary):
            return self.blob == other.blob
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def find(self, word: str) -> int:
        key = word.encode("utf-8")
        i = bisect.bisect_left(self._at, key)
        return i if i < len(self) and self._at[i] == key else -1

    def find_many(self, words: Sequence[str]) -> list[int]:
        """`find` of each of ``words``: a bisection each for a few, else one pass that maps
        every word of the vocabulary (a bisection decodes ~17 words in Python: ~8 µs)."""
        if len(words) * 16 < len(self):
            return [self.find(word) for word in words]
        index = dict(zip(self, range(len(self)), strict=True))
        return [index.get(word, -1) for word in words]

    def prefix_range(self, prefix: str) -> tuple[int, int]:
        lo = bisect.bisect_left(self._at, prefix.encode("utf-8"))
        hi = bisect.bisect_left(self._at, (prefix + "\U0010ffff").encode("utf-8"), lo)
        return lo, hi

    def group(self, lo: int, hi: int) -> list[str]:
        """Words ``lo`` to ``hi`` as strings: one decode and split, at C speed."""
        if hi <= lo:
            return []
        return self.blob[int(self.starts[lo]) : int(self.starts[hi]) - 1].decode().split("\n")

    def letter_group(self, letter: str) -> tuple[int, list[str]]:
        """(first index, the words) of the words starting with ``letter``; the last few
        letters asked for are kept decoded (typing a word asks for the same one each key)."""
        lo, hi = self.prefix_range(letter)
        found = self._groups.get(letter)
        if found is None:
            found = self.group(lo, hi)
            if len(self._groups) >= 2:
                self._groups.pop(next(iter(self._groups)))
            self._groups[letter] = found
        return lo, found

    def nbytes(self) -> int:
        return len(self.blob) + self.starts.nbytes + self.lengths.nbytes


@dataclass(slots=True)
class _Postings:
    """A sorted vocabulary with CSR postings."""

    words: Vocabulary
    offsets: IntArray  #: len(words) + 1
    docs: U32

    @property
    def lengths(self) -> npt.NDArray[np.int32]:
        return self.words.lengths

    def find(self, word: str) -> int:
        return self.words.find(word)

    def prefix_range(self, prefix: str) -> tuple[int, int]:
        return self.words.prefix_range(prefix)

    def docs_of(self, i: int) -> U32:
        return self.docs[self.offsets[i] : self.offsets[i + 1]]

    def docs_of_range(self, lo: int, hi: int) -> U32:
        return self.docs[self.offsets[lo] : self.offsets[hi]]

    @staticmethod
    def word_runs(ids: IntArray) -> list[tuple[int, int]]:
        """``ids`` as runs of consecutive vocabulary words: [start, stop) pairs, in order
        (the postings of a run are one contiguous slice: `docs_of_range`)."""
        if not ids.size:
            return []
        breaks = np.flatnonzero(np.diff(ids) != 1) + 1
        starts = ids[np.concatenate(([0], breaks))]
        stops = ids[np.concatenate((breaks - 1, [ids.size - 1]))] + 1
        return list(zip(starts.tolist(), stops.tolist(), strict=True))

    def docs_of_ranges(self, runs: Sequence[tuple[int, int]]) -> U32:
        """The postings of vocabulary ranges ``runs``, one after the other (slices joined,
        nothing gathered)."""
        if not runs:
            return self.docs[:0]
        return np.concatenate([self.docs_of_range(lo, hi) for lo, hi in runs])

    def typo_candidates(self, word: str, budget: int, as_prefix: bool) -> list[tuple[int, int]]:
        """(vocabulary index, edits) of words within ``budget`` edits (of their prefix)."""
        if budget <= 0 or not word:
            return []
        lo, group = self.words.letter_group(word[:1])
        if not group:
            return []
        lengths = self.lengths[lo : lo + len(group)]
        n = len(word)
        if as_prefix:
            mask = lengths >= n - budget
        else:
            mask = np.abs(lengths - n) <= budget
        idx = np.nonzero(mask)[0]
        if idx.size == 0:
            return []
        best: dict[int, int] = {}
        picked = [group[i] for i in idx.tolist()]
        cut_lengths = (n - 1, n, n + 1) if as_prefix else (0,)
        for cut in cut_lengths:
            if cut < 0:
                continue
            choices = [w[:cut] for w in picked] if as_prefix else picked
            for _choice, dist, pos in process.extract(
                word, choices, scorer=Levenshtein.distance, score_cutoff=budget, limit=None
            ):
                vocab_i = int(idx[pos]) + lo
                if dist > 0 and dist < best.get(vocab_i, budget + 1):
                    best[vocab_i] = int(dist)
        ranked = sorted(best.items(), key=lambda item: (item[1], item[0]))
        return ranked[:256]

    def nbytes(self) -> int:
        return int(self.docs.nbytes + self.offsets.nbytes + self.words.nbytes())


def _normalise_vocab(raw: list[str]) -> tuple[list[str], list[str]]:
    """Raw tokens → (case-kept form, folded form); '' for LaTeX commands that show no text."""
    pairs = list(map(tokens.normalise, raw))
    return [case for case, _ in pairs], [folded for _, folded in pairs]


def _ranges(starts: IntArray, lengths: IntArray) -> IntArray:
    """Concatenated ``arange(start, start + length)`` for each pair, without a Python loop."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    out: IntArray = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    out += np.arange(total, dtype=np.int64)
    return out


def _positions(
    starts: IntArray, lengths: npt.NDArray[np.int32], narrow: bool
) -> npt.NDArray[np.int32] | IntArray:
    """`_ranges`, in ``int32`` with ``narrow`` (every value below 2**31: half the bytes)."""
    if not narrow:
        return _ranges(starts, lengths.astype(np.int64))
    total = int(lengths.sum(dtype=np.int64))
    if total == 0:
        return np.zeros(0, np.int32)
    shift = starts - (np.cumsum(lengths, dtype=np.int64) - lengths)
    out: npt.NDArray[np.int32] = np.repeat(shift.astype(np.int32), lengths)
    out += np.arange(total, dtype=np.int32)
    return out


@dataclass(slots=True)
class _Chunk:
    """One chunk's postings in one vocabulary: its distinct word ids (in no order); how
    many papers each has; those papers (16-bit offsets from ``doc0``), id by id, rising."""

    doc0: int
    ids: npt.NDArray[np.int32]
    counts: npt.NDArray[np.int32]
    docs: npt.NDArray[np.uint16]


class _Forms:
    """One vocabulary while building: words numbered by first appearance, and the chunks'
    postings in those numbers (sorted into the final order once, at the end). Forms of up
    to 8 ASCII letters and digits (nearly all) come packed (`tokens.Postings`): they are
    numbered by numpy, kept as one sorted array of the packed forms with their numbers
    (``-1 - n`` for the ``n``-th packed form), not as Python strings in a dict."""

    def __init__(self) -> None:
        self.ids: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self.packed = np.zeros(0, np.uint64)  #: the packed forms seen, rising
        self.packed_ids = np.zeros(0, np.int32)  #: their numbers (negative)
        self.chunks: list[_Chunk] = []

    def add(self, doc0: int, chunk: tokens.Postings) -> None:
        """One chunk's postings (its own forms: numbered here, a step of words at a time —
        a C loop never yields the GIL)."""
        short, forms, counts, docs = chunk
        ids = np.empty(counts.size, np.int32)
        ids[: short.size] = self._number_packed(short)
        number = self.ids.__getitem__
        for at in range(0, len(forms), 4096):
            ids[short.size + at : short.size + at + 4096] = np.fromiter(
                map(number, forms[at : at + 4096]), np.int32
            )
        self.chunks.append(_Chunk(doc0, ids, counts, docs))

    def _number_packed(self, short: npt.NDArray[np.uint64]) -> npt.NDArray[np.int32]:
        """The numbers of a chunk's packed forms (distinct, rising), new ones numbered."""
        known, numbers = self.packed, self.packed_ids
        at = np.searchsorted(known, short)
        found = np.zeros(short.size, bool)
        inside = np.flatnonzero(at < known.size)
        found[inside] = known[at[inside]] == short[inside]
        out = np.empty(short.size, np.int32)
        out[found] = numbers[at[found]]
        new = np.flatnonzero(~found)
        fresh = -1 - np.arange(known.size, known.size + new.size, dtype=np.int32)
        out[new] = fresh
        if new.size:  # (still rising: each new form goes before the first larger one)
            self.packed = np.insert(known, at[new], short[new])
            self.packed_ids = np.insert(numbers, at[new], fresh)
        return out

    def postings(self) -> _Postings:
        """The final arrays: the vocabulary sorted, each word's papers in one run, rising."""
        # the text forms sorted, then the packed ones sorted (a packed form's characters
        # read as a big-endian number sort as its text does): two runs, one merge; a form's
        # final number is its text number, or ``len(self.ids) + n`` for the packed ``n``-th
        texts = len(self.ids)
        forms = sorted(self.ids)
        number = self.ids.__getitem__
        numbers = [
            np.fromiter(map(number, forms[at : at + 4096]), np.int64)
            for at in range(0, len(forms), 4096)
        ]
        self.ids.clear()
        rows = tokens.unpack_rows(self.packed)
        by_text = np.argsort(rows.view(">u8").ravel(), kind="stable")
        forms += tokens.rows_words(rows[by_text])
        numbers.append(texts - 1 - self.packed_ids[by_text].astype(np.int64))
        del rows, by_text
        self.packed = np.zeros(0, np.uint64)
        self.packed_ids = np.zeros(0, np.int32)
        final = np.concatenate(numbers)
        merged = sorted(range(len(forms)), key=forms.__getitem__)
        order = final[np.array(merged, np.int64)]
        words = Vocabulary(  # joined a step at a time: a C loop never yields the GIL
            b"".join(
                ("\n".join([forms[i] for i in merged[at : at + 65536]]) + "\n").encode()
                for at in range(0, len(merged), 65536)
            )
        )
        del forms, merged, final, numbers
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        total = np.zeros(order.size, np.int64)
        chunks = sorted(self.chunks, key=lambda c: c.doc0)
        self.chunks.clear()
        for chunk in chunks:
            negative = chunk.ids < 0
            chunk.ids[negative] = texts - 1 - chunk.ids[negative]  # (packed: after the texts)
            total[chunk.ids] += chunk.counts
        offsets = np.zeros(order.size + 1, np.int64)
        np.cumsum(total[order], out=offsets[1:])
        del total, order
        cursor = offsets[:-1][rank]  # where each word's next papers go
        del rank
        docs = np.empty(int(offsets[-1]), np.uint32)
        narrow = docs.size < 1 << 31  # positions fit int32: half the bytes to write
        chunks.reverse()
        while chunks:  # in paper order: each word's papers come out rising
            chunk = chunks.pop()
            at = _positions(cursor[chunk.ids], chunk.counts, narrow)
            values = chunk.docs.astype(np.uint32)
            values += np.uint32(chunk.doc0)
            docs[at] = values
            cursor[chunk.ids] += chunk.counts
        return _Postings(words, offsets, docs)


class _Builder:
    """One field's index, built chunk by chunk: both vocabularies' postings."""

    def __init__(self) -> None:
        self.folded = _Forms()
        self.cased = _Forms()
        self.papers = 0

    def add(self, doc0: int, answer: _Answer) -> None:
        """Add the postings of a chunk (`tokens.index_chunk`'s answer; a helper's is
        `_checked` first)."""
        papers, folded, cased = answer
        self.folded.add(doc0, folded)
        self.cased.add(doc0, cased)
        self.papers += papers


_Answer = tokens.Answer


def _checked(answer: _Answer) -> _Answer:
    """A helper's answer for a chunk, checked (ValueError): see `_checked_part`."""
    papers, folded, cased = answer
    return papers, _checked_part(folded, papers), _checked_part(cased, papers)


def _checked_part(part: tokens.Postings, papers: int) -> tokens.Postings:
    """One vocabulary's postings of a chunk of ``papers`` papers, checked (ValueError):
    distinct forms, none empty or holding a newline (the vocabulary's separator); the packed
    ones rising, each the packing of a form, the others none that is packed; each form with
    at least one paper; the papers in the chunk and rising, form by form."""
    short, forms, counts, docs = part
    if (
        short.dtype != np.uint64
        or counts.dtype != np.int32
        or docs.dtype != np.uint16
        or counts.size != short.size + len(forms)
        or not _packed_forms(short)
        or any(map(tokens.packable, forms))
        or (counts.size and int(counts.min()) < 1)
        or int(counts.sum(dtype=np.int64)) != docs.size
        or (docs.size and int(docs.max()) >= papers)
    ):
        raise ValueError("chunk postings out of range")
    distinct = set(forms)
    if len(distinct) != len(forms) or "" in distinct or "\n" in "\0".join(forms):
        raise ValueError("chunk postings with repeated or bad words")
    if docs.size > 1:
        rising = docs[1:] > docs[:-1]
        borders = np.cumsum(counts[:-1], dtype=np.int64)
        rising[borders - 1] = True
        if not rising.all():
            raise ValueError("chunk postings not rising")
    return part


def _packed_forms(short: npt.NDArray[np.uint64]) -> bool:
    """Rising, and each the packing of a form (`tokens.Postings`): 1 to 8 codes of letters
    and digits (1 to 62), from the lowest bits up, then zeros."""
    if short.size and not bool(np.all(short[1:] > short[:-1])):
        return False
    ended = np.zeros(short.size, bool)
    bad = (short & np.uint64(63)) == 0  # (no empty form)
    for i in range(8):
        code = (short >> np.uint64(6 * i)) & np.uint64(63)
        ended |= code == 0
        bad |= (code == 63) | (ended & (code != 0))
    bad |= (short >> np.uint64(48)) != 0
    return not bool(bad.any())


#: Corpora at least this large are tokenised by two processes (the second core).
PARALLEL_MIN_DOCS = 40_000


def use_helper(total: int) -> bool:
    """Is a helper process worth its start for ``total`` papers (and possible here)?"""
    return total >= PARALLEL_MIN_DOCS and (os.cpu_count() or 1) >= 2 and os.name == "posix"


#: Chunks queued at the helper process at most.
HELPER_QUEUE = 2

#: The helper's temporary folders: ``abstract-reader-tok-<pid>-<random>`` in the temp dir.
HELPER_DIR_PREFIX = "abstract-reader-tok-"


class _Helper:
    """A child Python that tokenises chunks while this process does others.

    The child runs ``tokens.py`` as a script in isolated mode (``-I``: no working directory
    or ``PYTHON*`` variables on its path, so an ``abstract_reader/`` in the cwd never runs),
    not ``multiprocessing`` (which would re-import the reader's ``__main__``). Texts and
    answers go through files in a ``mkdtemp`` folder (streaming through a pipe would fight
    this process's own tokenising for the GIL); a line on its stdin names a chunk, a line on
    its stdout says it is done. It exits when our end of its stdin closes — however this
    process ends — and removes the folder itself; folders left by processes that are gone
    (both killed at once) are removed at the next start."""

    def __init__(self) -> None:
        import subprocess
        import sys
        import tempfile

        from .. import tokens

        _remove_stale_helper_dirs()
        self.folder = Path(tempfile.mkdtemp(prefix=f"{HELPER_DIR_PREFIX}{os.getpid()}-"))
        try:
            self.child = subprocess.Popen(
                [sys.executable, "-I", os.path.abspath(tokens.__file__), str(self.folder)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,  # our own line buffer: `ready` must see every byte it was sent
            )
        except BaseException:
            self._remove_folder()
            raise
        self.sent = 0
        self._said = b""  #: what the helper wrote and we have not taken yet

    def send(self, texts: Sequence[str]) -> int:
        """Hand a chunk over; its number (for `receive`)."""
        k = self.sent
        lengths: list[int] = []
        with open(self.folder / f"in-{k}", "wb") as out:
            out.seek(8 * (len(texts) + 2))  # the header goes first, once the lengths are known
            for i in range(0, len(texts), 1024):  # a slice at a time: no whole copy
                encoded = [t.encode("utf-8", "surrogatepass") for t in texts[i : i + 1024]]
                lengths += map(len, encoded)
                out.write(b"".join(encoded))
            offsets = np.zeros(len(texts) + 1, np.int64)
            np.cumsum(np.array(lengths, np.int64), out=offsets[1:])
            out.seek(0)
            out.write(tokens.chunk_header(offsets))
        return self._tell(k)

    def send_raw(self, pieces: RawTexts) -> int:
        """Hand over a chunk given as UTF-8 bytes (see `RawTexts`): written from where they
        are (a mapped file's pages: no copy in this process)."""
        offsets = _joined_offsets(pieces)
        views = [memoryview(data)[int(cut[0]) : int(cut[-1])] for data, cut in pieces]
        return self._send([tokens.chunk_header(offsets), *views])

    def _send(self, parts: Sequence[tokens.Buffer]) -> int:
        k = self.sent
        with open(self.folder / f"in-{k}", "wb") as out:
            for part in parts:
                out.write(part)
        return self._tell(k)

    def _tell(self, k: int) -> int:
        """Name chunk ``k`` (its file written) to the helper."""
        assert self.child.stdin is not None
        self.child.stdin.write(b"%d\n" % k)
        self.child.stdin.flush()
        self.sent += 1
        return k

    def receive(self, k: int, papers: int) -> _Answer:
        """The answer for chunk ``k`` of ``papers`` texts (waits for it; RuntimeError if the
        helper failed)."""

        while b"\n" not in self._said:
            if not self._read():
                raise RuntimeError("tokeniser process failed")
        line, _, self._said = self._said.partition(b"\n")
        if line != b"%d" % k:
            raise RuntimeError("tokeniser process failed")
        path = self.folder / f"out-{k}"
        blob = path.read_bytes()
        path.unlink()
        size = tokens.ANSWER_HEAD.size
        head = tokens.ANSWER_HEAD.unpack_from(blob) if len(blob) >= size else (-1,) * 11
        parts = (head[1:6], head[6:])
        total = size + sum(8 * p[0] + p[2] + p[3] + p[4] for p in parts)
        if min(head) < 0 or total != len(blob) or head[0] != papers:
            raise RuntimeError("tokeniser process answered with a damaged file")
        view = memoryview(blob)  # the arrays are views of the file's bytes, not copies
        at = size
        answer: list[tokens.Postings] = []
        for n_short, n_forms, names, counts, docs in parts:
            short = np.frombuffer(view[at : at + 8 * n_short], np.uint64)
            at += 8 * n_short
            forms = str(view[at : at + names], "utf-8").split("\0") if n_forms else []
            at += names
            if len(forms) != n_forms or counts % 4 or docs % 2:
                raise RuntimeError("tokeniser process answered with a damaged file")
            answer.append(
                (
                    short,
                    forms,
                    np.frombuffer(view[at : at + counts], np.int32),
                    np.frombuffer(view[at + counts : at + counts + docs], np.uint16),
                )
            )
            at += counts + docs
        return papers, answer[0], answer[1]

    def ready(self) -> bool:
        """Has the helper finished a chunk not yet received? (never waits)"""
        import select

        if b"\n" in self._said:
            return True
        assert self.child.stdout is not None
        readable, _, _ = select.select([self.child.stdout], [], [], 0)
        return bool(readable) and (not self._read() or b"\n" in self._said)

    def _read(self) -> bool:
        assert self.child.stdout is not None
        data = os.read(self.child.stdout.fileno(), 4096)
        self._said += data
        return bool(data)

    def close(self) -> None:
        import subprocess

        try:
            if self.child.stdin is not None:
                self.child.stdin.close()  # EOF: the helper removes its folder and exits
            self.child.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.child.kill()
            self.child.wait()
        finally:
            if self.child.stdout is not None:
                self.child.stdout.close()
            self._remove_folder()

    def _remove_folder(self) -> None:
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)


def _chunks(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    it = iter(texts)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


#: Texts ``[start, stop)`` of a build's input again (a chunk handed to the helper process is
#: not kept here: if the helper fails, its texts are read again).
Reread = Callable[[int, int], list[str]]
#: Texts as UTF-8 bytes, in pieces: in ``(data, cut)``, text ``j`` is ``data[cut[j]:cut[j+1]]``.
RawTexts = list[tuple[tokens.Buffer, Sequence[int]]]
#: Texts ``[start, stop)`` of a build's input as `RawTexts` (None: read them as strings).
RawReader = Callable[[int, int], RawTexts | None]


def _joined_offsets(pieces: RawTexts) -> IntArray:
    """The offsets of ``pieces``' texts once their bytes are written one after the other."""
    parts = [np.zeros(1, np.int64)]
    at = 0
    for _data, cut in pieces:
        bounds = np.asarray(cut, np.int64)
        parts.append(bounds[1:] - bounds[0] + at)
        at += int(bounds[-1] - bounds[0])
    return np.concatenate(parts)


class _Build:
    """A build under way: its builder, its helper process (if any), the chunks queued at
    the helper, and how many papers were handed out so far. `_build` runs one from start
    to end; an `EarlyIndex` starts one while the corpus is still loading.

    ``raw`` gives a range of texts as bytes (with ``release``, called after each chunk
    read so: their pages may leave the resident set); ``reread`` as strings: both read a
    chunk again if the helper fails (its texts are not kept here)."""

    def __init__(
        self,
        parallel: bool,
        reread: Reread | None = None,
        raw: RawReader | None = None,
        release: Callable[[], object] | None = None,
    ) -> None:
        self.builder = _Builder()
        self.helper: _Helper | None = None
        if parallel:
            try:
                self.helper = _Helper()
            except Exception:  # no second process here (sandbox, limits): do it alone
                self.helper = None
        self.reread = reread
        self.raw = raw
        self.release = release
        #: chunks at the helper, oldest first: (number, doc0, texts or None, how many)
        self.pending: collections.deque[tuple[int, int, list[str] | None, int]] = (
            collections.deque()
        )
        self.doc0 = 0  #: papers handed out (to the helper or tokenised here)

    def can_send(self) -> bool:
        return self.helper is not None and len(self.pending) < HELPER_QUEUE

    def send_raw(self, pieces: RawTexts, count: int) -> bool:
        """Queue a chunk of ``count`` texts (the next ones) at the helper; False (nothing
        done) if there is no helper any more."""
        if self.helper is None:
            return False
        try:
            k = self.helper.send_raw(pieces)
        except Exception:
            self._lose_helper()
            return False
        self.pending.append((k, self.doc0, None, count))
        self.doc0 += count
        return True

    def send_texts(self, texts: list[str], keep: bool = True) -> bool:
        """Queue the next chunk at the helper, whatever the queue's length (``keep``: kept
        here too, else read again if the helper fails); False (nothing done) if there is no
        helper."""
        if self.helper is None:
            return False
        try:
            k = self.helper.send(texts)
        except Exception:
            self._lose_helper()
            return False
        self.pending.append((k, self.doc0, texts if keep else None, len(texts)))
        self.doc0 += len(texts)
        return True

    def collect_ready(self, progress: Callable[[], object] | None = None) -> None:
        """Add the chunks the helper has finished (never waits)."""
        while self.pending and self.helper is not None and self.helper.ready():
            self.collect()
            if progress is not None:
                progress()

    def collect(self) -> None:
        """Add the oldest chunk at the helper (waiting for it); if the helper fails, this
        process tokenises its chunks."""
        k, start, chunk, count = self.pending.popleft()
        if self.helper is not None:
            try:
                self.builder.add(start, _checked(self.helper.receive(k, count)))
            except Exception:
                self._lose_helper()
            else:
                release_free_memory()  # the chunk's temporaries
                return
        if chunk is None:
            self.builder.add(start, self.read_here(start, count))
        else:
            self.builder.add(start, _index_chunk(chunk))

    def read_here(self, start: int, count: int) -> _Answer:
        """Texts ``[start, start + count)`` tokenised by this process, read again."""
        pieces = self.raw(start, start + count) if self.raw is not None else None
        if pieces is not None:
            answer = tokens.index_chunk_raw(pieces)
            if self.release is not None:
                self.release()
            return answer
        assert self.reread is not None
        return _index_chunk(self.reread(start, start + count))

    def _lose_helper(self) -> None:
        if self.helper is not None:
            self.helper.close()
            self.helper = None

    def close(self) -> None:
        """Stop the helper (if any); chunks queued there are lost (`finish` first)."""
        self._lose_helper()

    def finish(self) -> _Builder:
        """Wait for every chunk queued at the helper; the builder, once all are in."""
        while self.pending:
            self.collect()
        return self.builder


def _build(
    texts: Iterable[str],
    total: int,
    progress: Progress | None,
    parallel: bool,
    reread: Reread | None = None,
    *,
    raw: RawReader | None = None,
    release: Callable[[], object] | None = None,
    started: _Build | None = None,
    keep_helper: bool = False,
) -> _Builder:
    """Tokenise ``texts`` chunk by chunk; with ``parallel``, a helper process takes chunks
    too (anything going wrong there: this process does the rest alone). With ``reread``,
    the chunks queued at the helper are not kept in this process (~10 MB each at 8,192
    abstracts). With ``raw``, the texts are read as bytes instead, ``texts`` unused (and
    ``reread`` only where ``raw`` gives None). ``started``: a build begun earlier (see
    `EarlyIndex`), carried on from the papers it handed out; with ``keep_helper``, its
    helper process is left running (the caller closes ``started``) unless the build fails."""
    run = started if started is not None else _Build(parallel, reread, raw, release)
    raw, reread, release = run.raw, run.reread, run.release
    builder = run.builder

    def step() -> None:
        if progress is not None:
            progress(builder.papers, total)

    try:
        for count, chunk, pieces in _inputs(texts, run.doc0, total, raw, reread):
            # The helper keeps two chunks queued; this process takes a chunk whenever
            # the helper has enough: the share of each adjusts itself (this process also
            # turns every chunk's words into postings).
            run.collect_ready(step)
            doc0 = run.doc0
            if run.can_send():
                if pieces is not None:
                    sent = run.send_raw(pieces, count)
                else:
                    assert chunk is not None and run.helper is not None
                    try:
                        k = run.helper.send(chunk)
                    except Exception:
                        run._lose_helper()
                        sent = False
                    else:
                        run.pending.append((k, doc0, None if reread else chunk, count))
                        run.doc0 += count
                        sent = True
                if sent:
                    if pieces is not None and release is not None:
                        release()
                    del chunk, pieces  # (queued at the helper: not kept, with ``reread``)
                    release_free_memory()
                    step()
                    continue
            if pieces is not None:
                answer = tokens.index_chunk_raw(pieces)
                if release is not None:
                    release()
            else:
                assert chunk is not None
                answer = _index_chunk(chunk)
            builder.add(doc0, answer)
            run.doc0 += count
            del chunk, pieces, answer
            release_free_memory()  # the chunk's temporaries
            step()
        run.finish()
    except BaseException:
        run.close()
        raise
    if not keep_helper:
        run.close()
    step()
    return builder


#: Titles per chunk handed to the helper (short texts: few, large chunks).
TITLE_CHUNK_DOCS = 1 << 15


def _build_with_titles(
    run: _Build,
    texts: Iterable[str],
    total: int,
    titles: Iterable[str],
    titles_again: Reread,
    *,
    progress: Progress | None,
) -> tuple[_FieldIndex, _FieldIndex]:
    """Both fields' indexes: the texts' build (``run``, carried on), then — while this
    process makes the texts' final arrays — their ``total`` titles tokenised by the same
    helper process (if it is still there; else here; ``titles_again(start, stop)`` reads
    those it fails again). The same indexes as two separate builds."""
    titled = _Build(False, reread=titles_again)
    try:
        built = _build(texts, total, progress, False, started=run, keep_helper=True)
        titled.helper, run.helper = run.helper, None
        given = iter(titles)
        if titled.helper is not None:  # not kept here: the helper's chunks
            for chunk in _chunks(given, TITLE_CHUNK_DOCS):
                if not titled.send_texts(chunk, keep=False):
                    titled.builder.add(titled.doc0, _index_chunk(chunk))
                    titled.doc0 += len(chunk)
        text = _FieldIndex.from_builder(built)
        del built
        titled.finish()  # (the helper's chunks; any it failed, read again here)
        title_builder = _build(given, total, None, False, started=titled)
        return text, _FieldIndex.from_builder(title_builder)
    finally:
        run.close()
        titled.close()


def _inputs(
    texts: Iterable[str],
    doc0: int,
    total: int,
    raw: RawReader | None,
    reread: Reread | None,
) -> Iterator[tuple[int, list[str] | None, RawTexts | None]]:
    """A build's chunks from paper ``doc0`` on: (how many, the texts or None, their bytes
    or None) — bytes from ``raw`` when it has them (``texts``, from paper ``doc0``, is read
    only without ``raw`` or when it has none for the first chunk of a build from paper 0)."""
    pieces = raw(doc0, min(doc0 + CHUNK_DOCS, total)) if raw is not None else None
    if raw is None or (pieces is None and doc0 == 0):
        for chunk in _chunks(texts, CHUNK_DOCS):
            yield len(chunk), chunk, None
        return
    for start in range(doc0, total, CHUNK_DOCS):
        stop = min(start + CHUNK_DOCS, total)
        if start != doc0:
            pieces = raw(start, stop)
        if pieces is not None:
            yield stop - start, None, pieces
        else:
            assert reread is not None
            yield stop - start, reread(start, stop), None


def release_free_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing
    elsewhere). Numpy temporaries of a few MB that a build frees stay in the process's
    resident set otherwise, as free fragments of the heap (glibc raises its mmap threshold
    after the first big free): ~60 MB after parsing 100,000 papers, ~90 MB after building
    their index. Costs a walk over the free lists: a few milliseconds."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], object] | None:
    try:
        import ctypes

        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):  # not glibc
        return None


def _remove_stale_helper_dirs() -> None:
    """Remove helper folders of processes that no longer run (killed before cleaning up)."""
    import tempfile

    if os.name != "posix":  # os.kill(pid, 0) is no liveness test elsewhere
        return
    root = Path(tempfile.gettempdir())
    try:
        entries = list(root.glob(f"{HELPER_DIR_PREFIX}*-*"))
    except OSError:
        return
    for entry in entries:
        pid_text = entry.name[len(HELPER_DIR_PREFIX) :].partition("-")[0]
        if not pid_text.isdigit() or _pid_alive(int(pid_text)):
            continue
        try:
            st = entry.lstat()
        except OSError:
            continue
        import shutil
        import stat

        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():  # never through a link
            shutil.rmtree(entry, ignore_errors=True)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process (EPERM): alive
        return True
    return True


@dataclass(slots=True)
class _FieldIndex:
    folded: _Postings
    cased: _Postings

    @classmethod
    def build(
        cls,
        texts: Iterable[str],
        total: int | None = None,
        *,
        progress: Progress | None = None,
        parallel: bool | None = None,
        reread: Reread | None = None,
        raw: RawReader | None = None,
        release: Callable[[], object] | None = None,
        started: _Build | None = None,
    ) -> _FieldIndex:
        """Index ``texts`` (``total`` of them: for progress and the choice of a helper
        process, which ``parallel`` forces on or off; ``reread(start, stop)`` gives texts
        again, so that chunks at the helper need not be kept; ``raw`` and ``release``:
        see `_build`, as ``started``, a build begun while the texts were loading)."""
        if total is None:
            texts = list(texts)
            total = len(texts)
        if parallel is None:
            parallel = use_helper(total)
        release_free_memory()  # what the loading before left in the heap
        builder = _build(
            texts, total, progress, parallel, reread, raw=raw, release=release, started=started
        )
        return cls.from_builder(builder)

    @classmethod
    def from_builder(cls, builder: _Builder) -> _FieldIndex:
        """The final arrays of a build whose every chunk is in (its chunks are let go)."""
        cased = builder.cased.postings()
        folded = builder.folded.postings()
        release_free_memory()
        return cls(folded=folded, cased=cased)

    def arrays(self, prefix: str) -> dict[str, npt.NDArray[np.generic]]:
        out: dict[str, npt.NDArray[np.generic]] = {}
        for name, p in (("folded", self.folded), ("cased", self.cased)):
            out[f"{prefix}_{name}_words"] = np.frombuffer(p.words.blob, dtype=np.uint8)
            out[f"{prefix}_{name}_offsets"] = p.offsets
            out[f"{prefix}_{name}_docs"] = p.docs
        return out

    @classmethod
    def from_arrays(
        cls, data: dict[str, npt.NDArray[np.generic]], prefix: str, n_docs: int
    ) -> _FieldIndex:
        """Read back `arrays`, checked as untrusted input (ValueError): exact dtypes and
        shapes, a strictly sorted vocabulary, offsets from 0 rising to the postings' end,
        and each word's documents strictly rising and below ``n_docs``. Every check is a
        numpy pass (on a memory-mapped cache: page faults, no copies)."""
        parts: list[_Postings] = []
        for name in ("folded", "cased"):
            raw_words = data[f"{prefix}_{name}_words"]
            raw_offsets = data[f"{prefix}_{name}_offsets"]
            raw_docs = data[f"{prefix}_{name}_docs"]
            if (raw_words.dtype, raw_offsets.dtype, raw_docs.dtype) != (
                np.dtype(np.uint8),
                np.dtype(np.int64),
                np.dtype(np.uint32),
            ) or not (raw_words.ndim == raw_offsets.ndim == raw_docs.ndim == 1):
                raise ValueError("index arrays of the wrong type")
            offsets = np.asarray(raw_offsets, np.int64)  # no conversion: the dtypes match
            docs = np.asarray(raw_docs, np.uint32)
            words = _checked_vocabulary(raw_words.tobytes())
            if len(offsets) != len(words) + 1 or offsets[0] != 0 or offsets[-1] != len(docs):
                raise ValueError("inconsistent index arrays")
            if np.any(offsets[1:] < offsets[:-1]):
                raise ValueError("offsets not rising")
            if docs.size:
                if int(docs.max()) >= n_docs:
                    raise ValueError("postings beyond the corpus")
                rising = docs[1:] > docs[:-1]  # one byte per posting, no int64 copies
                starts = offsets[1:-1]
                rising[starts[(starts > 0) & (starts < docs.size)] - 1] = True  # word borders
                if not rising.all():
                    raise ValueError("postings not sorted")
            parts.append(_Postings(words, offsets, docs))
        return cls(parts[0], parts[1])


def _checked_vocabulary(blob: bytes) -> Vocabulary:
    """A vocabulary read from a file (ValueError unless it is one): UTF-8, every word
    followed by a newline, none empty or longer than ``MAX_WORD`` letters, strictly sorted."""
    if blob and not blob.endswith(b"\n"):
        raise ValueError("vocabulary not newline-terminated")
    blob.decode("utf-8")  # UnicodeDecodeError is a ValueError
    words = Vocabulary(blob)
    byte_lengths = np.diff(words.starts) - 1
    if len(words) and (int(byte_lengths.min()) < 1 or int(words.lengths.max()) > MAX_WORD):
        raise ValueError("vocabulary with empty or overlong words")
    if not _strictly_sorted(np.frombuffer(blob, np.uint8), words.starts):
        raise ValueError("vocabulary not strictly sorted")
    return words


def _strictly_sorted(raw: npt.NDArray[np.uint8], starts: IntArray, block: int = 1 << 16) -> bool:
    """Is each word bytewise less than the next? Vectorised: the words' bytes compared
    eight at a time (as big-endian integers, zero past a word's end), a block of word pairs
    at a time; ties go on to the next eight bytes, equal prefixes are decided by length."""
    n = starts.size - 1
    lengths = np.diff(starts) - 1
    for lo in range(0, max(0, n - 1), block):
        pairs = np.arange(lo, min(n - 1, lo + block), dtype=np.int64)
        at = 0
        while pairs.size:
            first = _eight_bytes(raw, starts, lengths, pairs, at)
            second = _eight_bytes(raw, starts, lengths, pairs + 1, at)
            if np.any(first > second):
                return False
            pairs = pairs[first == second]
            at += 8
            ended = (lengths[pairs] <= at) | (lengths[pairs + 1] <= at)
            if np.any(ended & (lengths[pairs] >= lengths[pairs + 1])):
                return False  # equal up to the shorter one's end: the first must be shorter
            pairs = pairs[~ended]
    return True


def _eight_bytes(
    raw: npt.NDArray[np.uint8], starts: IntArray, lengths: IntArray, words: IntArray, at: int
) -> npt.NDArray[np.uint64]:
    """Bytes ``at`` to ``at + 8`` of each of ``words`` as a big-endian integer (zeros past
    a word's end)."""
    window = np.arange(at, at + 8, dtype=np.int64)
    where = starts[words, None] + window
    inside = window < lengths[words, None]
    picked = np.where(inside, raw[np.minimum(where, raw.size - 1)], 0).astype(np.uint8)
    return picked.view(">u8").ravel().astype(np.uint64)
