"""Typo candidates of a query word, fast while it is typed key by key.

The same answer as `_Postings.typo_candidates`: the words of the same first letter within
the word's typo budget ``b`` (a word being typed is compared with each word's first
``n - 1``, ``n`` and ``n + 1`` letters; a finished word with whole words) — found with less
work while a word grows one key at a time.

For each word asked for, the *pool* is kept: the words some prefix of which is within
``b`` edits of it (only prefixes of ``n - b`` to ``n + b`` letters can be). Extending the
word by a letter can only shrink its pool (an alignment of the longer word with a prefix,
its last letter dropped, aligns the shorter one with a prefix at no more cost), and the
finished word's candidates are in the pool too (a whole word is one of its prefixes). So
with the same budget, the next key looks only at the previous key's pool — a few dozen
words instead of the letter's tens of thousands. A new budget (5 and 9 letters) or a word
typed afresh scans the letter group, as before.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from .postings import Vocabulary, _Postings

#: At most this many typo candidates per word (the closest).
MAX_CANDIDATES = 256
#: Pools kept (the last words typed, in both vocabularies and fields).
_POOLS_KEPT = 64

_Pool = npt.NDArray[np.int64]
#: Letter groups of at least this many words are narrowed by `_near_enough` first.
_PREFILTER_MIN = 256


def _near_enough(group: list[str], word: str, budget: int) -> _Pool:
    """Positions in ``group`` of the words that may have a prefix within ``budget`` edits
    of ``word`` (a superset of them: rapidfuzz decides). In an alignment of ``word`` with
    a prefix of at most ``n + b`` letters costing at most ``b`` edits, at least ``n - b``
    of its letters are matched, each with an equal letter at most ``b`` places away: a
    count over a (words × ``n + b``) array of code points, a few numpy passes instead of
    slicing and comparing every word of the letter in Python."""
    width = len(word) + budget
    codes = np.array(group, dtype=f"<U{width}").view(np.uint32).reshape(len(group), width)
    return _near_columns(codes.T, word, budget)


def _near_columns(columns: npt.NDArray[np.unsignedinteger], word: str, budget: int) -> _Pool:
    """`_near_enough` over the words' first ``n + b`` code points, one row per place
    (``columns[j]``: each word's ``j``-th code point, 0 past its end)."""
    n = len(word)
    width = n + budget
    count = columns.shape[1]
    matched = np.zeros(count, np.int16)
    near = np.empty(count, bool)
    for i, letter in enumerate(word):
        code = ord(letter)
        lo, hi = max(0, i - budget), min(width, i + budget + 1)
        np.equal(columns[lo], code, out=near)
        for j in range(lo + 1, hi):
            near |= columns[j] == code
        matched += near
    return np.flatnonzero(matched >= n - budget).astype(np.int64)


def _near_in_vocabulary(words: Vocabulary, lo: int, hi: int, word: str, budget: int) -> _Pool:
    """`_near_enough` over vocabulary words ``lo`` to ``hi`` (positions from ``lo``), for an
    ASCII ``word``, read from the UTF-8 blob: no word decoded. A word whose first ``n + b``
    bytes are ASCII has them as its first code points; a word with other bytes there is
    kept (a superset stays a superset; rapidfuzz decides)."""
    width = len(word) + budget
    raw = np.frombuffer(words.blob, np.uint8)
    starts = words.starts[lo:hi]
    ends = words.starts[lo + 1 : hi + 1] - 1  # (each word is followed by a newline)
    columns = np.empty((width, hi - lo), np.uint8)
    at = starts.copy()
    inside = np.empty(hi - lo, bool)
    for j in range(width):
        np.less(at, ends, out=inside)
        np.multiply(raw[np.minimum(at, raw.size - 1)], inside, out=columns[j])
        at += 1
    kept = _near_columns(columns, word, budget)
    other = np.flatnonzero((columns >= 0x80).any(axis=0))
    if other.size:
        kept = np.union1d(kept, other).astype(np.int64)
    return kept


class TypoFinder:
    """Typo candidates, with the pools of the last words asked for."""

    def __init__(self) -> None:
        #: (vocabulary, word, budget) → vocabulary indices of the word's pool
        self._pools: dict[tuple[int, str, int], _Pool] = {}

    def clear(self) -> None:
        """Forget the pools (the next word scans its letter group)."""
        self._pools.clear()

    def _pool_for(self, postings: _Postings, word: str, budget: int) -> _Pool | None:
        """A kept pool holding ``word``'s: its own, or that of the longest shorter prefix
        of it asked for with the same budget."""
        key = id(postings)
        for end in range(len(word), 0, -1):
            found = self._pools.get((key, word[:end], budget))
            if found is not None:
                return found
        return None

    def candidates(
        self, postings: _Postings, word: str, budget: int, as_prefix: bool
    ) -> list[tuple[int, int]]:
        """(vocabulary index, edits) of words within ``budget`` edits (of their prefix),
        fewest edits first, then in vocabulary order; at most `MAX_CANDIDATES`."""
        if budget <= 0 or not word:
            return []
        pool = self._pool_for(postings, word, budget)
        if pool is None:
            words = postings.words
            lo, hi = words.prefix_range(word[:1])
            indices: _Pool | None = None
            if hi - lo >= _PREFILTER_MIN and word.isascii():
                # narrowed from the vocabulary's bytes: only the kept words are decoded
                indices = _near_in_vocabulary(words, lo, hi, word, budget) + lo
                choices = [words[i] for i in indices.tolist()]
                lo = 0
            else:
                lo, choices = words.letter_group(word[:1])
                if len(choices) >= _PREFILTER_MIN:
                    kept = _near_enough(choices, word, budget)
                    indices = kept + lo
                    choices = [choices[i] for i in kept.tolist()]
                    lo = 0
        else:
            lo, indices = 0, pool
            words = postings.words
            choices = [words[i] for i in pool.tolist()]
        if not choices:
            return []  # (an empty pool stays kept: its longer words find it)
        n = len(word)
        size = len(choices)
        # the smallest distance of each word's prefixes: of n - 1 to n + 1 letters (the
        # answer), and of n - b to n + b (the pool)
        answer = np.full(size, budget + 1, np.int64)
        near = np.full(size, budget + 1, np.int64)
        for cut in range(max(0, n - budget), n + budget + 1):
            cut_choices = [w[:cut] for w in choices]
            found = process.extract(
                word, cut_choices, scorer=Levenshtein.distance, score_cutoff=budget, limit=None
            )
            if not found:
                continue
            at = np.fromiter((pos for _c, _d, pos in found), np.int64, len(found))
            dist = np.fromiter((d for _c, d, _p in found), np.int64, len(found))
            np.minimum.at(near, at, dist)
            if as_prefix and n - 1 <= cut <= n + 1:
                # as `typo_candidates`: a cut at distance 0 (the word is a prefix) does
                # not count, the word's other cuts may
                keep = dist > 0
                np.minimum.at(answer, at[keep], dist[keep])
        if not as_prefix:
            found = process.extract(
                word, choices, scorer=Levenshtein.distance, score_cutoff=budget, limit=None
            )
            for _c, edits, pos in found:
                if 0 < edits < answer[pos]:
                    answer[pos] = edits
        pool_at = np.flatnonzero(near <= budget)
        new_pool = (pool_at + lo) if indices is None else indices[pool_at]
        if len(self._pools) >= _POOLS_KEPT:
            self._pools.pop(next(iter(self._pools)))
        self._pools[(id(postings), word, budget)] = new_pool.astype(np.int64, copy=False)
        hit = np.flatnonzero(answer <= budget)
        vocab = (hit + lo) if indices is None else indices[hit]
        fewest = answer[hit]
        order = np.lexsort((vocab, fewest))[:MAX_CANDIDATES]
        return [(int(v), int(e)) for v, e in zip(vocab[order], fewest[order], strict=True)]
