"""The index cache is bound to its corpus by `corpus_digest`: the same papers give the same
digest however they were loaded (parsed, or mapped from the corpus cache), and any change of
an id, a title or the order gives another — so a stale index is refused, never shown."""

from __future__ import annotations

from pathlib import Path

from abstract_reader.corpus import Corpus, load_corpus
from abstract_reader.corpus_cache import load_corpus_cached
from abstract_reader.papertable import PaperTable
from abstract_reader.search import SearchIndex
from abstract_reader.search.cache import cache_key_for, corpus_digest

from .conftest import write_dump


def _dumps(tmp_path: Path, n: int = 12_000) -> list[Path]:
    a = [f"We study topic {k % 89} of the mean. Variant {k} of it." for k in range(n)]
    return [write_dump(tmp_path / "a.txt", *a), write_dump(tmp_path / "b.txt", "Only in b.")]


def _of(papers: list[object]) -> Corpus:
    corpus = Corpus()
    corpus.papers = PaperTable(papers)  # type: ignore[arg-type]
    return corpus


def test_parsed_and_cached_corpora_have_one_digest(tmp_path: Path) -> None:
    paths = _dumps(tmp_path)
    parsed = load_corpus(paths)
    assert parsed.papers.title_overrides  # clashing derived titles were made distinct
    cold = load_corpus_cached(paths, tmp_path / "cache", min_bytes=0)
    warm = load_corpus_cached(paths, tmp_path / "cache", min_bytes=0)
    assert not warm.papers.title_overrides  # the cache keeps the distinct titles as text
    assert corpus_digest(parsed) == corpus_digest(cold) == corpus_digest(warm)
    # the same papers rebuilt one by one (one chunk, not the loader's batches)
    assert corpus_digest(_of(list(parsed.papers))) == corpus_digest(parsed)


def test_any_change_of_id_title_or_order_changes_it(seeds: Corpus) -> None:
    papers = list(seeds.papers)
    base = corpus_digest(_of(papers))
    swapped = [papers[1], papers[0], *papers[2:]]
    assert corpus_digest(_of(swapped)) != base
    assert corpus_digest(_of(papers[:-1])) != base
    retitled = _of(papers)
    retitled.papers.set_title(3, papers[3].title + "!")
    assert corpus_digest(retitled) != base
    back = _of(papers)
    back.papers.set_title(3, papers[3].title)  # set, but to the same text
    assert corpus_digest(back) == base
    # a title moved from one paper to the next (same bytes overall, other lengths)
    a, b = papers[5].title, papers[6].title
    moved = _of(papers)
    moved.papers.set_title(5, a + b[:1])
    moved.papers.set_title(6, b[1:])
    assert corpus_digest(moved) != base


def test_another_id_changes_it(tmp_path: Path, seeds: Corpus) -> None:
    papers = list(seeds.papers)
    other = load_corpus([write_dump(tmp_path / "x.txt", papers[-1].abstract + " More.")])
    changed = other.papers[0]
    assert changed.id != papers[-1].id
    changed = type(changed)(**{**_fields(changed), "title": papers[-1].title})
    assert corpus_digest(_of([*papers[:-1], changed])) != corpus_digest(_of(papers))


def _fields(paper: object) -> dict[str, object]:
    import dataclasses

    return {f.name: getattr(paper, f.name) for f in dataclasses.fields(paper)}  # type: ignore[arg-type]


def test_an_index_cache_of_a_changed_title_is_refused(tmp_path: Path, seeds: Corpus) -> None:
    paths = [write_dump(tmp_path / "d.txt", *(p.abstract for p in seeds.papers))]
    corpus = load_corpus(paths)
    key = cache_key_for(corpus.files)
    cache = tmp_path / "index"
    SearchIndex(corpus, cache_dir=cache, cache_key=key)
    assert SearchIndex(corpus, cache_dir=cache, cache_key=key).loaded_from_cache
    target = corpus.papers[2].title.split()[0]
    corpus.papers.set_title(2, "Qwertyuiop zxcvb")
    again = SearchIndex(corpus, cache_dir=cache, cache_key=key)
    assert not again.loaded_from_cache
    assert [h.paper.id for h in again.search("qwertyuiop")] == [corpus.papers[2].id]
    assert target


def test_an_index_checked_ahead_is_still_bound_to_its_corpus(tmp_path: Path) -> None:
    """`check_ahead` checks the index cache's arrays before the corpus is all there (a warm
    start); the index is used only if its digest is the corpus's, as without it."""
    from abstract_reader.search.cache import check_ahead

    corpus = load_corpus(_dumps(tmp_path, 600))
    key = cache_key_for(corpus.files)
    cache = tmp_path / "index"
    SearchIndex(corpus, cache_dir=cache, cache_key=key)
    check_ahead(cache, corpus.files, len(corpus.papers))
    assert SearchIndex(corpus, cache_dir=cache, cache_key=key).loaded_from_cache
    check_ahead(cache, corpus.files, len(corpus.papers))
    corpus.papers.set_title(2, "Qwertyuiop zxcvb")  # the corpus changes after the check
    again = SearchIndex(corpus, cache_dir=cache, cache_key=key)
    assert not again.loaded_from_cache
    assert [h.paper.id for h in again.search("qwertyuiop")] == [corpus.papers[2].id]
