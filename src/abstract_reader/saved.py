"""Saved searches: named queries kept in the library's settings (``search:<name>``).

``@name`` in a query stands for the saved query's text (expanded as text, between spaces:
``@reading is:unread`` is the saved query plus ``is:unread``). A name is letters, digits,
``-`` and ``_``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .library import Library

PREFIX = "search:"
_REF = re.compile(r"(?<![\w@])@([\w-]+)")


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


def expand(library: Library, query: str) -> str:
    """The query with each ``@name`` replaced by the saved query (one level: a saved query
    that mentions ``@other`` keeps it as text). An unknown name is an error."""
    known = saved(library)

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in known:
            raise SavedSearchError(
                f"no saved search named {name!r} (saved: {', '.join(known) or 'none'})"
            )
        return f" {known[name]} "

    return " ".join(_REF.sub(replace, query).split())
