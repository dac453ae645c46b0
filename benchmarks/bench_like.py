"""``like:`` latency through the public API (SearchIndex.search), on planted-topic corpora.

    python benchmarks/bench_like.py [10000 100000] [--1m] [--data DIR]
        (DIR/planted-N, made if missing; --1m adds 1,000,000 papers: several GB of RAM and
        many minutes — not on a shared machine)

For each size: the index loaded from its cache, then the first ``like:`` (which builds the
similarity model — idf, norms, each paper's words — as the reader does in the background once
the index is ready), then p50/p95/max over 100 different
``like:ID`` queries (each a new paper: nothing cached but the model), the same with a
filter (``like:ID is:unread robust``), ``like:#tag`` for tags of 5/50/500 papers the first
time and typed again with one more filter word (the ranking of a set is remembered). Each
query also fetches the 50 hits a screen shows. The last line per size is the one the target
is about: ``like:#tag`` the first time for that tag, p95, with the model built (warm).
Timings on a shared machine are noisy: run it twice and read the lower figures.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from abstract_reader.corpus import Corpus, CorpusBuilder  # noqa: E402
from abstract_reader.search import SearchIndex, cache_key_for  # noqa: E402
from abstract_reader.search.similar import for_index  # noqa: E402


class Tags:
    """A library state with one tag ("t") and nothing read."""

    def __init__(self, ids: set[str]) -> None:
        self.ids = ids

    def ids_with_tag(self, tag: str) -> set[str]:
        return self.ids if tag == "t" else set()

    def ids_with_state(self, state: str) -> set[str]:
        return set()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def timed(index: SearchIndex, query: str, library: Tags | None = None) -> float:
    t = time.perf_counter()
    result = index.search(query, library)
    for i in range(min(50, len(result))):
        result.paper_at(i)
    return (time.perf_counter() - t) * 1000


def row(name: str, times: list[float]) -> None:
    print(
        f"| {name} | {len(times)} | {statistics.median(times):.1f} | "
        f"{percentile(times, 95):.1f} | {max(times):.1f} |"
    )


def load(path: Path, cache: Path) -> Corpus:
    """The corpus as the reader loads it: from its parsed-corpus cache when the dumps are
    the same (parsing 100,000 papers takes minutes), else parsed and cached."""
    from abstract_reader.corpus_cache import adopt, key_for, save
    from abstract_reader.corpus_cache import load as load_cached

    builder = CorpusBuilder([str(path)])
    key = key_for(builder.files)
    cached = load_cached(cache, key, builder.files)
    if cached is not None:
        adopt(builder.corpus, *cached)
        return builder.corpus
    for file in builder.files:
        builder.add_file(file)
    builder.finish()
    save(cache, key, builder.corpus, [])
    return builder.corpus


def bench(n: int, data: Path) -> None:
    from planted import make

    path = data / f"planted-{n}"
    if not path.is_dir() or not any(path.glob("*.txt")):
        make(n, path)
    corpus = load(path, data / "corpus-cache")
    cache = data / "index-cache"
    index = SearchIndex(corpus, cache_dir=cache, cache_key=cache_key_for(corpus.files))
    index = SearchIndex(corpus, cache_dir=cache, cache_key=cache_key_for(corpus.files))
    papers = corpus.papers
    step = max(1, len(papers) // 100)
    ids = [papers[i].id[:10] for i in range(0, len(papers), step)][:100]
    first = timed(index, f"like:{ids[0]}")
    print(f"\n## {len(papers):,} papers (index from its cache: {index.loaded_from_cache})\n")
    model_mb = for_index(index).nbytes() / 1e6
    print(f"first like: (builds the model, {model_mb:.0f} MB) {first:.0f} ms\n")
    print("| query | runs | p50 ms | p95 ms | max ms |")
    print("| --- | --- | --- | --- | --- |")
    row("like:ID, a different paper each time", [timed(index, f"like:{i}") for i in ids[1:]])
    row(
        "like:ID is:unread robust, a different paper each time",
        [timed(index, f"like:{i} is:unread robust", Tags(set())) for i in ids[1:]],
    )
    all_first: list[float] = []
    for size in (5, 50, 500):
        runs_first, runs_again = [], []
        for start in range(20):
            tagged = {papers[(start * 997 + k * 131) % len(papers)].id for k in range(size)}
            state = Tags(tagged)
            runs_first.append(timed(index, "like:#t", state))
            runs_again.append(timed(index, "like:#t is:unread", state))
        row(f"like:#t, {size} tagged papers, first time", runs_first)
        row(f"like:#t is:unread, {size} tagged, ranking remembered", runs_again)
        all_first.extend(runs_first)
    print(
        f"\n{len(papers):,} papers: like:#tag first time, warm: p50 "
        f"{statistics.median(all_first):.1f} ms, p95 {percentile(all_first, 95):.1f} ms "
        f"(target p95 <= 50 ms at 100k)"
    )


def main() -> None:
    args = sys.argv[1:]
    data = ROOT / "benchmarks" / "data"
    if "--data" in args:
        data = Path(args[args.index("--data") + 1])
    sizes = [int(a) for a in args if a.isdigit()] or [10_000, 100_000]
    if "--1m" in args:
        sizes.append(1_000_000)
    print(f"Python {sys.version.split()[0]}, {sys.platform}")
    for n in sizes:
        bench(n, data)


if __name__ == "__main__":
    main()
