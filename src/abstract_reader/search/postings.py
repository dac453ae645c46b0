"""The vocabulary index of one field: sorted words with CSR postings, and its build.

The index is a sorted vocabulary with postings in CSR form (one numpy array of paper
positions, one array of offsets). Because the vocabulary is sorted, every prefix is one
contiguous slice of it — and so one contiguous slice of the postings: a prefix query costs
one numpy fancy-index, whatever the number of words it covers. Typo candidates come from
rapidfuzz over the words with the same first letter and a similar length.
"""

from __future__ import annotations

import bisect
import itertools
import os
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from ..text import GREEK_NAMES, TEXT_COMMANDS, fold_accents
from ..tokens import tokenise_chunk as _tokenise_chunk
from .query import MAX_WORD

IntArray = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]

#: A word; a LaTeX command keeps its backslash so it can be told apart from prose.
_TOKEN_RE = re.compile(r"\\?[^\W_]+")


@dataclass(slots=True)
class _Postings:
    """A sorted vocabulary with CSR postings."""

    words: list[str]
    offsets: IntArray  #: len(words) + 1
    docs: U32
    lengths: npt.NDArray[np.int32] = field(init=False)
    _letters: dict[str, tuple[int, int]] = field(init=False)

    def __post_init__(self) -> None:
        self.lengths = np.fromiter((len(w) for w in self.words), np.int32, len(self.words))
        self._letters = {}
        start = 0
        for i in range(1, len(self.words) + 1):
            if i == len(self.words) or self.words[i][:1] != self.words[start][:1]:
                self._letters[self.words[start][:1]] = (start, i)
                start = i

    def find(self, word: str) -> int:
        i = bisect.bisect_left(self.words, word)
        return i if i < len(self.words) and self.words[i] == word else -1

    def prefix_range(self, prefix: str) -> tuple[int, int]:
        lo = bisect.bisect_left(self.words, prefix)
        hi = bisect.bisect_left(self.words, prefix + "\U0010ffff")
        return lo, hi

    def docs_of(self, i: int) -> U32:
        return self.docs[self.offsets[i] : self.offsets[i + 1]]

    def docs_of_range(self, lo: int, hi: int) -> U32:
        return self.docs[self.offsets[lo] : self.offsets[hi]]

    def typo_candidates(self, word: str, budget: int, as_prefix: bool) -> list[tuple[int, int]]:
        """(vocabulary index, edits) of words within ``budget`` edits (of their prefix)."""
        if budget <= 0 or not word:
            return []
        lo, hi = self._letters.get(word[:1], (0, 0))
        if hi <= lo:
            return []
        lengths = self.lengths[lo:hi]
        n = len(word)
        if as_prefix:
            mask = lengths >= n - budget
        else:
            mask = np.abs(lengths - n) <= budget
        idx = np.nonzero(mask)[0] + lo
        if idx.size == 0:
            return []
        best: dict[int, int] = {}
        words = self.words
        cut_lengths = (n - 1, n, n + 1) if as_prefix else (0,)
        for cut in cut_lengths:
            if cut < 0:
                continue
            choices = [words[i][:cut] if as_prefix else words[i] for i in idx]
            for _choice, dist, pos in process.extract(
                word, choices, scorer=Levenshtein.distance, score_cutoff=budget, limit=None
            ):
                vocab_i = int(idx[pos])
                if dist > 0 and dist < best.get(vocab_i, budget + 1):
                    best[vocab_i] = int(dist)
        ranked = sorted(best.items(), key=lambda item: (item[1], item[0]))
        return ranked[:256]

    def nbytes(self) -> int:
        return int(self.docs.nbytes + self.offsets.nbytes + sum(len(w) + 50 for w in self.words))


def _normalise_vocab(raw: list[str]) -> tuple[list[str], list[str]]:
    """Raw tokens → (case-kept form, folded form); '' for LaTeX commands that show no text."""
    case_forms: list[str] = []
    folded: list[str] = []
    for token in raw:
        if token.startswith("\\"):
            name = token[1:]
            token = name if name.lower() in GREEK_NAMES or name in TEXT_COMMANDS else ""
            if token.startswith("var"):
                token = token[3:]
        form = fold_accents(token)[:MAX_WORD] if token else ""
        case_forms.append(form)
        folded.append(form.lower()[:MAX_WORD])
    return case_forms, folded


def _csr(
    word_ids: npt.NDArray[np.int32], docs: npt.NDArray[np.int32], n_words: int
) -> tuple[IntArray, U32]:
    """Postings pairs → (offsets, docs sorted by word then doc, duplicates removed)."""
    keep = word_ids >= 0  # -1: a piece with no word in this vocabulary ("=", or lower case)
    if not keep.all():  # first: the case-kept vocabulary keeps only a small share of pairs
        word_ids, docs = word_ids[keep], docs[keep]
    keys = word_ids.astype(np.int64)
    keys <<= 32
    keys |= docs
    keys.sort()  # a plain sort: np.unique's hashing is several times slower here
    if keys.size:
        distinct = np.empty(keys.size, dtype=bool)
        distinct[0] = True
        np.not_equal(keys[1:], keys[:-1], out=distinct[1:])
        keys = keys[distinct]
    # each word's first pair, by binary search: no (pairs,)-sized temporary
    offsets = np.searchsorted(keys, np.arange(n_words + 1, dtype=np.int64) << 32)
    return offsets.astype(np.int64), keys.astype(np.uint32)  # the low 32 bits: the documents


