"""Search speed and memory on synthetic corpora, typed key by key. Prints a table.

    python benchmarks/bench_search.py 10000 100000 [1000000] [--no-fzf]

For each size: corpus load time, index build (cold) and load from the cache (warm), index
memory against the corpus text, and per-keystroke latency (p50/p95/max) while typing each
query one character at a time. When `fzf` is installed, times `fzf --filter` on the same
corpus (one abstract per line) for each whole query, side by side.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from abstract_reader.corpus import load_corpus  # noqa: E402
from abstract_reader.search import SearchIndex, cache_key_for  # noqa: E402

QUERIES = [
    "robust",
    "robst estimation",
    "gausian mean",
    "graph neural",
    "diffusion model safety",
    "!robust graph",
    "'exact phrase",
]


def corpus_dir(n: int) -> Path:
    path = ROOT / "benchmarks" / "data" / str(n)
    if not path.is_dir() or not any(path.glob("*.txt")):
        from make_corpus import make

        make(n, path, 5000)
    return path


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def bench(n: int, use_fzf: bool = True) -> None:
    path = corpus_dir(n)
    text_bytes = sum(p.stat().st_size for p in path.glob("*.txt"))
    t = time.perf_counter()
    corpus = load_corpus([path])
    load_s = time.perf_counter() - t
    cache = Path(tempfile.mkdtemp())
    key = cache_key_for(corpus.files)
    t = time.perf_counter()
    index = SearchIndex(corpus, cache_dir=cache, cache_key=key)
    build_s = time.perf_counter() - t
    t = time.perf_counter()
    warm = SearchIndex(corpus, cache_dir=cache, cache_key=key)
    warm_s = time.perf_counter() - t
    assert warm.loaded_from_cache
    shutil.rmtree(cache, ignore_errors=True)

    print(f"\n## {n:,} abstracts ({text_bytes / 1e6:.0f} MB, {len(corpus):,} unique papers)")
    print(
        f"load dumps {load_s:6.2f} s | index build {build_s:6.2f} s | from cache {warm_s:5.2f} s"
        f" | index memory {index.nbytes() / 1e6:6.1f} MB = {index.nbytes() / text_bytes:.2f}× text"
    )

    fzf = shutil.which("fzf") if use_fzf else None
    lines_file = None
    if fzf:
        lines_file = Path(tempfile.mkstemp(suffix=".txt")[1])
        with open(lines_file, "w", encoding="utf-8") as handle:
            for paper in corpus.papers:
                handle.write(paper.abstract + "\n")
    print(
        f"{'query':26} {'keys':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'hits':>8}"
        + (f" {'fzf ms':>9} {'ours/fzf':>9}" if fzf else "")
    )
    all_times: list[float] = []
    for query in QUERIES:
        index._word_cache.clear()
        times = []
        for end in range(1, len(query) + 1):
            t = time.perf_counter()
            result = index.search(query[:end])
            for i in range(min(50, len(result))):  # what the list draws on screen
                result.paper_at(i)
            times.append((time.perf_counter() - t) * 1000)
        all_times += times
        row = (
            f"{query:26} {len(query):>4} {statistics.median(times):8.2f} "
            f"{percentile(times, 95):8.2f} {max(times):8.2f} {len(result):>8,}"
        )
        if fzf and lines_file:
            t = time.perf_counter()
            with open(lines_file, "rb") as stdin:
                subprocess.run(
                    [fzf, "--filter", query], stdin=stdin, stdout=subprocess.DEVNULL, check=False
                )
            fzf_ms = (time.perf_counter() - t) * 1000
            index._word_cache.clear()
            t = time.perf_counter()
            index.search(query)
            ours = (time.perf_counter() - t) * 1000
            row += f" {fzf_ms:9.1f} {ours / fzf_ms:9.3f}"
        print(row)
    print(
        f"{'all keystrokes':26} {len(all_times):>4} {statistics.median(all_times):8.2f} "
        f"{percentile(all_times, 95):8.2f} {max(all_times):8.2f}"
    )
    if lines_file:
        lines_file.unlink()


def main() -> None:
    use_fzf = "--no-fzf" not in sys.argv
    sizes = [int(a) for a in sys.argv[1:] if a.isdigit()] or [10_000, 100_000]
    print(f"Python {sys.version.split()[0]}, {sys.platform}")
    for n in sizes:
        bench(n, use_fzf)


if __name__ == "__main__":
    main()
