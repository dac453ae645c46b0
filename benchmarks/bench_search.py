"""Search speed and memory on synthetic corpora, typed key by key. Prints tables.

    python benchmarks/bench_search.py 10000 100000 [--no-fzf] [--no-phases]

For each size:
- memory and time per phase, each phase in a fresh process (so peaks do not mix): parse the
  dumps; parse + save the corpus cache; load the corpus cache (content hash, checks);
  index build (cold); index from its cache (warm). RSS from /proc/self/status (current)
  and getrusage (peak), in MB.
- the corpus cache's content key (SHA-256 of the dumps) against parsing;
- per-keystroke latency (p50/p95/max) while typing each query one character at a time,
  through the public API (search + the 50 rows a screen draws);
- a phrase of common words ("of the"), cold and warm, bounded (the default) and exact;
  a huge query (capped); when `fzf` is installed, `fzf --filter` on the same corpus.

Numbers on a shared machine are noisy: compare runs made side by side. 1M needs ~10 GB and
is not run by default (pass 1000000 explicitly).
"""

from __future__ import annotations

import json
import resource
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
PHASES = ["parse", "corpus-cache-save", "corpus-cache-load", "index-build", "index-load"]


def corpus_dir(n: int) -> Path:
    path = ROOT / "benchmarks" / "data" / str(n)
    if not path.is_dir() or not any(path.glob("*.txt")):
        from make_corpus import make

        make(n, path, 5000)
    return path


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_phase(phase: str, n: int, cache: Path) -> None:
    """One phase in this (fresh) process; prints one JSON line."""
    from abstract_reader.corpus_cache import load_corpus_cached

    path = corpus_dir(n)
    import numpy  # noqa: F401  (imports are not the phase)
    import rapidfuzz  # noqa: F401

    base = rss_mb()
    t = time.perf_counter()
    extra = ""
    if phase == "parse":
        corpus = load_corpus([path])
    elif phase in ("corpus-cache-save", "corpus-cache-load"):  # the first run saves it
        corpus = load_corpus_cached([path], cache / "corpus", min_bytes=0)
    else:
        corpus = load_corpus_cached([path], cache / "corpus", min_bytes=0)
        t = time.perf_counter()  # the index only
        base = rss_mb()
        index = SearchIndex(
            corpus, cache_dir=cache / "index", cache_key=cache_key_for(corpus.files)
        )
        assert index.loaded_from_cache == (phase == "index-load")
        extra = f"index arrays {index.nbytes() / 1e6:.0f} MB"
    seconds = time.perf_counter() - t
    print(
        json.dumps(
            {
                "phase": phase,
                "s": seconds,
                "rss": rss_mb(),
                "delta": rss_mb() - base,
                "peak": peak_mb(),
                "papers": len(corpus),
                "extra": extra,
            }
        )
    )


def phases(n: int) -> None:
    cache = Path(tempfile.mkdtemp(prefix="bench-search-"))
    print(f"{'phase':20} {'seconds':>8} {'RSS MB':>8} {'+MB':>8} {'peak MB':>8}")
    try:
        for phase in PHASES:
            out = subprocess.run(
                [sys.executable, __file__, "--phase", phase, str(n), str(cache)],
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"{phase:20} {row['s']:8.2f} {row['rss']:8.0f} {row['delta']:8.0f}"
                f" {row['peak']:8.0f}  {row['extra']}"
            )
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def bench(n: int, use_fzf: bool = True, with_phases: bool = True) -> None:
    path = corpus_dir(n)
    text_bytes = sum(p.stat().st_size for p in path.glob("*.txt"))
    print(f"\n## {n:,} abstracts ({text_bytes / 1e6:.0f} MB)")
    if with_phases:
        phases(n)
    from abstract_reader.corpus_cache import key_for

    t = time.perf_counter()
    corpus = load_corpus([path])
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    key_for(sorted(path.glob("*.txt")))
    key_s = time.perf_counter() - t
    print(
        f"parse {load_s:.2f} s | corpus cache content key (SHA-256 of the dumps) {key_s:.3f} s"
        f" = {key_s / load_s:.1%} of parsing"
    )
    index = SearchIndex(corpus)

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

    print(f"{'bounded work':40} {'cold ms':>9} {'warm ms':>9} {'hits':>8}")
    for label, query, limit in (
        ('"of the" (default: 2,000 checked)', '"of the"', "default"),
        ('"of the" exact (phrase_limit=None)', '"of the"', None),
        ("of-the (adjacency bonus)", "of-the", "default"),
        ("robust x 150,000 (capped)", "robust " * 150_000, "default"),
    ):
        cold_warm = []
        for _ in range(2):
            if not cold_warm:
                index._phrase_cache.clear()
                index._word_cache.clear()
            t = time.perf_counter()
            if limit == "default":
                result = index.search(query)
            else:
                result = index.search(query, phrase_limit=None)
            cold_warm.append((time.perf_counter() - t) * 1000)
        print(f"{label:40} {cold_warm[0]:9.1f} {cold_warm[1]:9.1f} {len(result):>8,}")


def main() -> None:
    if "--phase" in sys.argv:
        at = sys.argv.index("--phase")
        run_phase(sys.argv[at + 1], int(sys.argv[at + 2]), Path(sys.argv[at + 3]))
        return
    use_fzf = "--no-fzf" not in sys.argv
    with_phases = "--no-phases" not in sys.argv
    sizes = [int(a) for a in sys.argv[1:] if a.isdigit()] or [10_000, 100_000]
    print(f"Python {sys.version.split()[0]}, {sys.platform}")
    for n in sizes:
        bench(n, use_fzf, with_phases)


if __name__ == "__main__":
    main()
