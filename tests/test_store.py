"""The store's API for many views of one library: deltas, the change log, refresh, undo,
note conflicts, a busy lock, renames onto existing tags.

Two ``Library`` objects on one file are two processes' views (each has its own connection);
the tests at the end use real second processes."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abstract_reader.corpus import Corpus
from abstract_reader.library import (
    BUSY_TIMEOUT_MS,
    UNCHECKED,
    Library,
    LibraryBusy,
    LibraryError,
    Metadata,
    MetadataConflict,
    NoteConflict,
    TagExists,
)

from .conftest import cli

IDS = [f"{n:016x}" for n in range(1, 9)]


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Library, Library]]:
    """Two views of one library file, as two processes would have."""
    path = tmp_path / "lib.sqlite3"
    a, b = Library(path, backups=False), Library(path, backups=False)
    yield a, b
    a.close()
    b.close()


def _log(lib: Library) -> list[tuple[str, list[str], str]]:
    rows = lib.conn.execute("SELECT facts, paper_ids, what FROM changes ORDER BY seq").fetchall()
    return [(facts, json.loads(ids), what) for facts, ids, what in rows]


# -- refresh ----------------------------------------------------------------------------------


def test_refresh_sees_each_kind_of_write_by_another_view(two: tuple[Library, Library]) -> None:
    a, b = two
    assert a.refresh() == frozenset()
    writes = [
        (lambda: b.add_tags([IDS[0]], ["x"]), {"tags"}),
        (lambda: b.set_bookmark([IDS[0]]), {"bookmarks"}),
        (lambda: b.set_read([IDS[1]]), {"read"}),
        (lambda: b.set_note(IDS[2], "theirs"), {"notes"}),
        (lambda: b.set_metadata(IDS[3], Metadata(title="T")), {"meta"}),
        (lambda: b.rename_tag("x", "y"), {"tags"}),
    ]
    for write, facts in writes:
        write()
        assert a.refresh() == facts
        assert a.refresh() == frozenset()  # reported once
    snap = a.snapshot
    assert snap.tags == {IDS[0]: ["y"]} and set(snap.bookmarks) == {IDS[0]}
    assert set(snap.read) == {IDS[1]} and snap.notes == {IDS[2]: "theirs"}
    assert snap.metadata[IDS[3]].title == "T"


def test_refresh_sees_a_write_by_another_tool_made_while_this_view_wrote(tmp_path: Path) -> None:
    """Another program (not logging its changes) writes, then this view writes: the other
    program's bookmark shows after ``refresh`` as well as this view's own."""
    path = tmp_path / "lib.sqlite3"
    with Library(path, backups=False) as lib:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("INSERT INTO bookmarks VALUES (?, 1.0)", (IDS[1],))
        other.close()
        lib.set_bookmark([IDS[0]])
        assert "bookmarks" in lib.refresh()
        assert set(lib.snapshot.bookmarks) == {IDS[0], IDS[1]}


def test_refresh_reports_own_writes_and_several_facts_at_once(
    two: tuple[Library, Library],
) -> None:
    a, b = two
    a.set_bookmark([IDS[0]])
    b.add_tags([IDS[1]], ["t"])
    b.set_read([IDS[1]])
    assert a.refresh() == {"bookmarks", "tags", "read"}
    # An own write in between must not hide another view's write from refresh.
    b.set_note(IDS[4], "n")
    a.set_bookmark([IDS[5]])
    assert a.refresh() == {"bookmarks", "notes"}
    assert a.snapshot.notes == {IDS[4]: "n"} and IDS[5] in a.snapshot.bookmarks


def test_refresh_without_changes_reads_no_table(two: tuple[Library, Library]) -> None:
    a, b = two
    b.add_tags(IDS, ["x"])
    a.refresh()
    statements: list[str] = []
    a.conn.set_trace_callback(statements.append)
    for _ in range(5):
        assert a.refresh() == frozenset()
    a.conn.set_trace_callback(None)
    assert statements and all(s.strip().upper() == "PRAGMA DATA_VERSION" for s in statements)


def _settings_reads(lib: Library, action: Any) -> list[str]:
    """The statements of ``action`` that read the settings table."""
    statements: list[str] = []
    lib.conn.set_trace_callback(statements.append)
    try:
        action()
    finally:
        lib.conn.set_trace_callback(None)
    return [s for s in statements if "FROM settings" in s and s.lstrip().startswith("SELECT")]


def test_a_write_reads_back_only_the_settings_it_wrote(two: tuple[Library, Library]) -> None:
    """100,000 matched papers are 100,000 provenance settings: a tag, a bookmark or a
    setting of the reader's must not read them all again (~200 ms a keystroke)."""
    a, _ = two
    for n, pid in enumerate(IDS):
        a.set_setting(f"provenance:{pid}", f"{{}} {n}")
    for write in (
        lambda: a.add_tags([IDS[0]], ["x"]),
        lambda: a.set_bookmark([IDS[1]]),
        lambda: a.set_metadata(IDS[2], Metadata(title="T")),
        lambda: a.set_setting("paper", IDS[3]),
    ):
        reads = _settings_reads(a, write)
        assert all("WHERE key IN" in s for s in reads), reads
    assert a.setting("paper") == IDS[3] and a.setting(f"provenance:{IDS[7]}") == "{} 7"


