"""What the library holds, as the views read it: errors, Metadata, Snapshot, tag names,
and reading stored values defensively (another tool may have put anything there)."""

from __future__ import annotations

import enum
import json
import math
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Final

from ..facts import ALL_FACTS, Fact
from ..text import sanitise

TAG_MAX = 64


class LibraryError(Exception):
    """A problem worth one line to the user."""


class ReadOnlyLibrary(LibraryError):
    pass


class LibraryBusy(LibraryError):
    """Another process held the write lock longer than ``BUSY_TIMEOUT_MS``; nothing written."""


class NoteConflict(LibraryError):
    """The stored note is not the one the edit started from; nothing was written.

    ``mine`` is the note that was to be saved, ``theirs`` the one stored now ("" if none)."""

    def __init__(self, paper_id: str, mine: str, theirs: str) -> None:
        super().__init__(f"the note of {paper_id} was changed elsewhere meanwhile; not saved")
        self.paper_id = paper_id
        self.mine = mine
        self.theirs = theirs


class MetadataConflict(LibraryError):
    """The stored metadata is not what the edit's check expected; nothing was written.

    ``theirs`` is the metadata stored now (empty if none)."""

    def __init__(self, paper_id: str, theirs: Metadata) -> None:
        super().__init__(f"the metadata of {paper_id} was changed elsewhere meanwhile; not saved")
        self.paper_id = paper_id
        self.theirs = theirs


class TagExists(LibraryError):
    """A rename onto a tag that exists already (pass ``merge=True`` to merge the two)."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__(
            f"a tag named {new!r} already exists (renaming {old!r} onto it merges the two)"
        )
        self.old = old
        self.new = new


class Unchecked(enum.Enum):
    UNCHECKED = "unchecked"


#: ``set_note(..., expected=UNCHECKED)`` (the default): write whatever is stored now.
UNCHECKED: Final = Unchecked.UNCHECKED


@dataclass(frozen=True, slots=True)
class Metadata:
    title: str | None = None
    authors: tuple[str, ...] = ()
    url: str | None = None
    doi: str | None = None
    year: int | None = None

    @property
    def empty(self) -> bool:
        return not (self.title or self.authors or self.url or self.doi or self.year)

    def as_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "authors": list(self.authors),
            "url": self.url,
            "doi": self.doi,
            "year": self.year,
        }


@dataclass(slots=True)
class Snapshot:
    """The whole library in memory (it is small): what the views read.

    A snapshot is never changed after it is made: writes and ``refresh`` replace
    ``Library.snapshot`` with a new one."""

    bookmarks: dict[str, float] = field(default_factory=dict)
    read: dict[str, float] = field(default_factory=dict)
    tags: dict[str, list[str]] = field(default_factory=dict)  # paper id → tag names
    #: paper id → when the newest of its tags was put on it (seconds since 1970, UTC); the
    #: time of each (paper, tag) pair is in ``paper_tags.added_at`` (export reads it there)
    tagged: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Metadata] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    tag_names: list[str] = field(default_factory=list)
    #: (the ``metadata`` this one's was made from, the papers whose rows were read again)
    #: when a write's papers were patched in (`Library._patch`); None when it was read whole.
    #: A reader that followed that section checks those papers only, not every one (100,000
    #: matched papers: `metadata.OverridesFollower`). It keeps the section before alive.
    metadata_patch: tuple[dict[str, Metadata], frozenset[str]] | None = field(
        default=None, compare=False, repr=False
    )

    def paper_ids(self) -> set[str]:
        return (
            set(self.bookmarks)
            | set(self.read)
            | {k for k, v in self.tags.items() if v}
            | set(self.notes)
            | set(self.metadata)
        )


def changed_facts(old: Snapshot, new: Snapshot) -> set[Fact]:
    """Which facts differ between two snapshots."""
    facts: set[Fact] = set()
    if old.bookmarks.keys() != new.bookmarks.keys():
        facts.add("bookmarks")
    if old.read.keys() != new.read.keys():
        facts.add("read")
    if old.tags != new.tags or old.tag_names != new.tag_names or old.tagged != new.tagged:
        facts.add("tags")
    if old.notes != new.notes:
        facts.add("notes")
    if old.metadata != new.metadata or _provenances(old) != _provenances(new):
        facts.add("meta")  # (match's provenance gives the venue: `metadata.effective`)
    return facts


def _provenances(snapshot: Snapshot) -> dict[str, str]:
    from ..metadata import PROVENANCE_PREFIX

    return {k: v for k, v in snapshot.settings.items() if k.startswith(PROVENANCE_PREFIX)}


def clean_tag(raw: str) -> str:
    """Trim and validate a tag; raises LibraryError with the reason."""
    tag = " ".join(raw.split())
    if tag.startswith("#"):
        tag = tag[1:].strip()
    if not tag:
        raise LibraryError("a tag cannot be empty")
    if len(tag) > TAG_MAX:
        raise LibraryError(f"a tag is at most {TAG_MAX} characters ({len(tag)} given)")
    if sanitise(tag) != tag or any(ord(ch) < 32 for ch in tag):
        raise LibraryError("a tag cannot contain control characters or bytes that are not UTF-8")
    return tag


def tag_query(tag: str) -> str:
    """A tag as the query language writes it (`search.query` reads it back): ``#theory``,
    ``#a"b``; quoted when it has a space or a ``|``, or starts with ``"`` — then ``"`` and
    ``\\`` in it are escaped with a backslash: ``#"reading list"``, ``#"say \\"hi\\""``.
    The reader fills its filter with this (``T``), and shows tags this way."""
    if not (any(ch.isspace() or ch == "|" for ch in tag) or tag.startswith('"')):
        return f"#{tag}"
    escaped = tag.replace("\\", "\\\\").replace('"', '\\"')
    return f'#"{escaped}"'


def as_facts(names: object) -> set[Fact]:
    parts = set(as_text(names).split(","))
    return {f for f in ALL_FACTS if f in parts}


def is_busy(exc: sqlite3.Error) -> bool:
    code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def as_text(value: object) -> str:
    """A stored value as text, whatever another tool put there (BLOB, number, NULL)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def as_time(value: object) -> float:
    """A stored timestamp as a float (0.0 when it is not a finite number)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def as_year(value: object) -> int | None:
    """A stored year as an int (a four-digit number, or text of one), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) == 4:
        value = int(value.strip())
    return value if isinstance(value, int) and 1000 <= value <= 9999 else None


def clean_field(value: object) -> str | None:
    """A stored text field as shown: sanitised, its whitespace runs one space (None: empty)."""
    if value is None:
        return None
    if (
        type(value) is str
        and value.isascii()
        and value.isprintable()  # (no control: nothing to sanitise, no tab or newline)
        and "  " not in value
        and value[:1] != " "
        and value[-1:] != " "
    ):  # what nearly every stored field is, and what the line below would give it
        return value or None
    cleaned = " ".join(sanitise(as_text(value)).split())
    return cleaned or None


def json_list(raw: object) -> list[str]:
    try:
        value = json.loads(as_text(raw) or "[]")
    except (json.JSONDecodeError, RecursionError):
        return []
    return [str(v) for v in value] if isinstance(value, list) else []
