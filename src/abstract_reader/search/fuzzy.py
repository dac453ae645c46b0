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
#: From this many words on, distances come from `_prefix_distances` (numpy passes over
#: all the words at once) rather than from rapidfuzz one word at a time.
_PROGRAMME_MIN = 128
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


def _columns(words: Vocabulary, ids: _Pool, width: int) -> npt.NDArray[np.uint8]:
    """The first ``width`` bytes of vocabulary words ``ids``, one row per place (0 past a
    word's end), read from the UTF-8 blob: no word decoded."""
    raw = np.frombuffer(words.blob, np.uint8)
    at = words.starts[ids]
    ends = words.starts[ids + 1] - 1  # (each word is followed by a newline)
    columns = np.empty((width, ids.size), np.uint8)
    inside = np.empty(ids.size, bool)
    for j in range(width):
        np.less(at, ends, out=inside)
        np.multiply(raw[np.minimum(at, raw.size - 1)], inside, out=columns[j])
        at += 1
    return columns


def _near_in_vocabulary(words: Vocabulary, lo: int, hi: int, word: str, budget: int) -> _Pool:
    """`_near_enough` over vocabulary words ``lo`` to ``hi`` (positions from ``lo``), for an
    ASCII ``word``, read from the UTF-8 blob: no word decoded. A word whose first ``n + b``
    bytes are ASCII has them as its first code points; a word with other bytes there is
    kept (a superset stays a superset; rapidfuzz decides)."""
    columns = _columns(words, np.arange(lo, hi, dtype=np.int64), len(word) + budget)
    kept = _near_columns(columns, word, budget)
    other = np.flatnonzero((columns >= 0x80).any(axis=0))
    if other.size:
        kept = np.union1d(kept, other).astype(np.int64)
    return kept


def _prefix_distances(
    columns: npt.NDArray[np.uint8], word: str, budget: int
) -> npt.NDArray[np.int16]:
    """Levenshtein distance of ``word`` to each word's first ``j`` letters, for j = 0 to
    ``n + b`` (rows), capped at ``b + 1`` (more is out of budget): one dynamic programme
    for all the words at once, in numpy passes over the band of cells within ``b`` of the
    diagonal (cells outside it are more than ``b`` edits). ``columns``: ASCII only."""
    n = len(word)
    width = n + budget
    count = columns.shape[1]
    cap = budget + 1
    row = np.minimum(np.arange(width + 1, dtype=np.int16), cap)[:, None].repeat(count, axis=1)
    for i in range(1, n + 1):
        code = ord(word[i - 1])
        prev = row
        row = np.full((width + 1, count), cap, np.int16)
        row[0] = min(i, cap)
        for j in range(max(1, i - budget), min(width, i + budget) + 1):
            cell = np.not_equal(columns[j - 1], code).astype(np.int16)
            cell += prev[j - 1]
            np.minimum(cell, prev[j] + 1, out=cell)
            np.minimum(cell, row[j - 1] + 1, out=cell)
            np.minimum(cell, cap, out=row[j])
    return row


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
        words = postings.words
        group: list[str] | None = None  # the letter's words, when decoded
        if pool is None:
            lo, hi = words.prefix_range(word[:1])
            if hi - lo >= _PREFILTER_MIN and word.isascii():
                # narrowed from the vocabulary's bytes: only the kept words are decoded
                ids = _near_in_vocabulary(words, lo, hi, word, budget) + lo
            else:
                lo, group = words.letter_group(word[:1])
                if len(group) >= _PREFILTER_MIN:
                    ids = _near_enough(group, word, budget) + lo
                else:
                    ids = np.arange(lo, lo + len(group), dtype=np.int64)
        else:
            lo, ids = 0, pool
        if not ids.size:
            return []  # (an empty pool stays kept: its longer words find it)
        n = len(word)
        size = ids.size
        # the smallest distance of each word's prefixes: of n - 1 to n + 1 letters (the
        # answer), and of n - b to n + b (the pool)
        answer = np.full(size, budget + 1, np.int64)
        near = np.full(size, budget + 1, np.int64)
        # The words that start with the word typed ("neural…" for "neura": often most of
        # the pool) need no rapidfuzz: their n-letter prefix is the word (the pool), their
        # n - 1 letters one edit from it (the answer; cut n + 1 is 1 or 0, cut n is 0); a
        # finished word is the extra letters away from them.
        p_lo, p_hi = words.prefix_range(word)
        inside = (ids >= p_lo) & (ids < p_hi)
        near[inside] = 0
        if as_prefix:
            answer[inside] = 1
        else:
            extra = words.lengths[ids[inside]].astype(np.int64) - n
            answer[inside] = np.where((extra > 0) & (extra <= budget), extra, budget + 1)
        others = np.flatnonzero(~inside)
        if word.isascii() and others.size >= _PROGRAMME_MIN:
            # the ASCII words by one dynamic programme in numpy; rapidfuzz for the rest
            width = n + budget
            columns = _columns(words, ids[others], width)
            plain = ~(columns >= 0x80).any(axis=0)
            at = others[plain]
            dist = _prefix_distances(columns[:, plain], word, budget)
            length = words.lengths[ids[at]].astype(np.int64)
            place = np.arange(at.size)
            cap = budget + 1

            def at_cut(c: int) -> npt.NDArray[np.int16]:
                return dist[np.minimum(c, length), place]  # w[:c] is w when c > len(w)

            near[at] = np.min([at_cut(c) for c in range(max(0, n - budget), width + 1)], axis=0)
            if as_prefix:
                best = np.full(at.size, cap, np.int16)
                for c in range(n - 1, n + 2):
                    d = at_cut(c)
                    np.minimum(best, np.where(d > 0, d, cap), out=best)
                answer[at] = best
            else:
                whole = np.where(length <= width, at_cut(width), cap)
                answer[at] = np.where(whole > 0, whole, cap)
            others = others[~plain]
        if group is not None:
            choices = [group[i - lo] for i in ids[others].tolist()]
        else:
            choices = [words[i] for i in ids[others].tolist()]
        for cut in range(max(0, n - budget), n + budget + 1) if choices else ():
            cut_choices = [w[:cut] for w in choices]
            found = process.extract(
                word, cut_choices, scorer=Levenshtein.distance, score_cutoff=budget, limit=None
            )
            if not found:
                continue
            at = others[np.fromiter((pos for _c, _d, pos in found), np.int64, len(found))]
            dist = np.fromiter((d for _c, d, _p in found), np.int64, len(found))
            np.minimum.at(near, at, dist)
            if as_prefix and n - 1 <= cut <= n + 1:
                # as `typo_candidates`: a cut at distance 0 (the word is a prefix) does
                # not count, the word's other cuts may
                keep = dist > 0
                np.minimum.at(answer, at[keep], dist[keep])
        if not as_prefix and choices:
            found = process.extract(
                word, choices, scorer=Levenshtein.distance, score_cutoff=budget, limit=None
            )
            for _c, edits, pos in found:
                at_pos = int(others[pos])
                if 0 < edits < answer[at_pos]:
                    answer[at_pos] = edits
        new_pool = ids[near <= budget]
        if len(self._pools) >= _POOLS_KEPT:
            self._pools.pop(next(iter(self._pools)))
        self._pools[(id(postings), word, budget)] = new_pool.astype(np.int64, copy=False)
        hit = np.flatnonzero(answer <= budget)
        vocab = ids[hit]
        fewest = answer[hit]
        order = np.lexsort((vocab, fewest))[:MAX_CANDIDATES]
        return [(int(v), int(e)) for v, e in zip(vocab[order], fewest[order], strict=True)]