def test_refresh_reads_back_only_the_settings_another_view_wrote(
    two: tuple[Library, Library],
) -> None:
    """Another process's `match` (metadata, then provenance) or setting is seen by
    ``refresh`` — the provenance as a change of metadata (it gives the venue) — reading
    only those settings again."""
    a, b = two
    for pid in IDS:
        b.set_setting(f"provenance:{pid}", "old")
    a.refresh()
    b.set_metadata(IDS[0], Metadata(title="Matched"))
    b.set_setting(f"provenance:{IDS[0]}", "new")
    reads = _settings_reads(a, lambda: a.refresh() == {"meta"} or pytest.fail("not meta"))
    assert reads and all("WHERE key IN" in s for s in reads), reads
    assert a.setting(f"provenance:{IDS[0]}") == "new"
    b.set_setting(f"provenance:{IDS[1]}", "newer")  # a provenance alone
    assert a.refresh() == {"meta"} and a.setting(f"provenance:{IDS[1]}") == "newer"
    b.set_setting("filter", "#mine")  # a setting of the reader's: no fact changed
    assert a.refresh() == frozenset() and a.setting("filter") == "#mine"
    assert a.snapshot == Library(a.path, backups=False).snapshot


def test_an_imports_settings_are_seen_here_and_by_another_view(
    two: tuple[Library, Library],
) -> None:
    a, b = two
    a.refresh()
    b.import_data(_export_with([IDS[0]], "mine"))
    assert b.setting("search:mine") == "mine"  # (written inside the import's transaction)
    assert "bookmarks" in a.refresh()
    assert a.setting("search:mine") == "mine"
    assert a.setting(f"provenance:{IDS[0]}") == json.dumps({"venue": "mine"})


def test_settings_written_by_a_reader_from_before_are_seen(two: tuple[Library, Library]) -> None:
    """A reader from before this one logs its tags but not its settings: with its rows in
    the log, every setting is read again (what that reader's settings need)."""
    a, b = two
    a.refresh()
    b._origin = "0123456789abcdef"  # (its origins had no prefix)
    b.conn.execute("INSERT INTO settings VALUES ('theme', 'old-reader')")  # unlogged
    b.add_tags([IDS[0]], ["t"])
    assert a.refresh() == {"tags"}
    assert a.setting("theme") == "old-reader"


def test_a_write_that_changes_nothing_is_not_a_change(two: tuple[Library, Library]) -> None:
    a, _ = two
    a.set_bookmark([IDS[0]])
    a.refresh()
    a.set_bookmark([IDS[0]])  # already bookmarked
    a.remove_tags([IDS[0]], ["never-there"])
    assert a.refresh() == frozenset()
    assert [what for _, _, what in _log(a)] == ["bookmark on 1 paper"]
    assert a.undo() == "bookmark on 1 paper"
    assert a.undo() is None


def test_snapshots_are_replaced_not_changed(two: tuple[Library, Library]) -> None:
    a, b = two
    before = a.snapshot
    a.set_bookmark([IDS[0]])
    b.add_tags([IDS[0]], ["x"])
    a.refresh()
    assert before.bookmarks == {} and before.tags == {}
    assert a.snapshot is not before


# -- the change log -----------------------------------------------------------------------------


