"""The library: reliability is the feature."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from abstract_reader.library import (
    MIGRATIONS,
    SCHEMA_VERSION,
    Library,
    LibraryError,
    Metadata,
    ReadOnlyLibrary,
)

from .conftest import run_as_nobody, world_dir

IDS = [f"{n:016x}" for n in range(1, 9)]


def test_basic_round_trip(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    with Library(db) as lib:
        lib.set_bookmark([IDS[0]])
        lib.set_read([IDS[0], IDS[1]])
        lib.add_tags([IDS[0]], ["To Read", "theory"])
        lib.set_note(IDS[1], "check the proof\nof lemma 2")
        lib.set_metadata(IDS[0], Metadata(title="Real Title", authors=("A. B",), year=2026))
    with Library(db) as again:
        snap = again.snapshot
        assert set(snap.bookmarks) == {IDS[0]}
        assert set(snap.read) == {IDS[0], IDS[1]}
        assert snap.tags[IDS[0]] == ["theory", "To Read"]
        assert snap.notes[IDS[1]] == "check the proof\nof lemma 2"
        assert snap.metadata[IDS[0]].title == "Real Title"


def test_connection_settings(tmp_path: Path) -> None:
    with Library(tmp_path / "lib.sqlite3") as lib:
        conn = lib.conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] > 0
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_tags_are_trimmed_case_insensitively_unique_and_validated(tmp_path: Path) -> None:
    with Library(tmp_path / "lib.sqlite3") as lib:
        lib.add_tags([IDS[0]], ["  reading   list "])
        lib.add_tags([IDS[1]], ["READING LIST"])
        assert lib.tag_counts() == [("reading list", 2)]
        for bad in ["", "   ", "x" * 65, "bad\x1btag"]:
            with pytest.raises(LibraryError):
                lib.add_tags([IDS[0]], [bad])
        lib.add_tags([IDS[0]], ["x" * 64])


def test_rename_and_delete_tag_change_every_paper(tmp_path: Path) -> None:
    with Library(tmp_path / "lib.sqlite3") as lib:
        lib.add_tags(IDS[:3], ["old"])
        lib.add_tags([IDS[0]], ["keep"])
        lib.rename_tag("old", "new")
        assert all(
            lib.snapshot.tags[i][-1] == "new" or "new" in lib.snapshot.tags[i] for i in IDS[:3]
        )
        lib.rename_tag("new", "keep", merge=True)
        assert lib.tag_counts() == [("keep", 3)]
        lib.delete_tag("keep")
        assert lib.tag_counts() == [] and not any(lib.snapshot.tags.values())


def test_orphaned_records_are_kept(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    with Library(db) as lib:
        lib.add_tags(["ffffffffffffffff"], ["gone"])
    with Library(db) as lib:
        assert lib.snapshot.tags["ffffffffffffffff"] == ["gone"]
        assert "ffffffffffffffff" in lib.snapshot.paper_ids()


# -- damage and permissions --------------------------------------------------------------------


def test_damaged_file_is_kept_and_opened_read_only(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    garbage = b"this is not a database" * 100
    db.write_bytes(garbage)
    lib = Library(db)
    assert lib.read_only and lib.problem and "read-only" in lib.problem
    assert str(db) in lib.problem and "\n" not in lib.problem
    with pytest.raises(ReadOnlyLibrary):
        lib.set_bookmark([IDS[0]])
    lib.close()
    assert db.read_bytes() == garbage  # never overwritten


def test_corrupted_pages_fail_quick_check_and_are_kept(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    with Library(db, backups=False) as lib:
        lib.add_tags(IDS, ["t" * 60 + str(n) for n in range(3)])
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    for offset in range(4096 + 100, min(len(data), 4096 * 3), 7):  # scribble over page 2
        data[offset] = 0xAB
    db.write_bytes(bytes(data))
    before = db.read_bytes()
    lib = Library(db)
    assert lib.read_only
    lib.close()
    assert db.read_bytes() == before


def test_unwritable_location_is_read_only_with_a_message(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    lib = Library(blocker / "sub" / "lib.sqlite3")  # parent cannot be created
    assert lib.read_only and lib.problem and "read-only" in lib.problem
    with pytest.raises(ReadOnlyLibrary):
        lib.add_tags([IDS[0]], ["x"])


_AS_USER = os.geteuid() != 0 if hasattr(os, "geteuid") else True


def test_read_only_directory() -> None:
    base = world_dir()
    ro = base / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    code = (
        "from abstract_reader.library import Library, ReadOnlyLibrary\n"
        f"lib = Library({str(ro / 'lib.sqlite3')!r})\n"
        "assert lib.read_only, 'should be read-only'\n"
        "print(lib.problem)\n"
        "try:\n    lib.set_bookmark(['0'*16])\nexcept ReadOnlyLibrary as e:\n    print('refused')\n"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert "read-only" in result.stdout and "refused" in result.stdout
    assert not (ro / "lib.sqlite3").exists()


def test_read_only_file_keeps_data_readable_and_unchanged() -> None:
    base = world_dir()
    db = base / "lib.sqlite3"
    with Library(db, backups=False) as lib:
        lib.set_bookmark([IDS[0]])
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        lib.conn.execute("PRAGMA journal_mode = DELETE")
    db.chmod(0o444)
    before = db.read_bytes()
    code = (
        "from abstract_reader.library import Library\n"
        f"lib = Library({str(db)!r})\n"
        "print(lib.read_only, sorted(lib.snapshot.bookmarks))\n"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"True ['{IDS[0]}']"
    assert db.read_bytes() == before


def _run(code: str) -> subprocess.CompletedProcess[str]:
    if _AS_USER:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return run_as_nobody(code)


# -- schema migrations ----------------------------------------------------------------------------


def _old_library(path: Path, version: int) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    for target in range(version):
        for statement in MIGRATIONS[target].split(";"):
            if statement.strip():
                conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {version}")
    if version >= 1:
        conn.execute("INSERT INTO bookmarks VALUES (?, ?)", (IDS[0], 1.0))
        conn.execute("INSERT INTO tags(name) VALUES ('legacy')")
        conn.execute("INSERT INTO paper_tags VALUES (?, 1, 1.0)", (IDS[1],))
        conn.execute("INSERT INTO notes VALUES (?, 'old note', 1.0)", (IDS[2],))
    conn.close()


@pytest.mark.parametrize("version", range(SCHEMA_VERSION))
def test_migrates_from_every_older_version(tmp_path: Path, version: int) -> None:
    db = tmp_path / "lib.sqlite3"
    _old_library(db, version)
    with Library(db) as lib:
        assert lib.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        if version >= 1:
            assert set(lib.snapshot.bookmarks) == {IDS[0]}
            assert lib.snapshot.tags[IDS[1]] == ["legacy"]
            assert lib.snapshot.notes[IDS[2]] == "old note"
        lib.set_metadata(IDS[3], Metadata(title="works after migration"))
    backups = list(tmp_path.glob("lib.sqlite3.backup-*"))
    if version >= 1:  # a backup was taken before migrating, and it is the old version
        assert backups
        old = sqlite3.connect(backups[0])
        assert old.execute("PRAGMA user_version").fetchone()[0] == version
        old.close()


def test_newer_schema_is_not_touched(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    before = db.read_bytes()
    lib = Library(db)
    assert lib.read_only and "newer" in (lib.problem or "")
    lib.close()
    assert db.read_bytes() == before


def test_backups_keep_the_last_five(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    with Library(db) as lib:
        lib.set_bookmark([IDS[0]])
        for _ in range(8):
            lib._backup(lib.conn, reason="test")
            time.sleep(0.001)
    assert len(list(tmp_path.glob("lib.sqlite3.backup-*"))) == 5


def test_daily_backup_at_most_once_a_day(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    with Library(db) as lib:
        lib.set_bookmark([IDS[0]])
    Library(db).close()
    Library(db).close()
    assert len(list(tmp_path.glob("lib.sqlite3.backup-*"))) == 1


# -- export / import ----------------------------------------------------------------------------


def test_export_import_round_trip_merges_never_drops(tmp_path: Path) -> None:
    with Library(tmp_path / "a.sqlite3") as a:
        a.set_bookmark([IDS[0]])
        a.add_tags([IDS[1]], ["x", "y"])
        a.set_note(IDS[2], "from a")
        a.set_metadata(IDS[3], Metadata(title="T", authors=("Ann Lee",), doi="10.1/x"))
        exported = json.loads(json.dumps(a.export_data()))
    with Library(tmp_path / "b.sqlite3") as b:
        b.add_tags([IDS[1]], ["z"])
        b.set_note(IDS[2], "from b")
        b.set_read([IDS[4]])
        b.import_data(exported)
        snap = b.snapshot
        assert set(snap.bookmarks) == {IDS[0]}
        assert snap.tags[IDS[1]] == ["x", "y", "z"]
        assert "from a" in snap.notes[IDS[2]] and "from b" in snap.notes[IDS[2]]
        assert set(snap.read) == {IDS[4]}
        assert snap.metadata[IDS[3]].authors == ("Ann Lee",)
        b.import_data(exported)  # idempotent
        assert b.snapshot.tags[IDS[1]] == ["x", "y", "z"]
    with pytest.raises(LibraryError):
        Library(tmp_path / "c.sqlite3").import_data({"papers": []})


# -- concurrency and crashes -----------------------------------------------------------------------

WRITER = r"""
import sys
from abstract_reader.library import Library
db, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
lib = Library(db, backups=False)
for i in range(n):
    pid = f"{who}{i:015x}"[:16]
    if i % 2:
        lib.add_tags([pid], [f"tag-{who}-{i % 7}"])
    else:
        lib.set_bookmark([pid])
