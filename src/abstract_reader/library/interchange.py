"""Export and import of the whole library as one JSON document (merging, never dropping).

An import adds what the library lacks and never replaces what it has: a metadata field
(title, authors, URL, DOI, year), `match` record of where a paper was found (its venue),
saved search or preference the library already holds with another value keeps the
library's, and each such difference is returned (``Imported.kept``) for the caller to say —
nothing the import carried is lost silently.

An import is validated as a whole before anything is written: a document with one bad value
is rejected with one line naming the problem, and the library is left as it was. What is
accepted round-trips: exporting it again gives the same document.

Two exceptions, each returned (``Imported.refused``) for the caller to say, the rest being
imported: a DOI or URL that ``meta`` would refuse (not a DOI; not a web link the reader
opens, ``text.links``) is left out; and a paper the document lists more than once has its
records merged as an import merges with the library (tags joined, notes joined, marks at
their earliest, a metadata field from the first record giving it — a later record's
different value is returned as refused), as does a setting given twice (the first value).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..metadata import PROVENANCE_PREFIX, Provenance, normalise_doi
from ..plural import papers_phrase
from ..text import escape_for_terminal, sanitise
from ..text.links import refusal
from .model import (
    LibraryError,
    as_text,
    as_time,
    as_year,
    clean_field,
    clean_tag,
    json_list,
)
from .schema import SCHEMA_VERSION

if TYPE_CHECKING:
    from .store import Library, _Change

EXPORT_FORMAT = "abstract-reader-library"
#: 2: each paper's ``tagged_at`` ({tag: when it was put on the paper}); 1 had none (an
#: import of a version 1 document gives its tags the time of the import)
EXPORT_VERSION = 2
FIELD_MAX = 2_000  #: characters of a title, URL, DOI or author name
NOTE_MAX = 1_000_000  #: characters of a note
LIST_MAX = 1_000  #: tags or authors of one paper
TIME_MAX = 1e11  #: seconds since 1970 (the year 5138)
SETTING_MAX = 100_000

_PAPER_ID = re.compile(r"[0-9a-f]{16}")
_TOP_KEYS = frozenset({"format", "version", "schema", "papers", "settings"})
_ENTRY_KEYS = frozenset({"bookmarked_at", "read_at", "tags", "tagged_at", "note", "metadata"})
_META_KEYS = frozenset({"title", "authors", "url", "doi", "year"})


def _shown(value: object, limit: int = 40) -> str:
    """A value from the document, quoted and safe for a one-line message."""
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return escape_for_terminal(text)


# -- settings an import may carry ------------------------------------------------------------


def _one_of(*allowed: str) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        return None if value in allowed else f"must be one of {', '.join(allowed)}"

    return check


def _cite_format(value: str) -> str | None:
    from ..formats import FORMATS

    return _one_of(*FORMATS)(value)


def _line(limit: int) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        if len(value) > limit:
            return f"must be at most {limit} characters"
        if sanitise(value) != value or "\n" in value or "\t" in value:
            return "must be one line without control characters"
        return None

    return check


def _paper_id(value: str) -> str | None:
    return None if _PAPER_ID.fullmatch(value) else "must be a paper id (16 hex digits)"


def _json_object(value: str) -> str | None:
    try:
        parsed = json.loads(value, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return "must be a JSON object"
    return None if isinstance(parsed, dict) else "must be a JSON object"


def _json_strings(value: str) -> str | None:
    try:
        parsed = json.loads(value, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return "must be a JSON list of strings"
    ok = isinstance(parsed, list) and all(isinstance(item, str) for item in parsed)
    return None if ok and len(parsed) <= 1_000 else "must be a JSON list of strings"


def _sort(value: str) -> str | None:
    from ..sorting import SORT_ALIASES, SORTS

    return _one_of(*SORTS, *SORT_ALIASES)(value)


#: Setting key → check of its value (None: fine, else what is wrong). A new setting that
#: should travel with exports is added here; the import refuses keys it does not know (and
#: the export leaves them out).
KNOWN_SETTINGS: dict[str, Callable[[str], str | None]] = {
    "theme": _line(100),
    "filter": _line(10_000),  # (the place before it was kept per dump set: `place:`)
    "paper": _paper_id,
    "auto_read": _one_of("on", "off"),
    "cite_format": _cite_format,
    "cite_abstract": _line(10),
    "sort": _sort,
    "filter_history": _json_strings,  # session.py: the filter's Up/Down history
    "reader.session": _line(40),
    "reader.previous_session": _line(40),
}
#: Key prefix → (what must follow it, check of the value).
KNOWN_SETTING_PREFIXES: dict[str, tuple[re.Pattern[str], Callable[[str], str | None]]] = {
    "provenance:": (re.compile(r"[0-9a-f]{16}"), _json_object),  # metadata.py
    "search:": (re.compile(r"[\w-]{1,64}"), _line(10_000)),  # saved.py: saved searches
    "seen:": (re.compile(r"[0-9a-f]{24}"), _line(40)),  # seen.py: when a dump was first seen
    "place:": (re.compile(r"[0-9a-f]{24}"), _json_object),  # session.py: a dump set's place
}


def setting_problem(key: object, value: object) -> str | None:
    """Why a setting may not be imported, or None when it may."""
    if not isinstance(key, str) or not isinstance(value, str):
        return f"setting {_shown(key)}: its value must be text"
    if len(value) > SETTING_MAX:
        return f"setting {_shown(key)}: too long"
    check = KNOWN_SETTINGS.get(key)
    if check is None:
        for prefix, (rest, prefixed) in KNOWN_SETTING_PREFIXES.items():
            if key.startswith(prefix) and rest.fullmatch(key[len(prefix) :]):
                check = prefixed
                break
    if check is None:
        return f"unknown setting {_shown(key)}"
    problem = check(value)
    return None if problem is None else f"setting {_shown(key)} {problem} (not {_shown(value)})"


# -- reading the JSON --------------------------------------------------------------------------


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text[:20]} is too large")
    return number


class _Repeated(dict[str, Any]):
    """A JSON object that gives a key more than once: the first value of each key, and in
    ``later`` the other (key, value) pairs in the order given (``json`` would keep only the
    last value of a key, without a word)."""

    __slots__ = ("later",)

    def __init__(self) -> None:
        super().__init__()
        self.later: list[tuple[str, Any]] = []


def _json_object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    repeated = _Repeated()
    for key, value in pairs:
        if key in repeated:
            repeated.later.append((key, value))
        else:
            repeated[key] = value
    return repeated


def parse_export(raw: str) -> Any:
    """The JSON of an export file; LibraryError (one line) when it is not valid JSON —
    including NaN, Infinity, numbers too large for a float and nesting too deep to read.
    An object giving a key twice keeps each value (see ``_Repeated``)."""
    try:
        return json.loads(
            raw,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            object_pairs_hook=_json_object_pairs,
        )
    except RecursionError:
        raise LibraryError("not valid JSON (nested too deeply)") from None
    except json.JSONDecodeError as exc:
        raise LibraryError(f"not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except ValueError as exc:  # NaN / Infinity, 1e400, integers with thousands of digits
        raise LibraryError(f"not valid JSON ({escape_for_terminal(str(exc))[:100]})") from None


# -- validating the document -------------------------------------------------------------------


@dataclass(slots=True)
class _Meta:
    title: str | None = None
    authors: list[str] | None = None
    url: str | None = None
    doi: str | None = None
    year: int | None = None


@dataclass(slots=True)
class _Entry:
    bookmarked_at: float | None = None
    read_at: float | None = None
    tags: list[str] = field(default_factory=list)
    tagged_at: dict[str, float] = field(default_factory=dict)  #: tag (casefolded) → time
    note: str | None = None
    meta: _Meta | None = None


@dataclass(slots=True, frozen=True)
class Refused:
    """A value of the document that was not imported, and why (one clause, terminal-safe)."""

    what: str  #: "doi", "url", "title", …; "setting 'key'"
    value: str
    why: str


def _quoted(value: str, limit: int = 80) -> str:
    """A value of the document in double quotes (as the caller quotes the refused one),
    safe for a one-line message."""
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > limit:
        text = text[: limit - 2] + '…"'
    return escape_for_terminal(text)


def _no_repeats(value: object, where: str) -> None:
    """Refuse an object that gives one of its fields twice (papers and settings excepted:
    they are merged, ``validate_document``)."""
    if isinstance(value, _Repeated):
        raise LibraryError(f"{where}: the field {_shown(value.later[0][0])} is given twice")


def _time(value: object, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LibraryError(f"{where}: {name} must be a number, not {_shown(value)}")
    number = float(value)
    if not (math.isfinite(number) and 0 <= number <= TIME_MAX):
        raise LibraryError(f"{where}: {name} must be a time in seconds since 1970")
    return number


def _text(value: object, where: str, name: str, limit: int = FIELD_MAX) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise LibraryError(f"{where}: {name} must be text, not {_shown(value)}")
    if len(value) > limit:
        raise LibraryError(f"{where}: {name} is longer than {limit:,} characters")
    return value


def _year(value: object, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 6:
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        raise LibraryError(f"{where}: year must be a number, not {_shown(value)}")
    if not 1000 <= value <= 9999:
        raise LibraryError(f"{where}: year must have four digits ({_shown(value)} given)")
    return value


def _list(value: object, where: str, name: str) -> list[object]:
    if not isinstance(value, list):
        raise LibraryError(f"{where}: '{name}' must be a list")
    if len(value) > LIST_MAX:
        raise LibraryError(f"{where}: more than {LIST_MAX} {name}")
    return value


def _meta(value: object, where: str, refused: list[Refused]) -> _Meta:
    if not isinstance(value, dict):
        raise LibraryError(f"{where}: 'metadata' must be an object")
    _no_repeats(value, f"{where}: metadata")
    unknown = set(value) - _META_KEYS
    if unknown:
        raise LibraryError(f"{where}: unknown metadata field {_shown(sorted(unknown)[0])}")
    authors: list[str] | None = None
    if value.get("authors") is not None:
        authors = []
        for author in _list(value["authors"], where, "authors"):
            text = _text(author, where, "an author")
            if text is None:
                raise LibraryError(f"{where}: an author must be text, not null")
            authors.append(text)
    return _Meta(
        title=_text(value.get("title"), where, "title"),
        authors=authors,
        url=_url(_text(value.get("url"), where, "url"), refused),
        doi=_doi(_text(value.get("doi"), where, "doi"), refused),
        year=_year(value.get("year"), where),
    )


def _doi(value: str | None, refused: list[Refused]) -> str | None:
    """A DOI as ``meta --doi`` takes it (normalised: ``doi:10.1/x`` → ``10.1/x``), else
    None and the value refused."""
    text = clean_field(value)
    if text is None:
        return None
    try:
        return normalise_doi(text)
    except ValueError:
        refused.append(Refused("doi", text, "not a DOI (10.NNNN/…)"))
        return None


def _url(value: str | None, refused: list[Refused]) -> str | None:
    """A URL the reader opens and citations link to (``text.links``), else None and the
    value refused, with the reason."""
    text = clean_field(value)
    if text is None:
        return None
    why = refusal(text)
    if why is not None:
        refused.append(Refused("url", text, escape_for_terminal(why)))
        return None
    return text


def _entry(pid: str, value: object, refused: list[Refused]) -> _Entry:
    where = f"paper {pid}"
    if not isinstance(value, dict):
        raise LibraryError(f"{where}: its record must be an object")
    _no_repeats(value, where)
    unknown = set(value) - _ENTRY_KEYS
    if unknown:
        raise LibraryError(f"{where}: unknown field {_shown(sorted(unknown)[0])}")
    entry = _Entry()
    if "bookmarked_at" in value:
        entry.bookmarked_at = _time(value["bookmarked_at"], where, "bookmarked_at")
    if "read_at" in value:
        entry.read_at = _time(value["read_at"], where, "read_at")
    if value.get("tags") is not None:
        for raw in _list(value["tags"], where, "tags"):
            if not isinstance(raw, str):
                raise LibraryError(f"{where}: a tag must be text, not {_shown(raw)}")
            try:
                entry.tags.append(clean_tag(raw))
            except LibraryError as exc:
                raise LibraryError(f"{where}: {exc}") from None
    if value.get("tagged_at") is not None:
        entry.tagged_at = _tag_times(value["tagged_at"], entry.tags, where)
    entry.note = _text(value.get("note"), where, "note", NOTE_MAX)
    if value.get("metadata") is not None:
        entry.meta = _meta(value["metadata"], where, refused)
    return entry


def _merged(first: _Entry, later: _Entry, refused: list[Refused]) -> _Entry:
    """Two records of one paper in the same document as one, by the rules of an import into
    the library: marks at the earlier time, tags joined (each at its earlier time), notes
    joined; a metadata field from the first record giving it (another value refused)."""

    def earlier(a: float | None, b: float | None) -> float | None:
        return b if a is None else a if b is None else min(a, b)

    entry = _Entry(
        bookmarked_at=earlier(first.bookmarked_at, later.bookmarked_at),
        read_at=earlier(first.read_at, later.read_at),
        tags=list(first.tags),
        tagged_at=dict(first.tagged_at),
        note=first.note,
        meta=first.meta,
    )
    known = {t.casefold() for t in entry.tags}
    for tag in later.tags:
        key = tag.casefold()
        if key not in known:
            known.add(key)
            entry.tags.append(tag)
        if key in later.tagged_at:
            at = earlier(entry.tagged_at.get(key), later.tagged_at[key])
            if at is not None:
                entry.tagged_at[key] = at
    if later.note is not None and later.note.strip():
        if entry.note is None or not entry.note.strip():
            entry.note = later.note
        elif later.note not in entry.note:
            entry.note = entry.note + "\n\n" + later.note
    if later.meta is not None:
        if entry.meta is None:
            entry.meta = later.meta
        else:
            entry.meta = _merged_meta(entry.meta, later.meta, refused)
    return entry


def _merged_meta(first: _Meta, later: _Meta, refused: list[Refused]) -> _Meta:
    meta = _Meta(first.title, first.authors, first.url, first.doi, first.year)
    for name in _META_FIELDS:
        mine, other = getattr(meta, name), getattr(later, name)
        if other is None or other == [] or (isinstance(other, str) and not clean_field(other)):
            continue
        if mine is None or mine == [] or (isinstance(mine, str) and not clean_field(mine)):
            setattr(meta, name, other)
        elif not _same_value(name, _comparable(mine), _comparable(other)):
            refused.append(
                Refused(
                    name,
                    _value_shown(_comparable(other)),
                    "the paper's first record in the file has "
                    + _quoted(_value_shown(_comparable(mine))),
                )
            )
    return meta


def _comparable(value: Any) -> Any:
    if isinstance(value, list):
        return [c for a in value if (c := clean_field(a))]
    return clean_field(value) if isinstance(value, str) else value


def _tag_times(value: object, tags: list[str], where: str) -> dict[str, float]:
    """``tagged_at``: an object naming tags of the entry's ``tags`` and when each was put on
    the paper."""
    if not isinstance(value, dict):
        raise LibraryError(f"{where}: 'tagged_at' must be an object")
    _no_repeats(value, f"{where}: tagged_at")
    if len(value) > LIST_MAX:
        raise LibraryError(f"{where}: more than {LIST_MAX} tagged_at")
    known = {t.casefold() for t in tags}
    times: dict[str, float] = {}
    for raw, at in value.items():
        try:
            name = clean_tag(raw)
        except LibraryError as exc:
            raise LibraryError(f"{where}: tagged_at: {exc}") from None
        if name.casefold() not in known:
            raise LibraryError(f"{where}: tagged_at names {_shown(name)}, not one of its tags")
        times[name.casefold()] = _time(at, where, f"tagged_at of {_shown(name)}")
    return times


@dataclass(slots=True)
class _Document:
    entries: dict[str, _Entry]
    settings: dict[str, str]
    refused: dict[str, list[Refused]]  #: paper id ("": the settings) → values not imported
    repeated: dict[str, int]  #: paper id → its records in the document (when more than 1)


def validate_document(data: Any) -> _Document:
    """Check a whole export; its papers and settings, or LibraryError naming the problem."""
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise LibraryError("not an abstract-reader library export")
    _no_repeats(data, "the export")
    try:  # "\ud800" is valid JSON but no text: it cannot be stored (nor written out again)
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise LibraryError(
            f"holds text that is not valid Unicode (a lone surrogate, \\u{ord(bad[0]):04x})"
        ) from None
    except (TypeError, ValueError, RecursionError):
        pass  # (what is wrong with it is said below, field by field)
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise LibraryError(f"unknown field {_shown(sorted(unknown)[0])}")
    version = data.get("version", EXPORT_VERSION)
    if isinstance(version, bool) or not isinstance(version, int):
        raise LibraryError(f"'version' must be a number, not {_shown(version)}")
    if version > EXPORT_VERSION:
        raise LibraryError(
            f"made by a newer abstract-reader (export version {version}; this one reads "
            f"{EXPORT_VERSION})"
        )
    schema = data.get("schema")
    if schema is not None and (isinstance(schema, bool) or not isinstance(schema, int)):
        raise LibraryError(f"'schema' must be a number, not {_shown(schema)}")
    papers = data.get("papers")
    if not isinstance(papers, dict):
        raise LibraryError("the export has no 'papers' object")
    entries: dict[str, _Entry] = {}
    refused: dict[str, list[Refused]] = {}
    repeated: dict[str, int] = {}
    later = papers.later if isinstance(papers, _Repeated) else []
    for pid, value in [*papers.items(), *later]:
        if not _PAPER_ID.fullmatch(pid):
            raise LibraryError(f"{_shown(pid)} is not a paper id (16 hex digits)")
        not_taken: list[Refused] = []
        entry = _entry(pid, value, not_taken)
        if pid in entries:
            repeated[pid] = repeated.get(pid, 1) + 1
            entry = _merged(entries[pid], entry, not_taken)
        entries[pid] = entry
        if not_taken:
            refused.setdefault(pid, []).extend(not_taken)
    settings_in = data.get("settings")
    if settings_in is not None and not isinstance(settings_in, dict):
        raise LibraryError("'settings' must be an object")
    settings: dict[str, str] = {}
    later = settings_in.later if isinstance(settings_in, _Repeated) else []
    for key, value in [*(settings_in or {}).items(), *later]:
        problem = setting_problem(key, value)
        if problem is not None:
            raise LibraryError(problem)
        if key in settings:
            if value != settings[key]:
                refused.setdefault("", []).append(
                    Refused(
                        f"setting {_shown(key)}",
                        value,
                        f"the file gives it more than once; its first value "
                        f"{_quoted(settings[key])} was imported",
                    )
                )
            continue
        settings[key] = value
    return _Document(entries, settings, refused, repeated)


# -- export and import -------------------------------------------------------------------------


def export_document(library: Library) -> dict[str, Any]:
    """The whole library as a JSON-ready document (only finite numbers: valid JSON).

    Settings an import would refuse (unknown keys, odd values another tool stored) stay out:
    they are this machine's state, not the user's records."""
    snap = library.reload()
    tag_times = _tag_times_stored(library)
    papers: dict[str, dict[str, Any]] = {}
    for pid in sorted(snap.paper_ids()):
        entry: dict[str, Any] = {}
        if pid in snap.bookmarks:
            entry["bookmarked_at"] = snap.bookmarks[pid]
        if pid in snap.read:
            entry["read_at"] = snap.read[pid]
        if snap.tags.get(pid):
            entry["tags"] = snap.tags[pid]
            times = tag_times.get(pid, {})
            entry["tagged_at"] = {name: times.get(name, 0.0) for name in snap.tags[pid]}
        if pid in snap.notes:
            entry["note"] = snap.notes[pid]
        if pid in snap.metadata:
            entry["metadata"] = snap.metadata[pid].as_dict()
        papers[pid] = entry
    settings = {
        key: value
        for key, value in sorted(snap.settings.items())
        if setting_problem(key, value) is None
    }
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "schema": SCHEMA_VERSION,
        "papers": papers,
        "settings": settings,
    }


def _tag_times_stored(library: Library) -> dict[str, dict[str, float]]:
    """Paper id → {tag as the snapshot shows it: when it was put on the paper}."""
    times: dict[str, dict[str, float]] = {}
    rows = library.conn.execute(
        "SELECT paper_tags.paper_id, tags.name, paper_tags.added_at"
        " FROM paper_tags JOIN tags ON tags.id = paper_tags.tag_id"
    )
    for pid, name, at in rows:
        if pid is not None:
            times.setdefault(as_text(pid), {})[sanitise(as_text(name))] = as_time(at)
    return times


#: Settings that are the user's choices, not the reader's state (the last filter, paper,
#: session …): when the import's value differs from the library's, that is said.
_CHOSEN_SETTINGS = frozenset({"theme", "auto_read", "cite_format", "cite_abstract", "sort"})


@dataclass(slots=True, frozen=True)
class Kept:
    """A value the library kept over the import's different one."""

    #: "title", "authors", "url", "doi", "year"; "match record" (where `match` found the
    #: paper: its venue); "@name" (a saved search); a setting
    what: str
    ours: str
    theirs: str


