"""The list's orders (the reader's ``s`` and ``list --sort``), outside any UI.

Light to import: the CLI builds its ``--sort`` choices from ``SORTS`` at start-up.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    sort: str, rows: npt.NDArray[np.integer[Any]], snapshot: Snapshot, papers: PaperTable
) -> npt.NDArray[np.int64]:
    """`sort_order` for the papers at ``rows`` of the corpus table (distinct rows; the
    result's order, or every row): the positions in ``rows`` in the order ``sort`` puts
    them, the same as `sort_order` gives for those papers. Columns and the library's few
    entries are read, not a `Paper` per row, so a million rows take a fraction of a second
    (``title`` decodes each title once)."""
    import numpy as np

    rows = np.asarray(rows, np.int64)
    n = rows.size
    if sort == "relevance":
        return np.arange(n, dtype=np.int64)
    if sort not in SORTS:
        raise ValueError(f"{sort}: not an order (one of {', '.join(SORTS)})")
    if sort == "dump":
        return np.argsort(rows, kind="stable").astype(np.int64)
    total = len(papers)
    whole = n == total and bool(np.array_equal(rows, np.arange(total)))

    def positions(paper_ids: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(positions in ``rows`` of those ids that are there, the ids' indexes)"""
        found = papers.rows_for(paper_ids)
        where = np.full(total + 1, -1, np.int64)  # row → position; row -1 → slot ``total``
        where[rows] = np.arange(n, dtype=np.int64)
        pos = where[np.where(found < 0, total, found)]
        kept = np.flatnonzero(pos >= 0)
        return pos[kept], kept

    if sort == "title":
        titles = papers.titles() if whole else [papers.title(int(r)) for r in rows.tolist()]
        metadata = snapshot.metadata
        real = [(pid, m.title) for pid, m in metadata.items() if m.title and not m.empty]
        if real:
            pos, which = positions([pid for pid, _ in real])
            for at, k in zip(pos.tolist(), which.tolist(), strict=True):
                titles[at] = real[k][1]
        from .text import shown_title

        folded = [(shown_title(t) if "{" in t else t).casefold() for t in titles]
        return np.asarray(sorted(range(n), key=folded.__getitem__), np.int64)
    if sort == "year":
        years = papers.years()[rows] if n else np.zeros(0, np.int64)
        given = [(pid, m.year) for pid, m in snapshot.metadata.items() if m.year and not m.empty]
        if given:
            pos, which = positions([pid for pid, _ in given])
            years[pos] = np.asarray([given[k][1] for k in which.tolist()], np.int64)
        return np.argsort(-years, kind="stable").astype(np.int64)
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