def test_every_write_is_logged_with_its_facts_papers_and_inverse(tmp_path: Path) -> None:
    with Library(tmp_path / "lib.sqlite3", backups=False) as lib:
        lib.set_bookmark(IDS[:3])
        lib.add_tags(IDS[:2], ["x", "y"])
        lib.set_note(IDS[0], "n")
        lib.rename_tag("x", "z")
        lib.delete_tag("y")
        assert _log(lib) == [
            ("bookmarks", IDS[:3], "bookmark on 3 papers"),
            ("tags", IDS[:2], "tags 'x', 'y' added to 2 papers"),
            ("notes", [IDS[0]], "note"),
            ("tags", IDS[:2], "rename of tag 'x' to 'z'"),
            ("tags", IDS[:2], "deletion of tag 'y'"),
        ]
        inverse = json.loads(
            lib.conn.execute("SELECT inverse FROM changes WHERE what = 'note'").fetchone()[0]
        )
        assert inverse == [{"op": "note", "id": IDS[0], "body": None, "expect": "n"}]


def test_a_failed_write_logs_nothing_and_leaves_no_transaction(tmp_path: Path) -> None:
    with Library(tmp_path / "lib.sqlite3", backups=False) as lib:
        lib.add_tags([IDS[0]], ["a"])
        with pytest.raises(LibraryError):
            lib.rename_tag("nope", "b")
        with pytest.raises(LibraryError):
            lib.add_tags([IDS[0]], ["ok", ""])  # the second tag is invalid: nothing is written
        assert not lib.conn.in_transaction
        assert len(_log(lib)) == 1 and lib.snapshot.tags == {IDS[0]: ["a"]}


# -- undo ---------------------------------------------------------------------------------------


def _state(lib: Library) -> tuple[object, ...]:
    snap = lib.reload()
    return (
        set(snap.bookmarks),
        set(snap.read),
        snap.tags,
        snap.notes,
        snap.metadata,
        snap.tag_names,
    )


UNDOABLE = [
    ("bookmark on 3 papers", lambda lib: lib.set_bookmark(IDS[:3])),
    ("bookmark removal from 2 papers", lambda lib: lib.set_bookmark(IDS[1:3], False)),
    ("read mark", lambda lib: lib.set_read([IDS[4]])),
    ("unread mark", lambda lib: lib.set_read([IDS[5]], False)),
    ("read marks on 2 papers", lambda lib: lib.set_read(IDS[6:8])),
    ("tag 'x' added to 2 papers", lambda lib: lib.add_tags(IDS[2:4], ["x"])),
    ("tag 'old' removed from 1 paper", lambda lib: lib.remove_tags([IDS[0]], ["old"])),
    ("rename of tag 'old' to 'new'", lambda lib: lib.rename_tag("old", "new")),
    ("rename of tag 'old' to 'OLD'", lambda lib: lib.rename_tag("old", "OLD")),
    ("rename of tag 'old' to 'other'", lambda lib: lib.rename_tag("old", "other", merge=True)),
    ("deletion of tag 'old'", lambda lib: lib.delete_tag("old")),
    ("note", lambda lib: lib.set_note(IDS[0], "new note")),
    ("note", lambda lib: lib.set_note(IDS[0], "")),
    ("metadata", lambda lib: lib.set_metadata(IDS[0], Metadata(title="New", year=2020))),
    ("metadata", lambda lib: lib.set_metadata(IDS[0], Metadata())),
]


@pytest.mark.parametrize(("what", "write"), UNDOABLE, ids=[u[0] for u in UNDOABLE])
def test_undo_restores_the_state_before_each_kind_of_write(
    tmp_path: Path, what: str, write: object
) -> None:
    with Library(tmp_path / "lib.sqlite3", backups=False) as lib:
        lib.set_bookmark([IDS[1], IDS[5]])
        lib.set_read([IDS[5]])
        lib.add_tags(IDS[:3], ["old"])
        lib.add_tags([IDS[0], IDS[4]], ["other"])
        lib.set_note(IDS[0], "first note")
        lib.set_metadata(IDS[0], Metadata(title="Old", authors=("A B",)))
        before = _state(lib)
        write(lib)  # type: ignore[operator]
        assert _state(lib) != before
        lib.refresh()
        assert lib.undo() == what
        assert _state(lib) == before
        assert lib.refresh()  # the undo is a change like any other


