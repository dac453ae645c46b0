"""When a tag was put on a paper and when it was bookmarked: stored, kept by undo, rename and
merge, carried by export/import, read from libraries made before the reader showed them, and
the "recently tagged or bookmarked" order built on them."""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from abstract_reader.corpus import Corpus
from abstract_reader.library import Library, LibraryError
from abstract_reader.library.interchange import EXPORT_VERSION
from abstract_reader.library.schema import SCHEMA_VERSION
from abstract_reader.session import Session
from abstract_reader.sorting import SORTS, sort_order

from .conftest import cli

A, B, C, D = (f"{n:016x}" for n in (0xA, 0xB, 0xC, 0xD))
HEADER = {"format": "abstract-reader-library", "version": EXPORT_VERSION}


def _lib(tmp_path: Path, name: str = "lib.sqlite3") -> Library:
    return Library(tmp_path / name, backups=False)


def _tag_time(lib: Library, pid: str, tag: str) -> float:
    row = lib.conn.execute(
        "SELECT added_at FROM paper_tags JOIN tags ON tags.id = tag_id"
        " WHERE paper_id = ? AND tags.name = ?",
        (pid, tag),
    ).fetchone()
    assert row is not None, f"{pid} has no tag {tag!r}"
    return float(row[0])


def _with_times(lib: Library, papers: dict[str, dict[str, Any]]) -> None:
    """Tags and bookmarks at chosen times, through the library's own import."""
    lib.import_data({**HEADER, "papers": papers})


# -- stored and shown ------------------------------------------------------------------------


def test_each_tag_and_bookmark_records_when_it_was_set(tmp_path: Path) -> None:
    with _lib(tmp_path) as lib:
        before = time.time()
        lib.add_tags([A], ["first"])
        lib.set_bookmark([B])
        lib.add_tags([A], ["second"])
        after = time.time()
        first, second = _tag_time(lib, A, "first"), _tag_time(lib, A, "second")
        assert before <= first <= second <= after
        assert lib.snapshot.tagged == {A: second}  # the newest of the paper's tags
        assert before <= lib.snapshot.bookmarks[B] <= after
        lib.remove_tags([A], ["second"])
        assert lib.snapshot.tagged == {A: first}
        lib.remove_tags([A], ["first"])
        assert lib.snapshot.tagged == {}


def test_adding_a_tag_a_paper_has_keeps_its_time(tmp_path: Path) -> None:
    with _lib(tmp_path) as lib:
        _with_times(lib, {A: {"tags": ["x"], "tagged_at": {"x": 1000.0}}})
        lib.add_tags([A, B], ["X"])
        assert _tag_time(lib, A, "x") == 1000.0
        assert _tag_time(lib, B, "x") > 1000.0


def test_undo_restores_the_time_a_tag_and_a_bookmark_had(tmp_path: Path) -> None:
    with _lib(tmp_path) as lib:
        _with_times(
            lib,
            {
                A: {
                    "tags": ["x", "y"],
                    "tagged_at": {"x": 1000.0, "y": 2000.0},
                    "bookmarked_at": 500.0,
                }
            },
        )
        lib.remove_tags([A], ["x", "y"])
        lib.set_bookmark([A], on=False)
        assert A not in lib.snapshot.tagged and A not in lib.snapshot.bookmarks
        lib.undo()
        lib.undo()
        assert (_tag_time(lib, A, "x"), _tag_time(lib, A, "y")) == (1000.0, 2000.0)
        assert lib.snapshot.tagged[A] == 2000.0 and lib.snapshot.bookmarks[A] == 500.0
        lib.delete_tag("y")
        lib.undo()
        assert _tag_time(lib, A, "y") == 2000.0


def test_a_rename_keeps_every_papers_time(tmp_path: Path) -> None:
    with _lib(tmp_path) as lib:
        _with_times(
            lib,
            {
                A: {"tags": ["old"], "tagged_at": {"old": 1000.0}},
                B: {"tags": ["old"], "tagged_at": {"old": 3000.0}},
            },
        )
        lib.rename_tag("old", "new")
        assert (_tag_time(lib, A, "new"), _tag_time(lib, B, "new")) == (1000.0, 3000.0)
        lib.rename_tag("new", "NEW")  # only the case
        assert (_tag_time(lib, A, "NEW"), _tag_time(lib, B, "NEW")) == (1000.0, 3000.0)
        lib.undo()
        lib.undo()
        assert (_tag_time(lib, A, "old"), _tag_time(lib, B, "old")) == (1000.0, 3000.0)


