"""The local library: bookmarks, read marks, tags, notes, metadata overrides, settings.

SQLite in WAL mode with ``synchronous=FULL``; every write is one ``BEGIN IMMEDIATE …
COMMIT`` transaction (a deferred transaction that upgrades to a write fails with "database
is locked" under two writers). The schema is versioned with ``PRAGMA user_version``; each
migration runs in a transaction after a ``VACUUM INTO`` backup. A damaged or unwritable
library is never deleted or overwritten: it opens read-only and says why.

Every write is a *delta* (add these tags to these papers, clear this bookmark, …) applied
inside one transaction, never a whole set read earlier. Each write appends a row to the
``changes`` log in the same transaction: which facts it touched, which papers, and the deltas
that invert it. The log serves ``refresh`` (which facts changed since the last look) and the
per-object undo stack.

Everything is keyed by paper id; records of papers that are not loaded now are kept.
"""

from __future__ import annotations

import contextlib
import enum
import json
import math
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from .facts import ALL_FACTS, Fact
from .text import escape_for_terminal, sanitise

#: How long a write waits for another process's write lock before giving up (LibraryBusy).
BUSY_TIMEOUT_MS = 2_500
BACKUPS_KEPT = 5
BACKUP_INTERVAL_S = 24 * 3600
TAG_MAX = 64
#: Rows of the change log kept (older ones are pruned as new ones arrive).
CHANGES_KEPT = 10_000

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
    # 2 → 3: the change log (refresh, undo, tests)
    """
    CREATE TABLE changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at REAL NOT NULL,
        facts TEXT NOT NULL,
        paper_ids TEXT NOT NULL,
        inverse TEXT NOT NULL,
        origin TEXT NOT NULL,
        what TEXT NOT NULL
    );
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


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


class TagExists(LibraryError):
    """A rename onto a tag that exists already (pass ``merge=True`` to merge the two)."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__(f"a tag named {new!r} already exists; merge {old!r} into it instead?")
        self.old = old
        self.new = new


class _Unchecked(enum.Enum):
    UNCHECKED = "unchecked"


#: ``set_note(..., expected=UNCHECKED)`` (the default): write whatever is stored now.
UNCHECKED: Final = _Unchecked.UNCHECKED


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


def changed_facts(old: Snapshot, new: Snapshot) -> set[Fact]:
    """Which facts differ between two snapshots."""
    facts: set[Fact] = set()
    if old.bookmarks.keys() != new.bookmarks.keys():
        facts.add("bookmarks")
    if old.read.keys() != new.read.keys():
        facts.add("read")
    if old.tags != new.tags or old.tag_names != new.tag_names:
        facts.add("tags")
    if old.notes != new.notes:
        facts.add("notes")
    if old.metadata != new.metadata:
        facts.add("meta")
    return facts


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


def _papers(n: int) -> str:
    return f"{n} paper" if n == 1 else f"{n} papers"


def _quoted(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names)


# ---------------------------------------------------------------------------------------
# Deltas
# ---------------------------------------------------------------------------------------

#: One delta, JSON-serialisable (the change log stores the inverse ones):
#:   {"op": "mark", "table": "bookmarks"|"read_marks", "add": {paper id: time}}
#:   {"op": "unmark", "table": …, "ids": [paper id, …]}
#:   {"op": "tag", "name": tag, "add": {paper id: time}}
#:   {"op": "untag", "name": tag, "ids": [paper id, …]}
#:   {"op": "retag", "old": tag, "new": tag}                (a rename that changes only case)
#:   {"op": "note", "id": paper id, "body": text|None, ["expect": text|None]}
#:   {"op": "meta", "id": paper id, "row": [title, authors, url, doi, year]|None, ["expect": …]}
#: ``expect``: apply only if the stored value is this one (else the delta is skipped).
Op = dict[str, Any]

_MARK_FACT: dict[str, Fact] = {"bookmarks": "bookmarks", "read_marks": "read"}
_MARK_TIME = {"bookmarks": "created_at", "read_marks": "read_at"}


