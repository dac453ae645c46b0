"""Synthetic dumps with planted topics, for measuring "more like this" (eval_like, bench_like).

    python benchmarks/planted.py 10000 [--out DIR]

Like make_corpus.py (whose Zipf vocabulary it reuses): 120–260 background words per
abstract, drawn Zipf-like from a vocabulary that grows with N. On top, about 60 % of the
papers belong to one of N/60 topics: a topic is 25 words picked from the vocabulary's middle
ranks (so they also occur, more rarely, everywhere else), and a topic paper draws 4–10 % of
its words from its topic (a few words in a 190-word abstract). Each topic has a "neighbour" topic that its papers borrow a few
words from, so that topics overlap as real ones do. Deterministic for a given N.

``make(n, out)`` writes the files and returns the topic of every (file name, 1-based
paragraph) source, -1 for papers without a topic.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from make_corpus import VENUES, vocabulary

TOPIC_WORDS = 25
TOPIC_SHARE = 0.6


def make(n: int, out: Path, per_file: int = 5000) -> dict[tuple[str, int], int]:
    rng = np.random.default_rng(10_000 + n)
    vocab = np.array(vocabulary(n, rng), dtype=object)
    ranks = np.arange(1, len(vocab) + 1, dtype=np.float64)
    probs = 1.0 / ranks**1.05
    probs /= probs.sum()
    n_topics = max(4, n // 60)
    middle = np.arange(100, min(len(vocab), 100 + 20 * n_topics))
    topic_words = [rng.choice(middle, TOPIC_WORDS, replace=False) for _ in range(n_topics)]
    topic_probs = 1.0 / np.arange(1, TOPIC_WORDS + 1) ** 0.8
    topic_probs /= topic_probs.sum()
    neighbour = rng.permutation(n_topics)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.txt"):
        old.unlink()
    labels: dict[tuple[str, int], int] = {}
    written = 0
    f = 0
    while written < n:
        count = min(per_file, n - written)
        name = f"planted_{f:04d}.txt"
        abstracts = []
        for i in range(count):
            length = int(rng.integers(120, 260))
            words = list(vocab[rng.choice(len(vocab), size=length, p=probs)])
            topic = int(rng.integers(0, n_topics)) if rng.random() < TOPIC_SHARE else -1
            if topic >= 0:
                k = int(length * rng.uniform(0.04, 0.10))
                own = topic_words[topic][rng.choice(TOPIC_WORDS, k, p=topic_probs)]
                other = topic_words[neighbour[topic]][rng.choice(TOPIC_WORDS, k // 2)]
                for w in [*own, *other]:
                    words[int(rng.integers(0, len(words)))] = vocab[int(w)]
            sentences = []
            for s in range(0, len(words), 18):
                sentence = " ".join(words[s : s + 18])
                sentences.append(sentence[:1].upper() + sentence[1:] + ".")
            abstracts.append(" ".join(sentences))
            labels[(name, i + 1)] = topic
        venue = VENUES[f % len(VENUES)]
        body = f"{venue} {2020 + f % 7} Papers\n\n" + "\n\n".join(abstracts) + "\n"
        (out / name).write_text(body, encoding="utf-8")
        written += count
        f += 1
    return labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("n", type=int)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    out = args.out or Path(__file__).resolve().parent / "data" / f"planted-{args.n}"
    labels = make(args.n, out)
    topics = len({t for t in labels.values() if t >= 0})
    print(f"wrote {args.n:,} abstracts with {topics} topics to {out}")


if __name__ == "__main__":
    main()
