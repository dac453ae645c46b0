"""Search while typing: what one keystroke keeps for the next (typo pools, word scores, a
partly sorted order) never changes a result. Each query typed key by key — extending,
backspacing, editing the middle, adding a negation — gives exactly what a fresh index
gives for that text."""

from __future__ import annotations

from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus, load_corpus
from abstract_reader.search import SearchIndex, parse_query, typo_budget
from abstract_reader.search.fuzzy import TypoFinder
from abstract_reader.search.rank import top_positions

from .conftest import paper_with


@pytest.fixture(scope="module")
def typed(seeds: Corpus) -> SearchIndex:
    """One index that sees every keystroke of every test (its caches carry over)."""
    return SearchIndex(seeds)


def _same(typed: SearchIndex, fresh: SearchIndex, text: str) -> None:
    got = typed.search(text, phrase_limit=None)
    want = fresh.search(text, phrase_limit=None)
    fresh.clear_query_caches()
    assert [h.paper.id for h in got] == [h.paper.id for h in want], text
    assert [h.score for h in got] == [h.score for h in want], text
    assert [h.title_spans for h in got[:5]] == [h.title_spans for h in want[:5]], text


def _keys(*texts: str) -> list[str]:
    """Each text typed from the previous one: backspace to the common start, then type."""
    shown = ""
    out: list[str] = []
    for text in texts:
        common = 0
        while common < min(len(shown), len(text)) and shown[common] == text[common]:
            common += 1
        while len(shown) > common:
            shown = shown[:-1]
            out.append(shown)
        while len(shown) < len(text):
            shown = text[: len(shown) + 1]
            out.append(shown)
    return [k for k in out if k]


@pytest.mark.parametrize(
    "texts",
    [
        ("robst satisficing",),  # a typo, then a second word
        ("gausian splatting", "gausian"),  # backspacing a word away
        ("satisficing ensemble", "satisf ensemble"),  # editing the first word
        ("robust ensemble", "robust !ensemble"),  # extended by a negation
        ("ensembles", "ensemble", "ensemblez"),  # a typo budget kept, a letter changed
        ("estimatoin", "estimation"),  # 9+ letters: two typos allowed
        ('"gaussian mean"', "gaussian-mean", "gaussian | robust"),
        ("^RSE", "title:satisf", "muon shampoo"),
    ],
)
def test_typing_key_by_key_gives_what_a_fresh_index_gives(
    typed: SearchIndex, seeds: Corpus, texts: tuple[str, ...]
) -> None:
    fresh = SearchIndex(seeds)
    for key in _keys(*texts):
        _same(typed, fresh, key)


def test_a_typo_found_while_typing_lost_and_found_again_on_backspace(
    typed: SearchIndex, seeds: Corpus
) -> None:
    target = paper_with(seeds, "Robust Satisficing Ensemble (RSE)").id
    keys = _keys("satisficng", "satisfqq", "sat")
    ids = {k: [h.paper.id for h in typed.search(k)] for k in keys}
    assert target in ids["satisficng"]  # one letter missing: a typo
    assert target in ids["satisf"]  # a prefix
    assert target not in ids["satisfqq"]  # two edits from every word: nothing near
    assert target in ids["satisfq"]  # one edit, typed after "satisfqq" was backspaced
    assert ids["sat"] == [h.paper.id for h in SearchIndex(seeds).search("sat")]


def test_typo_candidates_match_the_vocabulary_scan(seeds: Corpus) -> None:
    """The pools (each key looks only at the previous key's near words) give the same
    candidates as scanning the whole letter group, for words typed letter by letter,
    finished (a space) and edited."""
    index = SearchIndex(seeds)
    postings = index.text.folded
    finder = TypoFinder()
    words = ["satisficing", "satisficng", "gausian", "gaussain", "ensemblez", "robst", "zzzzzz"]
    for word in words:
        for end in range(1, len(word) + 1):
            part = word[:end]
            budget = typo_budget(part)
            for prefix in (True, False):
                assert finder.candidates(postings, part, budget, prefix) == (
                    postings.typo_candidates(part, budget, prefix)
                ), (part, prefix)


