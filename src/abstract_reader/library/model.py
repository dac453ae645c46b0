"""What the library holds, as the views read it: errors, Metadata, Snapshot, tag names,
and reading stored values defensively (another tool may have put anything there)."""

from __future__ import annotations

import enum
import json
import math
import sqlite3
from collections.abc import Iterator, Mapping
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


#: a metadata row as SQLite gives it: (paper id, title, authors, url, doi, year)
Row = tuple[Any, ...]


def metadata_of_row(row: Row) -> Metadata:
    """A stored metadata row as the views read it (sanitised again: the file may come from
    elsewhere)."""
    return Metadata(
        clean_field(row[1]),
        tuple(a for a in map(clean_field, json_list(row[2])) if a),
        clean_field(row[3]),
        clean_field(row[4]),
        as_year(row[5]),
    )


def _blank(row: Row) -> bool:
    """``metadata_of_row(row).empty``, without building it for the usual row (a title of
    printable text: `clean_field` keeps it, so the row is not empty)."""
    title = row[1]
    if type(title) is str and title.isprintable() and title.strip(" "):
        return False
    return metadata_of_row(row).empty


class MetadataSection(Mapping[str, Metadata]):
    """The library's metadata: paper id → `Metadata`, for the papers that have some.

    Its rows are kept as SQLite gives them, and a row becomes a `Metadata` when it is first
    asked for (then kept): reading a library where ``match`` gave 50,000 papers metadata
    built every one before the reader's first frame (~1 s of sanitising and JSON on a slow
    machine), which draws forty. Which papers it holds is known from the start (`_blank`:
    one C check for nearly every row), so ``in``, ``len`` and iteration build nothing;
    ``items()`` and ``values()`` build each row as they pass it.

    Never changed once made (the rows), so one may be read from several threads: a row built
    twice at once gives equal values, and the last one is kept."""

    __slots__ = ("_made", "_rows")

    def __init__(self, rows: dict[str, Row], made: dict[str, Metadata] | None = None) -> None:
        self._rows = rows  #: paper id → its row, for the papers whose row is not blank
        self._made: dict[str, Metadata] = {} if made is None else made

    @classmethod
    def of_rows(cls, rows: Iterator[Row] | list[Row]) -> MetadataSection:
        """A section of rows (paper id first) as read: rows of no paper or blank are left
        out; of two rows of one paper, the last counts."""
        kept: dict[str, Row] = {}
        for row in rows:
            pid = row[0]
            if pid is None:
                continue
            key = pid if type(pid) is str else as_text(pid)
            if _blank(row):
                kept.pop(key, None)
            else:
                kept[key] = row
        return cls(kept)

    def patched(self, ids: list[str], rows: Iterator[Row] | list[Row]) -> MetadataSection:
        """A new section: this one's, with the papers ``ids`` as ``rows`` have them now
        (a paper of ``ids`` with no row, or a blank one, has none). The others' rows and
        the `Metadata` built for them are shared."""
        kept = dict(self._rows)
        made = dict(self._made)
        for pid in ids:
            kept.pop(pid, None)
            made.pop(pid, None)
        for row in rows:
            if row[0] is not None and not _blank(row):
                kept[as_text(row[0])] = row
        return MetadataSection(kept, made)

    def titles_and_years(self) -> tuple[dict[str, str], dict[str, int]]:
        """Paper id → title, paper id → year, of the papers that have one: what the search
        index takes from the library (`metadata.OverridesFollower`), read from the rows
        without building a `Metadata` of each (their authors' JSON is most of that)."""
        titles: dict[str, str] = {}
        years: dict[str, int] = {}
        for pid, row in self._rows.items():
            title = clean_field(row[1])
            if title:
                titles[pid] = title
            year = row[5]
            if year is not None and (year := as_year(year)):
                years[pid] = year
        return titles, years

    def differs_from(self, other: MetadataSection) -> list[str]:
        """The papers whose rows are not the same in both (a row's values compared, not
        built: the same row is the same metadata; another may still show the same)."""
        mine, theirs = self._rows, other._rows
        return [pid for pid, row in mine.items() if theirs.get(pid) != row] + [
            pid for pid in theirs if pid not in mine
        ]

    def __getitem__(self, paper_id: str) -> Metadata:
        made = self._made.get(paper_id)
        if made is not None:
            return made
        row = self._rows[paper_id]  # (KeyError: none)
        made = self._made[paper_id] = metadata_of_row(row)
        return made

    def get(self, paper_id: str, default: Any = None) -> Any:
        made = self._made.get(paper_id)
        if made is not None:
            return made
        row = self._rows.get(paper_id)
        if row is None:
            return default
        made = self._made[paper_id] = metadata_of_row(row)
        return made

    def __contains__(self, paper_id: object) -> bool:
        return paper_id in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MetadataSection) and (
            other is self or other._rows == self._rows
        ):  # (the same rows: the same metadata, nothing built to see it)
            return True
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MetadataSection({len(self._rows)} papers)"


def _no_metadata() -> Mapping[str, Metadata]:
    return MetadataSection({})


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
    #: paper id → its metadata (a `MetadataSection` as read; any mapping in a snapshot made
    #: by hand)
    metadata: Mapping[str, Metadata] = field(default_factory=_no_metadata)
    settings: dict[str, str] = field(default_factory=dict)
    tag_names: list[str] = field(default_factory=list)
    #: (the ``metadata`` this one's was made from, the papers whose rows were read again)
    #: when a write's papers were patched in (`Library._patch`); None when it was read whole.
    #: A reader that followed that section checks those papers only, not every one (100,000
    #: matched papers: `metadata.OverridesFollower`). It keeps the section before alive.
    metadata_patch: tuple[Mapping[str, Metadata], frozenset[str]] | None = field(
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