@dataclass(slots=True)
class Imported:
    """What an import did: the papers it had records of, and per paper id (or "" for the
    settings) the values the library kept over the import's different ones."""

    papers: int
    kept: dict[str, list[Kept]] = field(default_factory=dict)
    #: papers whose records here changed (a mark, tag, note or field added); the others
    #: were here already, or kept their values
    changed: int = 0
    #: per paper id (or "" for the settings): the document's values not imported, and why
    refused: dict[str, list[Refused]] = field(default_factory=dict)
    #: paper id → how many records of it the document had (only papers with several: they
    #: were merged)
    repeated: dict[str, int] = field(default_factory=dict)


def import_document(library: Library, data: Any) -> Imported:
    """Merge an export into this library (never drops anything, never replaces a value the
    library has: see the module's docstring).

    The whole document is validated first: on any problem nothing is written."""
    document = validate_document(data)
    entries, settings = document.entries, document.settings
    now = time.time()
    result = Imported(len(entries), refused=document.refused, repeated=document.repeated)

    def build(change: _Change) -> None:
        result.kept.clear()  # (a busy library runs this again)
        conn = change.conn
        for pid, entry in entries.items():
            if entry.bookmarked_at is not None:
                change.apply(
                    {"op": "mark", "table": "bookmarks", "add": {pid: entry.bookmarked_at}}
                )
            if entry.read_at is not None:
                change.apply({"op": "mark", "table": "read_marks", "add": {pid: entry.read_at}})
            for name in entry.tags:  # a tag the paper has here keeps its own time
                at = entry.tagged_at.get(name.casefold(), now)
                change.apply({"op": "tag", "name": name, "add": {pid: at}})
            if entry.note is not None and entry.note.strip():
                note = sanitise(entry.note)
                row = change._paper_row("notes", pid)
                existing = None if row is None else as_text(row[0])
                body = note
                if existing and existing != note and note not in existing:
                    body = existing + "\n\n" + note
                elif existing:
                    body = existing
                change.apply({"op": "note", "id": pid, "body": body})
            if entry.meta is not None:
                kept = _merge_meta(change, pid, entry.meta)
                if kept:
                    result.kept[pid] = kept
        for key, value in settings.items():
            if key == "sort":  # an older export's `bookmarked` is `recent` now
                from ..sorting import canonical_sort

                value = canonical_sort(value)
            # (an empty value is none: a deleted saved search is an empty setting)
            cur = conn.execute(
                "INSERT INTO settings VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                " SET value = excluded.value WHERE settings.value = ''",
                (key, value),
            )
            change.dirty = change.dirty or bool(cur.rowcount)
            if cur.rowcount or not value:
                continue
            if key in _CHOSEN_SETTINGS or key.startswith("search:"):
                row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
                ours = as_text(row[0])
                if ours != value:
                    what = "@" + key[len("search:") :] if key.startswith("search:") else key
                    result.kept.setdefault("", []).append(Kept(what, ours, value))
            elif key.startswith(PROVENANCE_PREFIX):  # where match found the paper (its venue)
                row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
                found = _provenance_kept(as_text(row[0]), value)
                if found is not None:
                    result.kept.setdefault(key[len(PROVENANCE_PREFIX) :], []).append(found)

    change = library._transact(f"import of {papers_phrase(len(entries))}", build)
    result.changed = len(change.ids)
    return result