#: Corpora at least this large are tokenised by two processes (the second core).
PARALLEL_MIN_DOCS = 40_000


def _tokenise(
    texts: Sequence[str], while_waiting: Callable[[], object] | None = None
) -> tuple[dict[str, int], IntArray, IntArray]:
    """(piece → id, the piece id of every (document, piece) pair, pieces per document)."""
    if len(texts) >= PARALLEL_MIN_DOCS and (os.cpu_count() or 1) >= 2:
        try:
            return _tokenise_in_two(texts, while_waiting)
        except Exception:  # no second process here (sandbox, limits): do it alone
            pass
    pieces, ids, lengths = _tokenise_chunk(texts)
    if while_waiting is not None:
        while_waiting()
    return pieces, np.frombuffer(ids, np.int64), np.frombuffer(lengths, np.int64)


#: The helper's temporary folders: ``abstract-reader-tok-<pid>-<random>`` in the temp dir.
HELPER_DIR_PREFIX = "abstract-reader-tok-"


def _tokenise_in_two(
    texts: Sequence[str], while_waiting: Callable[[], object] | None = None
) -> tuple[dict[str, int], IntArray, IntArray]:
    """Tokenise the second half in a child Python while this process does the first half.

    The child runs ``tokens.py`` as a script in isolated mode (``-I``: no working directory
    or ``PYTHON*`` variables on its path, so an ``abstract_reader/`` in the cwd never runs),
    not ``multiprocessing`` (which would re-import the reader's ``__main__``). It exits when
    our end of its stdin pipe closes — however this process ends — and then removes the
    temporary folder itself; folders left by processes that are gone (both killed at once)
    are removed here, at the next start."""
    import subprocess
    import sys
    import tempfile

    from .. import tokens

    _remove_stale_helper_dirs()
    half = len(texts) // 2
    with tempfile.TemporaryDirectory(prefix=f"{HELPER_DIR_PREFIX}{os.getpid()}-") as tmp:
        source, answer = Path(tmp) / "in", Path(tmp) / "out"
        # Files, not pipes: streaming through a pipe from a thread would fight this
        # process's own tokenising for the GIL. Sanitised text never holds a NUL.
        source.write_bytes("\0".join(texts[half:]).encode("utf-8"))
        child = subprocess.Popen(
            [sys.executable, "-I", os.path.abspath(tokens.__file__), str(source), str(answer)],
            stdin=subprocess.PIPE,  # never written: its EOF tells the child we are gone
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            pieces, ids_a, lengths_a = _tokenise_chunk(texts[:half])
            if while_waiting is not None:
                while_waiting()
        finally:
            returncode = child.wait()
            if child.stdin is not None:
                child.stdin.close()
        if returncode != 0:
            raise RuntimeError("tokeniser process failed")
        replies = [answer.read_bytes()]
    sizes = np.frombuffer(replies[0][:24], "<i8")
    body = memoryview(replies[0])[24:]
    other = str(body[: sizes[0]], "utf-8").split("\0") if sizes[0] else []
    ids_b = np.frombuffer(body[sizes[0] : sizes[0] + sizes[1]], np.int64)
    lengths_b = np.frombuffer(body[sizes[0] + sizes[1] : sizes[0] + sizes[1] + sizes[2]], np.int64)
    if lengths_b.size != len(texts) - half or int(lengths_b.sum()) != ids_b.size:
        raise RuntimeError("tokeniser process answered for the wrong documents")
    if ids_b.size and (int(ids_b.min()) < 0 or int(ids_b.max()) >= len(other)):
        raise RuntimeError("tokeniser process answered with unknown pieces")
    merged = pieces  # extended in place: copying it would double the largest dict of the build
    if not isinstance(merged, defaultdict) or merged.default_factory is None:
        merged = defaultdict(itertools.count(len(pieces)).__next__, pieces)
    remap = np.fromiter(map(merged.__getitem__, other), np.int64, len(other))
    del other
    piece_ids = np.concatenate([np.frombuffer(ids_a, np.int64), remap[ids_b]])
    lengths = np.concatenate([np.frombuffer(lengths_a, np.int64), lengths_b])
    return merged, piece_ids, lengths


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
        cls, texts: Sequence[str], while_waiting: Callable[[], object] | None = None
    ) -> _FieldIndex:
        """``while_waiting`` runs while a helper process tokenises (or after, if none)."""
        pieces, wide_ids, lengths = _tokenise(texts, while_waiting)
        piece_ids = wide_ids.astype(np.int32)  # half the bytes for the (pairs,)-sized arrays
        del wide_ids
        piece_docs = np.repeat(np.arange(len(texts), dtype=np.int32), lengths)
        # piece → its word tokens: usually exactly one ("robust,"), sometimes none ("="),
        # a few ("Split-RL," gives two)
        vocab: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        single = np.full(len(pieces), -1, np.int64)
        multi: dict[int, list[int]] = {}
        findall = _TOKEN_RE.findall
        for i, piece in enumerate(pieces):
            words = findall(piece)
            if len(words) == 1:
                single[i] = vocab[words[0]]
            elif words:
                multi[i] = [vocab[w] for w in words]
        n_pieces = len(pieces)
        del pieces  # the largest dict of the build (every distinct piece): not needed now
        raw_words = list(vocab)
        del vocab
        case_forms, folded_forms = _normalise_vocab(raw_words)
        # Case-kept postings only for words with a capital: a query word in lower case is
        # case-insensitive (smart-case), so only capitalised query words look there.
        cased_only = [f if f != f.lower() else "" for f in case_forms]

        def postings_for(forms: list[str]) -> _Postings:
            words = sorted({f for f in forms if f})
            position = {w: i for i, w in enumerate(words)}
            # raw word → id in this vocabulary (-1: not in it), then composed per *piece*
            # (a few hundred thousand entries), so the pairs are gathered only once
            # int32 ids: the (pairs,)-sized arrays are the build's peak memory
            to_vocab = np.fromiter((position.get(f, -1) for f in forms), np.int32, len(forms))
            per_piece = np.where(single >= 0, to_vocab[np.maximum(single, 0)], -1).astype(np.int32)
            pair_ids, pair_docs = per_piece[piece_ids], piece_docs
            if multi:  # pieces with several words: the first in place, one pair per other
                keys = np.fromiter(multi, np.int64, len(multi))  # ascending: ids in order
                counts = np.fromiter((len(v) for v in multi.values()), np.int64, len(multi))
                flat = to_vocab[
                    np.fromiter(itertools.chain.from_iterable(multi.values()), np.int64)
                ]
                starts = np.zeros(len(keys), np.int64)
                np.cumsum(counts[:-1], out=starts[1:])
                is_multi = np.zeros(n_pieces, dtype=bool)
                is_multi[keys] = True
                where = np.flatnonzero(is_multi[piece_ids])
                slot = np.searchsorted(keys, piece_ids[where])
                pair_ids[where] = flat[starts[slot]]
                extra = counts[slot] - 1
                first_extra = np.repeat(starts[slot] + 1, extra)
                rank = np.arange(int(extra.sum()), dtype=np.int64) - np.repeat(
                    np.cumsum(extra) - extra, extra
                )
                pair_ids = np.concatenate([pair_ids, flat[first_extra + rank]])
                pair_docs = np.concatenate([piece_docs, np.repeat(piece_docs[where], extra)])
            offsets, posting_docs = _csr(pair_ids, pair_docs, len(words))
            return _Postings(words, offsets, posting_docs)

        # One after the other: building both at once (numpy releases the GIL) saved a little
        # time but added a second set of (pairs,)-sized temporaries to the peak.
        cased = postings_for(cased_only)
        return cls(folded=postings_for(folded_forms), cased=cased)

    def arrays(self, prefix: str) -> dict[str, npt.NDArray[np.generic]]:
        out: dict[str, npt.NDArray[np.generic]] = {}
        for name, p in (("folded", self.folded), ("cased", self.cased)):
            blob = "\n".join(p.words).encode("utf-8")
            out[f"{prefix}_{name}_words"] = np.frombuffer(blob, dtype=np.uint8)
            out[f"{prefix}_{name}_offsets"] = p.offsets
            out[f"{prefix}_{name}_docs"] = p.docs
        return out

    @classmethod
    def from_arrays(
        cls, data: dict[str, npt.NDArray[np.generic]], prefix: str, n_docs: int
    ) -> _FieldIndex:
        """Read back `arrays`, checked as untrusted input (ValueError): exact dtypes and
        shapes, a strictly sorted vocabulary, offsets from 0 rising to the postings' end,
        and each word's documents strictly rising and below ``n_docs``."""
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
            blob = raw_words.tobytes().decode("utf-8")
            words = blob.split("\n") if blob else []
            if len(offsets) != len(words) + 1 or offsets[0] != 0 or offsets[-1] != len(docs):
                raise ValueError("inconsistent index arrays")
            if not all(a < b for a, b in itertools.pairwise(words)):
                raise ValueError("vocabulary not strictly sorted")
            if words and (min(map(len, words)) == 0 or max(map(len, words)) > MAX_WORD):
                raise ValueError("vocabulary with empty or overlong words")
            if np.any(np.diff(offsets) < 0):
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