def test_undo_walks_back_through_several_changes_then_says_none(tmp_path: Path) -> None:
    with Library(tmp_path / "lib.sqlite3", backups=False) as lib:
        lib.set_bookmark([IDS[0]])
        lib.add_tags([IDS[0]], ["t"])
        lib.set_note(IDS[0], "n")
        assert [lib.undo(), lib.undo(), lib.undo(), lib.undo()] == [
            "note",
            "tag 't' added to 1 paper",
            "bookmark on 1 paper",
            None,
        ]
        assert lib.snapshot.paper_ids() == set()
        assert [w for _, _, w in _log(lib)][-1] == "undo of bookmark on 1 paper"


def test_undo_never_undoes_another_views_write(two: tuple[Library, Library]) -> None:
    a, b = two
    b.set_bookmark([IDS[0]])
    assert a.undo() is None
    a.set_read([IDS[1]])
    b.add_tags([IDS[1]], ["theirs"])
    assert a.undo() == "read mark"
    a.refresh()
    assert a.snapshot.tags == {IDS[1]: ["theirs"]} and IDS[0] in a.snapshot.bookmarks


def test_undo_after_a_change_elsewhere_keeps_the_other_change(
    two: tuple[Library, Library],
) -> None:
    a, b = two
    a.add_tags(IDS[:2], ["x"])
    b.add_tags([IDS[2]], ["x"])  # another process tags a third paper
    assert a.undo() == "tag 'x' added to 2 papers"
    a.refresh()
    assert a.snapshot.tags == {IDS[2]: ["x"]}

    a.set_note(IDS[0], "mine")
    b.set_note(IDS[0], "theirs, written after mine")
    with pytest.raises(LibraryError, match=r"changed elsewhere .*: nothing was undone"):
        a.undo()  # the one delta skipped: not said to be undone "in part"
    assert a.snapshot.notes[IDS[0]] == "theirs, written after mine"

    a.add_tags([IDS[3]], ["old"])
    a.rename_tag("old", "new")
    b.add_tags([IDS[4]], ["new"])  # someone uses the new name on another paper
    assert a.undo() == "rename of tag 'old' to 'new'"
    a.refresh()
    assert a.snapshot.tags[IDS[3]] == ["old"] and a.snapshot.tags[IDS[4]] == ["new"]

    a.set_bookmark([IDS[5]])
    b.set_bookmark([IDS[5]], False)  # already undone elsewhere
    assert a.undo() == "bookmark on 1 paper"
    a.refresh()
    assert IDS[5] not in a.snapshot.bookmarks

    a.add_tags([IDS[6]], ["gone"])
    b.delete_tag("gone")
    assert a.undo() == "tag 'gone' added to 1 paper"
    a.refresh()
    assert "gone" not in a.snapshot.tag_names


def test_undo_of_an_import(tmp_path: Path) -> None:
    with Library(tmp_path / "a.sqlite3", backups=False) as a:
        a.set_bookmark([IDS[0]])
        a.add_tags([IDS[1]], ["x"])
        a.set_note(IDS[2], "from a")
        exported = a.export_data()
    with Library(tmp_path / "b.sqlite3", backups=False) as b:
        b.set_note(IDS[2], "from b")
        before = _state(b)
        b.import_data(exported)
        assert "from a" in b.snapshot.notes[IDS[2]]
        assert b.undo() == "import of 3 papers"
        assert _state(b) == before


