"""The list's orders (the reader's ``s`` and ``list --sort``), outside any UI.

Light to import: the CLI builds its ``--sort`` choices from ``SORTS`` at start-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .corpus import Corpus, Paper
    from .library import Snapshot

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
    bookmarked after all the others."""
    from .metadata import effective

    keys: list[tuple[object, ...]]
    if sort == "relevance":
        return list(range(len(papers)))
    if sort == "dump":
        index_of = corpus.index_of
        keys = [(index_of(p.id),) for p in papers]
    elif sort == "title":
        keys = [(effective(p, snapshot).title.casefold(),) for p in papers]
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
