"""Saved searches: named queries kept in the library's settings (``search:<name>``).

``@name`` in a query stands for the saved query's text (expanded as text, between spaces:
``@reading is:unread`` is the saved query plus ``is:unread``) when it is a term of its own
(`querylex.saved_references`): inside quotes, a ``#tag`` or a word it is literal text.
A saved query may itself use ``@other`` (expanded in turn, up to `MAX_DEPTH` deep); a loop
(``@a`` → ``@b`` → ``@a``, or ``@a`` using itself) is refused when saved, and one found
anyway (an older library, another program) makes the query match nothing and is said.
A name is letters, digits, ``-`` and ``_``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

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
    """Save ``query`` as ``name``. Refused (SavedSearchError, one line) for a bad name, an
    empty query, or one that would make saved searches loop or nest too deep."""
    if not query.strip():
        raise SavedSearchError("an empty query cannot be saved")
    name = check_name(name)
    # (a query using no @name makes no loop: the settings, 100,000 in a big library, are
    # walked only for one that does)
    problem = saving_problem(saved(library), name, query.strip()) if references(query) else None
    if problem is not None:
        raise SavedSearchError(problem)
    library.set_setting(PREFIX + name, query.strip())


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
    """The query with each ``@name`` replaced by the saved query, and the ``@name``s those
    mention by theirs, and so on (`expand_known`). An unknown name, a loop or nesting
    deeper than `MAX_DEPTH` is an error."""
    searches = saved(library)
    text, unknown, problem = expand_known(searches, query)
    if unknown:
        raise SavedSearchError(
            f"no saved search named {unknown[0]!r} (saved: {', '.join(searches) or 'none'})"
        )
    if problem is not None:
        raise SavedSearchError(problem)
    return text


#: How deep saved searches may use one another (``@a`` using ``@b`` using ``@c`` is 3)
MAX_DEPTH = 8
#: A saved search's expansion is cut at this many characters (the parser reads only the
#: first 1,000 of a query anyway): ``@a`` = ``@b @b``, ``@b`` = ``@c @c``, … stays small.
MAX_EXPANDED = 10_000


class Expansion(NamedTuple):
    """A query with its ``@name``s expanded (`expand_known`)."""

    text: str
    #: the names used (by the query or a saved search it uses) that name no saved search
    unknown: tuple[str, ...] = ()
    #: a loop (``@a → @b → @a``) or nesting deeper than `MAX_DEPTH`, said in one line; the
    #: query then matches nothing, as with an unknown name
    problem: str | None = None


def loop_message(chain: Sequence[str]) -> str:
    """One line for a loop of saved searches, ``chain`` from a name back to it."""
    path = " → ".join("@" + name for name in chain)
    return f"saved searches loop: {path} (a saved search cannot use itself)"


def expand_known(searches: Mapping[str, str], query: str) -> Expansion:
    """The query with each known ``@name`` replaced by its saved query, in which each
    ``@name`` is replaced in turn (up to `MAX_DEPTH` deep), and each unknown one left out;
    the unknown names, and a loop or too deep a nesting if there is one (the reader then
    shows no paper, as the CLI refuses such a query, and says them in its status line)."""
    if not saved_references(query):
        return Expansion(query)
    unknown: list[str] = []
    problems: list[str] = []
    done: dict[str, tuple[str, int]] = {}  # name → its expansion and how deep it nests

    def substitute(text: str, chain: tuple[str, ...]) -> tuple[str, int]:
        refs = saved_references(text)
        if not refs:
            return text, 0
        parts: list[str] = []
        at = 0
        height = 0
        for start, end, name in refs:
            parts.append(text[at:start])
            parts.append(" ")
            at = end
            if name not in searches:
                if name not in unknown:
                    unknown.append(name)
                continue
            if name in chain:
                problems.append(loop_message((*chain[chain.index(name) :], name)))
                continue
            if name not in done:
                inner, deep = substitute(searches[name], (*chain, name))
                done[name] = (" ".join(inner.split())[:MAX_EXPANDED], deep)
            inner, deep = done[name]
            if len(chain) + 1 + deep > MAX_DEPTH:
                top = chain[0] if chain else name
                problems.append(
                    f"@{top} uses saved searches more than {MAX_DEPTH} deep"
                    " (a saved search may use another, up to that depth)"
                )
                continue
            height = max(height, deep + 1)
            parts.append(inner)
            parts.append(" ")
        parts.append(text[at:])
        return "".join(parts), height

    text, _ = substitute(query, ())
    return Expansion(" ".join(text.split()), tuple(unknown), problems[0] if problems else None)


def saving_problem(searches: Mapping[str, str], name: str, query: str) -> str | None:
    """Why ``query`` cannot be saved as ``name`` beside ``searches``: it would make a loop
    (it uses ``@name``, or a search that does) or nest too deep; None when it can."""
    return expand_known({**searches, name: query}, "@" + name).problem


def problems(searches: Mapping[str, str]) -> dict[str, str]:
    """Name → why it matches nothing, for the saved searches in a loop or nested too deep
    (a library from before they were refused when saved, or written by another program)."""
    found: dict[str, str] = {}
    for name in searches:
        problem = expand_known(searches, "@" + name).problem
        if problem is not None:
            found[name] = problem
    return found


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
