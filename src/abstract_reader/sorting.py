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
    "bookmarked": "recently bookmarked",
    "unread": "unread first",
}


def sort_order(sort: str, papers: Sequence[Paper], snapshot: Snapshot, corpus: Corpus) -> list[int]:
    """The positions of ``papers`` in the order ``sort`` (one of ``SORTS``) puts them, for
    the reader's ``s`` and ``list --sort``. Stable: ties (and ``relevance``) keep the given
    order. ``dump`` is the corpus order; titles and years are the effective metadata."""
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
    elif sort == "bookmarked":  # most recently bookmarked first, then the others
        keys = [(-snapshot.bookmarks.get(p.id, float("-inf")),) for p in papers]
    elif sort == "unread":
        keys = [(p.id in snapshot.read,) for p in papers]
    else:
        raise ValueError(f"{sort}: not an order (one of {', '.join(SORTS)})")
    return sorted(range(len(papers)), key=keys.__getitem__)
