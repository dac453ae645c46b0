"""The index build reads the papers in chunks (and gives every other chunk to a helper
process on large corpora): whatever the chunking, the index and every search are the ones a
one-shot build gives — and the postings are exactly each paper's words."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abstract_reader import tokens
from abstract_reader.corpus import Corpus, CorpusBuilder, Paper, Source, load_corpus, paper_id
from abstract_reader.search import SearchIndex, postings
from abstract_reader.search.postings import _normalise_vocab
from abstract_reader.search.query import MAX_WORD
from abstract_reader.tokens import TOKEN_RE

from .conftest import SEEDS

# words that exercise every path: case, accents, Greek and LaTeX commands, pieces with
# several words or none, prefixes of each other, near-misses for typos
VOCAB = [
    "robust", "robustness", "Robust", "ROBUST", "estimation", "estimator", "estimatoin",
    "graph", "graphs", "Graph-based", "neural", "Neural", "networks", "of", "the", "The",
    "mean", "means,", "(RSE),", "Split-RL,", "$\\hat", "\\mu$", "\\alpha", "\\Gamma",
    "\\frac{1}{2}", "Bürmann", "burmann", "café", "=", "--", "x_1", "λ", "über", "diffusion",
    "diffusions", "model.", "models", "safety", "gaussian", "gausian", "mixture", "zeta",
]  # fmt: skip
QUERIES = [
    "robust",
    "rob",
    "Robust",
    "ROBUST",
    "robst estimation",
    "estimatr",
    "gaussian mean",
    '"graph neural"',
    '"of the"',
    "title:robust",
    "title:grap",
    "^Robust",
    "^est",
    "mu",
    "alpha",
    "Gamma",
    "burmann",
    "!robust graph",
    "graph | diffusion",
    "'estimator",
    "split rl",
    "graph-based",
    "λ",
    "e",
    "zeta ",
]


def _corpus(abstracts: list[str]) -> Corpus:
    papers = []
    for n, words in enumerate(abstracts):
        abstract = f"{words} paper{n}"
        title = " ".join(abstract.split()[:4])
        papers.append(Paper(paper_id(abstract), abstract, title, sources=[Source("t.txt", n)]))
    return Corpus(papers=papers)


def _arrays(index: SearchIndex) -> list[tuple[list[str], list[int], list[int]]]:
    return [
        (list(p.words), p.offsets.tolist(), p.docs.tolist())
        for p in (index.text.folded, index.text.cased, index.titles.folded, index.titles.cased)
    ]


def _results(index: SearchIndex) -> list[list[tuple[str, float]]]:
    return [[(h.paper.id, h.score) for h in index.search(q)] for q in QUERIES]


def _by_reading(corpus: Corpus) -> dict[str, list[int]]:
    """Each folded word's papers, found the slow and obvious way."""
    found: dict[str, set[int]] = {}
    for doc, paper in enumerate(corpus.papers):
        raw = sorted({w for piece in paper.abstract.split() for w in TOKEN_RE.findall(piece)})
        for form in _normalise_vocab(raw)[1]:
            if form:
                found.setdefault(form, set()).add(doc)
    return {w: sorted(found[w]) for w in sorted(found)}


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    abstracts=st.lists(
        st.lists(st.sampled_from(VOCAB), min_size=0, max_size=12).map(" ".join),
        min_size=1,
        max_size=14,
    ),
    chunk=st.integers(1, 5),
    parallel=st.booleans(),
)
def test_a_chunked_build_equals_a_one_shot_build(
    monkeypatch: pytest.MonkeyPatch, abstracts: list[str], chunk: int, parallel: bool
) -> None:
    corpus = _corpus(abstracts)
    monkeypatch.setattr(postings, "CHUNK_DOCS", 1 << 16)
    monkeypatch.setattr(postings, "PARALLEL_MIN_DOCS", 1 << 30)
    one_shot = SearchIndex(corpus)
    monkeypatch.setattr(postings, "CHUNK_DOCS", chunk)
    if parallel:  # every other chunk tokenised by the helper process
        monkeypatch.setattr(postings, "PARALLEL_MIN_DOCS", 1)
    done: list[tuple[int, int]] = []
    chunked = SearchIndex(corpus, progress=lambda a, b: done.append((a, b)))
    assert _arrays(chunked) == _arrays(one_shot)
    assert _results(chunked) == _results(one_shot)
    folded = chunked.text.folded
    assert {w: folded.docs_of(i).tolist() for i, w in enumerate(folded.words)} == _by_reading(
        corpus
    )
    # progress: rising, ends with every paper
    assert done[-1] == (len(corpus.papers), len(corpus.papers))
    assert [a for a, _ in done] == sorted(a for a, _ in done)


