"""What is said about a tag no paper has (``#readng`` for ``#reading``, ``like:#nosuch``,
``list --tag nonexist``): the query would match nothing, or rank by nothing, silently.
One line, with the nearest tag names that papers do have. No imports beyond the standard
library and `library.model`'s `tag_query` (the search thread and the CLI both use it).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from .library.model import tag_query

#: How many near names are offered, and how near (difflib's ratio) one must be
NEAREST = 3
CUTOFF = 0.6


def nearest(tag: str, known: Iterable[str]) -> list[str]:
    """The known tag names nearest ``tag`` (case does not matter), best first."""
    by_folded: dict[str, str] = {}
    for name in known:
        by_folded.setdefault(name.casefold(), name)
    by_folded.pop(tag.casefold(), None)
    close = difflib.get_close_matches(tag.casefold(), list(by_folded), n=NEAREST, cutoff=CUTOFF)
    return [by_folded[name] for name in close]


def no_paper_tagged(tag: str, known: Iterable[str], *, loaded: bool = False) -> str:
    """ "no paper is tagged #tag (did you mean #a or #b?)" — ``loaded``: papers that are not
    loaded have it, none of these."""
    known = list(dict.fromkeys(known))
    near = nearest(tag, known)
    said = f"no {'loaded ' if loaded else ''}paper is tagged {tag_query(tag)}"
    if near:
        said += f" (did you mean {' or '.join(tag_query(n) for n in near)}?)"
    elif not known:
        said += " (no paper has a tag yet)"
    else:  # nothing near: the first few there are, so that the next guess is not blind
        more = ", …" if len(known) > NEAREST else ""
        said += f" (tags: {', '.join(tag_query(n) for n in known[:NEAREST])}{more})"
    return said
