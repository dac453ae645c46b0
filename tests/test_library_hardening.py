"""Hostile and odd library files: damage with a WAL left behind, odd paths, file types,
full disks, backups, values of the wrong type. Each says what is wrong, once, and keeps the
user's data byte for byte."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus
from abstract_reader.library import SCHEMA_VERSION, Library, LibraryError, Metadata

from .conftest import cli, run_as_nobody, world_dir

IDS = [f"{n:016x}" for n in range(1, 9)]
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


# -- damage with a WAL left by a killed writer ----------------------------------------------

KILLED_WRITER = r"""
import sys, time
from abstract_reader.library import Library
lib = Library(sys.argv[1], backups=False)
for i in range(50):
    lib.set_bookmark([f"{i:016x}"])
print("written", flush=True)
time.sleep(600)
"""

FILLER_MARK = b"FILLER-PAGE-"


def _library_with_filler(db: Path) -> None:
    with Library(db, backups=False) as lib:
        lib.add_tags(IDS, ["kept"])
        conn = lib.conn
        conn.execute("CREATE TABLE filler (x TEXT)")
        conn.executemany(
            "INSERT INTO filler VALUES (?)", [((FILLER_MARK * 40).decode(),) for _ in range(200)]
        )
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _leave_a_wal(db: Path) -> None:
    """A writer is SIGKILLed after its commits: its -wal file stays, not checkpointed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(db)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "written"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    wal = db.with_name(db.name + "-wal")
    assert wal.exists() and wal.stat().st_size > 0