print("done", flush=True)
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    Library(db, backups=False).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), who, "400"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in ("a", "b")
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "locked" not in err
    with Library(db) as lib:
        snap = lib.snapshot
        for who in ("a", "b"):
            for i in range(400):
                pid = f"{who}{i:015x}"[:16]
                if i % 2:
                    assert f"tag-{who}-{i % 7}" in snap.tags.get(pid, []), pid
                else:
                    assert pid in snap.bookmarks, pid


KILLED = r"""
import sys
from abstract_reader.library import Library
db = sys.argv[1]
lib = Library(db, backups=False)
i = 0
while True:
    pid = f"{i:016x}"
    lib.set_bookmark([pid])
    lib.add_tags([pid], ["t"])
    print(pid, flush=True)  # printed only after both writes returned
    i += 1
"""


def test_sigkill_during_writes_never_corrupts_or_loses_a_returned_write(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    Library(db, backups=False).close()
    confirmed: set[str] = set()
    for round_ in range(20):
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLED, str(db)], stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None
        target = 5 + (round_ * 3) % 17
        lines = 0
        while lines < target:  # let it get going, then kill it at a varying point
            line = proc.stdout.readline()
            if not line:
                break
            confirmed.add(line.strip())
            lines += 1
        proc.send_signal(signal.SIGKILL)
        rest, _ = proc.communicate(timeout=30)
        confirmed.update(x for x in rest.split() if x)
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
        with Library(db, backups=False) as lib:
            missing = [p for p in confirmed if p not in lib.snapshot.bookmarks]
            untagged = [p for p in confirmed if "t" not in lib.snapshot.tags.get(p, [])]
        assert not missing and not untagged, (round_, missing[:3], untagged[:3])


