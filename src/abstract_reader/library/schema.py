"""The library file: schema and migrations, opening (or falling back to read-only), backups.

SQLite in WAL mode with ``synchronous=FULL``. The schema is versioned with ``PRAGMA
user_version``; each migration runs in a transaction after a ``VACUUM INTO`` backup. A
damaged or unwritable library is never deleted or overwritten: it opens read-only and says why.
"""

from __future__ import annotations

import contextlib
import glob
import math
import os
import random
import re
import sqlite3
import stat
import time
import urllib.parse
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..paths import make_private_dir
from ..text import escape_for_terminal
from .model import LibraryBusy, is_busy

#: How long a write waits for another process's write lock before giving up (LibraryBusy):
#: long, because giving up loses the user's action; writes take milliseconds, so only a lock
#: held by a stuck program (an open transaction in an ``sqlite3`` shell) waits this long.
#: ``ABSTRACT_READER_BUSY_TIMEOUT`` (seconds) overrides it.
BUSY_TIMEOUT_MS = 30_000
#: The reader's wait: it writes on its UI thread, so the screen does not answer while it
#: waits; it gives up sooner and tries the change once more a moment later (``_write`` in
#: ``tui/screens/main.py``). ``ABSTRACT_READER_BUSY_TIMEOUT`` overrides this one too.
READER_BUSY_TIMEOUT_MS = 2_500
#: Between two tries to take the write lock, at most this long (plus jitter).
BUSY_POLL_MAX_S = 0.01
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
    #: the file did not exist, or held no library (0 bytes, or SQLite without a table: a
    #: library truncated to nothing): this open made a new, empty library
    created: bool = False


def shown(path: Path | None) -> str:
    """A path for a one-line message (control characters escaped)."""
    return escape_for_terminal(str(path)) if path is not None else "the library"


def busy_timeout_s(default_ms: int = BUSY_TIMEOUT_MS) -> float:
    """How long to wait for another writer: ``ABSTRACT_READER_BUSY_TIMEOUT`` seconds, or
    ``default_ms``."""
    raw = os.environ.get("ABSTRACT_READER_BUSY_TIMEOUT")
    if raw:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    return default_ms / 1000


def busy_error(path: Path | None, timeout: float) -> LibraryBusy:
    return LibraryBusy(
        f"library busy: another program is writing to {shown(path)}; gave up after "
        f"{timeout:g} s and changed nothing"
    )


def begin_write(conn: sqlite3.Connection, timeout: float) -> None:
    """``BEGIN IMMEDIATE``, waiting up to ``timeout`` seconds while another connection holds
    the write lock.

    SQLite's own busy handler sleeps longer and longer between tries (100 ms after the first
    quarter second), while a writer that just committed takes the lock again at once: under
    a stream of another process's writes a waiting write saw the lock free too rarely and
    gave up (a lost bookmark). Here the lock is tried every few milliseconds (with jitter),
    so a write gets in between two of the other's within milliseconds."""
    deadline = time.monotonic() + timeout
    pause = 0.0005
    conn.execute("PRAGMA busy_timeout = 0")  # each try returns at once; this loop waits
    try:
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.Error as exc:
                left = deadline - time.monotonic()
                if not is_busy(exc) or left <= 0:
                    raise
            time.sleep(min(left, pause * random.uniform(0.5, 1.5)))
            pause = min(pause * 2, BUSY_POLL_MAX_S)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {round(timeout * 1000)}")


def open_library(
    path: Path | None, *, backups: bool = True, busy_timeout: float | None = None
) -> Opened:
    """Open (creating or migrating) the library at ``path``; in memory when None.

    Read-only is decided *before* any read-write open: an existing file is first looked at
    through a read-only connection (``quick_check``, schema version), because closing a
    read-write connection checkpoints a leftover ``-wal`` into the main file — a damaged
    library would be changed while the message says it was kept."""
    if path is None:
        return Opened(memory())
    timeout = busy_timeout_s() if busy_timeout is None else busy_timeout
    try:
        st: os.stat_result | None = os.stat(path)  # follows links; never opens (a FIFO waits)
    except FileNotFoundError:
        st = None
        if os.path.islink(path):
            target = escape_for_terminal(os.readlink(path))
            return _fallback(path, f"is a symbolic link to {target}, which does not exist")
    except OSError as exc:
        return _fallback(path, f"cannot look at it ({exc.strerror or exc})")
    if st is None:
        return _create(path, backups=backups, timeout=timeout)
    if stat.S_ISDIR(st.st_mode):
        return _fallback(path, "is a directory, not a library file")
    if not stat.S_ISREG(st.st_mode):
        return _fallback(path, f"is {_kind(st.st_mode)}, not a library file")
    try:
        probe, check, version = _probe(path, timeout)
    except sqlite3.Error as exc:
        return _open_read_only(path, _reason(exc, timeout), timeout=timeout)
    if check is None or check[0] != "ok":
        detail = escape_for_terminal(str(check[0]) if check else "no answer")[:120]
        return _open_read_only(
            path, f"it failed its integrity check ({detail})", probe, timeout=timeout
        )
    if version > SCHEMA_VERSION:
        return _open_read_only(
            path,
            f"made by a newer abstract-reader (schema {version}; this one knows {SCHEMA_VERSION})",
            probe,
            timeout=timeout,
        )
    if not os.access(path, os.W_OK):
        return _open_read_only(path, "the file is not writable", probe, timeout=timeout)
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return _open_read_only(
            path,
            f"its folder {shown(path.parent)} is not writable (SQLite keeps its journal "
            "next to the library)",
            probe,
            timeout=timeout,
        )
    try:  # (a file of 0 bytes is an empty SQLite database: a new library, to be said)
        empty = version == 0 and not probe.execute("SELECT 1 FROM sqlite_master").fetchone()
    except sqlite3.Error:
        empty = False
    probe.close()
    conn: sqlite3.Connection | None = None
    try:
        conn = connect(path, timeout)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        migrate(conn, path, daily=backups, timeout=timeout)
    except sqlite3.Error as exc:
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        return _open_read_only(path, _reason(exc, timeout), timeout=timeout)
    return Opened(conn, created=empty)


