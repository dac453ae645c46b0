"""'More like this': tf-idf similarity over the index, on planted topics and hand-judged pairs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from abstract_reader.corpus import Corpus, load_corpus
from abstract_reader.search import SearchIndex
from abstract_reader.search.similar import Similarity, for_index

JUDGEMENTS = Path(__file__).parent / "data" / "like_judgements.json"

BACKGROUND = [f"{a}{b}{c}" for a in "bdfgklmnprstvz" for b in "aeiou" for c in ("n", "r", "l", "")]
_TOPIC_TEXT = {
    "graphs": "graph node edge message passing neighbourhood spectral laplacian",
    "bandits": "bandit regret arm exploration reward adversarial horizon",
    "vision": "image pixel segmentation convolution patch resolution camera",
    "privacy": "privacy differential noise epsilon membership leakage guarantee",
}
TOPICS = {name: text.split() for name, text in _TOPIC_TEXT.items()}


def planted_dump(
    tmp_path: Path, per_topic: int = 25, loose: int = 150
) -> tuple[Path, dict[int, str]]:
    """A dump of topic papers (a fifth of their words from the topic) among papers of
    background words only; returns the dump and the topic of each 1-based paragraph."""
    rng = random.Random(7)
    labels: dict[int, str] = {}
    paragraphs: list[str] = []
    plan = [t for t in TOPICS for _ in range(per_topic)] + [""] * loose
    rng.shuffle(plan)
    for topic in plan:
        words = rng.choices(BACKGROUND, k=80)
        if topic:
            for _ in range(16):
                words[rng.randrange(len(words))] = rng.choice(TOPICS[topic])
        paragraphs.append(" ".join(words).capitalize() + ".")
        labels[len(paragraphs)] = topic
    path = tmp_path / "planted.txt"
    path.write_text("ICML 2025 Papers\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    return path, labels


def similarity(index: SearchIndex) -> Similarity:
    return for_index(index)


def top(scores: np.ndarray, k: int = 10) -> list[int]:
    return [int(d) for d in np.argsort(-scores, kind="stable")[:k]]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, Similarity, list[str]]:
    path, labels = planted_dump(tmp_path_factory.mktemp("planted"))
    corpus = load_corpus([path])
    topic = [labels[p.sources[0].index] for p in corpus.papers]
    return corpus, similarity(SearchIndex(corpus)), topic


def test_like_a_paper_puts_its_topic_first(planted: tuple[Corpus, Similarity, list[str]]) -> None:
    corpus, sim, topic = planted
    for name, words in TOPICS.items():
        doc = topic.index(name)
        ranking = sim.like_paper(doc)
        best = top(ranking.scores)
        assert doc not in best  # the paper itself is left out
        assert [topic[d] for d in best] == [name] * 10
        assert set(ranking.words) <= set(words)  # the explanation: topic words


def test_like_a_set_puts_the_rest_of_its_topic_first(
    planted: tuple[Corpus, Similarity, list[str]],
) -> None:
    _corpus, sim, topic = planted
    for name, words in TOPICS.items():
        seeds = [d for d, t in enumerate(topic) if t == name][:5]
        ranking = sim.like_set(seeds)
        best = top(ranking.scores, 20)
        assert not set(seeds) & set(best)
        assert [topic[d] for d in best] == [name] * 20  # all 20 others of the topic first
        assert ranking.words and set(ranking.words) <= set(words)


def test_an_empty_set_ranks_nothing(planted: tuple[Corpus, Similarity, list[str]]) -> None:
    _corpus, sim, _topic = planted
    ranking = sim.like_set([])
    assert not ranking.scores.any() and ranking.words == ()


def test_a_paper_with_no_useful_words_matches_nothing(tmp_path: Path) -> None:
    path = tmp_path / "d.txt"
    path.write_text("the of and we.\n\nGraph node edge.\n\nGraph node spectral.\n", "utf-8")
    corpus = load_corpus([path])
    sim = similarity(SearchIndex(corpus))
    ranking = sim.like_paper(0)
    assert not np.isfinite(ranking.scores).all() and (ranking.scores[1:] == 0).all()
    assert ranking.words == ()
    assert top(sim.like_paper(1).scores, 1) == [2]


def _judged() -> list[tuple[str, str, int, str]]:
    data = json.loads(JUDGEMENTS.read_text("utf-8"))
    return [
        (j["query"], s, j.get("within", 10), j["why"])
        for j in data["judgements"]
        for s in j["similar"]
    ]


@pytest.fixture(scope="module")
def seeds_similarity() -> tuple[Corpus, Similarity]:
    corpus = load_corpus(None)
    return corpus, similarity(SearchIndex(corpus))


@pytest.mark.parametrize(("query", "similar", "within", "why"), _judged())
def test_hand_judged_pairs_rank_as_judged(
    seeds_similarity: tuple[Corpus, Similarity], query: str, similar: str, within: int, why: str
) -> None:
    """Among the 54 other bundled papers, the one judged similar by hand is in the first
    ten (most are first or second: see README, Discovery; one known miss is allowed 15)."""
    corpus, sim = seeds_similarity
    doc = corpus.index_of(corpus.resolve(query).id)
    want = corpus.index_of(corpus.resolve(similar).id)
    assert want in top(sim.like_paper(doc).scores, within), why


def test_hand_judged_sets_rank_as_judged(seeds_similarity: tuple[Corpus, Similarity]) -> None:
    corpus, sim = seeds_similarity
    data = json.loads(JUDGEMENTS.read_text("utf-8"))
    for entry in data["sets"]:
        seeds = [corpus.index_of(corpus.resolve(s).id) for s in entry["seeds"]]
        best = top(sim.like_set(seeds).scores, 10)
        for similar in entry["similar"]:
            assert corpus.index_of(corpus.resolve(similar).id) in best, entry["why"]
