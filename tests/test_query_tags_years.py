"""The query language and the library's facts: any tag the library takes can be written as a
filter (`tag_query`, read back by the parser), ``year:`` reads the year the library gives a
paper (the effective year), and a query on years is re-run when a year is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abstract_reader.corpus import Corpus
from abstract_reader.library import LibraryError, Metadata, Snapshot, clean_tag, tag_query
from abstract_reader.metadata import year_overrides
from abstract_reader.search import SearchIndex, parse_query
from abstract_reader.session import query_dependencies


@pytest.fixture(scope="module")
def index(seeds: Corpus) -> SearchIndex:
    return SearchIndex(seeds)


@settings(max_examples=300, deadline=None)
@given(raw=st.text(alphabet=st.sampled_from("ab #\"\\|!:^'$-é"), min_size=1, max_size=12))
def test_every_tag_written_as_a_query_reads_back_as_that_tag(raw: str) -> None:
    try:
        tag = clean_tag(raw)
    except LibraryError:
        return
    for query, kind, value in (
        (tag_query(tag), "tag", tag),
        (f"like:{tag_query(tag)}", "like", f"#{tag}"),
    ):
        parsed = parse_query(query)
        assert parsed.ignored == (), query
        assert [(t.kind, t.value, t.negated) for t in parsed.terms] == [(kind, value, False)]
    negated = parse_query(f"!{tag_query(tag)} robust")
    first = negated.terms[0]
    assert (first.kind, first.value, first.negated) == ("tag", tag, True)


@pytest.mark.parametrize(
    ("tag", "written"),
    [
        ("theory", "#theory"),
        ('a"b', '#a"b'),
        ("reading list", '#"reading list"'),
        ('say "hi"', '#"say \\"hi\\""'),
        ('"quoted', '#"\\"quoted"'),
        ("a|b", '#"a|b"'),
        ("x y\\", '#"x y\\\\"'),
    ],
)
def test_how_a_tag_is_written(tag: str, written: str) -> None:
    assert tag_query(tag) == written


def test_the_years_set_in_the_library_are_the_years_year_filters_on(
    index: SearchIndex, seeds: Corpus
) -> None:
    first, second = seeds.papers[0].id, seeds.papers[1].id
    snapshot = Snapshot(metadata={first: Metadata(year=2025), second: Metadata(title="T")})
    index.set_year_overrides(year_overrides(snapshot))
    try:
        assert [h.paper.id for h in index.search("year:2025")] == [first]
        assert len(index.search("year:2026")) == 54
        assert len(index.search("year:2025-2026")) == 55
        assert [h.paper.id for h in index.search("!year:2026")] == [first]
    finally:
        index.set_year_overrides({})
    assert len(index.search("year:2026")) == 55


def test_a_reversed_year_range_is_the_same_range(index: SearchIndex) -> None:
    reversed_range = parse_query("year:2026-2024")
    assert reversed_range.ignored == ()
    assert reversed_range.terms == parse_query("year:2024-2026").terms
    assert len(index.search("year:2026-2025")) == 55


@pytest.mark.parametrize("query", ["year:2026", "!year:2024-2026", "robust | year:2025"])
def test_a_query_on_years_depends_on_the_metadata(query: str) -> None:
    assert "meta" in query_dependencies(parse_query(query))


def test_a_tag_no_paper_has_is_said_with_the_nearest_names(
    index: SearchIndex, tmp_path: Path
) -> None:
    """QA (s17, 13): ``#readng`` gave 0 with no hint, ``like:#nosuch`` ranked every paper by
    nothing ("ranked like #nosuch (none)")."""
    from abstract_reader.library import Library
    from abstract_reader.session import Session

    with Library(tmp_path / "lib.sqlite3") as library:
        papers = index.corpus.papers
        library.add_tags([papers[0].id], ["reading"])
        library.add_tags([papers[1].id], ["Reading-list"])
        session = Session(library)
        view = session.library_view()
        typo = index.search("#readng", view)
        assert len(typo) == 0
        assert any("no paper is tagged #readng (did you mean #reading" in n for n in typo.ignored)
        like = index.search("like:#nosuch", view)
        assert len(like) == 0 and not like.ranked_like  # no paper, rather than every one
        assert "no paper is tagged #nosuch (tags: #reading, #Reading-list)" in like.ignored
        either = index.search("graph | #readng", view)  # inside an alternative too
        assert any("#readng" in note for note in either.ignored)
        # a tag papers have: nothing said, and like: ranks by it as before
        assert not any("tagged" in n for n in index.search("#reading", view).ignored)
        ranked = index.search("like:#reading", view)
        assert len(ranked) == len(papers) - 1 and ranked.ranked_like == "ranked like #reading"
        empty = Session(Library(tmp_path / "empty.sqlite3"))
        alone = index.search("#x", empty.library_view())
        assert "no paper is tagged #x (no paper has a tag yet)" in alone.ignored
        empty.library.close()
