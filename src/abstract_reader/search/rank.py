"""Ranking without sorting every match: the best first, the rest only when asked for.

A search at 1M papers may match half of them; the screen draws fifty. `RankedOrder` keeps
the matches (ascending paper positions) and their scores, and sorts only the best
`FIRST_RANKED` (``np.partition`` finds the cut, ties at the cut broken by position, as the
stable full sort breaks them). Scrolling further sorts more; ``full()`` sorts everything.
The order is always exactly that of a stable sort by score, descending.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
#: How many matches are ranked at first (a few screens).
FIRST_RANKED = 512
#: From this many scores on, `top_positions` looks for the cut among a sampled few first.
_SAMPLED_FROM = 1 << 15


def top_positions(scores: npt.NDArray[np.float32], k: int) -> IntArray:
    """Indices of the ``k`` highest ``scores``, highest first, ties in index order: the
    first ``k`` of ``np.argsort(-scores, kind="stable")``, without sorting all of them."""
    size = int(scores.size)
    if k >= size:
        return np.argsort(-scores, kind="stable").astype(np.int64, copy=False)
    if k <= 0:
        return np.zeros(0, np.int64)
    neg = -scores
    near = _likely_head(neg, k)
    if near is None:
        return _smallest(neg, k)
    # the k smallest of neg are among these (ascending positions)
    return near[_smallest(neg[near], k)]


def _smallest(neg: npt.NDArray[np.float32], k: int) -> IntArray:
    """Indices of the ``k`` smallest of ``neg`` (at least ``k`` values), smallest first,
    ties in index order: a partition finds the cut, only the values up to it are sorted.
    (Partitioned as the negated scores: numpy's partition is slow near the end of an array
    with many equal values — 200 ms for 900,000 scores of four values.)"""
    if neg.min() == neg.max():  # all tied (every score 0, say): the first k
        return np.arange(k, dtype=np.int64)
    cut = np.partition(neg, k - 1)[k - 1]
    better = np.flatnonzero(neg < cut)
    ties = np.flatnonzero(neg == cut)[: k - better.size]
    chosen = np.concatenate([better, ties])
    chosen.sort()
    return chosen[np.argsort(neg[chosen], kind="stable")].astype(np.int64, copy=False)


def _likely_head(neg: npt.NDArray[np.float32], k: int) -> IntArray | None:
    """Positions of the values of ``neg`` up to a threshold guessed from a sample, when
    they are at least ``k`` (then the ``k`` smallest are all among them, and the ``k``-th
    smallest is theirs): one pass and a small partition instead of partitioning every
    value (~9 ms for 700,000). None: too few, or too few values to bother."""
    size = int(neg.size)
    if size < _SAMPLED_FROM or 4 * k > size:
        return None
    sample = neg[:: size // 4096]
    at = min(sample.size - 1, (2 * k * sample.size) // size + 8)
    threshold = np.partition(sample, at)[at]
    near = np.flatnonzero(neg <= threshold)
    return near if near.size >= k else None


def top_of_mask(
    mask: npt.NDArray[np.bool_], total: npt.NDArray[np.float32], count: int, k: int
) -> IntArray | None:
    """The ``k`` papers of ``mask`` (``count`` of them) with the highest ``total``, highest
    first, ties in paper order — what `top_positions` gives on the papers' list and scores,
    found without making that list: a threshold guessed from a sample, one pass to find the
    papers of the mask at or above it, a small partition. None: the guess left fewer than
    ``k`` (or too few papers to bother): ask `top_positions`."""
    n = int(mask.size)
    if k <= 0 or count < _SAMPLED_FROM or 4 * k > count:
        return None
    step = max(1, n // 4096)
    sample = total[::step][mask[::step]]
    if sample.size < 64:
        return None
    at = min(sample.size - 1, (2 * k * sample.size) // count + 8)
    # (partitioned negated, as `top_positions` does: numpy's partition is slow near the
    # end of an array with many equal values — 200 ms for 900,000 scores of four values)
    threshold = -np.partition(-sample, at)[at]
    near_mask = np.greater_equal(total, threshold)
    np.logical_and(near_mask, mask, out=near_mask)
    near = np.flatnonzero(near_mask)
    if near.size < k:
        return None
    return near[_smallest(-total[near], k)]


class RankedOrder:
    """Papers ``pins`` first (as given), then ``docs`` (ascending, none of the pins) by
    ``scores`` (one per doc) descending, ties in paper order — sorted lazily.

    `of_mask`: the same order of the papers of a mask, by a score per paper: for a search
    matching most papers, the list of them (and their scores) is made only if the order
    is read past its head."""

    __slots__ = (
        "_count",
        "_docs_made",
        "_full",
        "_mask",
        "_pins",
        "_scores_made",
        "_top",
        "_total",
    )

    def __init__(self, docs: IntArray, scores: npt.NDArray[np.float32], pins: IntArray) -> None:
        self._docs_made: IntArray | None = docs
        self._scores_made: npt.NDArray[np.float32] | None = scores
        self._mask: npt.NDArray[np.bool_] | None = None
        self._total: npt.NDArray[np.float32] | None = None
        self._count = int(docs.size)
        self._pins = pins
        self._top: IntArray = np.zeros(0, np.int64)  #: the best ranked so far (papers)
        self._full: IntArray | None = None

    @classmethod
    def of_mask(
        cls,
        mask: npt.NDArray[np.bool_],
        total: npt.NDArray[np.float32],
        pins: IntArray,
        count: int | None = None,
    ) -> RankedOrder:
        """The papers of ``mask`` (``count`` of them; none of the pins) by
        ``total[paper]``. Both arrays are the order's from now on (never written again)."""
        order = cls(np.zeros(0, np.int64), np.zeros(0, np.float32), pins)
        order._docs_made = order._scores_made = None
        order._mask, order._total = mask, total
        order._count = int(np.count_nonzero(mask)) if count is None else count
        return order

    @property
    def _docs(self) -> IntArray:
        if self._docs_made is None:
            assert self._mask is not None
            self._docs_made = np.flatnonzero(self._mask)
        return self._docs_made

    @property
    def _scores(self) -> npt.NDArray[np.float32]:
        if self._scores_made is None:
            assert self._total is not None
            self._scores_made = self._total[self._docs]
        return self._scores_made

    def __len__(self) -> int:
        return int(self._pins.size) + self._count

    def head(self, k: int) -> IntArray:
        """The first ``k`` papers of the order (fewer if there are fewer)."""
        if self._full is not None:
            return self._full[:k]
        pins = self._pins
        rest = k - pins.size
        if rest > self._top.size and self._top.size < self._count:
            want = max(rest, FIRST_RANKED, 2 * self._top.size)
            if want * 4 >= self._count:
                return self.full()[:k]
            top = None
            if self._docs_made is None:
                assert self._mask is not None and self._total is not None
                top = top_of_mask(self._mask, self._total, self._count, want)
            self._top = top if top is not None else self._docs[top_positions(self._scores, want)]
        if not pins.size:
            return self._top[:k]
        return np.concatenate([pins, self._top[: max(0, rest)]])[:k]

    def at(self, i: int) -> int:
        """The ``i``-th paper (0 ≤ i < len)."""
        if self._full is None and i < self._pins.size:
            return int(self._pins[i])
        if self._full is None and i - int(self._pins.size) >= self._top.size:
            self.head(i + 1)  # sorts more (or all)
        if self._full is not None:
            return int(self._full[i])
        return int(self._top[i - int(self._pins.size)])

    def full(self) -> IntArray:
        if self._full is None:
            ranked = self._docs[np.argsort(-self._scores, kind="stable")]
            self._full = np.concatenate([self._pins, ranked]) if self._pins.size else ranked
        return self._full

    def position(self, doc: int) -> int | None:
        """Where paper ``doc`` stands in the order (None: not in it), without sorting."""
        if self._full is not None:
            found = np.flatnonzero(self._full == doc)
            return int(found[0]) if found.size else None
        pinned = np.flatnonzero(self._pins == doc)
        if pinned.size:
            return int(pinned[0])
        if self._docs_made is None:
            assert self._mask is not None and self._total is not None
            mask, total = self._mask, self._total
            if not 0 <= doc < mask.size or not mask[doc]:
                return None
            value = total[doc]
            ahead = int(np.count_nonzero((total > value) & mask))
            ahead += int(np.count_nonzero((total[:doc] == value) & mask[:doc]))
            return int(self._pins.size) + ahead
        at = int(np.searchsorted(self._docs, doc))
        if at >= self._docs.size or int(self._docs[at]) != doc:
            return None
        score = self._scores[at]
        ahead = int(np.count_nonzero(self._scores > score))
        ahead += int(np.count_nonzero(self._scores[:at] == score))
        return int(self._pins.size) + ahead
