"""The library file: schema and migrations, opening (or falling back to read-only), backups.

SQLite in WAL mode with ``synchronous=FULL``. The schema is versioned with ``PRAGMA
user_version``; each migration runs in a transaction after a ``VACUUM INTO`` backup. A
damaged or unwritable library is never deleted or overwritten: it opens read-only and says why.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..text import escape_for_terminal
from .model import LibraryBusy, is_busy

#: How long a write waits for another process's write lock before giving up (LibraryBusy).
BUSY_TIMEOUT_MS = 2_500
BACKUPS_KEPT = 5
BACKUP_INTERVAL_S = 24 * 3600

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


@dataclass(slots=True)
class Opened:
    """A connection to the library, and whether (and why) it is read-only."""

    conn: sqlite3.Connection
    read_only: bool = False
    problem: str | None = None  #: why the library is read-only, one line


def shown(path: Path | None) -> str:
    """A path for a one-line message (control characters escaped)."""
    return escape_for_terminal(str(path)) if path is not None else "the library"


def busy_error(path: Path | None) -> LibraryBusy:
    return LibraryBusy(
        f"library busy: another program is writing to {shown(path)}; gave up after "
        f"{BUSY_TIMEOUT_MS / 1000:g} s and changed nothing"
    )


def open_library(path: Path | None, *, backups: bool = True) -> Opened:
    """Open (creating or migrating) the library at ``path``; in memory when None."""
    if path is None:
        return Opened(memory())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _fallback(path, f"cannot create {path.parent}: {exc.strerror or exc}")
    if path.is_dir():
        return _fallback(path, "is a directory, not a library file")
    exists = path.exists()
    if exists and not os.access(path, os.W_OK):
        return _open_read_only(path, "the library file is not writable")
    if not exists and not os.access(path.parent, os.W_OK):
        return _fallback(path, f"cannot write in {path.parent}")
    try:
        conn = connect(path)
        # Look before changing anything: a damaged or newer file is left byte for byte.
        check = conn.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != "ok":
            conn.close()
            return _open_read_only(path, "the library file failed its integrity check")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            conn.close()
            return _open_read_only(
                path,
                f"its schema version {version} is newer than this abstract-reader knows "
                f"({SCHEMA_VERSION})",
            )
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        migrate(conn, path, daily=backups)
        return Opened(conn)
    except sqlite3.DatabaseError as exc:
        if is_busy(exc):
            raise busy_error(path) from None
        return _open_read_only(path, f"the library file is damaged ({exc})")
    except OSError as exc:
        return _fallback(path, f"cannot open the library: {exc.strerror or exc}")


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(
        path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
    )
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def memory() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn, None, daily=False)
    return conn


def _fallback(path: Path, reason: str) -> Opened:
    """Nothing can be read or written at the location: an empty, read-only library."""
    problem = f"{shown(path)}: {reason}; the library is read-only for this session"
    return Opened(memory(), read_only=True, problem=problem)


def _open_read_only(path: Path, reason: str) -> Opened:
    """Keep the file as it is; read what can be read."""
    problem = (
        f"{shown(path)}: {reason}; it was kept unchanged and opened "
        "read-only (changes will not be saved)"
    )
    try:
        uri = f"file:{path}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        if version != SCHEMA_VERSION:  # cannot migrate a file we may not write
            conn.close()
            conn = memory()
    except sqlite3.Error:
        conn = memory()
    return Opened(conn, read_only=True, problem=problem)


def migrate(conn: sqlite3.Connection, backup_path: Path | None, *, daily: bool) -> None:
    """Bring the schema up to date, backing up ``backup_path`` first (and with ``daily``, once
    a day when there is nothing to migrate)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise sqlite3.DatabaseError(
            f"schema version {version} is newer than this abstract-reader knows"
        )
    if version == SCHEMA_VERSION:
        if backup_path is not None and daily:
            daily_backup(conn, backup_path)
        return
    if backup_path is not None and version > 0:
        backup(conn, backup_path, reason=f"v{version}")
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


def backup_files(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".backup-*"))


def daily_backup(conn: sqlite3.Connection, path: Path) -> None:
    files = backup_files(path)
    if files and time.time() - files[-1].stat().st_mtime < BACKUP_INTERVAL_S:
        return
    empty = conn.execute(
        "SELECT (SELECT count(*) FROM bookmarks) + (SELECT count(*) FROM paper_tags)"
        " + (SELECT count(*) FROM notes) + (SELECT count(*) FROM read_marks)"
    ).fetchone()[0]
    if empty:
        backup(conn, path, reason="daily")


def backup(conn: sqlite3.Connection, path: Path, reason: str) -> None:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.parent / f"{path.name}.backup-{stamp}-{reason}"
    try:
        conn.execute("VACUUM INTO ?", (str(target),))
    except sqlite3.Error:
        return
    for old in backup_files(path)[:-BACKUPS_KEPT]:
        with contextlib.suppress(OSError):
            old.unlink()
