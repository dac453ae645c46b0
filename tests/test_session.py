"""The session's rules, without a terminal: which facts a query reads, when a result is stale,
what an editor's save sends, which papers an action is for."""

from __future__ import annotations

from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus
from abstract_reader.facts import ALL_FACTS, Fact
from abstract_reader.library import Library, Metadata
from abstract_reader.search import SearchIndex, parse_query
from abstract_reader.session import (
    Dependency,
    Session,
    metadata_change,
    metadata_conflicts,
    query_dependencies,
    tag_change,
)


def _cases(word: str) -> list[str]:
    """lower, UPPER and Mixed case of a field name."""
    return [word.lower(), word.upper(), word[:1].upper() + word[1:].lower()]


FIELDS: list[tuple[str, str, Dependency]] = [
    ("is", "bookmarked", "bookmarks"),
    ("is", "bookmark", "bookmarks"),
    ("is", "read", "read"),
    ("is", "unread", "read"),
    ("is", "noted", "notes"),
    ("is", "tagged", "tags"),
    ("is", "marked", "marks"),
]


@pytest.mark.parametrize(("field", "value", "dependency"), FIELDS)
@pytest.mark.parametrize("case", [0, 1, 2])
@pytest.mark.parametrize("negated", [False, True])
def test_every_is_field_in_every_case(
    field: str, value: str, dependency: Dependency, case: int, negated: bool
) -> None:
    text = ("!" if negated else "") + _cases(field)[case] + ":" + _cases(value)[case]
    assert query_dependencies(parse_query(text)) == {dependency}, text


@pytest.mark.parametrize("text", ["#theory", '#"reading list"', "!#Theory", "#THEORY"])
def test_tags(text: str) -> None:
    assert query_dependencies(parse_query(text)) == {"tags"}


@pytest.mark.parametrize(
    "text",
    [
        "robust",
        "title:robust",
        "TITLE:robust",
        "Title:Robust",
        "^rob",
        "'robust",
        "a-b",
        "YEAR:2026",
        "!year:2024-2026",
        "venue:neurips",
        "!VENUE:icml",
    ],
)
def test_words_years_and_venues_read_what_metadata_may_override(text: str) -> None:
    assert query_dependencies(parse_query(text)) == {"meta"}


@pytest.mark.parametrize("text", ["", "is:nonsense"])
def test_no_library_fact(text: str) -> None:
    assert query_dependencies(parse_query(text)) == frozenset()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("LIKE:#theory", {"tags"}),
        ("like:IS:Bookmarked", {"bookmarks"}),
        ("Like:is:unread", {"read"}),
        ("like:d059a4d9", set()),
    ],
)
def test_like_reads_what_chooses_its_seeds(text: str, expected: set[str]) -> None:
    assert query_dependencies(parse_query(text)) == expected


def test_alternatives_and_combinations() -> None:
    query = parse_query("is:read | #x  IS:Bookmarked  venue:neurips")
    assert query_dependencies(query) == {"read", "tags", "bookmarks", "meta"}


WRITES: dict[str, Fact] = {
    "tag": "tags",
    "bookmark": "bookmarks",
    "read": "read",
    "note": "notes",
    "meta": "meta",
}


@pytest.mark.parametrize(("field", "value", "dependency"), FIELDS)
@pytest.mark.parametrize("case", [0, 1, 2])
def test_a_write_of_a_fact_makes_exactly_its_queries_stale(
    tmp_path: Path, field: str, value: str, dependency: Dependency, case: int
) -> None:
    session = Session(Library(None))
    session.set_query(_cases(field)[case] + ":" + _cases(value)[case])
    for fact in ALL_FACTS:
        assert session.is_stale({fact}) == (fact == dependency)
    assert session.is_stale({"marks"}) == (dependency == "marks")


def _seeded_session(seeds: Corpus, db: Path) -> Session:
    session = Session(Library(db), corpus=seeds)
    session.index = SearchIndex(seeds)
    session.refresh()
    return session