# -- a state machine against a dict model ---------------------------------------------------------

TAGS = st.sampled_from(["alpha", "Beta", "gamma", "BETA", " alpha "])
PIDS = st.sampled_from(IDS[:4])


class LibraryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        import tempfile

        self.dir = Path(tempfile.mkdtemp())
        self.path = self.dir / "lib.sqlite3"
        self.lib = Library(self.path, backups=False)
        self.bookmarks: set[str] = set()
        self.read: set[str] = set()
        self.tags: dict[str, set[str]] = {}
        self.notes: dict[str, str] = {}
        self.history: list[tuple[object, ...]] = []  # model states before each change

    def model(self) -> tuple[object, ...]:
        return (
            set(self.bookmarks),
            set(self.read),
            {pid: set(tags) for pid, tags in self.tags.items() if tags},
            dict(self.notes),
        )

    def changed_from(self, before: tuple[object, ...]) -> None:
        """Remember the state before a write that changed something (undo goes back to it)."""
        if self.model() != before:
            self.history.append(before)

    @staticmethod
    def key(tag: str) -> str:
        return tag.strip().casefold()

    @rule(pid=PIDS, on=st.booleans())
    def bookmark(self, pid: str, on: bool) -> None:
        before = self.model()
        self.lib.set_bookmark([pid], on)
        (self.bookmarks.add if on else self.bookmarks.discard)(pid)
        self.changed_from(before)

    @rule(pid=PIDS, on=st.booleans())
    def mark_read(self, pid: str, on: bool) -> None:
        before = self.model()
        self.lib.set_read([pid], on)
        (self.read.add if on else self.read.discard)(pid)
        self.changed_from(before)

    @rule(pid=PIDS, tag=TAGS)
    def tag(self, pid: str, tag: str) -> None:
        before = self.model()
        self.lib.add_tags([pid], [tag])
        self.tags.setdefault(pid, set()).add(self.key(tag))
        self.changed_from(before)

    @rule(pid=PIDS, tag=TAGS)
    def untag(self, pid: str, tag: str) -> None:
        before = self.model()
        self.lib.remove_tags([pid], [tag])
        self.tags.get(pid, set()).discard(self.key(tag))
        self.changed_from(before)

    @rule(pid=PIDS, text=st.text(alphabet="ab \n", max_size=5))
    def note(self, pid: str, text: str) -> None:
        before = self.model()
        self.lib.set_note(pid, text)
        if text.strip():
            self.notes[pid] = text
        else:
            self.notes.pop(pid, None)
        self.changed_from(before)

    @rule(old=TAGS, new=st.sampled_from(["delta", "alpha", "Gamma"]))
    def rename(self, old: str, new: str) -> None:
        if not any(self.key(old) in tags for tags in self.tags.values()):
            return
        before = self.model()
        same_name = new in self.lib.snapshot.tag_names
        self.lib.rename_tag(old, new, merge=True)
        for tags in self.tags.values():
            if self.key(old) in tags:
                tags.discard(self.key(old))
                tags.add(self.key(new))
        # A case-only rename changes the stored name, which the case-folded model cannot see.
        if self.key(old) == self.key(new) and not same_name:
            self.history.append(before)
        else:
            self.changed_from(before)

    @rule()
    def undo(self) -> None:
        undone = self.lib.undo()
        assert (undone is None) == (not self.history)
        if self.history:
            bookmarks, read, tags, notes = self.history.pop()
            self.bookmarks, self.read = set(bookmarks), set(read)  # type: ignore[call-overload]
            self.tags = {p: set(t) for p, t in tags.items()}  # type: ignore[attr-defined]
            self.notes = dict(notes)  # type: ignore[call-overload]

    @rule()
    def reopen(self) -> None:
        self.lib.close()
        self.lib = Library(self.path, backups=False)
        self.history.clear()  # undo is per Library object

    @invariant()
    def matches_model(self) -> None:
        snap = self.lib.snapshot
        assert set(snap.bookmarks) == self.bookmarks
        assert set(snap.read) == self.read
        got = {pid: {t.casefold() for t in names} for pid, names in snap.tags.items() if names}
        assert got == {pid: tags for pid, tags in self.tags.items() if tags}
        assert snap.notes == self.notes

    def teardown(self) -> None:
        self.lib.close()


