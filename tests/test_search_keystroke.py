"""Per-keystroke search: the shortcuts each key takes (typo candidates narrowed from the
vocabulary's bytes, typo postings gathered at once and skipped under a prefix, scratch
arrays reused between searches) give exactly what the plain computation gives."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from abstract_reader.corpus import Corpus, load_corpus
from abstract_reader.search import SearchIndex, Vocabulary, parse_query, typo_budget
from abstract_reader.search.engine import EXACT, PREFIX, TYPO
from abstract_reader.search.fuzzy import _near_enough, _near_in_vocabulary
from abstract_reader.search.query import Word

from .conftest import write_dump

#: "model" and its neighbours: words it is a prefix of (typos too, by their cuts), words
#: one edit away (more than a handful: gathered at once), two edits away, accented
_FORMS = [
    "model",
    "models",
    "modelling",
    "modeled",
    "mode",
    "modes",
    "modal",
    "nodel",
    "medel",
    "mdoel",
    "módel",
    *(f"mode{c}" for c in "abcdefghijkmnopqrstuvwxyz"),
    *(f"mod{c}l" for c in "abcdfghijk"),
    "estimation",
    "estimator",
    "estimatoin",
    "esimation",
]


@pytest.fixture(scope="module")
def forms_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    rng = random.Random(14)
    abstracts = []
    for i in range(400):
        words = [*rng.sample(_FORMS, 3), "with", "results"]
        rng.shuffle(words)
        title = " ".join(rng.sample(_FORMS, 2)).capitalize()
        abstracts.append(f"{title}. We study {' '.join(words)} in paper {i}.")
    folder = tmp_path_factory.mktemp("forms")
    return load_corpus([write_dump(folder / "forms.txt", *abstracts)])


def _plain_word_scores(
    index: SearchIndex, word: Word, typo_words: set[str], title: bool
) -> npt.NDArray[np.float32]:
    """Each typo candidate's papers set one by one (more edits first), then the prefix's,
    then the word's own: the rule the search implements."""
    field = index.titles if title else index.text
    postings = field.cased if word.case_sensitive else field.folded
    match = index.match_word(word, title)
    score = np.zeros(index.n, np.float32)
    for vocab_i, edits in reversed(match.typos):
        score[postings.docs_of(vocab_i)] = TYPO / edits
        typo_words.add(postings.words[vocab_i])
    lo, hi = match.prefix
    for vocab_i in range(lo, hi):
        score[postings.docs_of(vocab_i)] = PREFIX
    if match.exact >= 0:
        score[postings.docs_of(match.exact)] = EXACT
    return score


@pytest.mark.parametrize("title", [False, True])
def test_word_scores_are_those_of_the_plain_rule(forms_corpus: Corpus, title: bool) -> None:
    index = SearchIndex(forms_corpus)
    texts = ["model", "mode", "modelz", "modal", "nodel", "Model", "estimatoin", "esti"]
    texts += ["model ", "modes ", "estimation "]  # finished words: whole-word typos
    for text in texts:
        for word in parse_query(text).terms[0].words:
            got_words: set[str] = set()
            want_words: set[str] = set()
            got = index._word_scores(word, got_words, False, title=title)
            want = _plain_word_scores(index, word, want_words, title)
            assert got.tolist() == want.tolist(), (text, title)
            assert got_words == want_words, (text, title)
    # the words are there to be found: typos gathered at once and set under a prefix
    match = index.match_word(parse_query("model").terms[0].words[0])
    lo, hi = match.prefix
    assert len(match.typos) > 8
    assert any(lo <= v < hi for v, _edits in match.typos)


def test_word_terms_are_those_of_the_plain_rule(forms_corpus: Corpus) -> None:
    """A word's score per paper: the better of text and title, + TITLE_BONUS where the
    title has it, × idf — whether few titles have it (merged paper by paper) or many (in
    passes over every paper, reusing the index's scratch arrays), with titles set by hand."""
    index = SearchIndex(forms_corpus)
    texts = ["model", "mode", "m", "mo", "estimatoin", "esti", "modelz", "e", "Model"]
    few = sorted({w for p in forms_corpus.papers for w in p.title.lower().split()})[0]
    texts.append(few)

    def check() -> None:
        for text in texts:
            word = parse_query(text).terms[0].words[0]
            index.clear_query_caches()
            term = index._word_term(word, set(), False)
            text_score = _plain_word_scores(index, word, set(), False)
            title_score = index._word_scores(word, set(), False, title=True)
            base = np.maximum(text_score, title_score)
            present = np.count_nonzero(base > 0)
            idf = np.float32(np.log1p(index.n / (1 + present)))
            base[title_score != 0] += np.float32(1.5)
            assert term.mask.tolist() == (base > 0).tolist(), text
            assert term.base.tolist() == base.tolist(), text
            assert term.score.tolist() == (base * idf).tolist(), text
            assert index._scratch_arrays is not None
            assert not index._scratch_arrays.title.any()  # given back all zeros

    check()
    first = forms_corpus.papers[0].id
    index.set_title_overrides({first: "Modal estimation", forms_corpus.papers[5].id: "Nothing"})
    check()