_META_FIELDS = ("title", "authors", "url", "doi", "year")


def _provenance_kept(ours: str, theirs: str) -> Kept | None:
    """The library's `match` provenance of a paper kept over the file's different one, said
    as `show` says where metadata came from (and the venue it gives); None when the two are
    the same record (the same JSON, whatever its spacing or key order)."""
    try:
        if json.loads(ours) == json.loads(theirs):
            return None
    except ValueError:
        pass
    mine, other = Provenance.from_json(ours), Provenance.from_json(theirs)

    def shown(prov: Provenance | None, raw: str) -> str:
        if prov is None:
            return raw
        return prov.describe() + (f", venue {prov.venue}" if prov.venue else "")

    ours_shown, theirs_shown = shown(mine, ours), shown(other, theirs)
    if ours_shown == theirs_shown:  # the same record, matched differently: the data itself
        ours_shown, theirs_shown = ours, theirs
    return Kept("match record", ours_shown, theirs_shown)


def _merge_meta(change: _Change, pid: str, meta: _Meta) -> list[Kept]:
    """Imported metadata into the stored one, field by field: a field the library lacks is
    filled, one it has keeps its value (a different imported one is returned, to be said)."""
    old = change._paper_row("metadata", pid) or [None, "[]", None, None, None]
    ours: list[Any] = [
        clean_field(old[0]),
        [c for a in json_list(old[1]) if (c := clean_field(a))],
        clean_field(old[2]),
        clean_field(old[3]),
        as_year(old[4]),
    ]
    theirs: list[Any] = [
        clean_field(meta.title),
        [c for a in meta.authors or [] if (c := clean_field(a))],
        clean_field(meta.url),
        clean_field(meta.doi),
        meta.year,
    ]
    new_row = list(old)
    kept: list[Kept] = []
    for i, name in enumerate(_META_FIELDS):
        mine, other = ours[i], theirs[i]
        if not other:
            continue
        if not mine:
            new_row[i] = json.dumps(other) if name == "authors" else other
        elif not _same_value(name, mine, other):
            kept.append(Kept(name, _value_shown(mine), _value_shown(other)))
    if new_row != old and any(v for v in new_row if v != "[]"):
        change.apply({"op": "meta", "id": pid, "row": new_row})
    return kept


def _same_value(name: str, ours: Any, theirs: Any) -> bool:
    if name == "doi":  # DOIs are case-insensitive
        return bool(str(ours).casefold() == str(theirs).casefold())
    return bool(ours == theirs)


def _value_shown(value: Any) -> str:
    return "; ".join(value) if isinstance(value, list) else str(value)