def test_order_is_the_stable_sort_however_far_it_is_read(tmp_path: Path) -> None:
    """Only the best hits are sorted first; reading further, iterating, asking where a
    paper stands: all the same as sorting every hit by score (ties in corpus order)."""
    texts = [f"Paper {i} on {'robust ' * (i % 4)}results with many words." for i in range(3000)]
    dump = tmp_path / "many.txt"
    dump.write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    corpus = load_corpus([dump])
    index = SearchIndex(corpus)
    result = index.search("robust")
    scores = [h.score for h in result]
    assert scores == sorted(scores, reverse=True)
    ids = [h.paper.id for h in result]
    assert len(ids) == len(result) == sum(1 for i in range(3000) if i % 4)
    # ties (same score) keep corpus order
    positions = [corpus.index_of(i) for i in ids]
    for a, b, sa, sb in zip(positions, positions[1:], scores, scores[1:], strict=False):
        assert sa > sb or a < b
    fresh = index.search("robust")
    assert [fresh.position_of(i) for i in ids[::97]] == list(range(0, len(ids), 97))
    assert fresh[len(fresh) - 1].paper.id == ids[-1]
    assert fresh.paper_at(1500).id == ids[1500]
    assert fresh.position_of(corpus.papers.id(0)) is None  # "robust" not in paper 0


def test_top_positions_is_the_head_of_a_stable_sort() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    scores = rng.integers(0, 5, 2000).astype(np.float32)  # many ties
    full = np.argsort(-scores, kind="stable")
    for k in (0, 1, 10, 511, 1999, 2000, 5000):
        assert top_positions(scores, k).tolist() == full[:k].tolist()


def test_pasted_id_pinned_first_without_a_full_sort(typed: SearchIndex, seeds: Corpus) -> None:
    target = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    result = typed.search(f"{target.id[:10]} | robust")
    assert result[0].paper.id == target.id
    assert result.position_of(target.id) == 0
    assert parse_query(target.id[:10]).terms


def test_typo_candidates_of_a_large_letter_group_match_the_scan() -> None:
    """Letter groups of hundreds of words are narrowed with numpy before rapidfuzz: the
    same candidates as the plain scan, for words of every length and budget, including
    accented letters and words shorter or longer than the typed one."""
    import random

    import numpy as np

    from abstract_reader.search.fuzzy import _PREFILTER_MIN
    from abstract_reader.search.postings import Vocabulary, _Postings

    rng = random.Random(14)
    alphabet = "aeinrstuoé"
    words = sorted(
        {
            "r" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 13)))
            for _ in range(6000)
        }
        | {"robust", "robustness", "rbust", "robsut", "roubst", "ro", "r", "résumé"}
    )
    vocab = Vocabulary.from_sorted(words)
    postings = _Postings(vocab, np.zeros(len(words) + 1, np.int64), np.zeros(0, np.uint32))
    assert len(vocab.letter_group("r")[1]) >= _PREFILTER_MIN
    targets = ["robust", "robustnes", "rbust", "résumé", "reinstate", "rsnuoeitae", "rzzzz"]
    targets += [
        "r" + "".join(rng.choice(alphabet) for _ in range(rng.randint(3, 11))) for _ in range(30)
    ]
    for word in targets:
        finder = TypoFinder()  # a cold finder scans the letter group
        for end in range(5, len(word) + 1):
            part = word[:end]
            budget = typo_budget(part)
            for prefix in (True, False):
                want = postings.typo_candidates(part, budget, prefix)
                assert TypoFinder().candidates(postings, part, budget, prefix) == want, part
                assert finder.candidates(postings, part, budget, prefix) == want, part


def test_prefix_masks_made_ahead_change_no_result(seeds: Corpus) -> None:
    """Masks of common prefixes made ahead (as the reader does once the index is ready)
    give the same hits and scores as masks made while typing, for every short prefix of
    the vocabulary, in lower case and capitalised, alone and after other words."""
    ahead = SearchIndex(seeds)
    made = ahead.prepare_prefix_masks()
    assert made > 10  # the first letters at least
    assert ahead.prepare_prefix_masks() == 0  # made once
    typed_only = SearchIndex(seeds)
    words = ahead.text.folded.words
    prefixes = sorted({w[:size] for w in words for size in (1, 2) if len(w) >= size})
    prefixes += sorted({w[:3] for w in words if len(w) >= 3})[::4]
    queries = [*prefixes, *(p.capitalize() for p in prefixes[::7])]
    queries += [f"robust {p}" for p in prefixes[::5]] + [f"!{p} gauss" for p in prefixes[::11]]
    queries += [f"title:{p}" for p in prefixes[::13]]
    for text in queries:
        got = ahead.search(text)
        want = typed_only.search(text)
        assert [h.paper.id for h in got] == [h.paper.id for h in want], text
        assert [h.score for h in got] == [h.score for h in want], text


