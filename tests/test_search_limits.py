"""Bounded work: enormous words and queries are handled, and the user is told what was cut."""

from __future__ import annotations

from pathlib import Path

from abstract_reader.corpus import load_corpus
from abstract_reader.search import SearchIndex, parse_query
from abstract_reader.search.query import MAX_QUERY_CHARS, MAX_QUERY_TERMS
from abstract_reader.text import render

from .conftest import cli, write_dump


def test_a_word_of_32768_letters_is_indexed_and_found(tmp_path: Path) -> None:
    giant = "a" * 40_000
    dump = write_dump(
        tmp_path / "giant.txt",
        f"An abstract with one enormous word {giant} in it.",
        "A plain abstract about lemons.",
        "Bb" + "b" * 70_000 + " capitalised, too.",
    )
    corpus = load_corpus([dump])
    index = SearchIndex(corpus)
    assert [h.paper.abstract[:8] for h in index.search(giant + " ")] == ["An abstr"]
    assert [h.paper.abstract[:8] for h in index.search("aaaaaa")] == ["An abstr"]  # prefix
    assert len(index.search("Bbbbbbbb")) == 1  # smart-case: the case-kept vocabulary too
    assert len(index.search(f'"word {giant}"')) == 1  # a phrase holding it
    hit = index.search("enormous " + giant[:300])[0]
    start = render(hit.paper.abstract).text.index(giant)
    assert (start, start + len(giant)) in hit.text_spans  # the giant word is highlighted
    result = cli("list", "-q", "enormous", "-d", str(dump))
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert len(result.stdout.splitlines()) == 1


def test_a_huge_query_is_cut_and_the_user_told(tmp_path: Path) -> None:
    query = parse_query("robust " * 150_000)
    words = sum(max(1, len(t.words)) for t in query.terms)
    assert words <= MAX_QUERY_TERMS
    assert any(f"{MAX_QUERY_CHARS:,} characters" in part for part in query.ignored)
    many = parse_query(" ".join(f"w{n}" for n in range(100)))
    assert len(many.terms) == MAX_QUERY_TERMS
    assert any("68 more terms" in part for part in many.ignored)
    assert parse_query("robust estimation").ignored == ()  # ordinary queries: nothing said

    dump = write_dump(tmp_path / "d.txt", "Robust estimation of means.", "Lemons.")
    result = cli("list", "-q", "robust " * 10_000, "-d", str(dump))
    assert result.returncode == 0
    assert "Robust estimation" in result.stdout
    assert "limited to" in result.stderr  # said, not silently truncated


def test_a_phrase_of_common_words_is_checked_in_the_best_candidates_and_said(
    tmp_path: Path,
) -> None:
    abstracts = [f"Paper {n}: the effect of the rate on loss number {n}." for n in range(30)]
    abstracts += [f"Paper {n}: of course, the rates differ in case {n}." for n in range(30, 60)]
    index = SearchIndex(load_corpus([write_dump(tmp_path / "d.txt", *abstracts)]))
    exact = index.search('"of the"', phrase_limit=None)
    assert len(exact) == 30 and exact.ignored == ()
    assert all("of the" in hit.paper.abstract for hit in exact)
    bounded = index.search('"of the"', phrase_limit=10)
    assert 0 < len(bounded) <= 10
    assert {h.paper.id for h in bounded} <= {h.paper.id for h in exact}  # never a wrong hit
    assert any("best-ranked" in note for note in bounded.ignored)  # and the user is told
    # few candidates: the default limit checks them all, exactly, and says nothing
    assert [h.paper.id for h in index.search('"of the"')] == [h.paper.id for h in exact]
    assert index.search('"of the"').ignored == ()
    # negated phrases and alternatives stay exact
    assert len(index.search('Paper !"of the"')) == 30
    assert len(index.search('"of the" | "of course"')) == 60


def test_the_cli_filters_exactly(tmp_path: Path) -> None:
    abstracts = [f"Item {n}: of the set, number {n}." for n in range(2_500)]
    abstracts += [f"Item {n}: of course the set, number {n}." for n in range(2_500, 2_600)]
    dump = write_dump(tmp_path / "d.txt", *abstracts)
    result = cli("list", "-q", '"of the"', "-d", str(dump))
    assert result.returncode == 0 and len(result.stdout.splitlines()) == 2_500
    assert "best-ranked" not in result.stderr
