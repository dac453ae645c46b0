"""The local library: bookmarks, read marks, tags, notes, metadata overrides, settings.

SQLite in WAL mode with ``synchronous=FULL``; every write is one ``BEGIN IMMEDIATE …
COMMIT`` transaction (a deferred transaction that upgrades to a write fails with "database
is locked" under two writers). The schema is versioned with ``PRAGMA user_version``; each
migration runs in a transaction after a ``VACUUM INTO`` backup. A damaged or unwritable
library is never deleted or overwritten: it opens read-only and says why.

Everything is keyed by paper id; records of papers that are not loaded now are kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .text import escape_for_terminal, sanitise

BUSY_TIMEOUT_MS = 30_000
BACKUPS_KEPT = 5
BACKUP_INTERVAL_S = 24 * 3600
TAG_MAX = 64

# Each entry migrates from version i to i + 1.
MIGRATIONS: list[str] = [
    # 0 → 1: bookmarks, read marks, tags, notes
    """
    CREATE TABLE bookmarks (paper_id TEXT PRIMARY KEY, created_at REAL NOT NULL);
    CREATE TABLE read_marks (paper_id TEXT PRIMARY KEY, read_at REAL NOT NULL);
    CREATE TABLE tags (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE
    );
    CREATE TABLE paper_tags (
        paper_id TEXT NOT NULL,
        tag_id INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
        added_at REAL NOT NULL,
        PRIMARY KEY (paper_id, tag_id)
    );
    CREATE INDEX paper_tags_tag ON paper_tags(tag_id);
    CREATE TABLE notes (paper_id TEXT PRIMARY KEY, body TEXT NOT NULL, updated_at REAL NOT NULL);
    """,
    # 1 → 2: metadata overrides and settings
    """
    CREATE TABLE metadata (
        paper_id TEXT PRIMARY KEY,
        title TEXT,
        authors TEXT NOT NULL DEFAULT '[]',
        url TEXT,
        doi TEXT,
        year INTEGER,
        updated_at REAL NOT NULL
    );
    CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


class LibraryError(Exception):
    """A problem worth one line to the user."""


class ReadOnlyLibrary(LibraryError):
    pass


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
    """The whole library in memory (it is small): what the views read."""

    bookmarks: dict[str, float] = field(default_factory=dict)
    read: dict[str, float] = field(default_factory=dict)
    tags: dict[str, list[str]] = field(default_factory=dict)  # paper id → tag names
    notes: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Metadata] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    tag_names: list[str] = field(default_factory=list)

    def paper_ids(self) -> set[str]:
        return (
            set(self.bookmarks)
            | set(self.read)
            | {k for k, v in self.tags.items() if v}
            | set(self.notes)
            | set(self.metadata)
        )


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
        raise LibraryError("a tag cannot contain control characters")
    return tag