def test_undo_when_busy_keeps_the_change_to_undo_later(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    with Library(path, backups=False, busy_timeout=0.2) as lib:
        lib.set_bookmark([IDS[0]])
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(LibraryBusy):
            lib.undo()
        holder.execute("ROLLBACK")
        holder.close()
        assert lib.undo() == "bookmark on 1 paper"


# -- note conflicts -----------------------------------------------------------------------------


def test_a_note_edit_from_an_older_note_raises_and_writes_nothing(
    two: tuple[Library, Library],
) -> None:
    a, b = two
    started_from = a.snapshot.notes.get(IDS[0], "")
    b.set_note(IDS[0], "cli note")
    with pytest.raises(NoteConflict) as caught:
        a.set_note(IDS[0], "reader note", expected=started_from)
    assert caught.value.paper_id == IDS[0]
    assert caught.value.mine == "reader note" and caught.value.theirs == "cli note"
    assert isinstance(caught.value, LibraryError) and "\n" not in str(caught.value)
    a.refresh()
    assert a.snapshot.notes[IDS[0]] == "cli note"
    assert a.undo() is None  # nothing was written, nothing to undo
    # Starting from the stored note (or not checking at all) writes.
    a.set_note(IDS[0], "merged", expected="cli note")
    assert a.snapshot.notes[IDS[0]] == "merged"
    a.set_note(IDS[0], "unconditional", expected=UNCHECKED)
    a.set_note(IDS[0], "again")
    assert a.snapshot.notes[IDS[0]] == "again"


def test_note_conflict_when_the_note_was_deleted_or_created(two: tuple[Library, Library]) -> None:
    a, b = two
    with pytest.raises(NoteConflict) as caught:
        a.set_note(IDS[1], "mine", expected="a note nobody stored")
    assert caught.value.theirs == ""
    a.set_note(IDS[1], "mine", expected=None)  # None and "" both mean "no note"
    b.set_note(IDS[1], "")
    with pytest.raises(NoteConflict):
        a.set_note(IDS[1], "mine again", expected="mine")


def test_a_metadata_write_checked_against_what_was_read_writes_nothing_over_another(
    two: tuple[Library, Library],
) -> None:
    """The reader's editor saves over the metadata it last read; a write from elsewhere
    landing after that read is found inside the save's transaction, not overwritten."""
    a, b = two
    a.set_metadata(IDS[0], Metadata(title="Shown", year=2024))
    b.refresh()
    read = b.snapshot.metadata[IDS[0]]
    a.set_metadata(IDS[0], Metadata(title="CLI T2", year=2024))  # lands after that read
    with pytest.raises(MetadataConflict) as caught:
        b.set_metadata(IDS[0], Metadata(title="Reader T2", year=2024), expected=read)
    assert caught.value.theirs == Metadata(title="CLI T2", year=2024)
    assert isinstance(caught.value, LibraryError) and "\n" not in str(caught.value)
    b.refresh()
    assert b.snapshot.metadata[IDS[0]].title == "CLI T2"
    assert b.undo() is None  # nothing was written
    # over what is stored now (or none stored: empty metadata), it writes
    b.set_metadata(IDS[0], Metadata(title="Reader T2", year=2024), expected=caught.value.theirs)
    assert b.snapshot.metadata[IDS[0]].title == "Reader T2"
    b.set_metadata(IDS[1], Metadata(url="https://example.org/p"), expected=Metadata())
    with pytest.raises(MetadataConflict):
        a.set_metadata(IDS[1], Metadata(doi="10.1/x"), expected=Metadata())


# -- busy ---------------------------------------------------------------------------------------


def test_a_held_write_lock_gives_library_busy_and_nothing_half_written(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    with Library(path, backups=False, busy_timeout=0.5) as lib:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        for write in (
            lambda: lib.set_bookmark(IDS),
            lambda: lib.add_tags(IDS, ["x"]),
            lambda: lib.set_note(IDS[0], "n"),
        ):
            with pytest.raises(LibraryBusy) as caught:
                write()
            message = str(caught.value)
            assert message.startswith("library busy: ") and "\n" not in message
            assert "gave up after 0.5 s" in message
            assert not lib.conn.in_transaction
        holder.execute("ROLLBACK")
        holder.close()
        assert lib.reload().paper_ids() == set()
        lib.set_bookmark(IDS)  # and once the lock is free, writes go through
        assert set(lib.snapshot.bookmarks) == set(IDS)


def test_a_write_waits_for_a_lock_held_for_seconds_and_goes_through(tmp_path: Path) -> None:
    """Another program holds the write lock for 3 s (a slow import, a disk busy with other
    work): the user's bookmark waits for it, it is not lost (it gave up after 2.5 s once)."""
    path = tmp_path / "lib.sqlite3"
    with Library(path, backups=False) as lib:
        holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("INSERT INTO bookmarks VALUES (?, 1.0)", (IDS[1],))
        release = threading.Timer(3.0, lambda: holder.execute("COMMIT"))
        release.start()
        try:
            lib.set_bookmark([IDS[0]])
        finally:
            release.join()
            holder.close()
        lib.refresh()
        assert set(lib.snapshot.bookmarks) == {IDS[0], IDS[1]}  # both, neither lost
    with Library(path, backups=False) as again:
        assert set(again.snapshot.bookmarks) == {IDS[0], IDS[1]}


def test_the_busy_timeout_is_long_and_can_be_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Library(tmp_path / "lib.sqlite3", backups=False) as lib:
        assert lib.busy_timeout == BUSY_TIMEOUT_MS / 1000 >= 30
    monkeypatch.setenv("ABSTRACT_READER_BUSY_TIMEOUT", "0.25")
    with Library(tmp_path / "lib.sqlite3", backups=False) as lib:
        assert lib.busy_timeout == 0.25
    for bad in ("soon", "-1", "nan", "inf"):
        monkeypatch.setenv("ABSTRACT_READER_BUSY_TIMEOUT", bad)
        with Library(tmp_path / "lib.sqlite3", backups=False) as lib:
            assert lib.busy_timeout == BUSY_TIMEOUT_MS / 1000


# -- renames onto an existing tag ----------------------------------------------------------------


def test_rename_onto_an_existing_tag_needs_merge(tmp_path: Path) -> None:
    with Library(tmp_path / "lib.sqlite3", backups=False) as lib:
        lib.add_tags(IDS[:2], ["a"])
        lib.add_tags(IDS[1:3], ["b"])
        with pytest.raises(TagExists) as caught:
            lib.rename_tag("a", "B")
        assert (caught.value.old, caught.value.new) == ("a", "b")
        assert lib.tag_counts() == [("a", 2), ("b", 2)]
        lib.rename_tag("a", "A")  # the same tag in another case is a rename, not a merge
        assert lib.tag_counts() == [("A", 2), ("b", 2)]
        lib.rename_tag("A", "b", merge=True)
        assert lib.tag_counts() == [("b", 3)]
        assert lib.undo() == "rename of tag 'A' to 'b'"
        assert lib.tag_counts() == [("A", 2), ("b", 2)]


# -- real second processes ----------------------------------------------------------------------


def test_refresh_sees_the_cli_writing_beside_it(seeds: Corpus, tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    pid = seeds.papers[0].id
    with Library(db, backups=False) as lib:
        lib.set_bookmark([pid])
        lib.refresh()
        assert cli("tag", pid, "fromcli", db=db).returncode == 0
        assert cli("note", pid, "cli note", db=db).returncode == 0
        assert lib.refresh() == {"tags", "notes"}
        assert lib.snapshot.tags[pid] == ["fromcli"] and lib.snapshot.notes[pid] == "cli note"
        assert lib.refresh() == frozenset()
        with pytest.raises(NoteConflict):
            lib.set_note(pid, "reader note", expected="")
        assert lib.undo() == "bookmark on 1 paper"  # its own change, not the CLI's
        assert lib.undo() is None
        assert "fromcli" in cli("show", pid, db=db).stdout


HOLD_LOCK = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


def test_cli_says_library_busy_when_another_process_holds_the_lock(
    seeds: Corpus, tmp_path: Path
) -> None:
    db = tmp_path / "lib.sqlite3"
    Library(db, backups=False).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        env = {**os.environ, "ABSTRACT_READER_BUSY_TIMEOUT": "0.5"}  # not the 30 s default
        result = cli("bookmark", seeds.papers[0].id, db=db, env=env)
        assert result.returncode == 1
        assert result.stderr.count("\n") == 1
        assert result.stderr.startswith("abstract-reader: library busy: ")
        assert "gave up after 0.5 s" in result.stderr
        assert "Traceback" not in result.stderr
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert cli("bookmark", seeds.papers[0].id, db=db).returncode == 0


def test_cli_rename_onto_an_existing_tag_says_merge(seeds: Corpus, tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    cli("tag", seeds.papers[0].id, "a", db=db)
    cli("tag", seeds.papers[1].id, "b", db=db)
    result = cli("tags", "--rename", "a", "b", db=db)
    assert result.returncode == 1 and "--merge" in result.stderr
    assert result.stderr.count("\n") == 1
    merged = cli("tags", "--rename", "a", "b", "--merge", db=db)
    assert merged.returncode == 0 and merged.stdout.strip() == "2  b"


# -- what a view shows equals a fresh load --------------------------------------------------------

OPS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.sampled_from(
            [
                "bookmark",
                "unbookmark",
                "read",
                "unread",
                "tag",
                "untag",
                "note",
                "meta",
                "rename",
                "merge",
                "delete",
                "undo",
                "setting",
                "import",
            ]
        ),
        st.lists(st.sampled_from(IDS[:5]), min_size=1, max_size=3),
        st.sampled_from(["x", "X", "y", "zed"]),
    ),
    max_size=30,
)


def _export_with(ids: list[str], word: str) -> dict[str, Any]:
    """An export holding a bookmark and settings (an import writes settings too)."""
    with Library(None) as source:
        source.set_bookmark(ids[:1])
        source.set_setting(f"search:{word}", word)
        source.set_setting(f"provenance:{ids[-1]}", json.dumps({"venue": word}))
        return source.export_data()


def _apply(lib: Library, op: str, ids: list[str], word: str) -> None:
    calls = {
        "bookmark": lambda: lib.set_bookmark(ids),
        "unbookmark": lambda: lib.set_bookmark(ids, False),
        "read": lambda: lib.set_read(ids),
        "unread": lambda: lib.set_read(ids, False),
        "tag": lambda: lib.add_tags(ids, [word]),
        "untag": lambda: lib.remove_tags(ids, [word]),
        "note": lambda: lib.set_note(ids[0], word * len(ids)),
        "meta": lambda: lib.set_metadata(ids[0], Metadata(title=word)),
        "rename": lambda: lib.rename_tag("x", word),
        "merge": lambda: lib.rename_tag(word, "y", merge=True),
        "delete": lambda: lib.delete_tag(word),
        "undo": lib.undo,
        "setting": lambda: lib.set_setting(f"provenance:{ids[0]}", word * len(ids)),
        "import": lambda: lib.import_data(_export_with(ids, word)),
    }
    with contextlib.suppress(LibraryError):
        calls[op]()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_a_refreshed_view_equals_a_fresh_load(tmp_path: Path, ops: list[Any]) -> None:
    path = tmp_path / "views.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    views = {"a": Library(path, backups=False), "b": Library(path, backups=False)}
    try:
        for who, op, ids, word in ops:
            _apply(views[who], op, ids, word)
            for view in views.values():
                view.refresh()
                with Library(path, backups=False) as fresh:
                    assert view.snapshot == fresh.snapshot, (who, op, ids, word)
    finally:
        for view in views.values():
            view.close()


def test_an_upgrade_blocked_by_another_writer_opens_read_only_not_a_crash(tmp_path: Path) -> None:
    from abstract_reader.library import MIGRATIONS

    db = tmp_path / "lib.sqlite3"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    for statement in ";".join(MIGRATIONS[:2]).split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    conn.execute("INSERT INTO bookmarks VALUES (?, 1.0)", (IDS[0],))
    conn.execute("BEGIN IMMEDIATE")  # another program is writing
    lib = Library(db, backups=False, busy_timeout=0.5)
    assert lib.read_only and lib.problem is not None
    assert "library busy" in lib.problem and "\n" not in lib.problem
    assert set(lib.snapshot.bookmarks) == {IDS[0]}  # what it holds is still shown
    lib.close()
    conn.execute("ROLLBACK")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    conn.close()
    with Library(db, backups=False) as upgraded:  # once free, the upgrade goes through
        assert not upgraded.read_only and set(upgraded.snapshot.bookmarks) == {IDS[0]}


def test_the_change_log_is_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from abstract_reader.library import store

    monkeypatch.setattr(store, "CHANGES_KEPT", 50)
    with Library(tmp_path / "lib.sqlite3", backups=False) as lib:
        for n in range(1200):
            lib.set_read([IDS[n % 2]], on=bool(n % 4 < 2))
        kept = lib.conn.execute("SELECT count(*), min(seq) FROM changes").fetchone()
    assert kept[0] <= 50 + 500 and kept[1] > 1


def test_the_filter_history_travels_with_a_library_export(tmp_path: Path) -> None:
    """Every setting the reader keeps is user data: export carries it, import takes it."""
    import json as _json

    from abstract_reader.library import Library

    with Library(tmp_path / "a.sqlite3") as lib:
        lib.set_setting("filter_history", _json.dumps(["robust", "#to-read is:unread"]))
        data = lib.export_data()
    with Library(tmp_path / "b.sqlite3") as other:
        other.import_data(data)
        assert _json.loads(other.setting("filter_history") or "[]") == [
            "robust",
            "#to-read is:unread",
        ]
