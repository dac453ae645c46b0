"""What is new: when each dump file was first seen, and which papers arrived since the
previous session of the reader (``is:new``, ``digest --since``).

Kept in the library's settings, one row per dump file — cheap whatever the number of papers:
``seen:<file key>`` holds the time (UTC, ISO 8601) the file was first loaded, where the key
is a digest of the file's *name and size* (a dumps folder copied or moved elsewhere is not
new; a dump that changed size is). ``reader.session`` holds when the latest reader session
began, ``reader.previous_session`` the one before.

A paper is new when every file it comes from was first seen after the previous session
began (a paper also found in an older dump is not new). With no previous session, nothing
is new: on the very first run everything would be.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .corpus import Corpus
    from .library import Library

SEEN_PREFIX = "seen:"
SESSION = "reader.session"
PREVIOUS_SESSION = "reader.previous_session"


def now() -> datetime:
    return datetime.now(UTC)


def file_key(path: str | os.PathLike[str]) -> str | None:
    """The key of a dump file: its name and size (None if it cannot be stat'ed)."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return None
    # a name that is not UTF-8 keeps its bytes (surrogateescape): the same key as before
    # for every UTF-8 name
    name = f"{Path(path).name}\0{size}".encode("utf-8", "surrogateescape")
    digest = hashlib.blake2b(name, digest_size=12)
    return digest.hexdigest()


def record_seen(library: Library, files: Iterable[str], when: datetime | None = None) -> int:
    """Note the files not seen before as first seen ``when``; returns how many. A library
    that cannot be written is left alone (what is new is then only approximate)."""
    from .library import LibraryError

    stamp = (when or now()).isoformat(timespec="seconds")
    added = 0
    for name in files:
        key = file_key(name)
        if key is None or library.setting(SEEN_PREFIX + key) is not None:
            continue
        try:
            library.set_setting(SEEN_PREFIX + key, stamp)
        except LibraryError:
            return added
        added += 1
    return added


def begin_session(library: Library, files: Sequence[str], when: datetime | None = None) -> None:
    """A reader session starts: the latest session becomes the previous one, and the
    files loaded now are recorded as seen (new ones as of now)."""
    from .library import LibraryError

    moment = when or now()
    try:
        latest = library.setting(SESSION)
        if latest is not None:
            library.set_setting(PREVIOUS_SESSION, latest)
        library.set_setting(SESSION, moment.isoformat(timespec="seconds"))
    except LibraryError:
        return
    record_seen(library, files, moment)


def _parse(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        parsed = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def first_seen_of_files(library: Library, files: Sequence[str]) -> dict[str, datetime | None]:
    """Each file's name (as papers' sources give it) → when it was first seen (None:
    never recorded)."""
    from .text import sanitise

    out: dict[str, datetime | None] = {}
    for name in files:
        key = file_key(name)
        when = _parse(library.setting(SEEN_PREFIX + key)) if key else None
        out[sanitise(Path(name).name)] = when
    return out


def ids_seen_since(library: Library, corpus: Corpus, since: datetime) -> set[str]:
    """Papers all of whose files were first seen at or after ``since`` (files never
    recorded count as seen now)."""
    moment = now()
    seen = first_seen_of_files(library, corpus.files)
    fresh = {name for name, when in seen.items() if (when or moment) >= since}
    if not fresh:
        return set()
    if len(fresh) == len(seen):
        return set(corpus.papers.ids())
    return _ids_only_from(corpus, fresh)


def new_ids(library: Library, corpus: Corpus) -> set[str]:
    """``is:new``: papers first seen after the previous reader session began."""
    previous = _parse(library.setting(PREVIOUS_SESSION))
    if previous is None:
        return set()
    moment = now()
    seen = first_seen_of_files(library, corpus.files)
    fresh = {name for name, when in seen.items() if (when or moment) > previous}
    if not fresh:
        return set()
    return _ids_only_from(corpus, fresh)


def _ids_only_from(corpus: Corpus, files: set[str]) -> set[str]:
    """The papers all of whose sources are among ``files``."""
    table = corpus.papers
    return {table.id(row) for row in table.rows_only_from(files)}


class WithNew:
    """A library state for search that also answers ``is:new``."""

    def __init__(self, library: Library, corpus: Corpus) -> None:
        self.library = library
        self.corpus = corpus
        self._new: set[str] | None = None

    def ids_with_tag(self, tag: str) -> set[str]:
        return self.library.ids_with_tag(tag)

    def tag_names(self) -> list[str]:
        return self.library.tag_names()

    def ids_with_state(self, state: str) -> set[str]:
        if state == "new":
            if self._new is None:
                self._new = new_ids(self.library, self.corpus)
            return self._new
        return self.library.ids_with_state(state)
