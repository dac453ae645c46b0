"""Jump to a paper by id: `id:PREFIX` and a pasted id prefix, in search, the CLI and resolve."""

from __future__ import annotations

import pytest

from abstract_reader.corpus import Corpus
from abstract_reader.search import SearchIndex, parse_query


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
