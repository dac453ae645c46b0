"""Saved searches in the core: fuzzy matching of names, lenient expansion, and a session
whose query names one re-runs when it changes (the library reports settings as no fact)."""

from __future__ import annotations

from pathlib import Path

from abstract_reader.library import Library
from abstract_reader.saved import expand_known, matching, references, save
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
    gone = cli("searches", "--delete", "reading", db=db)
    assert gone.returncode == 1 and "no saved search named 'reading'" in gone.stderr
