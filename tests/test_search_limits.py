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
