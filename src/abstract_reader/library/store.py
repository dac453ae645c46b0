"""The store: every write is a delta in one transaction, logged with its inverse; refresh and
undo per ``Library`` object.

Every write is a *delta* (add these tags to these papers, clear this bookmark, …) applied
inside one ``BEGIN IMMEDIATE … COMMIT`` transaction (a deferred transaction that upgrades to a
write fails with "database is locked" under two writers), never a whole set read earlier. Each
write appends a row to the ``changes`` log in the same transaction: which facts it touched,
which papers, and the deltas that invert it. The log serves ``refresh`` (which facts changed
since the last look) and the per-object undo stack.

Everything is keyed by paper id; records of papers that are not loaded now are kept.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..facts import Fact
from ..metadata import PROVENANCE_PREFIX
from ..plural import noun_for, papers_phrase
from ..text import sanitise
from ..text.sanitise import valid_text
from .model import (
    UNCHECKED,
    LibraryError,
    Metadata,
    MetadataConflict,
    MetadataSection,
    NoteConflict,
    ReadOnlyLibrary,
    Snapshot,
    TagExists,
    Unchecked,
    as_facts,
    as_text,
    as_time,
    changed_facts,
    clean_field,
    clean_tag,
    is_busy,
    json_list,
    metadata_of_row,
)
from .schema import backup, begin_write, busy_error, busy_timeout_s, open_library, shown

if TYPE_CHECKING:
    from .interchange import Imported

#: Rows of the change log kept (older ones are pruned as new ones arrive).
CHANGES_KEPT = 10_000
#: After a change to at most this many papers only their rows are read again; after a
#: bigger one, the whole sections it touched.
PATCH_MAX = 2_000
#: The ``facts`` of a change-log row that names the settings a transaction wrote (their keys
#: in ``paper_ids``): not a library fact, so `as_facts` (and a reader from before) skips it.
SETTINGS_LOGGED = "settings"
#: The origin of every writer that logs its settings so begins; a row of another origin (a
#: reader from before) may have come with settings written unlogged: all are read again.
_LOGS_SETTINGS = "s1:"
#: This connection's writes to the settings table, whoever makes them (an import writes
#: settings in its transaction), as temp triggers note them: a write reads back only those.
#: (No UNIQUE in the temp table: the outer statement's conflict policy would be the
#: trigger's, so an upsert's OR IGNORE would not hold; the names resolve to temp first.)
_SETTINGS_TRIGGERS = (
    "CREATE TEMP TABLE IF NOT EXISTS settings_written(key)",
    "CREATE TEMP TRIGGER IF NOT EXISTS settings_inserted AFTER INSERT ON main.settings"
    " BEGIN INSERT INTO settings_written VALUES (new.key); END",
    "CREATE TEMP TRIGGER IF NOT EXISTS settings_updated AFTER UPDATE ON main.settings"
    " BEGIN INSERT INTO settings_written VALUES (old.key), (new.key); END",
    "CREATE TEMP TRIGGER IF NOT EXISTS settings_deleted AFTER DELETE ON main.settings"
    " BEGIN INSERT INTO settings_written VALUES (old.key); END",
)


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
#:   {"op": "retime", "name": tag, "at": {paper id: time}}  (when papers that have the tag got it)
#:   {"op": "retag", "old": tag, "new": tag}                (a rename that changes only case)
#:   {"op": "note", "id": paper id, "body": text|None, ["expect": text|None]}
#:   {"op": "meta", "id": paper id, "row": [title, authors, url, doi, year]|None, ["expect": …]}
#: ``expect``: apply only if the stored value is this one (else the delta is skipped).
Op = dict[str, Any]

_MARK_FACT: dict[str, Fact] = {"bookmarks": "bookmarks", "read_marks": "read"}
_MARK_TIME = {"bookmarks": "created_at", "read_marks": "read_at"}
#: The value columns of the tables with one row per paper that a delta replaces whole.
_ROW_COLUMNS: dict[str, tuple[str, ...]] = {
    "notes": ("body",),
    "metadata": ("title", "authors", "url", "doi", "year"),
}


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
        if kind == "retime":
            return self._retime(op["name"], op["at"])
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
                removed[pid] = as_time(row[0])
        if removed:
            self._done(_MARK_FACT[table], removed, {"op": "mark", "table": table, "add": removed})
        return True

    def _tag_row(self, name: str) -> tuple[int, str] | None:
        row = self.conn.execute("SELECT id, name FROM tags WHERE name = ?", (name,)).fetchone()
        return None if row is None else (int(row[0]), as_text(row[1]))

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
                removed[pid] = as_time(row[0])
        # A tag lives while a paper has it.
        if not self.conn.execute("SELECT 1 FROM paper_tags WHERE tag_id = ?", (tag_id,)).fetchone():
            self.conn.execute("DELETE FROM tags WHERE id = ?", (tag_id,))
            self.dirty = True
            self.facts.add("tags")
        if removed:
            self._done("tags", removed, {"op": "tag", "name": stored, "add": removed})
        return True

    def _retime(self, name: str, at: dict[str, float]) -> bool:
        """Set when papers that have tag ``name`` got it; False when one no longer has it."""
        found = self._tag_row(name)
        if found is None:
            return not at
        tag_id, stored = found
        before: dict[str, float] = {}
        missing = False
        for pid, when in at.items():
            row = self.conn.execute(
                "SELECT added_at FROM paper_tags WHERE paper_id = ? AND tag_id = ?", (pid, tag_id)
            ).fetchone()
            if row is None:
                missing = True
            elif as_time(row[0]) != when:
                self.conn.execute(
                    "UPDATE paper_tags SET added_at = ? WHERE paper_id = ? AND tag_id = ?",
                    (when, pid, tag_id),
                )
                before[pid] = as_time(row[0])
        if before:
            self._done("tags", before, {"op": "retime", "name": stored, "at": before})
        return not missing

    def _merge_tag(self, tag_id: int, stored: str, target: tuple[int, str]) -> None:
        """Move every paper of tag ``stored`` to tag ``target`` (which exists): each keeps
        the time it got ``stored``, and a paper that had both keeps the later of the two,
        so a merge moves no paper in the "recently tagged" order."""
        times = self._times_of(tag_id)
        have = self._times_of(target[0])
        self._tag(target[1], {pid: at for pid, at in times.items() if pid not in have})
        later = {pid: at for pid, at in times.items() if pid in have and at > have[pid]}
        if later:
            self._retime(target[1], later)
        self._untag(stored, list(times))

    def _times_of(self, tag_id: int) -> dict[str, float]:
        """Paper id → when it got the tag, for every paper that has it."""
        return {
            as_text(pid): as_time(at)
            for pid, at in self.conn.execute(
                "SELECT paper_id, added_at FROM paper_tags WHERE tag_id = ?", (tag_id,)
            )
        }

    def _retag(self, old: str, new: str) -> bool:
        found = self._tag_row(old)
        if found is None:
            return False
        tag_id, stored = found
        other = self._tag_row(new)
        if other is not None and other[0] != tag_id:  # someone made `new` meanwhile: merge
            self._merge_tag(tag_id, stored, other)
            return True
        if stored == new:
            return True
        self.conn.execute("UPDATE tags SET name = ? WHERE id = ?", (new, tag_id))
        ids = list(self._times_of(tag_id))
        self._done("tags", ids, {"op": "retag", "old": new, "new": stored})
        return True

    def _note(self, pid: str, body: str | None, expect: str | Unchecked | None) -> bool:
        found = self._paper_row("notes", pid)
        current = None if found is None else as_text(found[0])
        if expect is not UNCHECKED and sanitise(current or "") != sanitise(expect or ""):
            return False
        if body is not None and not body.strip():
            body = None
        if body is not None:  # bytes that were not UTF-8 (an argument): stored as U+FFFD
            body = valid_text(body)
        if body != current:
            self._set_paper_row("notes", pid, None if body is None else [body])
            self._done("notes", [pid], {"op": "note", "id": pid, "body": current, "expect": body})
        return True

    def _meta(self, pid: str, row: list[Any] | None, expect: Any) -> bool:
        current = self._paper_row("metadata", pid)
        if expect is not UNCHECKED and current != expect:
            return False
        if row != current:
            self._set_paper_row("metadata", pid, row)
            self._done("meta", [pid], {"op": "meta", "id": pid, "row": current, "expect": row})
        return True

    def _paper_row(self, table: str, pid: str) -> list[Any] | None:
        """A paper's stored values in a one-row-per-paper table (``_ROW_COLUMNS``), or None."""
        columns = ", ".join(_ROW_COLUMNS[table])
        found = self.conn.execute(
            f"SELECT {columns} FROM {table} WHERE paper_id = ?", (pid,)
        ).fetchone()
        return None if found is None else list(found)

    def _set_paper_row(self, table: str, pid: str, values: list[Any] | None) -> None:
        """Store a paper's values in a one-row-per-paper table, stamped ``updated_at`` now;
        None deletes its row."""
        if values is None:
            self.conn.execute(f"DELETE FROM {table} WHERE paper_id = ?", (pid,))
            return
        columns = (*_ROW_COLUMNS[table], "updated_at")
        self.conn.execute(
            f"INSERT INTO {table}(paper_id, {', '.join(columns)})"
            f" VALUES (?, {', '.join('?' * len(columns))}) ON CONFLICT(paper_id) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in columns),
            (pid, *values, time.time()),
        )