def test_the_helper_process_builds_the_same_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large corpora are tokenised by a helper process too; the index must not change."""
    seeds = load_corpus([SEEDS])
    alone = SearchIndex(seeds)
    monkeypatch.setattr(postings, "CHUNK_DOCS", 7)
    monkeypatch.setattr(postings, "PARALLEL_MIN_DOCS", 1)
    used: list[int] = []
    real_send = postings._Helper.send

    def send(helper: postings._Helper, texts: list[str]) -> int:
        used.append(len(texts))
        return real_send(helper, texts)

    monkeypatch.setattr(postings._Helper, "send", send)
    helped = SearchIndex(seeds)
    assert used  # the first chunks always go to the helper
    assert _arrays(helped) == _arrays(alone)
    assert [h.paper.id for h in helped.search("robst estimation")] == [
        h.paper.id for h in alone.search("robst estimation")
    ]


def test_a_failing_helper_is_replaced_by_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    seeds = load_corpus([SEEDS])
    alone = SearchIndex(seeds)
    monkeypatch.setattr(postings, "CHUNK_DOCS", 5)
    monkeypatch.setattr(postings, "PARALLEL_MIN_DOCS", 1)

    def damaged(helper: postings._Helper, k: int, papers: int) -> tokens.Answer:
        counts = np.array([1], np.int32)
        none = np.zeros(0, np.uint64)
        good = (none, ["é"], counts, np.array([0], np.uint16))
        return papers, (none, ["é"], counts, np.array([papers], np.uint16)), good  # beyond

    monkeypatch.setattr(postings._Helper, "receive", damaged)
    assert _arrays(SearchIndex(seeds)) == _arrays(alone)


def _packed(*words: str) -> np.ndarray:
    return np.array([tokens._pack_str(w) for w in words], np.uint64)


@pytest.mark.parametrize(
    "part",
    [
        (_packed("alpha", "of"), [], [1, 1], [0, 0]),  # packed forms not rising (rising: of, alpha)
        (_packed("alpha", "alpha"), [], [1, 1], [0, 0]),  # a packed form twice
        (np.array([63 | 2 << 6], np.uint64), [], [1], [0]),  # a code of no character
        (np.array([2 << 6], np.uint64), [], [1], [0]),  # a form that starts empty
        (np.array([2 | 3 << 12], np.uint64), [], [1], [0]),  # a gap inside a form
        (np.array([1 << 48], np.uint64), [], [1], [0]),  # beyond 8 characters
        (_packed("alpha"), ["beta"], [1, 1], [0, 0]),  # a packable form as text
        (_packed("alpha"), ["é", "é"], [1, 1, 1], [0, 0, 0]),  # a text form twice
        (_packed("alpha"), ["abcdefghi"], [1, 1, 1], [0, 0, 0]),  # counts for 3 forms of 2
    ],
)
def test_a_helpers_damaged_chunk_postings_are_refused(part: tuple) -> None:
    """The helper's answer names each form of up to 8 ASCII letters and digits by its packing:
    one that is not a packing, repeated, out of order, or such a form sent as text (it would
    be two words of the vocabulary), is refused (the chunk is then tokenised here)."""
    short, forms, counts, docs = part
    damaged = (short, forms, np.array(counts, np.int32), np.array(docs, np.uint16))
    with pytest.raises(ValueError):
        postings._checked_part(damaged, 4)
    good = (_packed("of", "alpha"), ["abcdefghi"], np.ones(3, np.int32), np.zeros(3, np.uint16))
    assert postings._checked_part(good, 4) is good
    assert tokens.forms_of(good) == ["of", "alpha", "abcdefghi"]


def _by_reading_both(texts: list[str]) -> list[dict[str, list[int]]]:
    """Each folded form's and each case-kept form's (with a capital) documents, found the
    slow and obvious way: the regex over each text, each word normalised."""
    folded: dict[str, set[int]] = {}
    cased: dict[str, set[int]] = {}
    for doc, text in enumerate(texts):
        for token in set(TOKEN_RE.findall(text)):
            case_form, folded_form = tokens.normalise(token)
            if folded_form:
                folded.setdefault(folded_form, set()).add(doc)
            if case_form != case_form.lower():
                cased.setdefault(case_form, set()).add(doc)
    return [{w: sorted(d) for w, d in found.items()} for found in (folded, cased)]


def _chunk_postings(texts: list[str]) -> list[dict[str, list[int]]]:
    out = []
    papers, *both = tokens.index_chunk(texts)
    assert papers == len(texts)
    for part in both:
        forms, counts, docs = tokens.forms_of(part), part[2], part[3]
        assert len(set(forms)) == len(forms) == counts.size
        ends = np.cumsum(counts).tolist()
        starts = [0, *ends][:-1]
        out.append({w: docs[a:b].tolist() for w, a, b in zip(forms, starts, ends, strict=True)})
    return out


# words for every path of the tokeniser: ASCII words of up to 8, 9 to 16 and more letters,
# capitals, LaTeX commands (one backslash or two), letters outside ASCII inside a word or
# beside it, non-word characters outside ASCII, forms that fold onto ASCII words
WORDS = [
    "a", "of", "The", "robust", "Robust", "ROBUST", "abcdefgh", "abcdefghi", "Abcdefghi",
    "ABCDEFGHIJKLMNOP", "abcdefghijklmnopq", "Abcdefghijklmnopqrstuvwxyz" * 11, "12345678",
    "123456789", "0x1F", "x_1", "\\alpha", "\\\\beta", "\\varepsilon", "\\foo", "\\Gamma",
    "\\log", "a\\b", "$\\hat{x}$", "Köhler", "Kohler", "kohler", "λ", "μ-law", "2½", "über—alles",
    "—abc", "\\—x", "(RSE),", "é", "naïve", "Naive", "Ünïcödé1234567890", "İstanbul", "ﬁne",
    "\u00a0nbsp", "tab\tand\nnewline", "hello_world", "ℓ", "x²",
]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(
        st.lists(st.sampled_from(WORDS) | st.text(max_size=6), max_size=12).map(" ".join),
        max_size=20,
    ),
    step=st.sampled_from([1, 3, 1024]),
)
def test_a_chunks_postings_are_each_texts_words(texts: list[str], step: int) -> None:
    """The tokeniser (numpy over the texts' bytes, Python for the rare words) gives each
    form exactly the documents whose text has a word of that form — whatever the blocks
    it reads the texts in."""
    texts = [t.replace("\0", " ") for t in texts]  # (texts are sanitised: no NUL)
    original = tokens.STEP
    tokens.STEP = step
    try:
        assert _chunk_postings(texts) == _by_reading_both(texts)
    finally:
        tokens.STEP = original


def test_the_seed_corpus_chunk_postings_are_its_words() -> None:
    texts = [p.abstract for p in load_corpus([SEEDS]).papers]
    texts += [p.title for p in load_corpus([SEEDS]).papers]
    assert _chunk_postings(texts) == _by_reading_both(texts)


def test_the_tokeniser_indexes_words_as_searches_cut_them() -> None:
    assert tokens.MAX_WORD == MAX_WORD


def test_an_index_of_spilled_abstracts_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Abstracts kept in the table's mapped file (pages dropped as the build reads them),
    chunks at the helper not kept here: the same index as from memory."""
    alone = SearchIndex(load_corpus([SEEDS]))
    builder = CorpusBuilder([SEEDS])
    assert builder.corpus.papers.spill_into(tmp_path)
    for path in builder.files:
        for _rows in builder.add_file_in_batches(path, batch=9):
            pass
    spilled = builder.finish()
    monkeypatch.setattr(postings, "CHUNK_DOCS", 7)
    monkeypatch.setattr(postings, "PARALLEL_MIN_DOCS", 1)
    helped = SearchIndex(spilled)
    assert _arrays(helped) == _arrays(alone)
    assert _results(helped) == _results(alone)


def test_a_saved_index_is_then_read_from_its_file(tmp_path: Path) -> None:
    """Once saved, the built arrays give way to the file's (mapped: page cache, not the
    process's memory) — only when equal; results never change."""
    seeds = load_corpus([SEEDS])
    index = SearchIndex(seeds, cache_dir=tmp_path, cache_key="k", defer_save=True)
    built, results = _arrays(index), _results(index)
    assert index.text.folded.docs.flags.writeable  # built here
    assert index.prepare_prefix_masks()  # made ahead: still used after
    index.save_cache()
    assert index.text.folded.docs.flags.writeable and index.map_pending
    index.map_saved()
    assert not index.text.folded.docs.flags.writeable  # the mapped file's
    assert _arrays(index) == built
    assert _results(index) == results


def test_a_saved_index_that_reads_back_different_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that does not hold what was built (here: written with the titles' postings
    where the abstracts' go) is not read: the built arrays stay."""
    from abstract_reader.search import cache

    seeds = load_corpus([SEEDS])
    index = SearchIndex(seeds, cache_dir=tmp_path, cache_key="k", defer_save=True)
    built, results = _arrays(index), _results(index)

    def save_other(
        cache_dir: Path,
        key: str,
        corpus: Corpus,
        text: postings._FieldIndex,
        titles: postings._FieldIndex,
        pause: Callable[[], object] | None = None,
    ) -> None:
        other = postings._FieldIndex(folded=titles.folded, cased=text.cased)
        cache.save_cache(cache_dir, key, corpus, other, titles, pause=pause)

    monkeypatch.setattr("abstract_reader.search.engine._save_cache", save_other)
    index.save_cache()
    index.map_saved()
    assert index.text.folded.docs.flags.writeable  # still the built arrays
    assert _arrays(index) == built
    assert _results(index) == results
