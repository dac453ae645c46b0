"""Saved searches: named queries kept in the library's settings (``search:<name>``).

``@name`` in a query stands for the saved query's text (expanded as text, between spaces:
``@reading is:unread`` is the saved query plus ``is:unread``) when it is a term of its own
(`querylex.saved_references`): inside quotes, a ``#tag`` or a word it is literal text.
A name is letters, digits, ``-`` and ``_``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .querylex import saved_references

if TYPE_CHECKING:
    from .library import Library

PREFIX = "search:"


class SavedSearchError(ValueError):
    """A bad name or an unknown saved search; the message is one line."""


def check_name(name: str) -> str:
    name = name.strip()
    if not name or not re.fullmatch(r"[\w-]+", name) or len(name) > 64:
        raise SavedSearchError(
            f"{name!r}: a saved search's name is letters, digits, '-' and '_' (64 at most)"
        )
    return name


def save(library: Library, name: str, query: str) -> None:
    if not query.strip():
        raise SavedSearchError("an empty query cannot be saved")
    library.set_setting(PREFIX + check_name(name), query.strip())


def saved(library: Library) -> dict[str, str]:
    """Name → query, sorted by name (case-insensitive). Deleted ones (empty) are left out."""
    found = {
        key[len(PREFIX) :]: value
        for key, value in library.snapshot.settings.items()
        if key.startswith(PREFIX) and value
    }
    return dict(sorted(found.items(), key=lambda item: item[0].casefold()))


def delete(library: Library, name: str) -> None:
    """Forget a saved search (its setting is emptied: the settings API has no delete)."""
    name = check_name(name)
    if library.setting(PREFIX + name) in (None, ""):
        raise SavedSearchError(f"no saved search named {name!r}")
    library.set_setting(PREFIX + name, "")


def exists(library: Library, name: str) -> str | None:
    """The query saved under ``name`` (exactly that name), or None."""
    return library.setting(PREFIX + name) or None


def references(query: str) -> list[str]:
    """The ``@name``s a query mentions as terms of their own, in order."""
    return [name for _, _, name in saved_references(query)]


def expand(library: Library, query: str) -> str:
    """The query with each ``@name`` replaced by the saved query (one level: a saved query
    that mentions ``@other`` keeps it as text). An unknown name is an error."""
    text, unknown = expand_known(saved(library), query)
    if unknown:
        known = saved(library)
        raise SavedSearchError(
            f"no saved search named {unknown[0]!r} (saved: {', '.join(known) or 'none'})"
        )
    return text


def expand_known(searches: Mapping[str, str], query: str) -> tuple[str, tuple[str, ...]]:
    """The query with each known ``@name`` replaced by its saved query and each unknown one
    left out, and the unknown names (the reader then shows no paper, as the CLI refuses
    such a query, and says them in its status line)."""
    refs = saved_references(query)
    if not refs:
        return query, ()
    unknown: list[str] = []
    parts: list[str] = []
    at = 0
    for start, end, name in refs:
        parts.append(query[at:start])
        if name in searches:
            parts.append(f" {searches[name]} ")
        else:
            unknown.append(name)
            parts.append(" ")
        at = end
    parts.append(query[at:])
    return " ".join("".join(parts).split()), tuple(unknown)


def matching(searches: Mapping[str, str], typed: str) -> list[str]:
    """The names whose name or query contains the typed letters in order (fuzzy, as fzf
    matches, case-insensitively; spaces separate parts that must each match), best first:
    a match in the name before one in the query only, then tighter matches, then names the
    first part starts earlier in, then in the given order. Nothing typed: every name."""
    parts = typed.casefold().split()
    if not parts:
        return list(searches)
    scored: list[tuple[int, int, int, int, str]] = []
    for rank, (name, query) in enumerate(searches.items()):
        total = 0
        in_query = 0
        for part in parts:
            spread = _spread(part, name.casefold())
            if spread is None:
                spread = _spread(part, query.casefold())
                if spread is None:
                    break
                in_query = 1
            total += spread
        else:
            start = name.casefold().find(parts[0][0])
            scored.append((in_query, total, start if start >= 0 else len(name), rank, name))
    return [name for *_, name in sorted(scored)]


def _spread(needle: str, hay: str) -> int | None:
    """How many letters a subsequence match of ``needle`` in ``hay`` spans beyond the
    needle's own (0: a substring), or None when it does not match. Greedy from each place
    the first letter occurs; the tightest wins."""
    if needle in hay:
        return 0
    best: int | None = None
    start = hay.find(needle[0])
    while start != -1:
        at = start
        for ch in needle[1:]:
            at = hay.find(ch, at + 1)
            if at == -1:
                return best  # later starts cannot match either
        spread = at - start + 1 - len(needle)
        best = spread if best is None else min(best, spread)
        start = hay.find(needle[0], start + 1)
    return best