@dataclass(frozen=True, slots=True)
class _Undoable:
    what: str
    inverse: list[Op]  # in the order to apply
    paper_ids: tuple[str, ...] = ()  # the papers the change touched


@dataclass(frozen=True, slots=True)
class Undone:
    """What `Library.undo_change` undid: its description and the papers it was on (sorted),
    so that a reader can name one by its title."""

    what: str
    paper_ids: tuple[str, ...]


# ---------------------------------------------------------------------------------------
# The library
# ---------------------------------------------------------------------------------------


class Library:
    """One open library file. Reads come from ``snapshot``; writes are delta transactions.

    Thread-safe: writes, ``refresh`` and ``undo`` take one lock, so the reader may write
    from a worker thread while its UI thread polls ``refresh``.

    A write waits up to ``busy_timeout`` seconds (default ``busy_timeout_s()``: 30) while
    another process writes, then raises ``LibraryBusy`` having changed nothing."""

    def __init__(
        self, path: Path | str | None, *, backups: bool = True, busy_timeout: float | None = None
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.busy_timeout = busy_timeout_s() if busy_timeout is None else busy_timeout
        self.read_only = False
        self.problem: str | None = None  #: why the library is read-only, one line
        self._backups = backups
        self._lock = threading.RLock()
        self._origin = _LOGS_SETTINGS + uuid.uuid4().hex
        self._undo: list[_Undoable] = []
        self._own_writes = 0
        self._seen_writes = 0
        self.snapshot = Snapshot()
        opened = open_library(self.path, backups=backups, busy_timeout=self.busy_timeout)
        self.conn = opened.conn
        self.read_only = opened.read_only
        self.problem = opened.problem
        #: this open made the file: a new, empty library (the caller may say so)
        self.created = opened.created
        self._data_version = self._read_data_version()
        self._seq = self._last_seq()
        self._settings_noted = not self.read_only and self._note_settings_writes()
        self.reload()

    def _note_settings_writes(self) -> bool:
        """Have this connection note the settings keys it writes (False: it cannot)."""
        try:
            for sql in _SETTINGS_TRIGGERS:
                self.conn.execute(sql)
        except sqlite3.Error:
            return False
        return True

    def _settings_written(self, conn: sqlite3.Connection) -> list[str] | None:
        """The settings keys this transaction wrote (logged, and forgotten here); None when
        they are not known (then every setting is read again)."""
        if not self._settings_noted:
            return None
        rows = conn.execute("SELECT DISTINCT key FROM temp.settings_written")
        keys = sorted({as_text(k) for (k,) in rows})
        if keys:
            conn.execute("DELETE FROM temp.settings_written")
            self._append_log(conn, SETTINGS_LOGGED, keys, [], "settings")
        return keys

    def _backup(self, conn: sqlite3.Connection, reason: str) -> None:
        if self.path is not None:
            backup(conn, self.path, reason)

    # -- transactions ---------------------------------------------------------------------
    def _shown_path(self) -> str:
        return shown(self.path)

    def _failed(self, exc: sqlite3.Error) -> LibraryError:
        """One honest line for a write SQLite refused (the transaction is rolled back)."""
        if is_busy(exc):
            return busy_error(self.path, self.busy_timeout)
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
            begin_write(conn, self.busy_timeout)
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
                keys = self._settings_written(conn)
            if change.inverse and undoable:
                self._undo.append(
                    _Undoable(what, list(reversed(change.inverse)), tuple(sorted(change.ids)))
                )
            if change.dirty or keys:
                self._own_writes += 1
                self._load(change.facts, change.ids, keys)
            return change

    def _log(self, conn: sqlite3.Connection, what: str, change: _Change) -> None:
        facts = ",".join(sorted(change.facts))
        inverse = list(reversed(change.inverse))
        self._append_log(conn, facts, sorted(change.ids), inverse, what)

    def _append_log(
        self, conn: sqlite3.Connection, facts: str, ids: list[str], inverse: list[Op], what: str
    ) -> None:
        cur = conn.execute(
            "INSERT INTO changes(at, facts, paper_ids, inverse, origin, what)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (time.time(), facts, json.dumps(ids), json.dumps(inverse), self._origin, what),
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
        """Read the whole library into a new ``snapshot``.

        Values are read defensively: another tool may have stored a BLOB note, a number as a
        title or NULLs; they are decoded or coerced, never trusted to be text. A read-only
        library (perhaps of another schema version) shows what each table still yields."""
        return self._load(None)

    def _load(
        self,
        facts: Iterable[Fact] | None,
        ids: Iterable[str] | None = None,
        settings: Iterable[str] | None = None,
    ) -> Snapshot:
        """A new snapshot with the sections of ``facts`` (every one when None) read again
        and the others shared with the current one. With ``ids``, only those papers' rows of
        those sections are read again (a write's papers). With ``settings`` (keys), only
        those settings are read again, else all of them (100,000 ``match`` provenances:
        ~200 ms, so a tag's write reads back its own rows only)."""
        keys = None if settings is None else sorted(set(settings))
        if facts is not None and ids is not None:
            id_list = sorted(set(ids))
            if len(id_list) <= PATCH_MAX:
                return self._patch(set(facts), id_list, keys)
        with self._lock:
            snap = dataclasses.replace(self.snapshot)  # sections shared until read again
            wanted = set(_READERS) if facts is None else set(facts)
            readers = [_READERS[f] for f in sorted(wanted)]
            readers.append(_read_settings if keys is None or facts is None else _settings(keys))
            for read in readers:
                try:
                    read(self.conn, snap)
                except sqlite3.Error as exc:
                    if not self.read_only:
                        raise LibraryError(
                            f"{self._shown_path()}: cannot read the library ({exc})"
                        ) from exc
            self.snapshot = snap
            return snap

    def _patch(self, facts: set[Fact], ids: list[str], keys: list[str] | None) -> Snapshot:
        with self._lock:
            snap = dataclasses.replace(self.snapshot)  # sections shared until read again
            try:
                for fact in sorted(facts):
                    _PATCHERS[fact](self.conn, snap, ids)
                if keys is None:
                    _read_settings(self.conn, snap)
                elif keys:
                    _patch_settings(self.conn, snap, keys)
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
            facts: set[Fact] = set()  # every change since the last look
            theirs: set[Fact] = set()  # … made by others: those sections are read again
            logged = False  # others logged their changes (else they are read whole)
            their_keys: set[str] | None = set()  # the settings others wrote (None: unknown)
            try:
                rows = self.conn.execute(
                    "SELECT seq, facts, origin, paper_ids FROM changes WHERE seq > ? ORDER BY seq",
                    (self._seq,),
                ).fetchall()
            except sqlite3.Error:
                rows = []
            their_ids: set[str] | None = set()
            for seq, names, origin, paper_ids in rows:
                self._seq = max(self._seq, int(seq))
                mine = origin == self._origin
                if names == SETTINGS_LOGGED:
                    keys = json_list(paper_ids)
                    if any(k.startswith(PROVENANCE_PREFIX) for k in keys):
                        facts.add("meta")  # (match's provenance gives the venue)
                    if not mine:
                        logged = True
                        if their_keys is not None:
                            their_keys.update(keys)
                    continue
                facts |= as_facts(names)
                if not mine:
                    logged = True
                    if not as_text(origin).startswith(_LOGS_SETTINGS):
                        their_keys = None  # a reader from before: its settings are not logged
                    theirs |= as_facts(names)
                    listed = json_list(paper_ids)
                    if their_ids is not None and (listed or not paper_ids):
                        their_ids.update(listed)
                    else:
                        their_ids = None  # unreadable: read the whole sections
            if version != self._data_version:  # another connection committed
                old = self.snapshot
                try:
                    if logged:
                        self._load(theirs, their_ids, their_keys)
                    else:  # … without logging (another tool): read it all
                        self._load(None)  # (even when this object wrote meanwhile)
                except LibraryError:
                    return frozenset()
                if not logged:
                    facts |= changed_facts(old, self.snapshot)
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

    def tag_names(self) -> list[str]:
        """The names of the tags papers have, each once, sorted (case-insensitively)."""
        names = dict.fromkeys(n for found in self.snapshot.tags.values() for n in found)
        return sorted(names, key=str.casefold)

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
    def set_bookmark(self, paper_ids: Iterable[str], on: bool = True) -> list[str]:
        """Bookmark (``on``) or clear the bookmark of these papers. Returns the papers whose
        bookmark changed (in the order given, once each): not those already in that state."""
        return self._set_mark("bookmarks", paper_ids, on)

    def set_read(self, paper_ids: Iterable[str], on: bool = True) -> list[str]:
        """Mark these papers read (``on``) or unread. Returns the papers whose mark changed,
        as ``set_bookmark``."""
        return self._set_mark("read_marks", paper_ids, on)

    def _set_mark(self, table: str, paper_ids: Iterable[str], on: bool) -> list[str]:
        ids = list(dict.fromkeys(paper_ids))
        now = time.time()
        if table == "bookmarks":
            what = f"bookmark {'on' if on else 'removal from'} {papers_phrase(len(ids))}"
        elif len(ids) == 1:
            what = "read mark" if on else "unread mark"
        else:
            what = f"{'read' if on else 'unread'} marks on {papers_phrase(len(ids))}"
        op: Op = (
            {"op": "mark", "table": table, "add": dict.fromkeys(ids, now)}
            if on
            else {"op": "unmark", "table": table, "ids": ids}
        )

        def build(change: _Change) -> None:
            change.apply(op)

        # (decided in the write's transaction: another process's mark a moment before counts)
        changed = self._transact(what, build).ids
        return [pid for pid in ids if pid in changed]

    def add_tags(self, paper_ids: Iterable[str], tags: Iterable[str]) -> None:
        ids = list(dict.fromkeys(paper_ids))
        names = _unique_tags(tags)
        now = time.time()
        what = f"{noun_for(len(names), 'tag')} {_quoted(names)} added to {papers_phrase(len(ids))}"

        def build(change: _Change) -> None:
            for name in names:
                change.apply({"op": "tag", "name": name, "add": dict.fromkeys(ids, now)})

        self._transact(what, build)

    def remove_tags(self, paper_ids: Iterable[str], tags: Iterable[str]) -> None:
        ids = list(dict.fromkeys(paper_ids))
        names = _unique_tags(tags)
        what = (
            f"{noun_for(len(names), 'tag')} {_quoted(names)} removed from {papers_phrase(len(ids))}"
        )

        def build(change: _Change) -> None:
            for name in names:
                change.apply({"op": "untag", "name": name, "ids": ids})

        self._transact(what, build)

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
            if target is not None and target[0] != tag_id:
                if not merge:
                    raise TagExists(stored, target[1])
                change._merge_tag(tag_id, stored, target)
            elif stored.casefold() == new_name.casefold():
                change.apply({"op": "retag", "old": stored, "new": new_name})
            else:  # as deltas, so undo touches only these papers; each keeps its time
                papers = change._times_of(tag_id)
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
                as_text(r[0])
                for r in change.conn.execute(
                    "SELECT paper_id FROM paper_tags WHERE tag_id = ?", (found[0],)
                )
            ]
            change.apply({"op": "untag", "name": found[1], "ids": ids})

        self._transact(f"deletion of tag {tag!r}", build)

    def set_note(
        self, paper_id: str, body: str, *, expected: str | Unchecked | None = UNCHECKED
    ) -> None:
        """Set (or with a blank ``body``, clear) a paper's note.

        With ``expected`` (the note the edit started from; None or "" for none): if the
        stored note is another one, raise ``NoteConflict`` and write nothing."""
        op: Op = {"op": "note", "id": paper_id, "body": body}
        if expected is not UNCHECKED:
            op["expect"] = expected

        def build(change: _Change) -> None:
            if not change.apply(op):
                row = change._paper_row("notes", paper_id)
                theirs = "" if row is None else sanitise(as_text(row[0]))
                raise NoteConflict(paper_id, body, theirs)

        self._transact("note", build)

    def set_metadata(
        self, paper_id: str, meta: Metadata, *, expected: Metadata | Unchecked = UNCHECKED
    ) -> None:
        """Set a paper's metadata (all of it: the caller merges fields).

        With ``expected`` (the metadata the caller last saw stored; empty for none): if the
        stored metadata, read as the snapshot reads it, is another, raise
        ``MetadataConflict`` and write nothing — in the write's own transaction, so no write
        from elsewhere can land between the check and the write."""
        if meta.year is not None and not 1000 <= meta.year <= 9999:
            raise LibraryError(f"year must have four digits ({meta.year} given)")
        clean = Metadata(
            title=clean_field(meta.title),
            authors=tuple(a for a in (clean_field(x) for x in meta.authors) if a),
            url=clean_field(meta.url),
            doi=clean_field(meta.doi),
            year=meta.year,
        )
        row = None if clean.empty else _meta_row(clean)

        def build(change: _Change) -> None:
            if not isinstance(expected, Unchecked):
                current = change._paper_row("metadata", paper_id)
                theirs = Metadata() if current is None else metadata_of_row((paper_id, *current))
                if theirs != expected:
                    raise MetadataConflict(paper_id, theirs)
            change.apply({"op": "meta", "id": paper_id, "row": row})

        self._transact("metadata", build)

    def set_setting(self, key: str, value: str) -> None:
        """Settings (theme, last filter, …) are not library facts: not undone; the log names
        only the key (a ``SETTINGS_LOGGED`` row), so other views read back only it."""
        key, value = valid_text(key), valid_text(value)  # (a name or query not UTF-8)
        with self._lock:
            with self._write() as conn:
                conn.execute(
                    "INSERT INTO settings(key, value) VALUES (?, ?)"
                    " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )
                self._settings_written(conn)  # (logged: other processes read back only it)
            self.snapshot = _replace_settings(self.snapshot, key, value)

    # -- undo -----------------------------------------------------------------------------
    def undo(self) -> str | None:
        """`undo_change`'s description of what was undone, or None."""
        undone = self.undo_change()
        return None if undone is None else undone.what

    def undo_change(self) -> Undone | None:
        """Reverse the latest change made through this object, as deltas in one transaction.

        Returns what was undone ("bookmark on 3 papers", "note", …), or None when there is
        nothing to undo. Changes other processes made are never undone: a delta whose target
        was changed elsewhere since is skipped, and the description says so; when every
        delta was skipped, LibraryError says that nothing was undone (the change is gone
        from the undo stack: the next undo is of the change before it)."""
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
                if change.skipped:  # not "in part": none of it
                    raise LibraryError(
                        f"{entry.what} was changed elsewhere since (another reader or the "
                        "CLI): nothing was undone"
                    )
            if change.skipped:
                what = f"{entry.what} (in part: the rest was changed elsewhere since)"
                return Undone(what, entry.paper_ids)
            return Undone(entry.what, entry.paper_ids)

    # -- export / import ------------------------------------------------------------------
    def export_data(self) -> dict[str, Any]:
        """The whole library as a JSON-ready document."""
        from .interchange import export_document

        return export_document(self)

    def import_data(self, data: Any) -> Imported:
        """Merge an export into this library (never drops anything, never replaces a value
        it has). Returns the papers touched and the values kept over the import's."""
        from .interchange import import_document

        return import_document(self, data)


def _unique_tags(tags: Iterable[str]) -> list[str]:
    names: dict[str, str] = {}
    for raw in tags:
        name = clean_tag(raw)
        names.setdefault(name.casefold(), name)
    return list(names.values())


def _meta_row(meta: Metadata) -> list[Any]:
    return [meta.title, json.dumps(list(meta.authors)), meta.url, meta.doi, meta.year]


def _replace_settings(snap: Snapshot, key: str, value: str) -> Snapshot:
    return dataclasses.replace(snap, settings={**snap.settings, key: value})


def _read_times(conn: sqlite3.Connection, table: str, column: str) -> dict[str, float]:
    # Well-typed rows go straight into the dict (C speed); odd ones are coerced one by one.
    good = f"typeof(paper_id) = 'text' AND typeof({column}) IN ('real', 'integer')"
    times: dict[str, float] = dict(
        conn.execute(f"SELECT paper_id, {column} FROM {table} WHERE {good}")
    )
    for pid, at in conn.execute(f"SELECT paper_id, {column} FROM {table} WHERE NOT ({good})"):
        if pid is not None:
            times[as_text(pid)] = as_time(at)
    for pid, at in times.items():
        if not math.isfinite(at):
            times[pid] = 0.0
    return times


def _read_bookmarks(conn: sqlite3.Connection, snap: Snapshot) -> None:
    snap.bookmarks = _read_times(conn, "bookmarks", "created_at")


def _read_read(conn: sqlite3.Connection, snap: Snapshot) -> None:
    snap.read = _read_times(conn, "read_marks", "read_at")


def _tag_names(
    conn: sqlite3.Connection, snap: Snapshot
) -> tuple[dict[object, str], dict[str, int]]:
    """Tag id → shown name (blank ones left out), and each name's place in ``tag_names``
    (which this sets)."""
    names: dict[object, str] = {}
    for tag_id, name in conn.execute("SELECT id, name FROM tags"):
        shown = sanitise(as_text(name))
        if shown.strip():
            names[tag_id] = shown
    snap.tag_names = sorted(set(names.values()), key=lambda n: (n.casefold(), n))
    return names, {name: i for i, name in enumerate(snap.tag_names)}


def _tag_rows(
    rows: Iterable[tuple[Any, Any, Any]],
    names: dict[object, str],
    tags: dict[str, list[str]],
    tagged: dict[str, float],
) -> None:
    """Add (paper id, tag id, time) rows to ``tags`` and ``tagged`` (the newest time of
    each paper's shown tags). One pass, inlined: it runs for every tag of a library."""
    get_name = names.get
    isfinite = math.isfinite
    for paper_id, tag_id, at in rows:
        name = get_name(tag_id)
        if paper_id is None or name is None:
            continue
        key = paper_id if type(paper_id) is str else as_text(paper_id)
        if type(at) is not float or not isfinite(at):  # REAL affinity: nearly always float
            at = as_time(at)
        have = tags.get(key)
        if have is None:
            tags[key] = [name]
            tagged[key] = at
        else:
            if name not in have:
                have.append(name)
            tagged[key] = max(tagged[key], at)


def _read_tags(conn: sqlite3.Connection, snap: Snapshot) -> None:
    names, order = _tag_names(conn, snap)
    tags: dict[str, list[str]] = {}
    tagged: dict[str, float] = {}
    rows = conn.execute("SELECT paper_id, tag_id, added_at FROM paper_tags")
    _tag_rows(rows, names, tags, tagged)
    for have in tags.values():
        if len(have) > 1:
            have.sort(key=order.__getitem__)
    snap.tags = tags
    snap.tagged = tagged


def _read_notes(conn: sqlite3.Connection, snap: Snapshot) -> None:
    snap.notes = {
        as_text(pid): sanitise(as_text(body))
        for pid, body in conn.execute("SELECT paper_id, body FROM notes")
        if pid is not None and as_text(body).strip()
    }


def _read_metadata(conn: sqlite3.Connection, snap: Snapshot) -> None:
    rows = conn.execute("SELECT paper_id, title, authors, url, doi, year FROM metadata")
    snap.metadata = MetadataSection.of_rows(rows)  # (each `Metadata` built when asked for)
    snap.metadata_patch = None


def _read_settings(conn: sqlite3.Connection, snap: Snapshot) -> None:
    # Text rows go straight into the dict (C speed); odd ones are coerced one by one.
    good = "typeof(key) = 'text' AND typeof(value) = 'text'"
    settings: dict[str, str] = dict(conn.execute(f"SELECT key, value FROM settings WHERE {good}"))
    for k, v in conn.execute(f"SELECT key, value FROM settings WHERE NOT ({good})"):
        if k is not None:
            settings[as_text(k)] = as_text(v)
    snap.settings = settings


def _patch_settings(conn: sqlite3.Connection, snap: Snapshot, keys: list[str]) -> None:
    """Read again only the settings ``keys`` (the rest are the current snapshot's)."""
    settings = dict(snap.settings)
    for key in keys:
        settings.pop(key, None)
    for k, v in _rows(conn, "SELECT key, value FROM settings WHERE key IN", keys):
        if k is not None:
            settings[as_text(k)] = as_text(v)
    snap.settings = settings


def _settings(keys: list[str]) -> Callable[[sqlite3.Connection, Snapshot], None]:
    def read(conn: sqlite3.Connection, snap: Snapshot) -> None:
        if keys:
            _patch_settings(conn, snap, keys)

    return read


_READERS: dict[Fact, Callable[[sqlite3.Connection, Snapshot], None]] = {
    "bookmarks": _read_bookmarks,
    "read": _read_read,
    "tags": _read_tags,
    "notes": _read_notes,
    "meta": _read_metadata,
}


def _chunks(ids: list[str], size: int = 500) -> Iterator[list[str]]:
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def _rows(conn: sqlite3.Connection, sql: str, ids: list[str]) -> Iterator[tuple[Any, ...]]:
    """``sql`` (ending in ``IN``) for each chunk of ``ids``."""
    for chunk in _chunks(ids):
        yield from conn.execute(f"{sql} ({', '.join('?' * len(chunk))})", chunk)


def _patch_times(
    conn: sqlite3.Connection, table: str, column: str, current: dict[str, float], ids: list[str]
) -> dict[str, float]:
    times = dict(current)
    for pid in ids:
        times.pop(pid, None)
    for pid, at in _rows(conn, f"SELECT paper_id, {column} FROM {table} WHERE paper_id IN", ids):
        times[as_text(pid)] = as_time(at)
    return times


def _patch_bookmarks(conn: sqlite3.Connection, snap: Snapshot, ids: list[str]) -> None:
    snap.bookmarks = _patch_times(conn, "bookmarks", "created_at", snap.bookmarks, ids)


def _patch_read(conn: sqlite3.Connection, snap: Snapshot, ids: list[str]) -> None:
    snap.read = _patch_times(conn, "read_marks", "read_at", snap.read, ids)


def _patch_tags(conn: sqlite3.Connection, snap: Snapshot, ids: list[str]) -> None:
    names, order = _tag_names(conn, snap)
    tags = dict(snap.tags)
    tagged = dict(snap.tagged)
    for pid in ids:
        tags.pop(pid, None)
        tagged.pop(pid, None)
    sql = "SELECT paper_id, tag_id, added_at FROM paper_tags WHERE paper_id IN"
    _tag_rows(_rows(conn, sql, ids), names, tags, tagged)
    for pid in ids:
        if len(tags.get(pid, ())) > 1:
            tags[pid].sort(key=order.__getitem__)
    snap.tags = tags
    snap.tagged = tagged


def _patch_notes(conn: sqlite3.Connection, snap: Snapshot, ids: list[str]) -> None:
    notes = dict(snap.notes)
    for pid in ids:
        notes.pop(pid, None)
    for pid, body in _rows(conn, "SELECT paper_id, body FROM notes WHERE paper_id IN", ids):
        if as_text(body).strip():
            notes[as_text(pid)] = sanitise(as_text(body))
    snap.notes = notes


def _patch_metadata(conn: sqlite3.Connection, snap: Snapshot, ids: list[str]) -> None:
    old = snap.metadata
    sql = "SELECT paper_id, title, authors, url, doi, year FROM metadata WHERE paper_id IN"
    rows = list(_rows(conn, sql, ids))
    if isinstance(old, MetadataSection):
        snap.metadata = old.patched(ids, rows)
    else:  # (a snapshot made by hand)
        metadata = dict(old)
        for pid in ids:
            metadata.pop(pid, None)
        metadata.update(MetadataSection.of_rows(rows).items())
        snap.metadata = metadata
    snap.metadata_patch = (old, frozenset(ids))


_PATCHERS: dict[Fact, Callable[[sqlite3.Connection, Snapshot, list[str]], None]] = {
    "bookmarks": _patch_bookmarks,
    "read": _patch_read,
    "tags": _patch_tags,
    "notes": _patch_notes,
    "meta": _patch_metadata,
}