def test_searches_in_two_threads_at_once_give_their_own_results(forms_corpus: Corpus) -> None:
    """The scratch arrays are one search's at a time: a search in another thread meanwhile
    uses its own, and both get what a lone search gets."""
    import threading

    index = SearchIndex(forms_corpus)
    texts = ["model estimatoin", "m e", "modal | nodel", "mo", "e", "esti model"]
    want = {t: [(h.paper.id, h.score) for h in SearchIndex(forms_corpus).search(t)] for t in texts}
    got: dict[str, list[list[tuple[str, float]]]] = {t: [] for t in texts}
    failures: list[BaseException] = []

    def typist(order: list[str]) -> None:
        try:
            for _ in range(10):
                for text in order:
                    index.clear_query_caches()
                    got[text].append([(h.paper.id, h.score) for h in index.search(text)])
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=typist, args=(o,)) for o in (texts, texts[::-1])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    for text in texts:
        assert all(hits == want[text] for hits in got[text]), text


def test_search_while_typing_matches_a_fresh_index(forms_corpus: Corpus) -> None:
    typed = SearchIndex(forms_corpus)
    for text in ["model estimatoin", "modal | nodel", "!mode estimation", "mdoel"]:
        for end in range(1, len(text) + 1):
            fresh = SearchIndex(forms_corpus)
            got = typed.search(text[:end])
            want = fresh.search(text[:end])
            assert [h.paper.id for h in got] == [h.paper.id for h in want], text[:end]
            assert [h.score for h in got] == [h.score for h in want], text[:end]


def test_typo_prefilter_from_the_bytes_keeps_what_the_strings_keep(tmp_path: Path) -> None:
    """The vocabulary's bytes narrow a letter group as its decoded words do (ASCII words),
    and keep every word with other letters near its start (rapidfuzz decides those)."""
    rng = random.Random(7)
    alphabet = "aeinrstuo"
    words = {
        "r" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(3000)
    }
    accented = {"résumé", "rôle", "rœntgen", "robusté", "ré"}
    vocab = Vocabulary.from_sorted(sorted(words | accented))
    lo, hi = vocab.prefix_range("r")
    group = vocab.group(lo, hi)
    for word in ["robust", "robustnes", "rsnuoe", "reinstatement", "rzzzz", "roles"]:
        budget = typo_budget(word)
        from_bytes = set(_near_in_vocabulary(vocab, lo, hi, word, budget).tolist())
        from_strings = set(_near_enough(group, word, budget).tolist())
        other = {i for i, w in enumerate(group) if not w[: len(word) + budget].isascii()}
        assert from_bytes == from_strings | other, word
        assert other and other <= from_bytes


def test_prefix_distances_are_levenshtein_distances() -> None:
    """The dynamic programme over many words at once gives, for each word and each length
    j, rapidfuzz's distance of the typed word to the word's first j letters (capped)."""
    from rapidfuzz.distance import Levenshtein

    from abstract_reader.search.fuzzy import _columns, _prefix_distances

    rng = random.Random(3)
    words = sorted(
        {"".join(rng.choice("abcde") for _ in range(rng.randint(1, 14))) for _ in range(250)}
    )
    vocab = Vocabulary.from_sorted(words)
    ids = np.arange(len(words), dtype=np.int64)
    for typed in ["abcde", "aabbcc", "edcba", "abcdeabcd", "bad", "ccccccccccc"]:
        for budget in (1, 2):
            width = len(typed) + budget
            dist = _prefix_distances(_columns(vocab, ids, width), typed, budget)
            for k, word in enumerate(words):
                for j in range(min(width, len(word)) + 1):
                    want = min(Levenshtein.distance(typed, word[:j]), budget + 1)
                    assert int(dist[j, k]) == want, (typed, word, j)


def test_a_query_without_words_lists_papers_in_corpus_order(forms_corpus: Corpus) -> None:
    """Only negations and filters: every hit scores 0, so the papers come in corpus order
    (a pasted id's paper first), as a stable sort of equal scores gives them."""
    index = SearchIndex(forms_corpus)
    papers = forms_corpus.papers
    result = index.search("!modal")
    want = [p.id for p in papers if "modal" not in p.abstract.lower()]
    assert [h.paper.id for h in result] == want
    assert {h.score for h in result} == {0.0}
    assert result.position_of(want[3]) == 3
    pasted = want[7]
    pinned = index.search(f"!modal | {pasted[:10]}")
    assert pinned[0].paper.id == pasted
    assert [h.paper.id for h in pinned][1:] == [i for i in want if i != pasted]


_HUGE_PAGES = """
import abstract_reader, numpy
try:
    from numpy._core.multiarray import _set_madvise_hugepage
except ImportError:  # numpy 1.x
    from numpy.core.multiarray import _set_madvise_hugepage
print(_set_madvise_hugepage(False))  # (it answers the setting it replaces)
"""


@pytest.mark.parametrize(("asked", "expected"), [(None, "False"), ("1", "True"), ("0", "False")])
def test_the_searches_arrays_are_not_given_huge_pages_unless_the_user_asks(
    asked: str | None, expected: str
) -> None:
    # A key's fresh 4 MB arrays at a million papers stalled the kernel 8-28 ms compacting
    # memory for huge pages: the package turns numpy's request for them off before numpy is
    # imported, and leaves an explicit NUMPY_MADVISE_HUGEPAGE alone.
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    if asked is not None:
        env["NUMPY_MADVISE_HUGEPAGE"] = asked
    out = subprocess.run(
        [sys.executable, "-c", _HUGE_PAGES], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == expected