class Library:
    """One open library file. Reads come from ``snapshot``; writes are transactions."""

    def __init__(self, path: Path | str | None, *, backups: bool = True) -> None:
        self.path = Path(path) if path is not None else None
        self.read_only = False
        self.problem: str | None = None  #: why the library is read-only, one line
        self._backups = backups
        self.snapshot = Snapshot()
        self.conn = self._open()
        self.reload()

    # -- opening --------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        if self.path is None:
            return self._memory()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return self._fallback(f"cannot create {self.path.parent}: {exc.strerror or exc}")
        if self.path.is_dir():
            return self._fallback("is a directory, not a library file")
        exists = self.path.exists()
        if exists and not os.access(self.path, os.W_OK):
            return self._open_read_only("the library file is not writable")
        if not exists and not os.access(self.path.parent, os.W_OK):
            return self._fallback(f"cannot write in {self.path.parent}")
        try:
            conn = self._connect(self.path)
            # Look before changing anything: a damaged or newer file is left byte for byte.
            check = conn.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                conn.close()
                return self._open_read_only("the library file failed its integrity check")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                conn.close()
                return self._open_read_only(
                    f"its schema version {version} is newer than this abstract-reader knows "
                    f"({SCHEMA_VERSION})"
                )
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            self._migrate(conn)
            return conn
        except sqlite3.DatabaseError as exc:
            return self._open_read_only(f"the library file is damaged ({exc})")
        except OSError as exc:
            return self._fallback(f"cannot open the library: {exc.strerror or exc}")

    def _connect(self, path: Path) -> sqlite3.Connection:
        conn = sqlite3.connect(
            path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def _memory(self) -> sqlite3.Connection:
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA foreign_keys = ON")
        self._migrate(conn, backup=False)
        return conn

    def _fallback(self, reason: str) -> sqlite3.Connection:
        """Nothing can be read or written at the location: an empty, read-only library."""
        self.read_only = True
        shown = escape_for_terminal(str(self.path))
        self.problem = f"{shown}: {reason}; the library is read-only for this session"
        return self._memory()

    def _open_read_only(self, reason: str) -> sqlite3.Connection:
        """Keep the file as it is; read what can be read."""
        self.read_only = True
        self.problem = (
            f"{escape_for_terminal(str(self.path))}: {reason}; it was kept unchanged and opened "
            "read-only (changes will not be saved)"
        )
        try:
            uri = f"file:{self.path}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if version != SCHEMA_VERSION:  # cannot migrate a file we may not write
                conn.close()
                return self._memory()
            return conn
        except sqlite3.Error:
            return self._memory()

    # -- schema ---------------------------------------------------------------------------
    def _migrate(self, conn: sqlite3.Connection, backup: bool = True) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"schema version {version} is newer than this abstract-reader knows"
            )
        if version == SCHEMA_VERSION:
            if backup:
                self._daily_backup(conn)
            return
        if backup and version > 0:
            self._backup(conn, reason=f"v{version}")
        for target in range(version, SCHEMA_VERSION):
            conn.execute("BEGIN IMMEDIATE")
            try:
                current = conn.execute("PRAGMA user_version").fetchone()[0]
                if current != target:  # another process migrated meanwhile
                    conn.execute("ROLLBACK")
                    continue
                for statement in MIGRATIONS[target].split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {target + 1}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _backup_files(self) -> list[Path]:
        assert self.path is not None
        return sorted(self.path.parent.glob(self.path.name + ".backup-*"))

    def _daily_backup(self, conn: sqlite3.Connection) -> None:
        if self.path is None or not self._backups:
            return
        files = self._backup_files()
        if files and time.time() - files[-1].stat().st_mtime < BACKUP_INTERVAL_S:
            return
        empty = conn.execute(
            "SELECT (SELECT count(*) FROM bookmarks) + (SELECT count(*) FROM paper_tags)"
            " + (SELECT count(*) FROM notes) + (SELECT count(*) FROM read_marks)"
        ).fetchone()[0]
        if empty:
            self._backup(conn, reason="daily")

    def _backup(self, conn: sqlite3.Connection, reason: str) -> None:
        if self.path is None:
            return
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = self.path.parent / f"{self.path.name}.backup-{stamp}-{reason}"
        try:
            conn.execute("VACUUM INTO ?", (str(target),))
        except sqlite3.Error:
            return
        for old in self._backup_files()[:-BACKUPS_KEPT]:
            with contextlib.suppress(OSError):
                old.unlink()

    # -- transactions ---------------------------------------------------------------------
    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise ReadOnlyLibrary(self.problem or "the library is read-only")
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading --------------------------------------------------------------------------
    def reload(self) -> Snapshot:
        """Read the whole library into ``snapshot`` (another process may have written)."""
        snap = Snapshot()
        conn = self.conn
        try:
            snap.bookmarks = dict(conn.execute("SELECT paper_id, created_at FROM bookmarks"))
            snap.read = dict(conn.execute("SELECT paper_id, read_at FROM read_marks"))
            for paper_id, name in conn.execute(
                "SELECT pt.paper_id, t.name FROM paper_tags pt JOIN tags t ON t.id = pt.tag_id"
                " ORDER BY t.name COLLATE NOCASE"
            ):
                snap.tags.setdefault(paper_id, []).append(sanitise(name))
            snap.notes = {
                pid: sanitise(body)
                for pid, body in conn.execute("SELECT paper_id, body FROM notes")
            }
            for row in conn.execute(
                "SELECT paper_id, title, authors, url, doi, year FROM metadata"
            ):
                snap.metadata[row[0]] = (
                    Metadata(  # sanitised again: the file may come from elsewhere
                        _clean_field(row[1]),
                        tuple(a for a in map(_clean_field, _json_list(row[2])) if a),
                        _clean_field(row[3]),
                        _clean_field(row[4]),
                        row[5] if isinstance(row[5], int) else None,
                    )
                )
            snap.settings = dict(conn.execute("SELECT key, value FROM settings"))
            snap.tag_names = [
                sanitise(r[0])
                for r in conn.execute("SELECT name FROM tags ORDER BY name COLLATE NOCASE")
            ]
        except sqlite3.Error as exc:
            if not self.read_only:
                raise LibraryError(f"{self.path}: cannot read the library ({exc})") from exc
        self.snapshot = snap
        return snap

    # LibraryState for search
    def ids_with_tag(self, tag: str) -> set[str]:
        wanted = tag.casefold()
        return {
            pid
            for pid, names in self.snapshot.tags.items()
            if any(n.casefold() == wanted for n in names)
        }

    def ids_with_state(self, state: str) -> set[str]:
        snap = self.snapshot
        if state == "bookmarked":
            return set(snap.bookmarks)
        if state == "read":
            return set(snap.read)
        if state == "noted":
            return set(snap.notes)
        if state == "tagged":
            return {pid for pid, names in snap.tags.items() if names}
        return set()

    def tag_counts(self) -> list[tuple[str, int]]:
        counts = dict.fromkeys(self.snapshot.tag_names, 0)
        for names in self.snapshot.tags.values():
            for name in names:
                counts[name] = counts.get(name, 0) + 1
        return sorted(counts.items(), key=lambda item: item[0].casefold())

    def setting(self, key: str, default: str | None = None) -> str | None:
        return self.snapshot.settings.get(key, default)

    # -- writing --------------------------------------------------------------------------
    def set_bookmark(self, paper_ids: Iterable[str], on: bool = True) -> None:
        ids = list(paper_ids)
        now = time.time()
        with self._write() as conn:
            if on:
                conn.executemany(
                    "INSERT OR IGNORE INTO bookmarks(paper_id, created_at) VALUES (?, ?)",
                    [(pid, now) for pid in ids],
                )
            else:
                conn.executemany("DELETE FROM bookmarks WHERE paper_id = ?", [(p,) for p in ids])
        for pid in ids:
            if on:
                self.snapshot.bookmarks.setdefault(pid, now)
            else:
                self.snapshot.bookmarks.pop(pid, None)

    def set_read(self, paper_ids: Iterable[str], on: bool = True) -> None:
        ids = list(paper_ids)
        now = time.time()
        with self._write() as conn:
            if on:
                conn.executemany(
                    "INSERT OR IGNORE INTO read_marks(paper_id, read_at) VALUES (?, ?)",
                    [(pid, now) for pid in ids],
                )
            else:
                conn.executemany("DELETE FROM read_marks WHERE paper_id = ?", [(p,) for p in ids])
        for pid in ids:
            if on:
                self.snapshot.read.setdefault(pid, now)
            else:
                self.snapshot.read.pop(pid, None)

    def _tag_id(self, conn: sqlite3.Connection, name: str) -> int:
        row = conn.execute("SELECT id FROM tags WHERE name = ?", (name,)).fetchone()
        if row is not None:
            return int(row[0])
        cur = conn.execute("INSERT INTO tags(name) VALUES (?)", (name,))
        assert cur.lastrowid is not None
        return cur.lastrowid

    def add_tags(self, paper_ids: Iterable[str], tags: Iterable[str]) -> None:
        ids = list(paper_ids)
        names = [clean_tag(t) for t in tags]
        now = time.time()
        with self._write() as conn:
            for name in names:
                tag_id = self._tag_id(conn, name)
                conn.executemany(
                    "INSERT OR IGNORE INTO paper_tags(paper_id, tag_id, added_at) VALUES (?,?,?)",
                    [(pid, tag_id, now) for pid in ids],
                )
        self.reload()

    def remove_tags(self, paper_ids: Iterable[str], tags: Iterable[str]) -> None:
        ids = list(paper_ids)
        names = [clean_tag(t) for t in tags]
        with self._write() as conn:
            for name in names:
                conn.executemany(
                    "DELETE FROM paper_tags WHERE paper_id = ?"
                    " AND tag_id = (SELECT id FROM tags WHERE name = ?)",
                    [(pid, name) for pid in ids],
                )
            conn.execute(
                "DELETE FROM tags WHERE id NOT IN (SELECT DISTINCT tag_id FROM paper_tags)"
            )
        self.reload()

    def set_tags(self, paper_id: str, tags: Iterable[str]) -> None:
        """Make the paper's tags exactly ``tags`` (the tag editor's save), in one transaction."""
        wanted: dict[str, str] = {}
        for raw in tags:
            name = clean_tag(raw)
            wanted.setdefault(name.casefold(), name)
        now = time.time()
        with self._write() as conn:
            conn.execute("DELETE FROM paper_tags WHERE paper_id = ?", (paper_id,))
            for name in wanted.values():
                conn.execute(
                    "INSERT OR IGNORE INTO paper_tags(paper_id, tag_id, added_at) VALUES (?,?,?)",
                    (paper_id, self._tag_id(conn, name), now),
                )
            conn.execute(
                "DELETE FROM tags WHERE id NOT IN (SELECT DISTINCT tag_id FROM paper_tags)"
            )
        self.reload()

    def rename_tag(self, old: str, new: str) -> None:
        """Rename a tag on every paper; renaming onto an existing tag merges the two."""
        old_name, new_name = clean_tag(old), clean_tag(new)
        with self._write() as conn:
            row = conn.execute("SELECT id FROM tags WHERE name = ?", (old_name,)).fetchone()
            if row is None:
                raise LibraryError(f"no tag named {old_name!r}")
            old_id = int(row[0])
            target = conn.execute("SELECT id FROM tags WHERE name = ?", (new_name,)).fetchone()
            if target is None or int(target[0]) == old_id:
                conn.execute("UPDATE tags SET name = ? WHERE id = ?", (new_name, old_id))
            else:
                conn.execute(
                    "INSERT OR IGNORE INTO paper_tags(paper_id, tag_id, added_at)"
                    " SELECT paper_id, ?, added_at FROM paper_tags WHERE tag_id = ?",
                    (int(target[0]), old_id),
                )
                conn.execute("DELETE FROM tags WHERE id = ?", (old_id,))
        self.reload()

    def delete_tag(self, name: str) -> None:
        tag = clean_tag(name)
        with self._write() as conn:
            if conn.execute("DELETE FROM tags WHERE name = ?", (tag,)).rowcount == 0:
                raise LibraryError(f"no tag named {tag!r}")
        self.reload()

    def set_note(self, paper_id: str, body: str) -> None:
        with self._write() as conn:
            if body.strip():
                conn.execute(
                    "INSERT INTO notes(paper_id, body, updated_at) VALUES (?, ?, ?)"
                    " ON CONFLICT(paper_id) DO UPDATE SET body = excluded.body,"
                    " updated_at = excluded.updated_at",
                    (paper_id, body, time.time()),
                )
            else:
                conn.execute("DELETE FROM notes WHERE paper_id = ?", (paper_id,))
        if body.strip():
            self.snapshot.notes[paper_id] = body
        else:
            self.snapshot.notes.pop(paper_id, None)

    def set_metadata(self, paper_id: str, meta: Metadata) -> None:
        if meta.year is not None and not 1000 <= meta.year <= 9999:
            raise LibraryError(f"year must have four digits ({meta.year} given)")
        clean = Metadata(
            title=_clean_field(meta.title),
            authors=tuple(a for a in (_clean_field(x) for x in meta.authors) if a),
            url=_clean_field(meta.url),
            doi=_clean_field(meta.doi),
            year=meta.year,
        )
        with self._write() as conn:
            if clean.empty:
                conn.execute("DELETE FROM metadata WHERE paper_id = ?", (paper_id,))
            else:
                conn.execute(
                    "INSERT INTO metadata(paper_id, title, authors, url, doi, year, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(paper_id) DO UPDATE SET"
                    " title = excluded.title, authors = excluded.authors, url = excluded.url,"
                    " doi = excluded.doi, year = excluded.year, updated_at = excluded.updated_at",
                    (
                        paper_id,
                        clean.title,
                        json.dumps(list(clean.authors)),
                        clean.url,
                        clean.doi,
                        clean.year,
                        time.time(),
                    ),
                )
        if clean.empty:
            self.snapshot.metadata.pop(paper_id, None)
        else:
            self.snapshot.metadata[paper_id] = clean

    def set_setting(self, key: str, value: str) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO settings(key, value) VALUES (?, ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        self.snapshot.settings[key] = value

    # -- export / import ------------------------------------------------------------------
    def export_data(self) -> dict[str, Any]:
        snap = self.reload()
        papers: dict[str, dict[str, Any]] = {}
        for pid in sorted(snap.paper_ids()):
            entry: dict[str, Any] = {}
            if pid in snap.bookmarks:
                entry["bookmarked_at"] = snap.bookmarks[pid]
            if pid in snap.read:
                entry["read_at"] = snap.read[pid]
            if snap.tags.get(pid):
                entry["tags"] = snap.tags[pid]
            if pid in snap.notes:
                entry["note"] = snap.notes[pid]
            if pid in snap.metadata:
                entry["metadata"] = snap.metadata[pid].as_dict()
            papers[pid] = entry
        return {
            "format": "abstract-reader-library",
            "version": 1,
            "schema": SCHEMA_VERSION,
            "papers": papers,
            "settings": snap.settings,
        }

    def import_data(self, data: Any) -> int:
        """Merge an export into this library (never drops anything). Returns papers touched."""
        if not isinstance(data, dict) or data.get("format") != "abstract-reader-library":
            raise LibraryError("not an abstract-reader library export")
        papers = data.get("papers")
        if not isinstance(papers, dict):
            raise LibraryError("the export has no 'papers' object")
        touched = 0
        with self._write() as conn:
            for pid, entry in papers.items():
                if not isinstance(pid, str) or not isinstance(entry, dict):
                    continue
                touched += 1
                if "bookmarked_at" in entry:
                    conn.execute(
                        "INSERT OR IGNORE INTO bookmarks VALUES (?, ?)",
                        (pid, _number(entry["bookmarked_at"], pid, "bookmarked_at")),
                    )
                if "read_at" in entry:
                    conn.execute(
                        "INSERT OR IGNORE INTO read_marks VALUES (?, ?)",
                        (pid, _number(entry["read_at"], pid, "read_at")),
                    )
                tags = entry.get("tags", []) or []
                if not isinstance(tags, list):
                    raise LibraryError(f"paper {pid}: 'tags' must be a list")
                for raw in tags:
                    try:
                        name = clean_tag(str(raw))
                    except LibraryError as exc:
                        raise LibraryError(f"paper {pid}: {exc}") from None
                    conn.execute(
                        "INSERT OR IGNORE INTO paper_tags VALUES (?, ?, ?)",
                        (pid, self._tag_id(conn, name), time.time()),
                    )
                note = entry.get("note")
                if isinstance(note, str) and note.strip():
                    note = sanitise(note)
                    existing = conn.execute(
                        "SELECT body FROM notes WHERE paper_id = ?", (pid,)
                    ).fetchone()
                    body = note
                    if existing and existing[0] != note and note not in existing[0]:
                        body = existing[0] + "\n\n" + note
                    elif existing:
                        body = existing[0]
                    conn.execute(
                        "INSERT OR REPLACE INTO notes VALUES (?, ?, ?)", (pid, body, time.time())
                    )
                meta = entry.get("metadata")
                if isinstance(meta, dict):
                    row = conn.execute(
                        "SELECT title, authors, url, doi, year FROM metadata WHERE paper_id = ?",
                        (pid,),
                    ).fetchone()
                    old = row or (None, "[]", None, None, None)
                    authors = meta.get("authors") or _json_list(old[1])
                    if not isinstance(authors, list):
                        raise LibraryError(f"paper {pid}: 'authors' must be a list")
                    year = meta.get("year") if meta.get("year") is not None else old[4]
                    if year is not None:
                        year = int(_number(year, pid, "year"))
                        if not 1000 <= year <= 9999:
                            raise LibraryError(f"paper {pid}: year must have four digits")

                    conn.execute(
                        "INSERT OR REPLACE INTO metadata VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (
                            pid,
                            _imported_text(meta, "title", old[0]),
                            json.dumps([c for a in authors if (c := _clean_field(str(a)))]),
                            _imported_text(meta, "url", old[2]),
                            _imported_text(meta, "doi", old[3]),
                            year,
                            time.time(),
                        ),
                    )
            settings = data.get("settings")
            if isinstance(settings, dict):
                for key, value in settings.items():
                    conn.execute(
                        "INSERT OR IGNORE INTO settings VALUES (?, ?)", (str(key), str(value))
                    )
        self.reload()
        return touched


def _imported_text(meta: dict[str, Any], key: str, current: str | None) -> str | None:
    """A metadata field from an import file, sanitised; the current value when absent."""
    value = meta.get(key)
    return _clean_field(str(value)) if value else current


def _number(value: Any, paper_id: str, field_name: str) -> float:
    """A number from an import file, or a one-line error naming the paper and the field."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise LibraryError(f"paper {paper_id}: {field_name} must be a number")
    try:
        return float(value)
    except ValueError:
        raise LibraryError(
            f"paper {paper_id}: {field_name} must be a number, not {value!r}"
        ) from None


def _clean_field(value: str | None) -> str | None:
    if value is None:
        return None
    cleaned = " ".join(sanitise(value).split())
    return cleaned or None


def _json_list(raw: str | None) -> list[str]:
    try:
        value = json.loads(raw or "[]")
    except json.JSONDecodeError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []
