"""Jump to a paper by id: `id:PREFIX` and a pasted id prefix, in search, the CLI and resolve."""

from __future__ import annotations

from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus
from abstract_reader.search import SearchIndex, parse_query

from .conftest import write_dump


@pytest.fixture(scope="module")
def index(seeds: Corpus) -> SearchIndex:
    return SearchIndex(seeds)


def test_id_term_shows_that_paper_alone(index: SearchIndex, seeds: Corpus) -> None:
    paper = seeds.papers[17]
    for prefix in (paper.id[:6], paper.id[:10], paper.id, paper.id[:8].upper()):
        result = index.search(f"id:{prefix}")
        assert [h.paper.id for h in result] == [paper.id], prefix
        assert result.ignored == ()


def test_pasted_id_prefix_puts_the_paper_first(index: SearchIndex, seeds: Corpus) -> None:
    paper = seeds.papers[30]
    for text in (paper.id[:8], paper.id[:12], paper.id, f"{paper.id[:12]} "):
        result = index.search(text)
        assert result[0].paper.id == paper.id, text
    # with another word: the paper first, the word's matches after it
    result = index.search(f"{paper.id[:12]} | learning")
    ids = [h.paper.id for h in result]
    assert ids[0] == paper.id and len(ids) > 1 and ids.count(paper.id) == 1


def test_short_or_upper_case_hex_is_only_a_word(index: SearchIndex, seeds: Corpus) -> None:
    paper = seeds.papers[3]
    assert paper.id not in {h.paper.id for h in index.search(paper.id[:7])}  # 7 digits
    assert paper.id not in {h.paper.id for h in index.search(paper.id[:8].upper())}


def test_unknown_or_ambiguous_id_is_said(index: SearchIndex, seeds: Corpus) -> None:
    missing = "ffff0000ffff0000"
    assert all(not p.id.startswith(missing[:6]) for p in seeds.papers)
    result = index.search(f"id:{missing[:6]}")
    assert len(result) == 0
    assert result.ignored == (f"id:{missing[:6]} matches no paper in the loaded dumps",)
    # find a 4-digit prefix shared by two papers, if the seeds have one
    firsts: dict[str, int] = {}
    for p in seeds.papers:
        firsts[p.id[:4]] = firsts.get(p.id[:4], 0) + 1
    shared = [k for k, n in firsts.items() if n > 1]
    if shared:
        result = index.search(f"id:{shared[0]}")
        assert len(result) == 0
        assert "ambiguous" in result.ignored[0]
    bad = parse_query("id:xyz")
    assert bad.empty and "4 or more hex digits" in bad.ignored[0]


def test_resolve_by_prefix(seeds: Corpus) -> None:
    paper = seeds.papers[5]
    assert seeds.resolve(paper.id[:6]) is paper
    assert seeds.resolve(paper.id.upper()) is paper
    with pytest.raises(LookupError, match="no paper"):
        seeds.resolve("ffff0000ffff")
    with pytest.raises(LookupError, match="too short"):
        seeds.resolve("abc")


def test_list_with_a_pasted_id_or_id_term() -> None:
    from .conftest import cli

    result = cli("list", "-q", "d059a4d9")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("d059a4d9bc3b ") and "Empirical sensitivity" in lines[0]
    assert cli("list", "-q", "id:d059").stdout.splitlines() == lines[:1]
    unknown = cli("list", "-q", "id:ffff00")
    assert unknown.returncode == 0 and unknown.stdout == ""
    assert unknown.stderr.strip().endswith(
        "warning: id:ffff00 matches no paper in the loaded dumps"
    )


def test_list_with_a_malformed_id_term_is_a_usage_error() -> None:
    from .conftest import cli

    result = cli("list", "-q", "id:zz")
    assert result.returncode == 2 and result.stdout == ""
    assert "4 or more hex digits" in result.stderr


def test_ids_of_a_large_corpus_by_prefix(tmp_path: Path) -> None:
    """At thousands of papers (the table's id index is a numpy array): every id prefix
    names its paper, an ambiguous prefix lists its papers in id order, and a paper loaded
    after the index was built is not one of its answers."""
    from abstract_reader.corpus import CorpusBuilder

    first = write_dump(
        tmp_path / "a.txt", *(f"Paper {k} studies matter {k * 7919 % 10007}." for k in range(6000))
    )
    later = write_dump(tmp_path / "b.txt", "A paper loaded after the index was built.")
    builder = CorpusBuilder([first, later])
    builder.add_file(first)
    corpus = builder.corpus
    index = SearchIndex(corpus)
    ids = corpus.papers.ids()
    for row in range(0, 6000, 397):
        assert [h.paper.id for h in index.search(f"id:{ids[row][:8]}")] == [ids[row]]
    by_four: dict[str, list[str]] = {}
    for paper_id in ids:
        by_four.setdefault(paper_id[:4], []).append(paper_id)
    prefix, shared = next((k, v) for k, v in by_four.items() if len(v) > 1)
    (note,) = index.search(f"id:{prefix}").ignored
    expected = ", ".join(i[:12] for i in sorted(shared)[:3])
    assert note.startswith(f"id:{prefix} is ambiguous ({len(shared):,} papers: {expected}")
    builder.add_file(later)
    new_id = corpus.papers.ids()[-1]
    assert len(corpus.papers) == 6001 and index.n == 6000
    assert index.search(f"id:{new_id[:8]}").ignored == (
        f"id:{new_id[:8]} matches no paper in the loaded dumps",
    )