class _Change:
    """The deltas of one transaction, applied as they come; collects their inverses."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.inverse: list[Op] = []  # in application order; undo applies them reversed
        self.facts: set[Fact] = set()
        self.ids: set[str] = set()
        self.skipped = False  # a delta's precondition failed (undo after a change elsewhere)
        self.dirty = False  # anything written at all (settings are not logged)

    def apply(self, op: Op) -> bool:
        """Apply one delta; False when its precondition failed and nothing was done."""
        kind = op["op"]
        if kind == "mark":
            return self._mark(op["table"], op["add"])
        if kind == "unmark":
            return self._unmark(op["table"], op["ids"])
        if kind == "tag":
            return self._tag(op["name"], op["add"])
        if kind == "untag":
            return self._untag(op["name"], op["ids"])
        if kind == "retag":
            return self._retag(op["old"], op["new"])
        if kind == "note":
            return self._note(op["id"], op["body"], op.get("expect", UNCHECKED))
        if kind == "meta":
            return self._meta(op["id"], op["row"], op.get("expect", UNCHECKED))
        raise ValueError(f"unknown delta {kind!r}")

    def _done(self, fact: Fact, ids: Iterable[str], inverse: Op) -> None:
        self.facts.add(fact)
        self.ids.update(ids)
        self.inverse.append(inverse)
        self.dirty = True

    def _mark(self, table: str, add: dict[str, float]) -> bool:
        column = _MARK_TIME[table]
        added: list[str] = []
        for pid, when in add.items():
            cur = self.conn.execute(
                f"INSERT OR IGNORE INTO {table}(paper_id, {column}) VALUES (?, ?)", (pid, when)
            )
            if cur.rowcount:
                added.append(pid)
        if added:
            self._done(_MARK_FACT[table], added, {"op": "unmark", "table": table, "ids": added})
        return True

    def _unmark(self, table: str, ids: list[str]) -> bool:
        column = _MARK_TIME[table]
        removed: dict[str, float] = {}
        for pid in ids:
            row = self.conn.execute(
                f"SELECT {column} FROM {table} WHERE paper_id = ?", (pid,)
            ).fetchone()
            if row is not None:
                self.conn.execute(f"DELETE FROM {table} WHERE paper_id = ?", (pid,))
                removed[pid] = _as_time(row[0])
        if removed:
            self._done(_MARK_FACT[table], removed, {"op": "mark", "table": table, "add": removed})
        return True

    def _tag_row(self, name: str) -> tuple[int, str] | None:
        row = self.conn.execute("SELECT id, name FROM tags WHERE name = ?", (name,)).fetchone()
        return None if row is None else (int(row[0]), _as_text(row[1]))

    def _tag(self, name: str, add: dict[str, float]) -> bool:
        if not add:
            return True
        found = self._tag_row(name)
        if found is None:
            cur = self.conn.execute("INSERT INTO tags(name) VALUES (?)", (name,))
            assert cur.lastrowid is not None
            found = (cur.lastrowid, name)
            self.dirty = True
        tag_id, stored = found
        added: list[str] = []
        for pid, when in add.items():
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO paper_tags(paper_id, tag_id, added_at) VALUES (?, ?, ?)",
                (pid, tag_id, when),
            )
            if cur.rowcount:
                added.append(pid)
        if added:
            self._done("tags", added, {"op": "untag", "name": stored, "ids": added})
        return True

    def _untag(self, name: str, ids: list[str]) -> bool:
        found = self._tag_row(name)
        if found is None:
            return True
        tag_id, stored = found
        removed: dict[str, float] = {}
        for pid in ids:
            row = self.conn.execute(
                "SELECT added_at FROM paper_tags WHERE paper_id = ? AND tag_id = ?", (pid, tag_id)
            ).fetchone()
            if row is not None:
                self.conn.execute(
                    "DELETE FROM paper_tags WHERE paper_id = ? AND tag_id = ?", (pid, tag_id)
                )
                removed[pid] = _as_time(row[0])
        # A tag lives while a paper has it.
        if not self.conn.execute("SELECT 1 FROM paper_tags WHERE tag_id = ?", (tag_id,)).fetchone():
            self.conn.execute("DELETE FROM tags WHERE id = ?", (tag_id,))
            self.dirty = True
            self.facts.add("tags")
        if removed:
            self._done("tags", removed, {"op": "tag", "name": stored, "add": removed})
        return True

    def _retag(self, old: str, new: str) -> bool:
        found = self._tag_row(old)
        if found is None:
            return False
        tag_id, stored = found
        other = self._tag_row(new)
        if other is not None and other[0] != tag_id:  # someone made `new` meanwhile: merge
            rows = dict(
                self.conn.execute(
                    "SELECT paper_id, added_at FROM paper_tags WHERE tag_id = ?", (tag_id,)
                ).fetchall()
            )
            self._tag(other[1], rows)
            self._untag(stored, list(rows))
            return True
        if stored == new:
            return True
        self.conn.execute("UPDATE tags SET name = ? WHERE id = ?", (new, tag_id))
        ids = [
            _as_text(r[0])
            for r in self.conn.execute(
                "SELECT paper_id FROM paper_tags WHERE tag_id = ?", (tag_id,)
            )
        ]
        self._done("tags", ids, {"op": "retag", "old": new, "new": stored})
        return True

    def _note(self, pid: str, body: str | None, expect: str | _Unchecked | None) -> bool:
        row = self.conn.execute("SELECT body FROM notes WHERE paper_id = ?", (pid,)).fetchone()
        current = None if row is None else _as_text(row[0])
        if expect is not UNCHECKED and sanitise(current or "") != sanitise(expect or ""):
            return False
        if body is not None and not body.strip():
            body = None
        if body == current:
            return True
        if body is None:
            self.conn.execute("DELETE FROM notes WHERE paper_id = ?", (pid,))
        else:
            self.conn.execute(
                "INSERT INTO notes(paper_id, body, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT(paper_id) DO UPDATE SET body = excluded.body,"
                " updated_at = excluded.updated_at",
                (pid, body, time.time()),
            )
        self._done("notes", [pid], {"op": "note", "id": pid, "body": current, "expect": body})
        return True

    def _meta(self, pid: str, row: list[Any] | None, expect: Any) -> bool:
        found = self.conn.execute(
            "SELECT title, authors, url, doi, year FROM metadata WHERE paper_id = ?", (pid,)
        ).fetchone()
        current = None if found is None else list(found)
        if expect is not UNCHECKED and current != expect:
            return False
        if row == current:
            return True
        if row is None:
            self.conn.execute("DELETE FROM metadata WHERE paper_id = ?", (pid,))
        else:
            self.conn.execute(
                "INSERT INTO metadata(paper_id, title, authors, url, doi, year, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(paper_id) DO UPDATE SET"
                " title = excluded.title, authors = excluded.authors, url = excluded.url,"
                " doi = excluded.doi, year = excluded.year, updated_at = excluded.updated_at",
                (pid, *row, time.time()),
            )
        self._done("meta", [pid], {"op": "meta", "id": pid, "row": current, "expect": row})
        return True


@dataclass(frozen=True, slots=True)
class _Undoable:
    what: str
    inverse: list[Op]  # in the order to apply


# ---------------------------------------------------------------------------------------
# The library
# ---------------------------------------------------------------------------------------


class Library:
    """One open library file. Reads come from ``snapshot``; writes are delta transactions.

    Thread-safe: writes, ``refresh`` and ``undo`` take one lock, so the reader may write
    from a worker thread while its UI thread polls ``refresh``."""

    def __init__(self, path: Path | str | None, *, backups: bool = True) -> None:
        self.path = Path(path) if path is not None else None
        self.read_only = False
        self.problem: str | None = None  #: why the library is read-only, one line
        self._backups = backups
        self._lock = threading.RLock()
        self._origin = uuid.uuid4().hex
        self._undo: list[_Undoable] = []
        self._own_writes = 0
        self._seen_writes = 0
        self.snapshot = Snapshot()
        self.conn = self._open()
        self._data_version = self._read_data_version()
        self._seq = self._last_seq()
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
            if _is_busy(exc):
                raise self._busy() from None
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
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
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
    def _shown_path(self) -> str:
        return escape_for_terminal(str(self.path)) if self.path is not None else "the library"

    def _busy(self) -> LibraryBusy:
        return LibraryBusy(
            f"library busy: another program is writing to {self._shown_path()}; gave up after "
            f"{BUSY_TIMEOUT_MS / 1000:g} s and changed nothing"
        )

    def _failed(self, exc: sqlite3.Error) -> LibraryError:
        """One honest line for a write SQLite refused (the transaction is rolled back)."""
        if _is_busy(exc):
            return self._busy()
        code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
        where = self._shown_path()
        if code == sqlite3.SQLITE_FULL:
            return LibraryError(f"{where}: the disk is full; nothing was changed")
        if code == sqlite3.SQLITE_READONLY:
            return ReadOnlyLibrary(f"{where}: the library cannot be written; nothing was changed")
        if code == sqlite3.SQLITE_IOERR:
            return LibraryError(
                f"{where}: cannot write (disk I/O error: is the disk full?); nothing was changed"
            )
        return LibraryError(f"{where}: cannot write ({exc}); nothing was changed")

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise ReadOnlyLibrary(self.problem or "the library is read-only")
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._failed(exc) from None
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            # SQLite may have rolled back already (a full disk does): never leave one open,
            # never let "cannot rollback - no transaction is active" hide the real problem.
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise self._failed(exc) from None
            raise

    def _transact(
        self, what: str, build: Callable[[_Change], None], *, undoable: bool = True
    ) -> _Change:
        """Run ``build`` (which applies deltas) in one transaction, log it, remember its
        inverse for ``undo`` and reload the snapshot."""
        with self._lock:
            with self._write() as conn:
                change = _Change(conn)
                build(change)
                if change.inverse:
                    self._log(conn, what, change)
            if change.inverse and undoable:
                self._undo.append(_Undoable(what, list(reversed(change.inverse))))
            if change.dirty:
                self._own_writes += 1
                self.reload()
            return change

    def _log(self, conn: sqlite3.Connection, what: str, change: _Change) -> None:
        cur = conn.execute(
            "INSERT INTO changes(at, facts, paper_ids, inverse, origin, what)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                time.time(),
                ",".join(sorted(change.facts)),
                json.dumps(sorted(change.ids)),
                json.dumps(list(reversed(change.inverse))),
                self._origin,
                what,
            ),
        )
        seq = cur.lastrowid or 0
        if seq % 500 == 0:
            conn.execute("DELETE FROM changes WHERE seq <= ?", (seq - CHANGES_KEPT,))

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading --------------------------------------------------------------------------
    def _read_data_version(self) -> int:
        try:
            return int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error:
            return 0

    def _last_seq(self) -> int:
        try:
            row = self.conn.execute("SELECT max(seq) FROM changes").fetchone()
        except sqlite3.Error:
            return 0
        return int(row[0] or 0)

    def reload(self) -> Snapshot:
        """Read the whole library into a new ``snapshot``."""
        with self._lock:
            snap = Snapshot()
            conn = self.conn
            try:
                snap.bookmarks = {
                    _as_text(pid): _as_time(at)
                    for pid, at in conn.execute("SELECT paper_id, created_at FROM bookmarks")
                }
                snap.read = {
                    _as_text(pid): _as_time(at)
                    for pid, at in conn.execute("SELECT paper_id, read_at FROM read_marks")
                }
                for paper_id, name in conn.execute(
                    "SELECT pt.paper_id, t.name FROM paper_tags pt JOIN tags t ON t.id = pt.tag_id"
                    " ORDER BY t.name COLLATE NOCASE"
                ):
                    snap.tags.setdefault(_as_text(paper_id), []).append(sanitise(_as_text(name)))
                snap.notes = {
                    _as_text(pid): sanitise(_as_text(body))
                    for pid, body in conn.execute("SELECT paper_id, body FROM notes")
                }
                for row in conn.execute(
                    "SELECT paper_id, title, authors, url, doi, year FROM metadata"
                ):
                    snap.metadata[_as_text(row[0])] = (
                        Metadata(  # sanitised again: the file may come from elsewhere
                            _clean_field(row[1]),
                            tuple(a for a in map(_clean_field, _json_list(row[2])) if a),
                            _clean_field(row[3]),
                            _clean_field(row[4]),
                            row[5] if isinstance(row[5], int) else None,
                        )
                    )
                snap.settings = {
                    _as_text(k): _as_text(v)
                    for k, v in conn.execute("SELECT key, value FROM settings")
                }
                snap.tag_names = [
                    sanitise(_as_text(r[0]))
                    for r in conn.execute("SELECT name FROM tags ORDER BY name COLLATE NOCASE")
                ]
            except sqlite3.Error as exc:
                if not self.read_only:
                    raise LibraryError(
                        f"{self._shown_path()}: cannot read the library ({exc})"
                    ) from exc
            self.snapshot = snap
            return snap

    def refresh(self) -> frozenset[Fact]:
        """Catch up with changes made since the last call, here or by other processes.

        Returns the facts that changed (empty when nothing did). Cheap when nothing changed:
        one ``PRAGMA data_version`` and a counter, no table reads — poll it about once a
        second. When something changed, ``snapshot`` is replaced by a fresh one."""
        with self._lock:
            version = self._read_data_version()
            if version == self._data_version and self._own_writes == self._seen_writes:
                return frozenset()
            facts: set[Fact] = set()
            try:
                rows = self.conn.execute(
                    "SELECT seq, facts FROM changes WHERE seq > ? ORDER BY seq", (self._seq,)
                ).fetchall()
            except sqlite3.Error:
                rows = []
            for seq, names in rows:
                self._seq = max(self._seq, int(seq))
                facts |= _as_facts(names)
            if version != self._data_version:
                old = self.snapshot
                try:
                    self.reload()
                except LibraryError:
                    return frozenset()
                facts |= changed_facts(old, self.snapshot)  # writers that do not log
            self._data_version = version
            self._seen_writes = self._own_writes
            return frozenset(facts)

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

    # -- writing: every write is a delta ----------------------------------------------------
    def set_bookmark(self, paper_ids: Iterable[str], on: bool = True) -> None:
        """Bookmark (``on``) or clear the bookmark of these papers."""
        self._set_mark("bookmarks", paper_ids, on)

    def set_read(self, paper_ids: Iterable[str], on: bool = True) -> None:
        """Mark these papers read (``on``) or unread."""
        self._set_mark("read_marks", paper_ids, on)

    def _set_mark(self, table: str, paper_ids: Iterable[str], on: bool) -> None:
        ids = list(dict.fromkeys(paper_ids))
        now = time.time()
        if table == "bookmarks":
            what = f"bookmark {'on' if on else 'removal from'} {_papers(len(ids))}"
        elif len(ids) == 1:
            what = "read mark" if on else "unread mark"
        else:
            what = f"{'read' if on else 'unread'} marks on {_papers(len(ids))}"
        op: Op = (
            {"op": "mark", "table": table, "add": dict.fromkeys(ids, now)}
            if on
            else {"op": "unmark", "table": table, "ids": ids}
        )

        def build(change: _Change) -> None:
            change.apply(op)

        self._transact(what, build)

    def add_tags(self, paper_ids: Iterable[str], tags: Iterable[str]) -> None:
        ids = list(dict.fromkeys(paper_ids))
        names = _unique_tags(tags)
        now = time.time()
        noun = "tag" if len(names) == 1 else "tags"
        what = f"{noun} {_quoted(names)} added to {_papers(len(ids))}"

        def build(change: _Change) -> None:
            for name in names:
                change.apply({"op": "tag", "name": name, "add": dict.fromkeys(ids, now)})

        self._transact(what, build)

    def remove_tags(self, paper_ids: Iterable[str], tags: Iterable[str]) -> None:
        ids = list(dict.fromkeys(paper_ids))
        names = _unique_tags(tags)
        noun = "tag" if len(names) == 1 else "tags"
        what = f"{noun} {_quoted(names)} removed from {_papers(len(ids))}"

        def build(change: _Change) -> None:
            for name in names:
                change.apply({"op": "untag", "name": name, "ids": ids})

        self._transact(what, build)

    def set_tags(self, paper_id: str, tags: Iterable[str]) -> None:
        """Make one paper's tags exactly ``tags``: the tags it has *now* that are not wanted
        are removed, the missing ones added (deltas computed inside the transaction).

        Deprecated: a caller that read the tags earlier should send ``add_tags`` /
        ``remove_tags`` for what the user changed, so a tag added elsewhere meanwhile stays."""
        wanted = _unique_tags(tags)
        keys = {t.casefold() for t in wanted}
        now = time.time()

        def build(change: _Change) -> None:
            have = [
                _as_text(r[0])
                for r in change.conn.execute(
                    "SELECT t.name FROM paper_tags pt JOIN tags t ON t.id = pt.tag_id"
                    " WHERE pt.paper_id = ?",
                    (paper_id,),
                )
            ]
            for name in have:
                if name.casefold() not in keys:
                    change.apply({"op": "untag", "name": name, "ids": [paper_id]})
            for name in wanted:
                change.apply({"op": "tag", "name": name, "add": {paper_id: now}})

        self._transact("tags of 1 paper", build)

    def rename_tag(self, old: str, new: str, *, merge: bool = False) -> None:
        """Rename a tag on every paper. Renaming onto another existing tag raises
        ``TagExists`` unless ``merge`` (then the papers of ``old`` get ``new``)."""
        old_name, new_name = clean_tag(old), clean_tag(new)
        what = f"rename of tag {old_name!r} to {new_name!r}"

        def build(change: _Change) -> None:
            found = change._tag_row(old_name)
            if found is None:
                raise LibraryError(f"no tag named {old_name!r}")
            tag_id, stored = found
            target = change._tag_row(new_name)
            papers = dict(
                change.conn.execute(
                    "SELECT paper_id, added_at FROM paper_tags WHERE tag_id = ?", (tag_id,)
                ).fetchall()
            )
            if target is not None and target[0] != tag_id:
                if not merge:
                    raise TagExists(stored, target[1])
                change.apply({"op": "tag", "name": target[1], "add": papers})
                change.apply({"op": "untag", "name": stored, "ids": list(papers)})
            elif stored.casefold() == new_name.casefold():
                change.apply({"op": "retag", "old": stored, "new": new_name})
            else:  # as deltas, so undo touches only these papers
                change.apply({"op": "untag", "name": stored, "ids": list(papers)})
                change.apply({"op": "tag", "name": new_name, "add": papers})

        self._transact(what, build)

    def delete_tag(self, name: str) -> None:
        """Remove a tag from every paper."""
        tag = clean_tag(name)

        def build(change: _Change) -> None:
            found = change._tag_row(tag)
            if found is None:
                raise LibraryError(f"no tag named {tag!r}")
            ids = [
                _as_text(r[0])
                for r in change.conn.execute(
                    "SELECT paper_id FROM paper_tags WHERE tag_id = ?", (found[0],)
                )
            ]
            change.apply({"op": "untag", "name": found[1], "ids": ids})

        self._transact(f"deletion of tag {tag!r}", build)

    def set_note(
        self, paper_id: str, body: str, *, expected: str | _Unchecked | None = UNCHECKED
    ) -> None:
        """Set (or with a blank ``body``, clear) a paper's note.

        With ``expected`` (the note the edit started from; None or "" for none): if the
        stored note is another one, raise ``NoteConflict`` and write nothing."""
        op: Op = {"op": "note", "id": paper_id, "body": body}
        if expected is not UNCHECKED:
            op["expect"] = expected

        def build(change: _Change) -> None:
            if not change.apply(op):
                row = change.conn.execute(
                    "SELECT body FROM notes WHERE paper_id = ?", (paper_id,)
                ).fetchone()
                theirs = "" if row is None else sanitise(_as_text(row[0]))
                raise NoteConflict(paper_id, body, theirs)

        self._transact("note", build)

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
        row = None if clean.empty else _meta_row(clean)

        def build(change: _Change) -> None:
            change.apply({"op": "meta", "id": paper_id, "row": row})

        self._transact("metadata", build)

    def set_setting(self, key: str, value: str) -> None:
        """Settings (theme, last filter, …) are not library facts: not logged, not undone."""
        with self._lock:
            with self._write() as conn:
                conn.execute(
                    "INSERT INTO settings(key, value) VALUES (?, ?)"
                    " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )
            self.snapshot = _replace_settings(self.snapshot, key, value)

    # -- undo -----------------------------------------------------------------------------
    def undo(self) -> str | None:
        """Reverse the latest change made through this object, as deltas in one transaction.

        Returns what was undone ("bookmark on 3 papers", "note", …), or None when there is
        nothing to undo. Changes other processes made are never undone: a delta whose target
        was changed elsewhere since is skipped, and the description says so."""
        with self._lock:
            if not self._undo:
                return None
            entry = self._undo.pop()

            def build(change: _Change) -> None:
                for op in entry.inverse:
                    if not change.apply(op):
                        change.skipped = True

            try:
                change = self._transact(f"undo of {entry.what}", build, undoable=False)
            except LibraryError:
                self._undo.append(entry)  # not undone: the user may try again
                raise
            if not change.dirty:  # nothing left to undo here: show what is there instead
                self.reload()
            if change.skipped:
                return f"{entry.what} (in part: the rest was changed elsewhere since)"
            return entry.what

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

        def build(change: _Change) -> None:
            nonlocal touched
            conn = change.conn
            for pid, entry in papers.items():
                if not isinstance(pid, str) or not isinstance(entry, dict):
                    continue
                touched += 1
                if "bookmarked_at" in entry:
                    when = _number(entry["bookmarked_at"], pid, "bookmarked_at")
                    change.apply({"op": "mark", "table": "bookmarks", "add": {pid: when}})
                if "read_at" in entry:
                    when = _number(entry["read_at"], pid, "read_at")
                    change.apply({"op": "mark", "table": "read_marks", "add": {pid: when}})
                tags = entry.get("tags", []) or []
                if not isinstance(tags, list):
                    raise LibraryError(f"paper {pid}: 'tags' must be a list")
                for raw in tags:
                    try:
                        name = clean_tag(str(raw))
                    except LibraryError as exc:
                        raise LibraryError(f"paper {pid}: {exc}") from None
                    change.apply({"op": "tag", "name": name, "add": {pid: time.time()}})
                note = entry.get("note")
                if isinstance(note, str) and note.strip():
                    note = sanitise(note)
                    row = conn.execute(
                        "SELECT body FROM notes WHERE paper_id = ?", (pid,)
                    ).fetchone()
                    existing = None if row is None else _as_text(row[0])
                    body = note
                    if existing and existing != note and note not in existing:
                        body = existing + "\n\n" + note
                    elif existing:
                        body = existing
                    change.apply({"op": "note", "id": pid, "body": body})
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
                    new_row = [
                        _imported_text(meta, "title", old[0]),
                        json.dumps([c for a in authors if (c := _clean_field(str(a)))]),
                        _imported_text(meta, "url", old[2]),
                        _imported_text(meta, "doi", old[3]),
                        year,
                    ]
                    change.apply({"op": "meta", "id": pid, "row": new_row})
            settings = data.get("settings")
            if isinstance(settings, dict):
                for key, value in settings.items():
                    cur = conn.execute(
                        "INSERT OR IGNORE INTO settings VALUES (?, ?)", (str(key), str(value))
                    )
                    change.dirty = change.dirty or bool(cur.rowcount)

        self._transact(f"import of {_papers(len(papers))}", build)
        return touched


def _as_facts(names: object) -> set[Fact]:
    parts = set(_as_text(names).split(","))
    return {f for f in ALL_FACTS if f in parts}


def _is_busy(exc: sqlite3.Error) -> bool:
    code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _unique_tags(tags: Iterable[str]) -> list[str]:
    names: dict[str, str] = {}
    for raw in tags:
        name = clean_tag(raw)
        names.setdefault(name.casefold(), name)
    return list(names.values())


def _meta_row(meta: Metadata) -> list[Any]:
    return [meta.title, json.dumps(list(meta.authors)), meta.url, meta.doi, meta.year]


def _replace_settings(snap: Snapshot, key: str, value: str) -> Snapshot:
    return Snapshot(
        bookmarks=snap.bookmarks,
        read=snap.read,
        tags=snap.tags,
        notes=snap.notes,
        metadata=snap.metadata,
        settings={**snap.settings, key: value},
        tag_names=snap.tag_names,
    )


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


def _as_text(value: object) -> str:
    """A stored value as text, whatever another tool put there (BLOB, number, NULL)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _as_time(value: object) -> float:
    """A stored timestamp as a float (0.0 when it is not a finite number)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def _clean_field(value: object) -> str | None:
    if value is None:
        return None
    cleaned = " ".join(sanitise(_as_text(value)).split())
    return cleaned or None


def _json_list(raw: object) -> list[str]:
    try:
        value = json.loads(_as_text(raw) or "[]")
    except (json.JSONDecodeError, RecursionError):
        return []
    return [str(v) for v in value] if isinstance(value, list) else []
