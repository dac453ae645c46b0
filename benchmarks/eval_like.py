"""Ranking quality of "more like this" (``like:``): the candidates, measured. Prints tables.

    python benchmarks/eval_like.py [N ...]        (default: 10000)

Two kinds of labelled data:

* a synthetic corpus with planted topics (benchmarks/planted.py): ``like:ID`` for 300 topic
  papers (relevant: the rest of its topic); ``like:#tag`` for every topic with at least
  12 papers, tagging its first 5 (relevant: the rest); and a two-topic tag (4 + 4 papers of
  two unrelated topics, relevant: the rest of both);
* the 55 bundled abstracts, judged by hand (tests/data/like_judgements.json: pairs and
  small sets, each with its reason).

Metrics: P@10 (share of the first ten that are relevant), MAP (mean average precision over
all relevant papers), and for the hand-judged data the mean rank of a judged paper among
the 54 others and how many judged papers are in the first 5.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from abstract_reader.corpus import Corpus, load_corpus  # noqa: E402
from abstract_reader.search import SearchIndex, similar  # noqa: E402
from abstract_reader.search.similar import Ranking, SetModel, Similarity, for_index  # noqa: E402

JUDGEMENTS = ROOT / "tests" / "data" / "like_judgements.json"


@dataclass(frozen=True)
class Candidate:
    name: str
    max_df: float = 0.1
    min_max_df: int = 50
    model: SetModel = "centroid"
    alpha: float = 1.0


CANDIDATES = [
    Candidate("tf-idf, max_df 10 %, centroid"),
    Candidate("tf-idf, max_df 10 %, ridge α=1", model="ridge", alpha=1.0),
    Candidate("tf-idf, max_df 10 %, ridge α=10", model="ridge", alpha=10.0),
    Candidate("tf-idf, max_df 10 %, ridge α=100", model="ridge", alpha=100.0),
    Candidate("tf-idf, max_df 30 %, centroid", max_df=0.3),
    Candidate("tf-idf, no max_df, centroid", max_df=1.0),
]


def average_precision(order: np.ndarray, relevant: set[int]) -> float:
    hits, total = 0, 0.0
    for rank, doc in enumerate(order.tolist(), 1):
        if doc in relevant:
            hits += 1
            total += hits / rank
            if hits == len(relevant):
                break
    return total / max(1, len(relevant))


def ranked(r: Ranking) -> np.ndarray:
    order = np.argsort(-r.scores, kind="stable")
    return order[np.isfinite(r.scores[order])]


def similarity(index: SearchIndex, c: Candidate) -> Similarity:
    base = for_index(index)
    p = index.text.folded
    return Similarity(
        p.words, p.offsets, p.docs, index.n, base.words_of, max_df=c.max_df, min_max_df=c.min_max_df
    )


def planted(n: int) -> tuple[Corpus, SearchIndex, np.ndarray]:
    from planted import make

    out = Path(tempfile.mkdtemp(prefix="planted-"))
    labels = make(n, out)
    corpus = load_corpus([out])
    topic = np.array([labels[(p.sources[0].file, p.sources[0].index)] for p in corpus.papers])
    return corpus, SearchIndex(corpus), topic


def eval_planted(n: int) -> None:
    corpus, index, topic = planted(n)
    members = {t: np.flatnonzero(topic == t) for t in set(topic.tolist()) if t >= 0}
    big = [t for t, m in sorted(members.items()) if m.size >= 12]
    rng = np.random.default_rng(0)
    queries = rng.choice(np.flatnonzero(topic >= 0), 300, replace=False)
    pairs = [(big[i], big[(i + len(big) // 2) % len(big)]) for i in range(0, len(big), 2)][:40]
    print(f"\n## planted topics: {len(corpus):,} papers, {len(members)} topics\n")
    print(
        "| candidate | like:ID P@10 | like:ID MAP | like:#tag P@10 | like:#tag MAP "
        "| two-topic tag P@10 | two-topic MAP |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for c in CANDIDATES:
        sim = similarity(index, c)
        similar.RIDGE_ALPHA = c.alpha
        p10, ap = [], []
        for q in queries.tolist():
            order = ranked(sim.like_paper(q))
            rel = set(members[int(topic[q])].tolist()) - {q}
            p10.append(sum(d in rel for d in order[:10].tolist()) / 10)
            ap.append(average_precision(order, rel))
        tp10, tap = [], []
        for t in big:
            seeds = members[t][:5]
            order = ranked(sim.like_set(seeds, c.model))
            rel = set(members[t][5:].tolist())
            tp10.append(sum(d in rel for d in order[:10].tolist()) / 10)
            tap.append(average_precision(order, rel))
        up10, uap = [], []
        for a, b in pairs:
            seeds = np.concatenate([members[a][:4], members[b][:4]])
            order = ranked(sim.like_set(seeds, c.model))
            rel = set(members[a][4:].tolist()) | set(members[b][4:].tolist())
            up10.append(sum(d in rel for d in order[:10].tolist()) / 10)
            uap.append(average_precision(order, rel))
        print(
            f"| {c.name} | {np.mean(p10):.3f} | {np.mean(ap):.3f} | {np.mean(tp10):.3f} "
            f"| {np.mean(tap):.3f} | {np.mean(up10):.3f} | {np.mean(uap):.3f} |"
        )


def eval_judged() -> None:
    corpus = load_corpus(None)
    index = SearchIndex(corpus)
    data = json.loads(JUDGEMENTS.read_text("utf-8"))

    def doc(prefix: str) -> int:
        return corpus.index_of(corpus.resolve(prefix).id)

    print(f"\n## hand-judged: the {len(corpus)} bundled abstracts\n")
    print(
        "| candidate | pairs MAP | pairs: mean rank of a judged paper | judged in top 5 "
        "| sets MAP | sets: judged in top 5 |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for c in CANDIDATES:
        sim = similarity(index, c)
        similar.RIDGE_ALPHA = c.alpha
        aps, ranks, top5, total = [], [], 0, 0
        for j in data["judgements"]:
            order = ranked(sim.like_paper(doc(j["query"])))
            rel = {doc(s) for s in j["similar"]}
            aps.append(average_precision(order, rel))
            for r in rel:
                rank = int(np.flatnonzero(order == r)[0]) + 1
                ranks.append(rank)
                top5 += rank <= 5
                total += 1
        saps, stop5, stotal = [], 0, 0
        for s in data["sets"]:
            order = ranked(sim.like_set([doc(x) for x in s["seeds"]], c.model))
            rel = {doc(x) for x in s["similar"]}
            saps.append(average_precision(order, rel))
            stop5 += sum(d in rel for d in order[:5].tolist())
            stotal += len(rel)
        print(
            f"| {c.name} | {np.mean(aps):.3f} | {np.mean(ranks):.1f} | {top5}/{total} "
            f"| {np.mean(saps):.3f} | {stop5}/{stotal} |"
        )


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:] if a.isdigit()] or [10_000]
    eval_judged()
    for n in sizes:
        eval_planted(n)


if __name__ == "__main__":
    main()
