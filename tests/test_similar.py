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


# -- through the public API: the query language --------------------------------------------


@pytest.fixture(scope="module")
def planted_index(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[SearchIndex, list[str]]:
    path, labels = planted_dump(tmp_path_factory.mktemp("planted-index"))
    corpus = load_corpus([path])
    return SearchIndex(corpus), [labels[p.sources[0].index] for p in corpus.papers]


def topic_of(index: SearchIndex, topic: list[str], paper_id: str) -> str:
    return topic[index.corpus.index_of(paper_id)]


def test_like_id_in_a_query_ranks_the_topic_first(
    planted_index: tuple[SearchIndex, list[str]],
) -> None:
    index, topic = planted_index
    paper = index.corpus.papers[topic.index("bandits")]
    result = index.search(f"like:{paper.id[:8]}")
    assert len(result) == len(index.corpus) - 1  # every paper but itself
    assert result.position_of(paper.id) is None
    assert [topic_of(index, topic, h.paper.id) for h in result[:10]] == ["bandits"] * 10
    assert result.ranked_like.startswith(f"ranked like {paper.title[:20]}")  # the status
    assert set(result.like_words) <= set(TOPICS["bandits"])
    assert result.ignored == ()


def test_other_terms_filter_and_like_orders(planted_index: tuple[SearchIndex, list[str]]) -> None:
    index, topic = planted_index
    paper = index.corpus.papers[topic.index("graphs")]
    result = index.search(f"like:{paper.id[:8]} 'spectral")
    assert 0 < len(result) < len(index.corpus)
    assert all(" spectral" in h.paper.abstract for h in result)  # the filter holds
    first = [topic_of(index, topic, h.paper.id) for h in result[:5]]
    assert first == ["graphs"] * 5  # ranked by likeness, not by the word's score
    hit = result[0]
    assert hit.text_spans  # "spectral" is still highlighted


def test_like_a_tag_with_state_filters(
    planted_index: tuple[SearchIndex, list[str]], tmp_path: Path
) -> None:
    from abstract_reader.library import Library

    index, topic = planted_index
    ids = [p.id for p, t in zip(index.corpus.papers, topic, strict=True) if t == "privacy"]
    library = Library(tmp_path / "lib.sqlite3")
    library.add_tags(ids[:4], ["reading list"])
    library.set_read(ids[4:8])  # read already: is:unread drops them
    result = index.search('like:#"reading list" is:unread', library)
    shown = {h.paper.id for h in result}
    assert not shown & set(ids[:8])
    assert [topic_of(index, topic, h.paper.id) for h in result[:10]] == ["privacy"] * 10
    assert result.ranked_like == "ranked like #reading list"

    library.set_bookmark(ids[:3])
    result = index.search("like:is:bookmarked", library)
    assert result.ranked_like == "ranked like bookmarked papers"
    assert [topic_of(index, topic, h.paper.id) for h in result[:10]] == ["privacy"] * 10


@pytest.mark.parametrize(
    ("query", "ignored"),
    [
        ("!like:abcd", ("!like:abcd",)),  # a ranking cannot be negated
        ("like:", ("like:",)),
        ("like:xyz!", ("like:xyz!",)),
        ("like:abcd | word", ("like:abcd",)),  # nor be an alternative
        ("like:#", ("like:#",)),
        ("like:is:nothing", ("like:is:nothing",)),
    ],
)
def test_unusable_like_terms_are_ignored(query: str, ignored: tuple[str, ...]) -> None:
    from abstract_reader.search import parse_query

    assert parse_query(query).ignored == ignored


def test_like_an_unknown_or_ambiguous_id_is_ignored(
    planted_index: tuple[SearchIndex, list[str]],
) -> None:
    index, _topic = planted_index
    for query in ("like:0000000000000000", "like:12"):
        result = index.search(query)
        assert result.ignored == (query,)
        assert len(result) == len(index.corpus) and result.ranked_like == ""


def test_cli_list_ranks_like_a_tag(tmp_path: Path) -> None:
    """`list -q 'like:#x is:unread'`: the reading list's unread neighbours, best first."""
    from .conftest import cli

    db = tmp_path / "lib.sqlite3"
    for paper in ("bd90bb3e", "a0953ede"):  # RCRL, RINSE: reinforcement learning
        assert cli("tag", paper, "rl", db=db).returncode == 0
    assert cli("read", "96f25a2d", db=db).returncode == 0
    done = cli("list", "-q", "like:#rl is:unread", db=db)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 55 - 2 - 1  # the tagged papers and the read one are left out
    assert not any(line.startswith(("bd90bb3e", "a0953ede", "96f25a2d")) for line in lines)
    assert any(line.startswith("96a64171") for line in lines[:3])  # Split-RL, also RL


def test_a_papers_words_from_the_postings_are_its_words_tokenised_again(
    seeds_similarity: tuple[Corpus, Similarity],
) -> None:
    """The model reads each paper's words from the postings turned around (paper → words);
    they are exactly the words that count of its abstract tokenised again."""
    corpus, sim = seeds_similarity
    assert sim.words_of is not None
    for doc in range(len(corpus)):
        again = np.unique(sim.words_of(doc))
        assert sim.terms_of(doc).tolist() == again[sim.idf[again] > 0].tolist()


def test_the_centroid_of_a_set_is_the_mean_of_its_papers_vectors(
    seeds_similarity: tuple[Corpus, Similarity],
) -> None:
    _, sim = seeds_similarity
    seeds = np.array([1, 5, 9, 30], np.int64)
    terms, weights = sim.centroid(seeds)
    dense = np.zeros(len(sim.words))
    for doc in seeds.tolist():
        t, w = sim.vector(doc)
        dense[t] += w
    assert terms.tolist() == np.flatnonzero(dense).tolist()
    assert np.allclose(weights, dense[terms] / seeds.size, rtol=1e-5)


def test_turning_the_postings_around_in_blocks_gives_the_same_rows(
    seeds_similarity: tuple[Corpus, Similarity],
) -> None:
    """Large corpora are turned around a block of postings at a time; any block size gives
    the same rows and the same per-paper sums (checked here with blocks of 1, 7, 16 and
    1,000 postings on the 55 bundled ones), and the rows are the papers' kept words."""
    from abstract_reader.search.similar import _by_paper

    _, sim = seeds_similarity
    keep = sim.idf > 0
    squares = sim.idf * sim.idf
    whole = _by_paper(sim.offsets, sim.docs, keep, sim.n, squares)
    for block in (1, 7, 16, 1000):
        offsets, terms, sums = _by_paper(sim.offsets, sim.docs, keep, sim.n, squares, block=block)
        assert offsets.tolist() == whole[0].tolist()
        assert terms.tolist() == whole[1].tolist()
        assert np.allclose(sums, whole[2], rtol=1e-12)
    for doc in range(sim.n):
        row = whole[1][whole[0][doc] : whole[0][doc + 1]]
        expected = [
            w
            for w in np.flatnonzero(keep).tolist()
            if doc in sim.docs[sim.offsets[w] : sim.offsets[w + 1]].tolist()
        ]
        assert row.tolist() == expected
        assert np.isclose(whole[2][doc], float(np.sum(squares[row].astype(np.float64))))


def test_a_ranking_orders_by_score_ties_in_corpus_order() -> None:
    from abstract_reader.search.similar import Ranking

    scores = np.array([0.5, 0.0, 2.0, 0.5, 1e-30, 3e38, 0.0, 0.5], np.float32)
    scores[4] = -np.inf  # a seed
    ranking = Ranking(scores, np.array([4], np.int64), ())
    # the seed left out, papers sharing no word last (in corpus order), equal scores in
    # corpus order
    assert ranking.order.tolist() == [5, 2, 0, 3, 7, 1, 6]


def test_preparing_the_model_waits_while_the_reader_is_busy_and_ranks_the_same(
    tmp_path: Path,
) -> None:
    """The reader builds the like model in the background and makes it wait while keys are
    arriving (the build would share the CPU with their searches): it stops while told to,
    and once let go builds the same model as a build that never waited."""
    import threading
    import time

    from abstract_reader.search.similar import _BUILT, prepare

    path, _ = planted_dump(tmp_path)
    corpus = load_corpus([path])
    index = SearchIndex(corpus)
    typing = threading.Event()
    typing.set()
    asked: list[float] = []

    def busy() -> bool:
        asked.append(time.monotonic())
        return typing.is_set()

    builder = threading.Thread(target=prepare, args=(index, busy), daemon=True)
    builder.start()
    try:
        deadline = time.monotonic() + 30
        while len(asked) < 10 and time.monotonic() < deadline:  # it keeps asking …
            time.sleep(0.01)
        assert len(asked) >= 10
        assert index not in _BUILT  # … and builds nothing meanwhile
    finally:
        typing.clear()
        builder.join(timeout=60)
    assert not builder.is_alive()
    model = for_index(index)
    plain = for_index(SearchIndex(corpus))
    for doc in (0, 17, 99):
        assert model.like_paper(doc).order.tolist() == plain.like_paper(doc).order.tolist()


def test_a_search_that_needs_the_model_does_not_wait_for_the_reader_to_be_quiet(
    tmp_path: Path,
) -> None:
    """`m` (a like: search) while the background build waits for quiet keys: the build goes
    on at once and the search gets the model, though keys keep arriving."""
    import threading

    from abstract_reader.search.similar import prepare

    path, _ = planted_dump(tmp_path)
    index = SearchIndex(load_corpus([path]))
    asked = threading.Event()
    typing = threading.Event()
    typing.set()

    def busy() -> bool:  # the user keeps typing
        asked.set()
        return typing.is_set()

    builder = threading.Thread(target=prepare, args=(index, busy), daemon=True)
    builder.start()
    assert asked.wait(timeout=30)
    got: list[Similarity] = []
    search = threading.Thread(target=lambda: got.append(for_index(index)), daemon=True)
    search.start()
    search.join(timeout=60)
    assert got, "the search waited for the keys to stop"
    typing.clear()
    builder.join(timeout=60)
    assert not builder.is_alive()
    assert for_index(index) is got[0]
