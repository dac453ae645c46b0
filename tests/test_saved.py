"""Saved searches in the core: fuzzy matching of names, lenient expansion, and a session
whose query names one re-runs when it changes (the library reports settings as no fact)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abstract_reader.corpus import Corpus
from abstract_reader.library import Library, LibraryError, clean_tag, tag_query
from abstract_reader.saved import (
    MAX_DEPTH,
    SavedSearchError,
    expand,
    expand_known,
    matching,
    problems,
    references,
    save,
)
from abstract_reader.search import SearchIndex, parse_query
from abstract_reader.session import Session


def test_matching_is_fuzzy_by_name_then_by_query() -> None:
    searches = {"graphs": "graph | gnn", "reading": "robust", "new-robust": "is:new robust"}
    assert matching(searches, "") == ["graphs", "reading", "new-robust"]
    assert matching(searches, "grh") == ["graphs"]  # letters in order
    assert matching(searches, "RD") == ["reading"]  # case does not matter
    # a name match before a query-only match; a substring before a spread-out match
    assert matching(searches, "rob") == ["new-robust", "reading"]
    assert matching(searches, "new gnn") == []  # every part must match
    assert matching(searches, "zz") == []


def test_expand_known_leaves_unknown_names_out_and_says_them() -> None:
    searches = {"reading": "like:#robust is:unread"}
    assert expand_known(searches, "@reading graph @nope") == (
        "like:#robust is:unread graph",
        ("nope",),
        None,
    )
    assert references("a@b @x-1 @@y") == ["x-1"]  # mail-like text is no reference


def test_a_session_reruns_a_query_naming_a_saved_search_changed_elsewhere(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lib.sqlite3"
    with Library(db) as other:
        save(other, "mine", "graph")
    session = Session(Library(db))
    session.refresh()
    session.set_query("@mine is:unread")
    assert session.search_text == "graph is:unread"
    assert {"saved", "read", "meta"} <= session.dependencies
    with Library(db) as other:
        save(other, "mine", "#robust")
    changed = session.refresh()
    assert "saved" in changed and session.is_stale(changed)
    assert session.search_text == "#robust is:unread"
    assert "tags" in session.dependencies
    session.set_query("graph")  # no @name: a change of saved searches does not matter
    assert not session.is_stale({"saved"})
    session.library.close()


def test_a_refresh_walks_the_settings_for_saved_searches_only_after_they_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """100,000 matched papers are 100,000 settings: the reader's refresh (once a second)
    looks for saved searches in them only when the settings changed; a change elsewhere is
    still seen."""
    from abstract_reader import saved as saved_module

    db = tmp_path / "lib.sqlite3"
    session = Session(Library(db))
    session.refresh()
    walks: list[int] = []
    real = saved_module.saved
    monkeypatch.setattr(saved_module, "saved", lambda lib: walks.append(1) or real(lib))
    session.library.set_bookmark(["0123456789abcdef"])  # no setting changed
    for _ in range(3):
        session.refresh()
    assert walks == []
    with Library(db) as other:
        save(other, "mine", "graph")
    assert "saved" in session.refresh() and walks == [1]
    assert session.saved_searches() == {"mine": "graph"}
    session.library.close()


def test_cli_searches_lists_adds_replaces_only_with_force_and_deletes(tmp_path: Path) -> None:
    import json

    from .conftest import cli

    db = tmp_path / "lib.sqlite3"
    done = cli("searches", db=db)
    assert done.returncode == 0 and done.stdout == "" and "no saved searches" in done.stderr
    assert cli("searches", "--add", "reading", "robust   is:unread", db=db).returncode == 0
    assert cli("searches", "--add", "g", "graph", db=db).stdout.split() == [
        "@g",
        "graph",
        "@reading",
        "robust",
        "is:unread",
    ]
    refused = cli("searches", "--add", "g", "gnn", db=db)
    assert refused.returncode == 1 and "--force" in refused.stderr
    assert cli("searches", "--add", "g", "gnn", "--force", db=db).returncode == 0
    bad = cli("searches", "--add", "two words", "x", db=db)
    assert bad.returncode == 2 and "letters, digits" in bad.stderr
    typo = cli("searches", "--add", "t", "is:bookmarkd", db=db)
    assert typo.returncode == 2 and "is:bookmarkd" in typo.stderr
    assert cli("searches", "--delete", "reading", db=db).returncode == 0
    listed = cli("searches", "--json", db=db)
    assert [json.loads(line) for line in listed.stdout.splitlines()] == [
        {"name": "g", "query": "gnn"}
    ]
    gone = cli("searches", "--delete", "reading", db=db)  # nothing to do: said, exit 0
    assert (
        gone.returncode == 0 and "no saved search named 'reading'; nothing deleted" in gone.stderr
    )


def test_a_name_is_a_saved_search_only_as_a_term_of_its_own() -> None:
    """``@name`` is expanded at a term's start and alone; inside a quoted phrase, a tag or a
    word it is literal text (QA: ``#[@click=app.quit]imp[/]`` said "no saved search @click")."""
    searches = {"click": "robust", "1": "graph"}
    for literal in (
        "#[@click=app.quit]imp[/]",
        '#"[@click=app.quit]imp[/]"',
        '"(@1"',
        "(@1",
        '"say @click now"',
        "x@click",
        "@click=app",
        '#"a b @click"',
        "!#@click",
    ):
        assert expand_known(searches, literal) == (literal, (), None), literal
        assert references(literal) == [], literal
        assert expand_known({}, literal) == (literal, (), None), literal  # nothing unknown either
    assert expand_known(searches, "@click|@1 #[@1]") == ("robust | graph #[@1]", (), None)
    assert expand_known(searches, '"@1" @nope') == ('"@1"', ("nope",), None)
    assert references('@click "@1" #@x @1') == ["click", "1"]


NASTY_TAGS = (
    "[@click=app.quit]imp[/]",
    "@click",
    "see @1 later",
    '"@click"',
    'say "hi" \\ @x',
    "x#hash #y",
    "a|b @1",
    "back\\",
    "x y\\",
    "[b]bold[/b] #2",
    "(@1",
)


@pytest.mark.parametrize("tag", NASTY_TAGS)
def test_the_query_the_tag_list_writes_finds_exactly_that_tag(
    seeds: Corpus, tmp_path: Path, tag: str
) -> None:
    """Through the reader's path (the session expands, the index searches): the tag list's
    query for a tag (`tag_query`) finds the papers with that tag, whatever is in it, while
    saved searches named like the words after its ``@``s exist."""
    with Library(tmp_path / "lib.sqlite3") as library:
        for name in ("click", "1", "x"):
            save(library, name, "graph")
        ids = {p.id: n for n, p in enumerate(seeds.papers)}
        tagged = [seeds.papers[3].id, seeds.papers[30].id]
        library.add_tags(tagged, [tag])
        library.add_tags([seeds.papers[5].id], [tag + "z", "other"])  # a longer tag: no match
        session = Session(library, corpus=seeds)
        session.index = SearchIndex(seeds)
        session.refresh()
        session.set_query(tag_query(tag))
        assert session.unknown_saved == ()
        result = session.index.search(session.search_text, session.library_view())
        assert result.ignored == ()
        assert sorted(ids[hit.paper.id] for hit in result) == [3, 30]


@settings(max_examples=300)
@given(raw=st.text(alphabet=st.sampled_from('ab1 @#"\\|[]=(/'), min_size=1, max_size=14))
def test_no_tag_written_as_a_query_names_a_saved_search(raw: str) -> None:
    try:
        tag = clean_tag(raw)
    except LibraryError:
        return
    searches = {"a": "robust", "b": "graph", "1": "x", "ab": "y", "a1": "z"}
    text, unknown, _ = expand_known(searches, tag_query(tag))
    assert unknown == ()
    parsed = parse_query(text)
    assert parsed.ignored == ()
    assert [(t.kind, t.value) for t in parsed.terms] == [("tag", tag)]


def test_cli_list_finds_tags_with_at_signs_and_quotes(seeds: Corpus, tmp_path: Path) -> None:
    import json

    from .conftest import cli

    db = tmp_path / "lib.sqlite3"
    with Library(db) as library:
        save(library, "click", "graph")
        for n, tag in enumerate(NASTY_TAGS):
            library.add_tags([seeds.papers[n].id], [tag])
    for n, tag in enumerate(NASTY_TAGS):
        done = cli("list", "-q", tag_query(tag), "--json", db=db)
        assert done.returncode == 0, (tag, done.stderr)
        found = [json.loads(line)["id"] for line in done.stdout.splitlines()]
        assert found == [seeds.papers[n].id], tag
    quoted = cli("list", "-q", '"(@1"', db=db)  # a phrase with an @ in it: literal
    assert quoted.returncode == 0 and "no saved search" not in quoted.stderr


def test_a_saved_search_using_another_is_expanded_in_turn() -> None:
    searches = {"rob": "robust", "nested": "@rob is:unread", "top": "@nested | graph"}
    assert expand_known(searches, "@nested") == ("robust is:unread", (), None)
    assert expand_known(searches, "@top learning").text == "robust is:unread | graph learning"
    # a name the nested one uses that is not saved is said, as one the query uses is
    assert expand_known({"nested": "@gone x"}, "@nested") == ("x", ("gone",), None)


def test_a_loop_of_saved_searches_is_said_and_never_expanded_forever() -> None:
    loop = {"a": "@b x", "b": "@a y", "self": "@self z"}
    found = expand_known(loop, "@a")
    assert found.problem is not None and "@a → @b → @a" in found.problem
    assert "@self → @self" in (expand_known(loop, "@self").problem or "")
    assert set(problems(loop)) == {"a", "b", "self"}
    # too deep a chain (no loop) is said too
    chain = {f"s{i}": f"@s{i + 1} w{i}" for i in range(MAX_DEPTH + 1)} | {
        f"s{MAX_DEPTH + 1}": "end"
    }
    assert "more than 8 deep" in (expand_known(chain, "@s0").problem or "")
    assert expand_known(chain, "@s2").problem is None  # @s2 … @s9: 8 deep, fine
    # each use expanded once, however often it is used: no exponential text
    wide = {f"d{i}": f"@d{i + 1} @d{i + 1}" for i in range(7)} | {"d7": "w " * 2000}
    assert len(expand_known(wide, "@d0").text) < 100_000


def test_saving_a_loop_is_refused_and_one_found_anyway_is_an_error_when_run(
    tmp_path: Path,
) -> None:
    with Library(tmp_path / "lib.sqlite3") as library:
        save(library, "rob", "robust")
        save(library, "nested", "@rob is:unread")  # fine: no loop
        assert expand(library, "@nested") == "robust is:unread"
        with pytest.raises(SavedSearchError, match="@rob → @nested → @rob"):
            save(library, "rob", "@nested graph")
        with pytest.raises(SavedSearchError, match="@me → @me"):
            save(library, "me", "@me x")
        assert library.setting("search:rob") == "robust"  # nothing saved
        library.set_setting("search:rob", "@nested")  # an older library, another program
        with pytest.raises(SavedSearchError, match="loop"):
            expand(library, "@nested")
        session = Session(library)
        session.refresh()
        session.set_query("@nested")
        assert session.saved_problem is not None and "loop" in session.saved_problem
        assert session.filters  # a query to run, matching nothing


def test_cli_runs_a_saved_search_using_another_and_refuses_a_loop(tmp_path: Path) -> None:
    """QA (s17, 2): ``@nested`` = ``@rob is:unread`` printed nothing, exit 0; a loop was
    accepted."""
    from .conftest import cli

    db = tmp_path / "lib.sqlite3"
    assert cli("searches", "--add", "rob", "robust", db=db).returncode == 0
    added = cli("searches", "--add", "nested", "@rob is:unread", db=db)
    assert added.returncode == 0 and added.stderr == ""
    wanted = cli("list", "-q", "robust is:unread", db=db).stdout
    assert len(wanted.splitlines()) > 1
    nested = cli("list", "-q", "@nested", db=db)
    assert nested.returncode == 0 and nested.stdout == wanted
    digest = cli("digest", "-q", "@nested", "--format", "text", db=db)
    assert digest.returncode == 0 and digest.stdout.count("robust") > 1
    export = cli("export", "--format", "jsonl", "-q", "@nested", db=db)
    assert export.returncode == 0 and len(export.stdout.splitlines()) == len(wanted.splitlines())
    # a loop is refused when saved: one line, exit 2, nothing saved
    loop = cli("searches", "--add", "rob", "@nested graph", "--force", db=db)
    assert loop.returncode == 2 and len(loop.stderr.splitlines()) == 1
    assert "@rob → @nested → @rob" in loop.stderr and "nothing saved" in loop.stderr
    itself = cli("searches", "--add", "me", "@me x", db=db)
    assert itself.returncode == 2 and "@me → @me" in itself.stderr
    assert cli("searches", db=db).stdout.split() == [
        "@nested",
        "@rob",
        "is:unread",
        "@rob",
        "robust",
    ]
    # a name not saved yet is said when saving (the search matches nothing until it is)
    early = cli("searches", "--add", "later", "@todo graph", db=db)
    assert early.returncode == 0 and "no saved search @todo yet" in early.stderr
    # a loop made anyway (an older library, another program) is named when run, never 0
    with Library(db) as library:
        library.set_setting("search:rob", "@nested")
    for command in (
        ["list", "-q", "@nested"],
        ["digest", "-q", "@nested"],
        ["export", "--format", "csv", "-q", "@nested"],
    ):
        run = cli(*command, db=db)
        assert run.returncode == 1 and run.stdout == "", command
        assert "@nested → @rob → @nested" in run.stderr and "loop" in run.stderr, command
        assert len(run.stderr.strip().splitlines()) == 1, command
    listing = cli("searches", db=db)
    assert listing.returncode == 0
    assert "warning: @nested matches nothing: saved searches loop" in listing.stderr
    assert "warning: @rob matches nothing" in listing.stderr