def _damage_a_filler_page(db: Path) -> None:
    """Damage one page of a table the killed writer never touched (its header's count of
    fragmented bytes): quick_check reports it; SQLite opens and reads the file without a word."""
    data = bytearray(db.read_bytes())
    page_size = 4096
    pages = [
        n
        for n in range(1, len(data) // page_size)
        if FILLER_MARK in data[n * page_size :][:page_size]
    ]
    assert pages
    data[pages[len(pages) // 2] * page_size + 7] = 20
    db.write_bytes(bytes(data))


def test_a_damaged_library_with_a_wal_from_a_killed_writer_stays_byte_for_byte(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lib.sqlite3"
    _library_with_filler(db)
    _leave_a_wal(db)
    _damage_a_filler_page(db)
    check = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    report = check.execute("PRAGMA quick_check").fetchall()
    check.close()
    assert report != [("ok",)]  # damage quick_check reports, not "file is not a database"
    before = db.read_bytes()
    wal_before = db.with_name(db.name + "-wal").read_bytes()
    lib = Library(db)
    assert lib.read_only and lib.problem is not None
    assert "integrity check" in lib.problem and "damaged" not in lib.problem.split(";")[0][:5]
    with pytest.raises(LibraryError):
        lib.set_bookmark([IDS[0]])
    lib.close()
    assert db.read_bytes() == before
    assert db.with_name(db.name + "-wal").read_bytes() == wal_before
    assert not list(tmp_path.glob("*.backup-*"))


def test_a_healthy_library_with_a_wal_from_a_killed_writer_opens_with_every_write(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lib.sqlite3"
    _library_with_filler(db)
    _leave_a_wal(db)
    with Library(db, backups=False) as lib:
        assert not lib.read_only
        assert {f"{i:016x}" for i in range(50)} <= set(lib.snapshot.bookmarks)
        assert set(lib.snapshot.tags) == set(IDS)


# -- the read-only fallback opens exactly the named file -------------------------------------


def _newer(db: Path) -> None:
    with Library(db, backups=False) as lib:
        lib.set_bookmark([IDS[0]])
        lib.add_tags([IDS[1]], ["t"])
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        lib.conn.execute("PRAGMA journal_mode = DELETE")
        lib.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")


@pytest.mark.parametrize("name", ["we#ird", "what?mode=rwc", "100%41", "a b#c?d%e"])
def test_read_only_fallback_opens_exactly_the_named_file(tmp_path: Path, name: str) -> None:
    folder = tmp_path / name
    folder.mkdir()
    db = folder / "lib.sqlite3"
    _newer(db)
    before, tree = db.read_bytes(), _tree(tmp_path)
    lib = Library(db)
    assert lib.read_only and lib.problem is not None
    assert f"made by a newer abstract-reader (schema {SCHEMA_VERSION + 1}" in lib.problem
    assert "opened read-only" in lib.problem
    # What it holds is shown (not an empty stand-in), and nothing else was opened or made.
    assert set(lib.snapshot.bookmarks) == {IDS[0]} and lib.snapshot.tags == {IDS[1]: ["t"]}
    lib.close()
    assert db.read_bytes() == before and _tree(tmp_path) == tree


def test_newer_schema_is_shown_by_the_cli_once(seeds: Corpus, tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    _newer(db)
    pid = seeds.papers[0].id
    listed = cli("list", db=db)
    assert listed.returncode == 0
    assert listed.stderr.count("made by a newer abstract-reader") == 1
    written = cli("bookmark", pid, db=db)
    assert written.returncode == 1
    assert written.stderr.count("\n") == 1 and "newer abstract-reader" in written.stderr


# -- file types and locations: say what is wrong -----------------------------------------------


def test_a_dangling_symlink_is_named_and_not_followed(tmp_path: Path) -> None:
    link = tmp_path / "lib.sqlite3"
    link.symlink_to(tmp_path / "gone" / "real.sqlite3")
    lib = Library(link)
    assert lib.read_only and lib.problem is not None
    assert "symbolic link" in lib.problem and "does not exist" in lib.problem
    assert "damaged" not in lib.problem
    assert not (tmp_path / "gone").exists()


def test_a_symlink_to_a_library_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "real.sqlite3"
    with Library(real, backups=False) as lib:
        lib.set_bookmark([IDS[0]])
    link = tmp_path / "link.sqlite3"
    link.symlink_to(real)
    with Library(link, backups=False) as lib:
        assert not lib.read_only and set(lib.snapshot.bookmarks) == {IDS[0]}
        lib.set_read([IDS[0]])
    with Library(real, backups=False) as lib:
        assert set(lib.snapshot.read) == {IDS[0]}
    assert link.is_symlink()


def test_a_fifo_as_the_library_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "lib.sqlite3"
    os.mkfifo(fifo)
    result = subprocess.run(
        [sys.executable, "-m", "abstract_reader", "tags", "--db", str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert "is a FIFO, not a library file" in result.stderr
    assert result.stderr.count("FIFO") == 1 and "Traceback" not in result.stderr


def test_dev_null_is_refused_and_gets_no_journal() -> None:
    journal = Path("/dev/null-journal")
    existed = journal.exists()
    lib = Library("/dev/null")
    assert lib.read_only and lib.problem is not None
    assert "is a character device, not a library file" in lib.problem
    lib.close()
    if not existed:
        assert not journal.exists()


def test_a_healthy_library_in_an_unwritable_folder_is_not_called_damaged() -> None:
    base = world_dir()
    folder = base / "ro"
    folder.mkdir()
    db = folder / "lib.sqlite3"
    with Library(db, backups=False) as lib:
        lib.set_bookmark([IDS[0]])
    db.chmod(0o666)
    folder.chmod(0o555)
    before = _files(folder)
    code = (
        "from abstract_reader.library import Library\n"
        f"lib = Library({str(db)!r})\n"
        "print(lib.read_only, sorted(lib.snapshot.bookmarks))\n"
        "print(lib.problem)\n"
    )
    result = (
        run_as_nobody(code)
        if AS_ROOT
        else subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
    )
    assert result.returncode == 0, result.stderr
    first, problem = result.stdout.splitlines()[:2]
    assert first == f"True ['{IDS[0]}']"
    assert "not writable" in problem and "damaged" not in problem
    assert _files(folder) == before


# -- a full disk in the middle of a write ----------------------------------------------------

FULL_DISK = r"""
import os, resource, sys
from abstract_reader.library import Library, LibraryError
db = sys.argv[1]
lib = Library(db, backups=False)
sizes = [os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p)]
resource.setrlimit(resource.RLIMIT_FSIZE, (max(sizes) + 16384, resource.RLIM_INFINITY))
try:
    lib.set_note("0000000000000001", "x" * 2_000_000)
    print("written")
except LibraryError as exc:
    print("refused:", exc)
print("in transaction:", lib.conn.in_transaction)
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
lib.set_note("0000000000000001", "fits")
print("after:", lib.snapshot.notes)
"""


def test_a_full_disk_mid_write_is_one_line_and_leaves_no_transaction(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    with Library(db, backups=False) as lib:
        lib.set_bookmark([IDS[0]])
    result = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(db)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("refused: ") and "nothing was changed" in lines[0]
    assert "disk" in lines[0]
    assert lines[1] == "in transaction: False"
    assert lines[2] == "after: {'0000000000000001': 'fits'}"


def _limit_file_size(limit: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))


def test_cli_on_a_full_disk_says_so_in_one_line(seeds: Corpus, tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    pid = seeds.papers[0].id
    assert cli("bookmark", pid, db=db).returncode == 0
    limit = max(p.stat().st_size for p in tmp_path.iterdir() if p.is_file()) + 16384
    result = subprocess.run(
        [sys.executable, "-m", "abstract_reader", "note", pid, "x" * 120_000, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: _limit_file_size(limit),
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and "cannot rollback" not in result.stderr
    assert "nothing was changed" in result.stderr
    assert cli("note", pid, db=db).stdout.strip() == ""  # nothing half-written
    # A daily backup that failed under the same limit leaves no empty file behind.
    assert all(p.stat().st_size > 0 for p in tmp_path.glob("lib.sqlite3.backup-*"))


# -- backups ------------------------------------------------------------------------------------


def test_backups_of_a_library_with_glob_characters_in_its_name_rotate(tmp_path: Path) -> None:
    db = tmp_path / "lib[1].sqlite3"
    with Library(db) as lib:
        lib.set_bookmark([IDS[0]])
    Library(db).close()
    Library(db).close()
    backups = list(tmp_path.glob("lib[[]1].sqlite3.backup-*"))
    assert len(backups) == 1  # at most one a day, whatever the name
    with Library(db) as lib:
        for _ in range(8):
            lib._backup(lib.conn, reason="test")
    assert len(list(tmp_path.glob("lib[[]1].sqlite3.backup-*"))) == 5


def test_a_failed_backup_leaves_no_empty_file_counted_as_todays(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    with Library(db, backups=False) as lib:
        lib.add_tags(IDS, ["x" * 60 + str(n) for n in range(20)])
        lib.set_note(IDS[0], "n" * 150_000)
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert db.stat().st_size > 100_000
    limit = 65536  # smaller than the library: VACUUM INTO cannot finish
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, resource.RLIM_INFINITY))\n"
        "from abstract_reader.library import Library\n"
        f"lib = Library({str(db)!r})\n"
        "print(lib.read_only, len(lib.snapshot.tags))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"False {len(IDS)}"
    assert not list(tmp_path.glob("lib.sqlite3.backup-*"))
    Library(db).close()  # no limit: today's backup is made now
    made = list(tmp_path.glob("lib.sqlite3.backup-*"))
    assert len(made) == 1 and made[0].stat().st_size > 0


def test_backups_keep_the_library_files_mode(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    with Library(db) as lib:
        lib.set_bookmark([IDS[0]])
    db.chmod(0o600)
    with Library(db) as lib:
        lib._backup(lib.conn, reason="test")
    for backup in tmp_path.glob("lib.sqlite3.backup-*"):
        assert backup.stat().st_mode & 0o777 == 0o600


# -- stored values of the wrong type -----------------------------------------------------------


def _odd_values(db: Path, pid: str) -> None:
    with Library(db, backups=False) as lib:
        lib.set_bookmark([pid])
        lib.add_tags([pid], ["fine"])
    conn = sqlite3.connect(db, isolation_level=None)  # another tool, writing what it likes
    conn.execute("INSERT INTO notes VALUES (?, ?, 1.0)", (pid, b"blob \xff\x1b[2J note"))
    conn.execute(
        "INSERT INTO metadata VALUES (?, ?, ?, ?, ?, ?, ?)",
        (pid, 12345, b'["A \\u001b B", 7]', None, 10.5, "2021", "yesterday"),
    )
    conn.execute("INSERT INTO metadata VALUES (?, NULL, 'not json', 3, NULL, 'x', 0)", (IDS[0],))
    conn.execute("INSERT INTO tags(name) VALUES (42)")
    conn.execute(
        "INSERT INTO paper_tags VALUES (?, (SELECT id FROM tags WHERE name = 42), 'z')", (pid,)
    )
    conn.execute("INSERT INTO read_marks VALUES (?, 'not a time')", (pid,))
    conn.execute("INSERT INTO settings VALUES ('cite_format', ?)", (b"bibtex",))
    conn.execute("INSERT INTO settings VALUES ('theme', 9)")
    conn.close()


def test_values_that_are_not_text_never_break_a_command(seeds: Corpus, tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    pid = seeds.papers[0].id
    _odd_values(db, pid)
    with Library(db, backups=False) as lib:
        snap = lib.snapshot
        assert snap.notes[pid].startswith("blob ") and "\x1b" not in snap.notes[pid]
        assert snap.metadata[pid].title == "12345" and snap.metadata[pid].year == 2021
        assert snap.metadata[pid].authors == ("A ␛ B", "7")
        assert snap.tags[pid] == ["42", "fine"] and pid in snap.read
        lib.set_note(pid, "replaced", expected=snap.notes[pid])
        lib.rename_tag("42", "forty-two")
    for args in (
        ("list",),
        ("list", "--json"),
        ("show", pid),
        ("tags",),
        ("note", pid),
        ("meta", pid),
        ("cite", pid),
        ("export", "-f", "csl-json"),
        ("library", "export", "-"),
    ):
        result = cli(*args, db=db)
        assert result.returncode == 0, (args, result.stderr)
        assert "Traceback" not in result.stderr and "\x1b" not in result.stdout


# -- where the library lives ---------------------------------------------------------------------


def test_folders_made_for_the_library_are_private_and_existing_ones_kept(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    db = tmp_path / "data" / "abstract-reader" / "lib.sqlite3"
    with Library(db, backups=False) as lib:
        lib.set_note(IDS[0], "private thoughts")
    assert (tmp_path / "data").stat().st_mode & 0o777 == 0o700
    assert db.parent.stat().st_mode & 0o777 == 0o700
    assert tmp_path.stat().st_mode & 0o777 == 0o755


def test_a_blank_environment_override_means_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from abstract_reader.paths import cache_dir, default_db_path

    monkeypatch.setenv("ABSTRACT_READER_DB", "  ")
    monkeypatch.setenv("ABSTRACT_READER_CACHE", "")
    assert default_db_path().name == "library.sqlite3" and default_db_path().is_absolute()
    assert cache_dir().is_absolute() and str(cache_dir()).strip() == str(cache_dir())


# -- metadata rows as another tool left them -------------------------------------------------


def test_metadata_rows_left_blank_elsewhere_are_no_metadata(tmp_path: Path) -> None:
    """The library's papers with metadata are those with something to show, however the rows
    were written: a row of spaces, an empty author list or a year that is no year is none
    (not listed as a paper the library knows, not exported), a control character shown as
    its stand-in is something."""
    db = tmp_path / "lib.sqlite3"
    Library(db, backups=False).close()
    conn = sqlite3.connect(db, isolation_level=None)  # another tool, writing what it likes
    rows = [
        (IDS[0], "   ", "[]", None, "", None),
        (IDS[1], "\t\n", '["  ", ""]', " ", None, 12),
        (IDS[2], None, '["Ada  Lovelace"]', None, None, None),
        (IDS[3], "\x1c", "[]", None, None, None),
        (IDS[4], " A   title ", "not json", None, None, None),
        (IDS[5], "\u2028", "[]", None, None, "20x1"),
        (IDS[6], None, "[]", None, None, 2021),
        (None, "a row of no paper", "[]", None, None, None),
    ]
    conn.executemany("INSERT INTO metadata VALUES (?, ?, ?, ?, ?, ?, 0)", rows)
    conn.close()
    with Library(db, backups=False) as lib:
        snap = lib.snapshot
        assert sorted(snap.metadata) == [IDS[2], IDS[3], IDS[4], IDS[6]]
        assert len(snap.metadata) == 4
        for blank in (IDS[0], IDS[1], IDS[5], IDS[7]):
            assert blank not in snap.metadata and snap.metadata.get(blank) is None
        assert snap.metadata[IDS[2]].authors == ("Ada Lovelace",)
        assert snap.metadata[IDS[3]].title == "␜"
        assert snap.metadata[IDS[4]].title == "A title" and snap.metadata[IDS[4]].authors == ()
        assert snap.metadata[IDS[6]].year == 2021
        assert all(not meta.empty for meta in snap.metadata.values())
        assert snap.paper_ids() == {IDS[2], IDS[3], IDS[4], IDS[6]}
    out = cli("library", "export", "-", db=db)
    assert out.returncode == 0, out.stderr
    exported = set(json.loads(out.stdout)["papers"])
    assert exported == {IDS[2], IDS[3], IDS[4], IDS[6]}


def test_one_papers_metadata_written_leaves_the_others_as_they_were(tmp_path: Path) -> None:
    """A write reads back only its paper's row: the others' metadata are the very values
    the views had (the index follows them by identity), a cleared one is gone, and another
    process's view of the file agrees with this one's."""
    db = tmp_path / "lib.sqlite3"
    with Library(db, backups=False) as lib:
        for n, pid in enumerate(IDS[:4]):
            lib.set_metadata(pid, Metadata(title=f"Title {n}", year=2020 + n))
        before = lib.snapshot.metadata
        kept = {pid: before[pid] for pid in IDS[1:3]}
        lib.set_metadata(IDS[0], Metadata(title="Renamed", authors=("B. Author",)))
        lib.set_metadata(IDS[3], Metadata())
        after = lib.snapshot.metadata
        assert after[IDS[0]] == Metadata(title="Renamed", authors=("B. Author",))
        assert IDS[3] not in after and len(after) == 3
        assert all(after[pid] is meta for pid, meta in kept.items())
        assert before[IDS[0]].title == "Title 0" and IDS[3] in before  # (not changed)
        with Library(db, backups=False) as other:
            assert other.snapshot.metadata == after
            assert dict(other.snapshot.metadata) == dict(after)
            assert other.snapshot.metadata != before