def test_common_words_made_ahead_as_bits_give_the_same_results(seeds: Corpus) -> None:
    """The commonest words' papers kept as bits (made ahead with the prefix masks) give the
    same hits and scores as their postings scattered: a word typed key by key (prefix,
    typos over them), finished, mistyped, case-sensitive, after other words and negated."""
    ahead = SearchIndex(seeds)
    ahead.prepare_prefix_masks()
    heavy = ahead._heavy_words[id(ahead.text.folded)]
    assert len(heavy.ids) > 20  # the seeds' common words: in more than 1/16 of the papers
    typed_only = SearchIndex(seeds)
    words = [ahead.text.folded.words[i] for i in heavy.ids if len(ahead.text.folded.words[i]) >= 5]
    assert len(words) > 5
    queries = []
    for word in words:
        queries += [word[:end] for end in range(4, len(word) + 1)]  # typed, with typos from 5
        queries += [f"{word} ", word[:2] + word[3:], word[:-1] + "x", word.capitalize()]
        queries += [f"robust {word[:5]}", f"!{word} the", f"'{word} model", f"{word}s method"]
    for text in queries:
        ahead.clear_query_caches()
        typed_only.clear_query_caches()
        got = ahead.search(text)
        want = typed_only.search(text)
        assert [h.paper.id for h in got] == [h.paper.id for h in want], text
        assert [h.score for h in got] == [h.score for h in want], text


def test_common_words_stopped_early_keep_those_made(seeds: Corpus) -> None:
    """Stopped while making the common words' bits, the words made so far are kept and
    used (the rest scattered): the same results as without any."""
    masks, _all_made = SearchIndex(seeds)._prepare_prefix_masks(10_000, None)
    index = SearchIndex(seeds)
    asked = 0

    def stop() -> bool:
        nonlocal asked
        asked += 1
        return asked > masks + 4  # after the prefix masks and a few words

    made = index.prepare_prefix_masks(stop=stop)
    heavy = index._heavy_words[id(index.text.folded)]
    assert len(heavy.ids) == heavy.bits.shape[0] == len(heavy.counts) == 4
    assert made > len(heavy.ids)
    plain = SearchIndex(seeds)
    for text in ("the", "model", "modl", "models ", "robust gaussian", "!the model"):
        got, want = index.search(text), plain.search(text)
        assert [(h.paper.id, h.score) for h in got] == [(h.paper.id, h.score) for h in want]


def test_prefix_masks_made_ahead_stop_when_asked(seeds: Corpus) -> None:
    index = SearchIndex(seeds)
    assert index.prepare_prefix_masks(stop=lambda: True) == 0
    assert index.prepare_prefix_masks(limit=3) == 3
    assert index.prepare_prefix_masks() > 0  # the rest


def test_top_positions_of_many_scores_is_the_head_of_a_stable_sort() -> None:
    """From 32,768 scores on, the cut is first looked for among those below a threshold
    guessed from a sample: the same head, whatever the scores (mostly tied, all distinct,
    all equal, the best ones where the sample does not look)."""
    import numpy as np

    rng = np.random.default_rng(14)
    n = 100_000
    spiky = np.zeros(n)
    spiky[1::24] = rng.random(spiky[1::24].size) + 1  # never at the sampled positions
    cases = [
        rng.integers(0, 5, n),
        rng.random(n),
        np.full(n, 3.0),
        rng.integers(0, 2, n) * rng.random(n),
        np.sort(rng.random(n)),
        spiky,
    ]
    for raw in cases:
        scores = raw.astype(np.float32)
        full = np.argsort(-scores, kind="stable")
        for k in (1, 100, 512, 1024, 5000, 24_999, 25_001):
            assert top_positions(scores, k).tolist() == full[:k].tolist(), k