@pytest.mark.parametrize(
    ("query", "write", "kind"),
    [
        ("IS:unread", lambda lib, ids: lib.set_read(ids), "read"),
        ("Is:bookmarked", lambda lib, ids: lib.set_bookmark(ids), "bookmarks"),
        ("!is:TAGGED", lambda lib, ids: lib.add_tags(ids, ["x"]), "tags"),
        ("#X", lambda lib, ids: lib.add_tags(ids, ["x"]), "tags"),
        ("is:Noted", lambda lib, ids: lib.set_note(ids[0], "a note"), "notes"),
    ],
)
def test_another_writer_changes_the_result_of_a_query_in_any_case(
    seeds: Corpus, tmp_path: Path, query: str, write: object, kind: str
) -> None:
    """The whole loop without a UI: another process writes, refresh says which facts changed,
    the query reads one of them, re-running it gives the new answer."""
    db = tmp_path / "lib.sqlite3"
    session = _seeded_session(seeds, db)
    session.set_query(query)
    assert session.index is not None
    before = len(session.index.search(query, session.library_view()))
    ids = [seeds.papers[0].id]
    with Library(db) as other:
        write(other, ids)  # type: ignore[operator]
    changed = session.refresh()
    assert kind in changed
    assert session.is_stale(changed)
    after = len(session.index.search(query, session.library_view()))
    assert after != before


def test_tag_change_sends_only_what_the_user_changed() -> None:
    change = tag_change(["theory", "Robust"], ["robust", "new"])
    assert change.added == ("new",)
    assert change.removed == ("theory",)
    assert tag_change(["a"], ["A"]).empty


def test_metadata_change_keeps_fields_set_elsewhere() -> None:
    shown = Metadata(title="Old")
    edited = Metadata(title="Mine")
    stored = Metadata(title="Old", url="https://elsewhere.example")
    assert metadata_change(shown, edited, stored) == Metadata(
        title="Mine", url="https://elsewhere.example"
    )


def test_targets_are_the_marked_papers_else_the_current_one(seeds: Corpus) -> None:
    session = Session(Library(None), corpus=seeds)
    third = seeds.papers[3].id
    assert [p.id for p in session.targets(third)] == [third]
    assert session.targets(None) == []
    session.toggle_mark(seeds.papers[5].id)
    session.toggle_mark(seeds.papers[1].id)
    assert [p.id for p in session.targets(third)] == [seeds.papers[1].id, seeds.papers[5].id]
    assert session.describe(session.targets(third)) == "2 marked papers"


def test_the_real_title_wins_everywhere_the_session_answers(seeds: Corpus) -> None:
    library = Library(None)
    session = Session(library, corpus=seeds)
    paper = seeds.papers[0]
    library.set_metadata(paper.id, Metadata(title="A Real Title", doi="10.1/x"))
    assert session.title_of(paper) == "A Real Title"
    assert session.record(paper).title == "A Real Title"
    assert not session.record(paper).title_derived
    assert session.link_of(paper) == "https://doi.org/10.1/x"


def test_status_counts_only_loaded_papers(seeds: Corpus) -> None:
    library = Library(None)
    library.set_read([seeds.papers[0].id, "not-loaded"])
    library.set_bookmark([seeds.papers[1].id])
    session = Session(library, corpus=seeds)
    parts = session.status_parts(shown=55, loaded=55, loading=False)
    # progress first (no index yet), then the count
    assert parts[:4] == ["indexing…", "55 papers", "54 unread", "1 bookmarked"]
    assert "1 saved paper not in these dumps" in parts