def test_a_merge_keeps_the_later_time_and_undo_restores_both(tmp_path: Path) -> None:
    """A paper with both tags keeps the later of its two times: a merge moves no paper in
    the "recently tagged" order."""
    with _lib(tmp_path) as lib:
        _with_times(
            lib,
            {
                A: {"tags": ["src", "dst"], "tagged_at": {"src": 5000.0, "dst": 1000.0}},
                B: {"tags": ["src", "dst"], "tagged_at": {"src": 1000.0, "dst": 4000.0}},
                C: {"tags": ["src"], "tagged_at": {"src": 2000.0}},
                D: {"tags": ["dst"], "tagged_at": {"dst": 3000.0}},
            },
        )
        before = dict(lib.snapshot.tagged)
        with pytest.raises(LibraryError, match="merge"):
            lib.rename_tag("src", "dst")
        lib.rename_tag("src", "dst", merge=True)
        times = {pid: _tag_time(lib, pid, "dst") for pid in (A, B, C, D)}
        assert times == {A: 5000.0, B: 4000.0, C: 2000.0, D: 3000.0}
        assert lib.snapshot.tagged == before
        assert lib.snapshot.tag_names == ["dst"]
        assert lib.undo() == "rename of tag 'src' to 'dst'"
        assert {pid: _tag_time(lib, pid, "src") for pid in (A, B, C)} == {
            A: 5000.0,
            B: 1000.0,
            C: 2000.0,
        }
        assert {pid: _tag_time(lib, pid, "dst") for pid in (A, B, D)} == {
            A: 1000.0,
            B: 4000.0,
            D: 3000.0,
        }
        assert C not in lib.ids_with_tag("dst")


def test_another_view_sees_a_merge_change_the_times(tmp_path: Path) -> None:
    with _lib(tmp_path) as lib, _lib(tmp_path) as other:
        _with_times(
            lib,
            {A: {"tags": ["src", "dst"], "tagged_at": {"src": 5000.0, "dst": 1000.0}}},
        )
        other.refresh()
        lib.remove_tags([A], ["src"])  # now the paper's newest tag is dst (1000)
        assert other.refresh() == {"tags"}
        assert other.snapshot.tagged == {A: 1000.0} == lib.snapshot.tagged


def test_a_writer_that_does_not_log_changing_only_a_time_is_seen(tmp_path: Path) -> None:
    with _lib(tmp_path) as lib:
        lib.add_tags([A], ["x"])
        lib.refresh()
        with closing(sqlite3.connect(tmp_path / "lib.sqlite3")) as raw, raw:
            raw.execute("UPDATE paper_tags SET added_at = 42.0")
        assert lib.refresh() == {"tags"}
        assert lib.snapshot.tagged == {A: 42.0}


def test_odd_stored_times_read_as_numbers(tmp_path: Path) -> None:
    with _lib(tmp_path) as lib:
        lib.add_tags([A, B, C], ["x"])
        with closing(sqlite3.connect(tmp_path / "lib.sqlite3")) as raw, raw:
            raw.execute("UPDATE paper_tags SET added_at = 'soon' WHERE paper_id = ?", (A,))
            raw.execute("UPDATE paper_tags SET added_at = '12.5' WHERE paper_id = ?", (B,))
            raw.execute("UPDATE paper_tags SET added_at = 1e999 WHERE paper_id = ?", (C,))
        lib.reload()
        assert lib.snapshot.tagged == {A: 0.0, B: 12.5, C: 0.0}
        assert json.dumps(lib.export_data(), allow_nan=False)


# -- a library made before: schema 3 -----------------------------------------------------------

