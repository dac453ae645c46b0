"""The list's orders (the reader's ``s`` and ``list --sort``), outside any UI.

Light to import: the CLI builds its ``--sort`` choices from ``SORTS`` at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .corpus import Corpus, Paper
    from .library import Snapshot
    from .papertable import PaperTable

#: The orders of the list, in the order ``s`` cycles through them, with their names.
SORTS: dict[str, str] = {
    "relevance": "relevance",
    "dump": "dump order",
    "title": "title",
    "year": "year, newest first",
    "recent": "recently tagged or bookmarked",
    "unread": "unread first",
}
#: Former names of orders, still accepted (a stored setting, an export, a script's --sort).
SORT_ALIASES: dict[str, str] = {"bookmarked": "recent"}


def canonical_sort(name: str) -> str:
    """The order a name means now (``bookmarked`` was the name of ``recent``); any other
    name is returned as given, for the caller to check against ``SORTS``."""
    return SORT_ALIASES.get(name, name)


def last_touched(paper_id: str, snapshot: Snapshot) -> float | None:
    """When a tag was last put on the paper or it was bookmarked (whichever is later);
    None when it has neither."""
    tagged = snapshot.tagged.get(paper_id)
    bookmarked = snapshot.bookmarks.get(paper_id)
    if tagged is None:
        return bookmarked
    return tagged if bookmarked is None else max(tagged, bookmarked)


def sort_order(sort: str, papers: Sequence[Paper], snapshot: Snapshot, corpus: Corpus) -> list[int]:
    """The positions of ``papers`` in the order ``sort`` (one of ``SORTS``) puts them, for
    the reader's ``s`` and ``list --sort``. Stable: ties (and ``relevance``) keep the given
    order. ``dump`` is the corpus order; titles and years are the effective metadata;
    ``recent`` puts the paper tagged or bookmarked last first, and the papers never tagged or
    bookmarked after all the others. (`sort_rows` does the same from the corpus's rows,
    without a `Paper` per row.)"""
    from .metadata import effective

    keys: list[tuple[object, ...]]
    if sort == "relevance":
        return list(range(len(papers)))
    if sort == "dump":
        rows = corpus.papers.rows_for([p.id for p in papers]).tolist()
        # a paper not in the corpus (never in practice) goes last, as given
        keys = [(r < 0, r) for r in rows]
    elif sort == "title":  # as shown: "{RSE}: …" among the R's, not after the Z's
        from .text import shown_title

        keys = [(shown_title(effective(p, snapshot).title).casefold(),) for p in papers]
    elif sort == "year":
        keys = [(-(effective(p, snapshot).year or 0),) for p in papers]
    elif sort == "recent":  # newest tag or bookmark first; the untouched after, as given
        keys = []
        for p in papers:
            at = last_touched(p.id, snapshot)
            keys.append((1, 0.0) if at is None else (0, -at))
    elif sort == "unread":
        keys = [(p.id in snapshot.read,) for p in papers]
    else:
        raise ValueError(f"{sort}: not an order (one of {', '.join(SORTS)})")
    return sorted(range(len(papers)), key=keys.__getitem__)


def sort_rows(
    sort: str,
    rows: npt.NDArray[np.integer[Any]],
    snapshot: Snapshot,
    papers: PaperTable,
    titles: TitleOrder | None = None,
) -> npt.NDArray[np.int64]:
    """`sort_order` for the papers at ``rows`` of the corpus table (distinct rows; the
    result's order, or every row): the positions in ``rows`` in the order ``sort`` puts
    them, the same as `sort_order` gives for those papers. Columns and the library's few
    entries are read, not a `Paper` per row, so a million rows take a fraction of a second
    (``title`` decodes each title once, ~10 µs a paper with the sort; given the table's
    `TitleOrder`, which covers ``rows``, it reads its ranks instead: ~1 ms at 100,000)."""
    import numpy as np

    rows = np.asarray(rows, np.int64)
    n = rows.size
    if sort == "relevance":
        return np.arange(n, dtype=np.int64)
    if sort not in SORTS:
        raise ValueError(f"{sort}: not an order (one of {', '.join(SORTS)})")
    if sort == "dump":
        return _argsort_distinct(rows)
    total = len(papers)
    whole = n == total and bool(np.array_equal(rows, np.arange(total)))

    def positions(paper_ids: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(positions in ``rows`` of those ids that are there, the ids' indexes)"""
        if not paper_ids:  # (no array of every row for nothing: ~40 ms at a million)
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        found = papers.rows_for(paper_ids)
        where = np.full(total + 1, -1, np.int32)  # row → position; row -1 → slot ``total``
        where[rows] = np.arange(n, dtype=np.int32)
        pos = where[np.where(found < 0, total, found)].astype(np.int64)
        kept = np.flatnonzero(pos >= 0)
        return pos[kept], kept

    if sort == "title":
        metadata = snapshot.metadata
        real = [(pid, m.title) for pid, m in metadata.items() if m.title and not m.empty]
        if titles is not None:
            return titles.sort(rows, real, positions)
        shown = papers.titles() if whole else [papers.title(int(r)) for r in rows.tolist()]
        if real:
            pos, which = positions([pid for pid, _ in real])
            for at, k in zip(pos.tolist(), which.tolist(), strict=True):
                shown[at] = real[k][1]
        folded = [title_key(t) for t in shown]
        return np.asarray(sorted(range(n), key=folded.__getitem__), np.int64)
    if sort == "year":
        years = papers.years()[rows] if n else np.zeros(0, np.int64)
        given = [(pid, m.year) for pid, m in snapshot.metadata.items() if m.year and not m.empty]
        if given:
            pos, which = positions([pid for pid, _ in given])
            years[pos] = np.asarray([given[k][1] for k in which.tolist()], np.int64)
        return _argsort_years(years)
    if sort == "recent":
        touched = set(snapshot.tagged) | set(snapshot.bookmarks)
        ids = sorted(touched)
        key = np.full(n, np.inf)
        if ids:
            pos, which = positions(ids)
            times = [last_touched(ids[k], snapshot) for k in which.tolist()]
            key[pos] = -np.asarray(times, np.float64)
        return np.argsort(key, kind="stable").astype(np.int64)
    # unread first
    read = np.zeros(n, bool)
    if snapshot.read:
        pos, _ = positions(list(snapshot.read))
        read[pos] = True
    return np.argsort(read, kind="stable").astype(np.int64)


def _argsort_distinct(rows: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.int64]:
    """The positions of ``rows`` (distinct, not negative) in ascending order. Many rows: the
    rows marked in an array as long as the largest, read back in order (linear: a million
    rows ~40 ms on a slow machine, where numpy's stable argsort — a merge sort for 64-bit
    integers — took ~220 ms, and 15 ms → 1 ms at 100,000); a few: their sort (the rows being
    distinct, any sort is stable)."""
    import numpy as np

    if not rows.size:
        return np.zeros(0, np.int64)
    size = int(rows.max()) + 1
    if rows.size * 8 < size:
        return np.argsort(rows).astype(np.int64)
    where = np.full(size, -1, np.int32)  # (32 bits: half the memory written at random)
    where[rows] = np.arange(rows.size, dtype=np.int32)
    return where[where >= 0].astype(np.int64)


def _argsort_years(years: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The positions of ``years`` newest first, stable (no year, 0, last). Years span far
    less than 65,536: as 16-bit keys numpy's stable sort is a radix sort, linear (a million
    rows ~17 ms on a slow machine; ~87 ms as 64-bit keys, its merge sort)."""
    import numpy as np

    if not years.size:
        return np.zeros(0, np.int64)
    newest, oldest = int(years.max()), int(years.min())
    if newest - oldest < 1 << 16:
        keys = (newest - years).astype(np.uint16)
        return np.argsort(keys, kind="stable").astype(np.int64)
    return np.argsort(-years, kind="stable").astype(np.int64)


def title_key(title: str) -> str:
    """What the title order compares: the title as shown ("{RSE}: …" among the R's),
    casefolded."""
    if "{" in title:
        from .text import shown_title

        title = shown_title(title)
    return title.casefold()


#: Keys `_title_ranks` handles between two calls of its ``step``.
_SLICE = 1 << 16
#: Keys that `_title_ranks` sorts with one Python sort; a longer run of keys with the same
#: first bytes is sorted by numpy on its next 8 bytes (one sort of 100,000 titles that begin
#: "learning" held the GIL ~0.1 s)
_RUN_SORT_MAX = 4096


def _title_ranks(
    keys: list[str], step: Callable[[], object] = lambda: None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(the positions of ``keys`` in sorted order — ``sorted(range(len(keys)),
    key=keys.__getitem__)`` —, each key's dense rank in it), without holding the GIL for
    long: one ``sorted`` of a million titles is one C call of seconds while the reader's
    keys and frames wait. numpy sorts the keys by their first 8 bytes of UTF-8 (whose byte
    order is the strings' order), then each run of keys with the same bytes by the next 8,
    down to runs of at most `_RUN_SORT_MAX`, which Python sorts; no list of every position
    is made (its conversions were C loops of ~0.1 s at a million). ``step`` is called
    between pieces of the work (it may raise to stop it)."""
    import numpy as np

    n = len(keys)
    order = _sort_by_bytes(keys, np.arange(n, dtype=np.int64), 0, step)
    new = np.ones(n, bool)  # does the key at this position of the order begin a new rank?
    for a in range(1, n, _SLICE):  # (in slices: no C loop over every key at once)
        texts = [keys[i] for i in order[a - 1 : a + _SLICE].tolist()]
        new[a : a + _SLICE] = [x != y for x, y in zip(texts[1:], texts, strict=False)]
        step()
    rank = np.empty(n, np.int64)
    rank[order] = np.cumsum(new) - 1
    return order, rank


def _sort_by_bytes(
    keys: list[str], rows: npt.NDArray[np.int64], depth: int, step: Callable[[], object]
) -> npt.NDArray[np.int64]:
    """``rows`` (positions in ``keys`` of keys whose first ``8 * depth`` bytes of UTF-8 are
    the same), sorted by their keys; stable."""
    import numpy as np

    if rows.size <= _RUN_SORT_MAX:
        run = rows.tolist()
        run.sort(key=keys.__getitem__)
        return np.asarray(run, np.int64)
    first, last = 8 * depth, 8 * depth + 8
    chunk = np.empty(rows.size, np.uint64)
    for a in range(0, rows.size, _SLICE):
        piece = rows[a : a + _SLICE].tolist()
        chunk[a : a + _SLICE] = np.fromiter(
            (int.from_bytes(keys[i].encode()[first:last].ljust(8, b"\0"), "big") for i in piece),
            np.uint64,
            len(piece),
        )
        step()
    by = np.argsort(chunk, kind="stable")
    rows, chunk = rows[by], chunk[by]
    starts = np.flatnonzero(np.r_[True, chunk[1:] != chunk[:-1]])
    ends = np.r_[starts[1:], rows.size]
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        if b - a < 2:
            continue
        if not chunk[a]:  # the keys end before these bytes (or hold NULs there)
            run = rows[a:b].tolist()
            if len({keys[i] for i in run}) > 1:
                run.sort(key=keys.__getitem__)
                rows[a:b] = run
            continue
        rows[a:b] = _sort_by_bytes(keys, rows[a:b], depth + 1, step)
        step()
    return rows


#: Papers up to which the reader orders the whole corpus by title at once, on its own
#: thread; from it on a worker does it (~10 µs a paper: decoding, folding and sorting every
#: title; ~0.5 s at 100,000 papers, seconds at a million) and the list waits in its order.
TITLE_ORDER_NOW_MAX = 10_000


class TitleOrder:
    """Where each paper of a corpus table stands in the title order (`title_key`): a dense
    rank, which papers whose titles compare equal share. Made once (the cost of one sort of
    every title), it orders any set of the table's rows by title with one numpy sort; a real
    title from the library is placed among the ranks by a binary search (a few titles
    decoded). Out of date once the table's titles change (`current`); rows added after it
    was made are not in it."""

    __slots__ = ("_order", "_placed", "_rank", "_ranked", "n", "table", "version")

    def __init__(self, papers: PaperTable, step: Callable[[], object] = lambda: None) -> None:
        """Made from the table's titles now (seconds at a million: a worker's job, which
        ``step``, called between pieces of it, may stop by raising)."""
        import numpy as np

        self.table = papers
        self.version = papers.title_version
        keys = papers.titles(between=step)
        self.n = len(keys)
        for i, title in enumerate(keys):  # in place: one list of strings at a time
            keys[i] = title_key(title)
            if not i % _SLICE:
                step()
        order, rank = _title_ranks(keys, step)
        del keys
        self._order = order
        self._rank = rank
        #: the ranks along the order (non-decreasing): a walk of the order reads its rows'
        #: ranks in sequence, not gathered from all over ``_rank``
        self._ranked = rank[order].astype(np.int32)  # (a table holds far under 2**31 rows)
        #: `place`'s answers: the library's real titles are placed once, not at every
        #: search (2,000 of them took ~60 ms of binary searches per key at 100,000 papers)
        self._placed: dict[str, tuple[float, str]] = {}

    def current(self, papers: PaperTable, rows: int) -> bool:
        """Does it order the first ``rows`` rows of ``papers`` as they are now?"""
        return self.table is papers and self.version == papers.title_version and self.n >= rows

    def place(self, title: str) -> tuple[float, str]:
        """Where a title not in the table goes: the rank of the table's titles it compares
        equal to, else half a rank before the first it compares less than; and its key."""
        found = self._placed.get(title)
        if found is None:
            found = self._placed[title] = self._place(title)
        return found

    def _place(self, title: str) -> tuple[float, str]:
        key = title_key(title)
        order, table = self._order, self.table
        lo, hi = 0, self.n
        while lo < hi:  # the first position in the order whose title is not less than key
            mid = (lo + hi) // 2
            if title_key(table.title(int(order[mid]))) < key:
                lo = mid + 1
            else:
                hi = mid
        if lo == self.n:
            return float(self._rank[order[-1]]) + 0.5 if self.n else 0.0, key
        rank = float(self._rank[order[lo]])
        if title_key(table.title(int(order[lo]))) == key:
            return rank, key
        return rank - 0.5, key

    def sort(
        self,
        rows: npt.NDArray[np.integer[Any]],
        real: list[tuple[str, str]],
        positions: Callable[[list[str]], tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]],
    ) -> npt.NDArray[np.int64]:
        """The positions of ``rows`` in title order, with the library's ``real`` titles
        ((id, title)) over the table's; ``positions`` finds ids among ``rows``. Many rows
        with the table's titles are taken as the order meets them, their ranks in sequence
        (no sort: only papers of equal titles are put in the rows' order among themselves);
        a few (under 1/16 of the table) by sorting their rank and position at once, not
        walking the whole order per search; those with a real title are placed among them."""
        import numpy as np

        n = rows.size
        pos, which = positions([pid for pid, _ in real])
        scale = max(n, 1)
        if n * 16 < self.n:  # a few rows: their ranks sorted (no walk of the whole order)
            table_titled = np.ones(n, bool)
            table_titled[pos] = False  # (placed below)
            met = np.flatnonzero(table_titled)
            key = self._rank[rows[met]] * scale + met  # rank, then the position in the rows
            by = np.argsort(key)  # (distinct keys: any sort is stable)
            met, key = met[by], key[by]
        else:  # many: the order walked, each row met in turn, ranks already in order
            # (32-bit positions: half the memory to scatter into and gather from at random,
            # ~60 → ~20 ms at a million rows on a slow machine)
            where = np.full(self.n, -1, np.int32)
            where[rows] = np.arange(n, dtype=np.int32)
            where[rows[pos]] = -1  # (placed below)
            walk = where[self._order]
            kept = walk >= 0
            met = walk[kept].astype(np.int64)
            ranks = self._ranked[kept].astype(np.int64)
            same = ranks[1:] == ranks[:-1]
            if same.any():  # papers of equal titles: among themselves by position
                tied = np.zeros(met.size, bool)
                tied[1:] |= same
                tied[:-1] |= same
                at = np.flatnonzero(tied)
                met[at] = met[at][np.argsort(ranks[at] * scale + met[at])]
            if not pos.size:
                return met
            key = ranks * scale + met
        if not pos.size:
            return met
        placed = [self.place(real[k][1]) for k in which.tolist()]
        primary = np.asarray([rank for rank, _ in placed], np.float64)
        # real titles between two of the table's ranks: among themselves by title
        between = sorted({title for rank, title in placed if not rank.is_integer()})
        order_of = {title: i + 1 for i, title in enumerate(between)}
        secondary = np.asarray([order_of.get(title, 0) for _, title in placed], np.int64)
        by = np.lexsort((pos, secondary, primary))
        pos, primary = pos[by], primary[by]
        equal = primary == np.floor(primary)
        at = np.where(  # equal to a rank: by position among its rows; else before the next
            equal,
            primary.astype(np.int64) * scale + pos,
            np.ceil(primary).astype(np.int64) * scale,
        )
        return np.insert(met, np.searchsorted(key, at), pos).astype(np.int64)