def test_status_counts_follow_the_library_not_each_key(
    seeds: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library's counts in the status line (unread, bookmarked, saved papers not
    loaded) are counted once per change of the library, not with each key typed: a
    look-up of every id the library names (50,000 after a `match`) took ~100 ms a key. A
    change by another process, or by this one, is counted at once."""
    db = tmp_path / "lib.sqlite3"
    session = _seeded_session(seeds, db)
    ids = [p.id for p in seeds.papers]
    looked_up: list[int] = []
    rows_of = seeds.papers.rows_of
    monkeypatch.setattr(seeds.papers, "rows_of", lambda i: looked_up.append(1) or rows_of(i))

    def status() -> list[str]:
        return session.status_parts(shown=len(ids), loaded=len(ids), loading=False)

    assert "55 unread" in status() and "0 bookmarked" in status()
    counted = len(looked_up)
    for end in range(1, 8):  # keys typed
        session.set_query("robust gaussian"[:end])
        session.result = session.index.search(session.query_text) if session.index else None
        assert "55 unread" in status()
    assert len(looked_up) == counted
    with Library(db) as other:
        other.set_read(ids[:3])
        other.set_bookmark([ids[4], "not-loaded"])
    session.refresh()
    assert "52 unread" in status() and "1 bookmarked" in status()
    assert "1 saved paper not in these dumps" in status()
    session.library.set_read([ids[5]])  # this process
    assert "51 unread" in status()


def test_metadata_conflicts_are_fields_changed_in_both_places_differently() -> None:
    shown = Metadata(title="Old", year=2020)
    edited = Metadata(title="Mine", url="https://mine.example", year=2021)
    stored = Metadata(title="Theirs", authors=("A",), year=2021)
    # the title: both, differently; the year: both, alike; authors / URL: one side only
    assert metadata_conflicts(shown, edited, stored) == ("title",)
    assert metadata_conflicts(shown, edited, shown) == ()


def test_s_skips_the_dump_order_when_it_is_what_relevance_shows(tmp_path: Path) -> None:
    """With no query the result's order is the dump order: `s` from relevance goes to the
    title order (a "dump order" step changed nothing on screen); with a query it does not."""
    from abstract_reader.library import Library
    from abstract_reader.session import Session

    with Library(tmp_path / "lib.sqlite3") as lib:
        session = Session(lib)
        assert session.result is None and session.sort == "relevance"
        assert session.next_sort() == "title"
        for _ in range(4):  # year, recent, unread, relevance
            session.next_sort()
        assert session.sort == "relevance"
        session.result = object()  # type: ignore[assignment]  # a query's result
        assert session.next_sort() == "dump"


def test_the_place_is_kept_per_dump_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from abstract_reader.library.interchange import setting_problem
    from abstract_reader.session import dump_set_key, save_place, saved_place

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path)
    mine = dump_set_key([str(tmp_path / "a")])
    # the same folder however it is named; another folder, or the bundled dumps: another key
    assert dump_set_key(["a/", "./a"]) == mine
    assert len({mine, dump_set_key(["b"]), dump_set_key(None), dump_set_key(["a", "b"])}) == 4
    with Library(tmp_path / "lib.sqlite3") as lib:
        assert saved_place(lib, mine) == ("", None)
        save_place(lib, mine, "is:new #to-read", "0123456789abcdef")
        assert saved_place(lib, mine) == ("is:new #to-read", "0123456789abcdef")
        assert saved_place(lib, dump_set_key(None)) == ("", None)  # not another set's
        # as `library export` writes it, `library import` takes it
        assert setting_problem(f"place:{mine}", lib.setting(f"place:{mine}")) is None
        lib.set_setting(f"place:{mine}", "not json")  # damaged: nothing restored, no error
        assert saved_place(lib, mine) == ("", None)


def test_a_held_paper_matches_as_the_query_saw_it_until_the_query_changes(
    tmp_path: Path,
) -> None:
    p, q = "0" * 16, "1" * 16
    with Library(tmp_path / "lib.sqlite3") as lib:
        lib.add_tags([p, q], ["x"])
        session = Session(lib)
        session.hold(p)  # no query, relevance order: nothing to hold
        assert not session.held
        session.set_query("#x is:unread")
        session.hold(p)  # the reader's own writes on the paper being read
        lib.set_read([p, q])
        lib.remove_tags([p], ["x"])
        lib.set_bookmark([p])
        view = session.library_view()
        assert p not in view.ids_with_state("read") and q in view.ids_with_state("read")
        assert view.ids_with_tag("X") == {p, q}
        assert p not in view.ids_with_state("bookmarked")
        assert p in view.ids_with_state("tagged")
        session.set_query("#x is:unread ")  # another query: as it is now
        view = session.library_view()
        assert p in view.ids_with_state("read") and view.ids_with_tag("x") == {q}


def test_the_library_view_follows_every_change_and_is_made_once_per_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The filters' copy of the library is made once per change of the library, not with
    every key typed, and shows each change: the reader's own writes and another process's."""
    p, q = "0" * 16, "1" * 16
    db = tmp_path / "lib.sqlite3"
    with Library(db) as lib:
        lib.add_tags([p], ["x"])
        lib.set_bookmark([q])
        session = Session(lib)
        made = 0
        real_names = lib.tag_names

        def counted() -> list[str]:
            nonlocal made
            made += 1
            return real_names()

        monkeypatch.setattr(lib, "tag_names", counted)
        for _ in range(5):  # five keys typed
            view = session.library_view()
        assert made == 1
        assert view.ids_with_tag("X") == {p} and view.ids_with_state("bookmarked") == {q}
        with Library(db) as other:  # the CLI, meanwhile
            other.add_tags([q], ["Yours"])
            other.set_read([p])
            other.set_note(q, "a note")
        session.refresh()
        view = session.library_view()
        assert view.ids_with_tag("yours") == {q} and view.tag_names() == ["x", "Yours"]
        assert view.ids_with_state("read") == {p} and view.ids_with_state("noted") == {q}
        assert view.ids_with_state("tagged") == {p, q}
        lib.remove_tags([p], ["x"])  # the reader's own write
        lib.set_bookmark([q], on=False)
        view = session.library_view()
        assert view.ids_with_tag("x") == set() and view.ids_with_state("tagged") == {q}
        assert view.ids_with_state("bookmarked") == set()
        assert made == 3