def test_an_order_from_a_mask_is_the_order_from_the_list_of_its_papers() -> None:
    """A search matching most of a million papers ranks from its mask and total, never
    making the list of its papers unless read past its head: the same order, length,
    positions and full sort as from that list, whatever the scores (mostly tied, all
    distinct, all equal, the best where the sample does not look), with pinned papers."""
    import numpy as np

    from abstract_reader.search.rank import RankedOrder

    rng = np.random.default_rng(21)
    n = 120_000
    spiky = np.zeros(n)
    spiky[1::40] = rng.random(spiky[1::40].size) + 1  # never at the sampled positions
    totals = [
        rng.integers(0, 5, n),
        rng.random(n),
        np.full(n, 3.0),
        rng.integers(0, 2, n) * rng.random(n),
        np.sort(rng.random(n)),
        spiky,
        np.where(rng.random(n) < 0.001, 4.0, np.where(rng.random(n) < 0.25, 2.5, 1.4)),
    ]
    masks = [np.ones(n, bool), rng.random(n) < 0.6, rng.random(n) < 0.3]
    for raw in totals:
        total = raw.astype(np.float32)
        for mask in masks:
            for pins in (np.zeros(0, np.int64), np.array([7, 3], np.int64)):
                mask = mask.copy()
                mask[pins] = False
                docs = np.flatnonzero(mask)
                want = RankedOrder(docs, total[docs], pins)
                full = want.full()
                for k in (1, 35, 512, 600, 5000):
                    got = RankedOrder.of_mask(mask, total, pins)
                    assert len(got) == len(full)
                    assert got.head(k).tolist() == full[:k].tolist(), k
                    assert got.at(k - 1) == full[k - 1]
                got = RankedOrder.of_mask(mask, total, pins)
                for doc in [*full[:: len(full) // 7].tolist(), 0, 7, n - 1]:
                    want_at = np.flatnonzero(full == doc)
                    assert got.position(doc) == (int(want_at[0]) if want_at.size else None)
                got.head(50)
                assert got.full().tolist() == full.tolist()


def test_searches_ranked_from_their_masks_give_what_the_lists_give(
    seeds: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader's searches rank from the mask when most papers match (here from the
    first match on): the hits, scores and positions of every short prefix typed, alone and
    after other words, are those ranked from the list of matches."""
    from abstract_reader.search import engine

    listed = SearchIndex(seeds)
    words = listed.text.folded.words
    prefixes = sorted({w[:size] for w in words for size in (1, 2) if len(w) >= size})
    queries = [*prefixes[::3], "robust", "gausian mean", "!robust e", "ro | ga"]
    queries += [f"robust {p}" for p in prefixes[::9]]
    want = {}
    for text in queries:
        result = listed.search(text)
        want[text] = ([h.paper.id for h in result], [h.score for h in result])
    monkeypatch.setattr(engine, "_DENSE_FROM", 1)
    masked = SearchIndex(seeds)
    for text in queries:
        result = masked.search(text)
        ids, scores = want[text]
        assert [h.paper.id for h in result[:40]] == ids[:40], text
        assert [result.position_of(i) for i in ids[::5]] == list(range(0, len(ids), 5)), text
        assert [h.paper.id for h in result] == ids, text
        assert [h.score for h in result] == scores, text


def test_arrays_are_reused_only_once_nothing_refers_to_them() -> None:
    import numpy as np

    from abstract_reader.search.pool import ArrayPool

    pool = ArrayPool(1000, size=3)
    held = pool.take(np.float32)
    view = pool.take(np.float32)[10:20]  # a view keeps its array in use
    dropped = pool.take(np.bool_)
    dropped_id = id(dropped)
    del dropped
    assert id(pool.take(np.bool_)) == dropped_id  # nothing refers to it: handed out again
    again = pool.take(np.float32)
    assert again is not held and again is not view.base and view.base is not held
    held.flags.writeable = False  # a kept word's arrays are read-only
    del held, again
    reused = pool.zeros(np.float32)
    assert reused.flags.writeable and not reused.any()
    assert pool.nbytes() == 3 * 4000 + 1000
    fresh = [pool.take(np.float32) for _ in range(4)]  # past the pool's size: made fresh
    assert len({id(a) for a in fresh}) == 4


def test_a_result_kept_while_typing_on_keeps_its_hits(typed: SearchIndex) -> None:
    """Arrays of earlier searches are reused by later ones only once nothing holds them:
    a result still shown (and the words kept for the next key) never changes under it."""
    kept = {text: typed.search(text) for text in ("r", "robust e", "!robust g", "ga | ro")}
    before = {t: ([h.paper.id for h in r], [h.score for h in r]) for t, r in kept.items()}
    for text in _keys("robst satisficing", "gausian splatting", "robust !ensemble", "e"):
        typed.search(text)
    for text, result in kept.items():
        assert ([h.paper.id for h in result], [h.score for h in result]) == before[text]