TestLibraryMachine = LibraryMachine.TestCase
TestLibraryMachine.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)


def test_a_directory_given_as_the_library_is_reported(tmp_path: Path) -> None:
    lib = Library(tmp_path)
    assert lib.read_only and lib.problem is not None
    assert "is a directory" in lib.problem and str(tmp_path) in lib.problem


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"bookmarked_at": "yesterday"}, "bookmarked_at must be a number"),
        ({"read_at": [1]}, "read_at must be a number"),
        ({"tags": "not-a-list"}, "'tags' must be a list"),
        ({"tags": ["ok", ""]}, "a tag cannot be empty"),
        ({"metadata": {"year": "20x6"}}, "year must be a number"),
        ({"metadata": {"year": 99}}, "four digits"),
    ],
)
def test_import_rejects_bad_values_in_one_line_and_imports_nothing(
    tmp_path: Path, entry: dict[str, object], message: str
) -> None:
    with Library(tmp_path / "lib.sqlite3") as lib:
        good = {"bookmarked_at": 1.0, "tags": ["fine"]}
        data = {"format": "abstract-reader-library", "papers": {IDS[0]: good, IDS[1]: entry}}
        with pytest.raises(LibraryError, match=message) as caught:
            lib.import_data(data)
        assert IDS[1] in str(caught.value) and "\n" not in str(caught.value)
        assert not lib.snapshot.bookmarks and not lib.snapshot.tags  # all or nothing


def test_imported_text_is_sanitised(tmp_path: Path) -> None:
    with Library(tmp_path / "lib.sqlite3") as lib:
        evil = {"metadata": {"title": "Evil\x1b[2J\x1b]52;c;eA==\x07 title", "authors": ["A\x1bB"]}}
        lib.import_data({"format": "abstract-reader-library", "papers": {IDS[0]: evil}})
        meta = lib.snapshot.metadata[IDS[0]]
        assert meta.title is not None and "\x1b" not in meta.title and "\x07" not in meta.title
        assert all("\x1b" not in a for a in meta.authors)