def _probe(path: Path, timeout: float) -> tuple[sqlite3.Connection, tuple[object, ...] | None, int]:
    """Look at an existing file through a read-only connection: (connection, quick_check's
    first row, schema version). A WAL library in a folder we cannot write (no ``-shm`` can be
    made) is looked at as an immutable file."""
    last: sqlite3.Error | None = None
    for immutable in (False, True):
        conn: sqlite3.Connection | None = None
        try:
            conn = _connect_read_only(path, timeout, immutable=immutable)
            check = conn.execute("PRAGMA quick_check").fetchone()
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            return conn, check, version
        except sqlite3.Error as exc:
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
            if code not in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN):
                raise
            last = exc
    assert last is not None
    raise last


def _create(path: Path, *, backups: bool, timeout: float) -> Opened:
    """A new library file (and its folder, private to the user)."""
    try:
        make_private_dir(path.parent)
    except OSError as exc:
        return _fallback(path, f"cannot create {shown(path.parent)} ({exc.strerror or exc})")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return _fallback(path, f"cannot create it: {shown(path.parent)} is not writable")
    try:
        conn = connect(path, timeout)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        migrate(conn, path, daily=backups, timeout=timeout)
    except sqlite3.Error as exc:
        return _fallback(path, f"cannot create it ({_reason(exc, timeout)})")
    return Opened(conn, created=True)


_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _reason(exc: sqlite3.Error, timeout: float) -> str:
    """What an SQLite error says about the file, in a few words."""
    code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
    detail = escape_for_terminal(str(exc))
    if is_busy(exc):
        return f"library busy: another program held its lock for more than {timeout:g} s"
    if code == sqlite3.SQLITE_FULL:
        return "the disk is full"
    if code == sqlite3.SQLITE_IOERR:
        return "a disk I/O error (is the disk full?)"
    if code == sqlite3.SQLITE_READONLY:
        return f"it cannot be written ({detail})"
    if code == sqlite3.SQLITE_CANTOPEN:
        return f"it cannot be opened ({detail})"
    if code == sqlite3.SQLITE_PERM:
        return "permission denied"
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return f"the file is damaged ({detail})"
    return detail


def _uri(path: Path, query: str) -> str:
    """A ``file:`` URI naming exactly ``path`` (``#``, ``?``, ``%`` … quoted)."""
    return "file:" + urllib.parse.quote(os.path.abspath(path)) + "?" + query


def _connect_read_only(
    path: Path, timeout: float, *, immutable: bool = False
) -> sqlite3.Connection:
    query = "mode=ro&immutable=1" if immutable else "mode=ro"
    conn = sqlite3.connect(
        _uri(path, query),
        uri=True,
        isolation_level=None,
        timeout=timeout,
        check_same_thread=False,
    )
    conn.execute(f"PRAGMA busy_timeout = {round(timeout * 1000)}")
    return conn


def connect(path: Path, timeout: float) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=timeout, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {round(timeout * 1000)}")
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


def _open_read_only(
    path: Path, reason: str, conn: sqlite3.Connection | None = None, *, timeout: float
) -> Opened:
    """Keep the file as it is; read what can be read (through a read-only connection)."""
    problem = f"{shown(path)}: {reason}; it was kept unchanged and opened read-only"
    if conn is None:
        for immutable in (False, True):  # immutable: no -shm needed (an unwritable folder)
            try:
                conn = _connect_read_only(path, timeout, immutable=immutable)
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                break
            except sqlite3.Error:
                if conn is not None:
                    with contextlib.suppress(sqlite3.Error):
                        conn.close()
                conn = None
    if conn is None:
        return Opened(memory(), read_only=True, problem=problem)
    return Opened(conn, read_only=True, problem=problem)


def migrate(
    conn: sqlite3.Connection, backup_path: Path | None, *, daily: bool, timeout: float = 0.0
) -> None:
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
        begin_write(conn, timeout)
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
    """The library's backups, oldest first (the name is escaped: ``lib[1].sqlite3``)."""
    found = path.parent.glob(glob.escape(path.name) + ".backup-*")
    return sorted(p for p in found if _BACKUP_SUFFIX.fullmatch(p.name[len(path.name) :]))


_BACKUP_SUFFIX = re.compile(r"\.backup-\d{8}T\d{12}Z-[\w.-]+")


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
    """A copy of the library next to it (``VACUUM INTO``) with the library's permissions;
    then only the newest ``BACKUPS_KEPT`` are kept. A failed copy leaves nothing behind."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.parent / f"{path.name}.backup-{stamp}-{reason}"
    try:
        conn.execute("VACUUM INTO ?", (str(target),))
        os.chmod(target, stat.S_IMODE(os.stat(path).st_mode))
    except (sqlite3.Error, OSError):
        with contextlib.suppress(OSError):
            target.unlink()
        return
    for old in backup_files(path)[:-BACKUPS_KEPT]:
        with contextlib.suppress(OSError):
            old.unlink()