V3_DDL = """
CREATE TABLE bookmarks (paper_id TEXT PRIMARY KEY, created_at REAL NOT NULL);
CREATE TABLE read_marks (paper_id TEXT PRIMARY KEY, read_at REAL NOT NULL);
CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE);
CREATE TABLE paper_tags (
    paper_id TEXT NOT NULL,
    tag_id INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    added_at REAL NOT NULL,
    PRIMARY KEY (paper_id, tag_id)
);
CREATE INDEX paper_tags_tag ON paper_tags(tag_id);
CREATE TABLE notes (paper_id TEXT PRIMARY KEY, body TEXT NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE metadata (
    paper_id TEXT PRIMARY KEY, title TEXT, authors TEXT NOT NULL DEFAULT '[]', url TEXT,
    doi TEXT, year INTEGER, updated_at REAL NOT NULL
);
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, facts TEXT NOT NULL,
    paper_ids TEXT NOT NULL, inverse TEXT NOT NULL, origin TEXT NOT NULL, what TEXT NOT NULL
);
PRAGMA user_version = 3;
"""


def _v3_library(path: Path, ids: list[str]) -> None:
    """A schema 3 library as the reader before this change wrote it: tags at 1000, 3000,
    bookmarks at 2000, a read mark, the setting `sort = bookmarked`."""
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.executescript(V3_DDL)
        conn.execute("INSERT INTO tags(id, name) VALUES (1, 'toread')")
        conn.execute("INSERT INTO paper_tags VALUES (?, 1, 1000.0)", (ids[5],))
        conn.execute("INSERT INTO paper_tags VALUES (?, 1, 3000.0)", (ids[7],))
        conn.execute("INSERT INTO bookmarks VALUES (?, 2000.0)", (ids[2],))
        conn.execute("INSERT INTO read_marks VALUES (?, 10.0)", (ids[0],))
        conn.execute("INSERT INTO settings VALUES ('sort', 'bookmarked')")


def test_a_schema_3_library_keeps_its_times_and_its_version(tmp_path: Path, seeds: Corpus) -> None:
    """Schema 3 stored every tag's and bookmark's time already: nothing is migrated, so a
    reader from before this change still opens the same file read-write."""
    db = tmp_path / "old.sqlite3"
    ids = [p.id for p in seeds.papers]
    _v3_library(db, ids)
    assert SCHEMA_VERSION == 3
    with Library(db) as lib:
        assert not lib.read_only
        assert lib.snapshot.tagged == {ids[5]: 1000.0, ids[7]: 3000.0}
        assert lib.snapshot.bookmarks == {ids[2]: 2000.0}
        order = sort_order("recent", seeds.papers, lib.snapshot, seeds)
        assert [seeds.papers[i].id for i in order[:4]] == [ids[7], ids[2], ids[5], ids[0]]
        lib.add_tags([ids[9]], ["new"])  # the old file takes writes as before
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
        assert conn.execute("SELECT count(*) FROM paper_tags").fetchone()[0] == 3
    listed = cli("list", "--sort", "recent", db=db)
    assert listed.returncode == 0, listed.stderr
    shown = [line.split()[0] for line in listed.stdout.splitlines()]
    short = {p.id: p.short_id for p in seeds.papers}
    assert shown[:4] == [short[ids[9]], short[ids[7]], short[ids[2]], short[ids[5]]]


def test_a_newer_schema_still_opens_read_only_with_its_times(tmp_path: Path, seeds: Corpus) -> None:
    db = tmp_path / "newer.sqlite3"
    ids = [p.id for p in seeds.papers]
    _v3_library(db, ids)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with Library(db) as lib:
        assert lib.read_only and "newer abstract-reader" in (lib.problem or "")
        assert lib.snapshot.tagged == {ids[5]: 1000.0, ids[7]: 3000.0}


# -- export and import -------------------------------------------------------------------------


def test_export_and_import_carry_the_times(tmp_path: Path) -> None:
    with _lib(tmp_path, "a.sqlite3") as a:
        _with_times(
            a,
            {
                A: {"tags": ["x", "y"], "tagged_at": {"x": 1000.0, "Y": 2000.0}},
                B: {"bookmarked_at": 1500.0},
            },
        )
        exported = json.loads(json.dumps(a.export_data()))
    assert exported["version"] == EXPORT_VERSION == 2
    assert exported["papers"][A] == {"tags": ["x", "y"], "tagged_at": {"x": 1000.0, "y": 2000.0}}
    with _lib(tmp_path, "b.sqlite3") as b:
        b.add_tags([A], ["y"])  # here already: its own time is kept
        mine = _tag_time(b, A, "y")
        b.import_data(exported)
        assert (_tag_time(b, A, "x"), _tag_time(b, A, "y")) == (1000.0, mine)
        assert b.snapshot.bookmarks[B] == 1500.0


