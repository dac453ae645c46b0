"""`library import` of hostile documents: validated as a whole first, nothing written on a
rejected input, one line naming the file and the problem; what is accepted round-trips."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abstract_reader.library import Library, LibraryError, Metadata
from abstract_reader.library.interchange import EXPORT_VERSION, parse_export

from .conftest import cli

IDS = [f"{n:016x}" for n in range(1, 9)]
HEADER = {"format": "abstract-reader-library", "version": 1}


def _doc(papers: dict[str, Any], settings: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**HEADER, "papers": papers, "settings": settings or {}}


def _seeded(db: Path) -> Library:
    lib = Library(db, backups=False)
    lib.set_bookmark([IDS[0]])
    lib.add_tags([IDS[1]], ["mine"])
    lib.set_note(IDS[2], "my note")
    lib.set_metadata(IDS[3], Metadata(title="Mine", year=2020))
    lib.set_setting("cite_format", "text")
    return lib


def _contents(lib: Library) -> str:
    rows = lib.conn.execute("SELECT count(*) FROM changes").fetchone()[0]
    return json.dumps([lib.export_data(), rows], sort_keys=True)


def _safe_line(message: str) -> bool:
    """One line, and nothing in it that a terminal would act on."""
    return not any(
        ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 or unicodedata.category(ch) == "Cf"
        for ch in message
    )


# -- the JSON itself ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ('{"a": NaN}', "NaN is not a number JSON allows"),
        ('{"a": -Infinity}', "-Infinity is not a number JSON allows"),
        ('{"a": 1e400}', "too large"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"a": ' + "9" * 5000 + "}", "not valid JSON"),
        ("{nope", "not valid JSON (line 1"),
    ],
    ids=["nan", "infinity", "1e400", "deep", "huge-int", "syntax"],
)
def test_json_that_is_not_valid_is_one_line(raw: str, problem: str) -> None:
    with pytest.raises(LibraryError, match=problem.replace("(", r"\(")) as caught:
        parse_export(raw)
    assert "\n" not in str(caught.value)


# -- the document -------------------------------------------------------------------------------

REJECTED = [
    ({IDS[0]: {"metadata": {"year": "nan"}}}, {}, "year must be a number"),
    ({IDS[0]: {"metadata": {"year": 1e300}}}, {}, "four digits"),
    ({IDS[0]: {"bookmarked_at": "nan"}}, {}, "bookmarked_at must be a number"),
    ({IDS[0]: {"read_at": 1e300}}, {}, "read_at must be a time"),
    ({IDS[0]: {"read_at": True}}, {}, "read_at must be a number"),
    ({IDS[0]: {"note": 5}}, {}, "note must be text"),
    ({IDS[0]: {"tags": [1]}}, {}, "a tag must be text"),
    ({IDS[0]: {"tags": {"a": 1}}}, {}, "'tags' must be a list"),
    ({IDS[0]: {"metadata": {"authors": "A B"}}}, {}, "'authors' must be a list"),
    ({IDS[0]: {"metadata": {"title": ["x"]}}}, {}, "title must be text"),
    ({IDS[0]: {"metadata": {"colour": "red"}}}, {}, "unknown metadata field 'colour'"),
    ({IDS[0]: {"starred": True}}, {}, "unknown field 'starred'"),
    ({IDS[0]: []}, {}, "its record must be an object"),
    ({"not-an-id": {}}, {}, "'not-an-id' is not a paper id"),
    ({}, {"cite_format": "latex"}, "setting 'cite_format' must be one of"),
    ({}, {"auto_read": "sometimes"}, "setting 'auto_read' must be one of on, off"),
    ({}, {"paper": "x"}, "setting 'paper' must be a paper id"),
    ({}, {"theme": "dark\x1b[2J"}, "without control characters"),
    ({}, {"colour": "red"}, "unknown setting 'colour'"),
    ({}, {"theme": 3}, "its value must be text"),
    ({}, {f"provenance:{IDS[0]}": "[1]"}, "must be a JSON object"),
]


@pytest.mark.parametrize(("papers", "settings_", "message"), REJECTED)
def test_a_bad_value_anywhere_rejects_the_whole_document(
    tmp_path: Path, papers: dict[str, Any], settings_: dict[str, Any], message: str
) -> None:
    with _seeded(tmp_path / "lib.sqlite3") as lib:
        before = _contents(lib)
        good = {IDS[4]: {"bookmarked_at": 1.0, "tags": ["fine"], "note": "n"}}
        with pytest.raises(LibraryError, match=message) as caught:
            lib.import_data(_doc({**good, **papers}, settings_))
        assert "\n" not in str(caught.value) and _safe_line(str(caught.value))
        assert _contents(lib) == before  # all or nothing
        assert lib.undo() == "metadata"  # the import left no change to undo


def test_a_newer_export_version_is_refused(tmp_path: Path) -> None:
    with Library(tmp_path / "lib.sqlite3") as lib:
        with pytest.raises(LibraryError, match="newer abstract-reader"):
            lib.import_data({**_doc({}), "version": EXPORT_VERSION + 1})


def test_ids_and_settings_in_messages_are_sanitised(tmp_path: Path) -> None:
    evil_id = "\x1b]52;c;ZXZpbA==\x07\u202e\x9b"
    for doc in (
        _doc({evil_id: {}}),
        _doc({}, {"\u202etheme\x1b": "x"}),
        _doc({}, {"theme": "\u202edark\x85"}),
    ):
        with Library(tmp_path / "lib.sqlite3") as lib, pytest.raises(LibraryError) as caught:
            lib.import_data(doc)
        assert _safe_line(str(caught.value)), repr(str(caught.value))


def test_cli_import_of_hostile_json_names_the_file_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    ok = _write(tmp_path / "ok.json", _doc({IDS[0]: {"tags": ["a"]}}))
    assert cli("library", "import", str(ok), db=db).returncode == 0
    before = cli("library", "export", "-", db=db).stdout
    deep = tmp_path / "deep\x1b[31m.json"
    deep.write_text(
        '{"format": "abstract-reader-library", "papers": ' + "[" * 50_000 + "]" * 50_000 + "}"
    )
    head = '{"format": "abstract-reader-library", "papers": {"%s": ' % IDS[1]
    cases = {
        "nan.json": head + '{"read_at": NaN}}}',
        "big.json": head + '{"read_at": 1e400}}}',
        "year.json": json.dumps(_doc({IDS[1]: {"metadata": {"year": "nan"}}})),
        "setting.json": json.dumps(_doc({IDS[1]: {"tags": ["b"]}}, {"cite_format": "nope"})),
    }
    files = [deep]
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        files.append(tmp_path / name)
    for path in files:
        result = cli("library", "import", str(path), db=db)
        assert result.returncode == 1, result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert "\x1b" not in result.stderr
        assert path.name.split("\x1b")[0] in result.stderr
    assert cli("library", "export", "-", db=db).stdout == before


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc))
    return path


def test_export_is_valid_json_whatever_is_stored(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "lib.sqlite3"
    Library(db).close()
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO bookmarks VALUES (?, ?)", (IDS[0], float("inf")))
    conn.execute("INSERT INTO read_marks VALUES (?, ?)", (IDS[0], -float("inf")))
    conn.execute("INSERT INTO metadata VALUES (?, 'T', '[]', NULL, NULL, 1e308, 0)", (IDS[1],))
    conn.commit()
    conn.close()
    result = cli("library", "export", "-", db=db)
    assert result.returncode == 0, result.stderr
    assert "Infinity" not in result.stdout and "NaN" not in result.stdout
    exported = json.loads(result.stdout, parse_constant=pytest.fail)
    assert exported["papers"][IDS[0]]["bookmarked_at"] == 0.0
    other = tmp_path / "other.sqlite3"
    (tmp_path / "e.json").write_text(result.stdout)
    assert cli("library", "import", str(tmp_path / "e.json"), db=other).returncode == 0


# -- fuzz ---------------------------------------------------------------------------------------

JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["nan", "2021", "", " ", "#tag", "\x1b[2J", "\u202e"]),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
TIMES = st.one_of(st.floats(min_value=0, max_value=2e9), JSON_VALUES)
TAG_NAMES = st.one_of(
    st.sampled_from(["a", "B", " c ", "x" * 64, "x" * 65, "", "#d"]), st.text(max_size=8)
)
META = st.fixed_dictionaries(
    {},
    optional={
        "title": st.one_of(st.none(), st.text(max_size=10), JSON_VALUES),
        "authors": st.one_of(st.none(), st.lists(st.text(max_size=8), max_size=3), JSON_VALUES),
        "url": st.one_of(st.none(), st.text(max_size=10)),
        "doi": st.one_of(st.none(), st.text(max_size=10)),
        "year": st.one_of(st.none(), st.integers(990, 10_010), JSON_VALUES),
    },
)
ENTRY = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "bookmarked_at": TIMES,
            "read_at": TIMES,
            "tags": st.one_of(st.lists(TAG_NAMES, max_size=3), JSON_VALUES),
            "tagged_at": st.one_of(st.dictionaries(TAG_NAMES, TIMES, max_size=3), JSON_VALUES),
            "note": st.one_of(st.none(), st.text(max_size=20), JSON_VALUES),
            "metadata": st.one_of(META, JSON_VALUES),
        },
    ),
    JSON_VALUES,
)
PAPER_IDS = st.one_of(st.sampled_from(IDS), st.text(max_size=17))
SETTINGS = st.dictionaries(
    st.sampled_from(["theme", "filter", "paper", "auto_read", "cite_format", "other"]),
    st.one_of(st.sampled_from(["on", "off", "bibtex", "text", IDS[0], "dark"]), JSON_VALUES),
    max_size=3,
)
DOCS = st.one_of(
    st.fixed_dictionaries(
        {
            "format": st.just("abstract-reader-library"),
            "papers": st.dictionaries(PAPER_IDS, ENTRY, max_size=4),
        },
        optional={"version": st.one_of(st.sampled_from([1, 2]), JSON_VALUES), "settings": SETTINGS},
    ),
    JSON_VALUES,
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(doc=DOCS)
def test_fuzz_import_rejects_cleanly_or_round_trips(tmp_path: Path, doc: Any) -> None:
    first, fresh = tmp_path / "fuzz.sqlite3", tmp_path / "fresh.sqlite3"
    _remove(first)
    _remove(fresh)
    with Library(first, backups=False) as lib:
        before = _contents(lib)
        try:
            lib.import_data(json.loads(json.dumps(doc)))
        except LibraryError as exc:
            assert "\n" not in str(exc) and _safe_line(str(exc)), repr(str(exc))
            assert _contents(lib) == before
            return
        exported = lib.export_data()
    text = json.dumps(exported, allow_nan=False)  # valid JSON: no NaN or Infinity
    with Library(fresh, backups=False) as again:
        again.import_data(parse_export(text))
        assert again.export_data() == exported


def _remove(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)


def test_every_setting_the_program_writes_travels_with_an_export(tmp_path: Path) -> None:
    from abstract_reader.saved import save
    from abstract_reader.seen import begin_session

    dump = tmp_path / "dump.txt"
    dump.write_text("A header\n\nAn abstract.\n")
    with Library(tmp_path / "a.sqlite3", backups=False) as a:
        save(a, "robust-ones", "robust !graph")
        begin_session(a, [str(dump)])
        a.set_setting("sort", "year")
        a.set_setting("cite_format", "markdown")
        a.set_setting("cite_abstract", "on")
        a.set_setting("auto_read", "off")
        exported = a.export_data()
        settings_a = dict(a.snapshot.settings)
    with Library(tmp_path / "b.sqlite3", backups=False) as b:
        b.import_data(parse_export(json.dumps(exported)))
        assert b.snapshot.settings == settings_a


# -- a merge keeps what the library has, and says what it did not take ------------------------

THEIRS = {
    "title": "Imported Title",
    "authors": ["Imported Author"],
    "url": "https://example.org/imported",
    "doi": "10.1000/imported",
    "year": 2001,
}


def _import_file(tmp_path: Path, papers: dict[str, Any], settings_: Any = None) -> Path:
    path = tmp_path / "import.json"
    path.write_text(json.dumps(_doc(papers, settings_)), encoding="utf-8")
    return path


def test_import_keeps_every_metadata_field_the_library_has_and_names_the_files(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lib.sqlite3"
    mine = Metadata(
        title="CLI v3",
        authors=("Ada Lovelace",),
        url="https://example.org/mine",
        doi="10.1000/mine",
        year=2026,
    )
    with Library(db, backups=False) as lib:
        lib.set_metadata(IDS[0], mine)
    path = _import_file(tmp_path, {IDS[0]: {"metadata": THEIRS, "note": "imported note"}})
    result = cli("library", "import", str(path), db=db)
    assert result.returncode == 0, result.stderr
    with Library(db, backups=False) as lib:
        assert lib.snapshot.metadata[IDS[0]] == mine
        assert lib.snapshot.notes[IDS[0]] == "imported note"
    lines = result.stderr.splitlines()
    kept = [line for line in lines if IDS[0][:12] in line]
    assert len(kept) == 1, lines  # one line for the paper, naming both values of each field
    for ours, theirs in [
        ('title "CLI v3"', '"Imported Title"'),
        ('authors "Ada Lovelace"', '"Imported Author"'),
        ('url "https://example.org/mine"', '"https://example.org/imported"'),
        ('doi "10.1000/mine"', '"10.1000/imported"'),
        ('year "2026"', '"2001"'),
    ]:
        assert ours in kept[0] and theirs in kept[0], kept[0]
    assert "this library's were kept" in lines[-1]


def test_import_fills_the_fields_the_library_lacks_silently(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    with Library(db, backups=False) as lib:
        lib.set_metadata(IDS[0], Metadata(title="CLI v3", doi="10.1000/IMPORTED"))
    path = _import_file(tmp_path, {IDS[0]: {"metadata": THEIRS}, IDS[1]: {"metadata": THEIRS}})
    result = cli("library", "import", str(path), db=db)
    assert result.returncode == 0, result.stderr
    with Library(db, backups=False) as lib:
        first = lib.snapshot.metadata[IDS[0]]
        assert first.title == "CLI v3"
        assert first.doi == "10.1000/IMPORTED"  # the same DOI (case does not count): no line
        assert (first.authors, first.url, first.year) == (
            ("Imported Author",),
            "https://example.org/imported",
            2001,
        )
        assert lib.snapshot.metadata[IDS[1]].title == "Imported Title"
    lines = result.stderr.splitlines()
    assert len(lines) == 2, lines
    assert 'kept its title "CLI v3" (the file\'s: "Imported Title")' in lines[0]
    assert "doi" not in lines[0]


def test_import_keeps_marks_and_saved_searches_and_says_a_different_query(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lib.sqlite3"
    with Library(db, backups=False) as lib:
        lib.set_bookmark([IDS[0]])
        lib.set_read([IDS[0]])
        before = (lib.snapshot.bookmarks[IDS[0]], lib.snapshot.read[IDS[0]])
        lib.set_setting("search:reading", "robust")
        lib.set_setting("search:gone", "")  # a deleted saved search
    papers = {
        IDS[0]: {"bookmarked_at": 1.0, "read_at": 1.0},
        IDS[1]: {"bookmarked_at": 2.0, "read_at": 3.0},
    }
    settings_ = {"search:reading": "gaussian", "search:gone": "back", "search:new": "new"}
    result = cli("library", "import", str(_import_file(tmp_path, papers, settings_)), db=db)
    assert result.returncode == 0, result.stderr
    with Library(db, backups=False) as lib:
        snap = lib.snapshot
        assert (snap.bookmarks[IDS[0]], snap.read[IDS[0]]) == before
        assert (snap.bookmarks[IDS[1]], snap.read[IDS[1]]) == (2.0, 3.0)
        assert snap.settings["search:reading"] == "robust"
        assert snap.settings["search:gone"] == "back"
        assert snap.settings["search:new"] == "new"
    assert 'kept this library\'s @reading "robust" (the file\'s: "gaussian")' in result.stderr
    assert "@gone" not in result.stderr and "@new" not in result.stderr


def test_import_lists_twelve_papers_kept_then_counts_unless_verbose(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    ids = [f"{n:016x}"[::-1] for n in range(1, 21)]
    with Library(db, backups=False) as lib:
        for pid in ids:
            lib.set_metadata(pid, Metadata(title="Mine"))
    path = _import_file(tmp_path, {pid: {"metadata": {"title": "Theirs"}} for pid in ids})
    result = cli("library", "import", str(path), db=db)
    assert result.returncode == 0, result.stderr
    assert sum("kept its title" in line for line in result.stderr.splitlines()) == 12
    assert "… and 8 more (-v lists every paper)" in result.stderr
    verbose = cli("library", "import", "-v", str(path), db=db)
    assert sum("kept its title" in line for line in verbose.stderr.splitlines()) == 20


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            b'{"format": "\x9e"}',
            "not UTF-8 text (byte 0x9e at offset 12); a library export is UTF-8 JSON",
        ),
        ("{}".encode("utf-16"), "UTF-16 text, not UTF-8; save it as UTF-8"),
    ],
    ids=["binary", "utf-16"],
)
def test_an_import_that_is_not_utf8_names_the_byte_not_the_codec(
    data: bytes, problem: str, tmp_path: Path
) -> None:
    """It was "cannot read ('utf-8' codec can't decode byte 0x9e in position 12: …)"."""
    path = tmp_path / "export.json"
    path.write_bytes(data)
    result = cli("library", "import", str(path), db=tmp_path / "lib.sqlite3")
    assert result.returncode == 1
    assert result.stderr == f"abstract-reader: {path}: {problem}\n"
    assert "codec" not in result.stderr


# -- a paper or setting given twice, and values `meta` refuses (QA s17 #4) --------------------


def _header_json(papers: str, settings_: str = "{}") -> str:
    """A document written by hand, so that a key can be given twice (json.dumps cannot)."""
    return (
        '{"format": "abstract-reader-library", "version": 2, '
        f'"papers": {papers}, "settings": {settings_}}}'
    )


def test_a_paper_listed_twice_in_the_file_has_both_records_merged_and_said(
    tmp_path: Path,
) -> None:
    """It kept only the last record: the first one's tag and note were dropped without a
    word ("Merged records of 1 paper", exit 0)."""
    db = tmp_path / "lib.sqlite3"
    first = {
        "tags": ["first-dup"],
        "tagged_at": {"first-dup": 5.0},
        "note": "first note",
        "bookmarked_at": 9.0,
        "metadata": {"title": "First", "year": 2020},
    }
    second = {
        "tags": ["second-dup", "FIRST-dup"],
        "note": "second note",
        "bookmarked_at": 4.0,
        "metadata": {"title": "Second", "authors": ["Ada Lovelace"]},
    }
    papers = f'{{"{IDS[0]}": {json.dumps(first)}, "{IDS[0]}": {json.dumps(second)}}}'
    settings_ = '{"search:dup": "first query", "search:dup": "second query"}'
    path = tmp_path / "dup.json"
    path.write_text(_header_json(papers, settings_), encoding="utf-8")
    result = cli("library", "import", str(path), db=db)
    assert result.returncode == 0, result.stderr
    with Library(db, backups=False) as lib:
        snap = lib.snapshot
        assert snap.tags[IDS[0]] == ["first-dup", "second-dup"]
        assert snap.notes[IDS[0]] == "first note\n\nsecond note"
        assert snap.bookmarks[IDS[0]] == 4.0
        meta = snap.metadata[IDS[0]]
        assert (meta.title, meta.authors, meta.year) == ("First", ("Ada Lovelace",), 2020)
        assert snap.settings["search:dup"] == "first query"
    lines = [line for line in result.stderr.splitlines() if "created a new library" not in line]
    assert f"{IDS[0][:12]} is in the file 2 times; its records were merged" in lines[0]
    assert any(
        f'{IDS[0][:12]}: title "Second" not imported: the paper\'s first record in the file'
        ' has "First"' in line
        for line in lines
    ), lines
    assert any(
        "setting 'search:dup' \"second query\" not imported" in line and '"first query"' in line
        for line in lines
    ), lines


def test_a_field_given_twice_inside_one_record_refuses_the_file(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    path = tmp_path / "twice.json"
    path.write_text(_header_json(f'{{"{IDS[0]}": {{"note": "a", "note": "b"}}}}'))
    result = cli("library", "import", str(path), db=db)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"abstract-reader: {path}: paper {IDS[0]}: the field 'note' is given twice"
    )
    with Library(db, backups=False) as lib:
        assert IDS[0] not in lib.snapshot.notes


def test_dois_and_urls_meta_refuses_are_left_out_and_said_the_rest_imported(
    tmp_path: Path,
) -> None:
    """`"doi": "banana"` and a javascript: URL went in without a word, while `meta`
    refuses them."""
    db = tmp_path / "lib.sqlite3"
    papers = {
        IDS[0]: {
            "tags": ["kept"],
            "metadata": {"title": "T", "url": "javascript:alert(1)", "doi": "banana"},
        },
        IDS[1]: {"metadata": {"url": "https://example.org/ok", "doi": "https://doi.org/10.1000/X"}},
    }
    result = cli("library", "import", str(_import_file(tmp_path, papers)), db=db)
    assert result.returncode == 0, result.stderr
    with Library(db, backups=False) as lib:
        snap = lib.snapshot
        assert snap.tags[IDS[0]] == ["kept"]
        assert snap.metadata[IDS[0]] == Metadata(title="T")
        assert snap.metadata[IDS[1]].url == "https://example.org/ok"
        assert snap.metadata[IDS[1]].doi == "10.1000/X"  # normalised, as `meta --doi` does
    lines = [line for line in result.stderr.splitlines() if "created a new library" not in line]
    assert (
        f'{IDS[0][:12]}: url "javascript:alert(1)" not imported: only http and https links'
        " are opened, not javascript:" in lines[0]
    )
    assert f'{IDS[0][:12]}: doi "banana" not imported: not a DOI (10.NNNN/…)' in lines[1]
    assert lines[-1].startswith("Merged records of 2 papers")


def test_refused_values_are_listed_twelve_then_counted_unless_verbose(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    ids = [f"{n:016x}"[::-1] for n in range(1, 21)]
    path = _import_file(tmp_path, {pid: {"metadata": {"doi": "banana"}} for pid in ids})
    result = cli("library", "import", str(path), db=db)
    assert result.returncode == 0, result.stderr
    assert sum("not imported:" in line for line in result.stderr.splitlines()) == 12
    assert "… and 8 more values not imported (-v lists them)" in result.stderr
    verbose = cli("library", "import", "-v", str(path), db=db)
    assert sum("not imported:" in line for line in verbose.stderr.splitlines()) == 20