def test_an_old_export_without_times_still_imports(tmp_path: Path) -> None:
    old = {
        "format": "abstract-reader-library",
        "version": 1,
        "schema": 3,
        "papers": {A: {"tags": ["x"], "bookmarked_at": 700.0}},
        "settings": {"sort": "bookmarked"},
    }
    with _lib(tmp_path) as lib:
        before = time.time()
        lib.import_data(old)
        assert _tag_time(lib, A, "x") >= before  # the time of the import
        assert lib.snapshot.bookmarks[A] == 700.0
        assert lib.setting("sort") == "recent"  # the former name of the order


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"tags": ["x"], "tagged_at": ["x"]}, "'tagged_at' must be an object"),
        ({"tags": ["x"], "tagged_at": {"y": 1.0}}, "tagged_at names 'y', not one of its tags"),
        ({"tagged_at": {"x": 1.0}}, "tagged_at names 'x', not one of its tags"),
        ({"tags": ["x"], "tagged_at": {"x": "soon"}}, "tagged_at of 'x' must be a number"),
        ({"tags": ["x"], "tagged_at": {"x": -1}}, "must be a time in seconds since 1970"),
        ({"tags": ["x"], "tagged_at": {"x": True}}, "must be a number"),
        ({"tags": ["x"], "tagged_at": {"": 1.0}}, "tagged_at: a tag cannot be empty"),
    ],
)
def test_bad_tag_times_reject_the_whole_import(
    tmp_path: Path, entry: dict[str, Any], message: str
) -> None:
    with _lib(tmp_path) as lib:
        lib.add_tags([B], ["kept"])
        with pytest.raises(LibraryError, match=message):
            lib.import_data({**HEADER, "papers": {C: {"tags": ["fine"]}, A: entry}})
        assert lib.snapshot.tags == {B: ["kept"]}


# -- the order ---------------------------------------------------------------------------------


def test_recent_puts_the_newest_tag_or_bookmark_first(tmp_path: Path, seeds: Corpus) -> None:
    ids = [p.id for p in seeds.papers]
    with _lib(tmp_path) as lib:
        _with_times(
            lib,
            {
                ids[20]: {"tags": ["a"], "tagged_at": {"a": 1000.0}},
                ids[3]: {"bookmarked_at": 3000.0},
                ids[11]: {"tags": ["a", "b"], "tagged_at": {"a": 500.0, "b": 2000.0}},
                ids[30]: {"tags": ["a"], "tagged_at": {"a": 100.0}, "bookmarked_at": 4000.0},
            },
        )
        order = sort_order("recent", seeds.papers, lib.snapshot, seeds)
        shown = [seeds.papers[i].id for i in order]
        assert shown[:4] == [ids[30], ids[3], ids[11], ids[20]]
        rest = [pid for pid in ids if pid not in shown[:4]]
        assert shown[4:] == rest  # never tagged or bookmarked: as given (the dump order)
        assert "recent" in SORTS and SORTS["recent"] == "recently tagged or bookmarked"


def test_recent_is_stale_when_tags_or_bookmarks_change(tmp_path: Path) -> None:
    with _lib(tmp_path) as lib:
        session = Session(lib)
        session.sort = "recent"
        assert session.is_stale({"tags"}) and session.is_stale({"bookmarks"})
        assert not session.is_stale({"read"}) and not session.is_stale({"notes"})
        assert session.next_sort() == "unread"


def test_list_sort_recent_and_its_former_name(tmp_path: Path, seeds: Corpus) -> None:
    db = tmp_path / "lib.sqlite3"
    first, second = seeds.papers[10], seeds.papers[3]
    assert cli("bookmark", first.id, db=db).returncode == 0
    assert cli("tag", second.id, "later", db=db).returncode == 0
    for name in ("recent", "bookmarked"):
        result = cli("list", "--sort", name, db=db)
        assert result.returncode == 0, result.stderr
        shown = [line.split()[0] for line in result.stdout.splitlines()]
        assert shown[:2] == [second.short_id, first.short_id]
