"""Search speed and memory on synthetic corpora, typed key by key. Prints tables.

    python benchmarks/bench_search.py 10000 100000 [--no-fzf] [--no-phases]
        [--repeat N] [--index-phases] [--runs N] [--cache DIR] [--data DIR] [--no-prepare]

``--runs N``: type the queries N times (default 3; the caches a query leaves are cleared
before each query, so every run is cold) and print median (min–max) of each run's p50,
p95 and max. ``--cache DIR``: read the corpus and the index through their caches in
``DIR/<size>/`` (made on the first run): a 1M run then opens them instead of building.
``--data DIR``: the corpus of each size is ``DIR/<size>`` (default: benchmarks/data).

``--no-prepare``: no prefix masks made ahead (the reader makes them in the background once
the index is ready, `SearchIndex.prepare_prefix_masks`): the first keys build them as typed.
Each query is typed as in a new session: the caches searches keep (word scores, typo pools,
masks made while typing) are cleared first. Besides wall and CPU time, each run counts the
keys during which the scheduler ran another process (wall ≫ CPU on a busy machine) and the
minor page faults.

``--index-phases``: only the index phases (build, load), each ``--repeat`` times, and no
keystroke tables.

For each size:
- memory and time per phase, each phase in a fresh process (so peaks do not mix): parse the
  dumps; parse + save the corpus cache; load the corpus cache (content hash, checks);
  index build (cold); index from its cache (warm). RSS from /proc/self/status (current)
  and getrusage (peak), in MB.
- the corpus cache's content key (SHA-256 of the dumps) against parsing (not with
  ``--cache``: the corpus is then opened from its cache, never parsed but the first time);
- per-keystroke latency (p50/p95/max) while typing each query one character at a time,
  through the public API (search + the 50 rows a screen draws);
- a phrase of common words ("of the"), cold and warm, bounded (the default) and exact;
  a huge query (capped); when `fzf` is installed, `fzf --filter` on the same corpus.

Numbers on a shared machine are noisy: compare runs made side by side. 1M needs ~10 GB and
is not run by default (pass 1000000 explicitly).
"""

from __future__ import annotations

import json
import os
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


DATA = ROOT / "benchmarks" / "data"


def corpus_dir(n: int) -> Path:
    path = DATA / str(n)
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


def cpu_s() -> float:
    """CPU seconds of this process and its (finished) children: less noisy than wall time
    on a shared machine."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_phase(phase: str, n: int, cache: Path) -> None:
    """One phase in this (fresh) process; prints one JSON line."""
    from abstract_reader.corpus_cache import load_corpus_cached

    path = corpus_dir(n)
    import numpy  # noqa: F401  (imports are not the phase)
    import rapidfuzz  # noqa: F401

    base = rss_mb()
    t = time.perf_counter()
    cpu = cpu_s()
    extra = ""
    if phase == "parse":
        corpus = load_corpus([path])
    elif phase in ("corpus-cache-save", "corpus-cache-load"):  # the first run saves it
        corpus = load_corpus_cached([path], cache / "corpus", min_bytes=0)
    else:
        corpus = load_corpus_cached([path], cache / "corpus", min_bytes=0)
        t = time.perf_counter()  # the index only
        cpu = cpu_s()
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
                "cpu": cpu_s() - cpu,
                "rss": rss_mb(),
                "delta": rss_mb() - base,
                "peak": peak_mb(),
                "papers": len(corpus),
                "extra": extra,
            }
        )
    )


def _tree_rss_mb(pid: int) -> float:
    """RSS of a process and all its descendants (the tokenising helper too), MB. A child
    between fork and exec (its command line still its parent's) shares its parent's pages:
    not counted twice."""
    total = 0.0
    todo = [pid]
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            own = handle.read()
    except OSError:
        return 0.0
    while todo:
        p = todo.pop()
        try:
            if p != pid:
                with open(f"/proc/{p}/cmdline", "rb") as handle:
                    if handle.read() == own:
                        continue
            with open(f"/proc/{p}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) / 1024
                        break
            with open(f"/proc/{p}/task/{p}/children") as children:
                todo.extend(int(c) for c in children.read().split())
        except (OSError, ValueError):
            continue
    return total


def _run_watched(args: list[str]) -> tuple[str, float]:
    """Run a phase process; (its stdout, the peak RSS of it and its children together,
    sampled every 5 ms from outside, so the sampling takes nothing from the phase)."""
    with tempfile.TemporaryFile("w+") as out:
        child = subprocess.Popen(args, stdout=out, stderr=subprocess.DEVNULL, text=True)
        peak = 0.0
        while child.poll() is None:
            peak = max(peak, _tree_rss_mb(child.pid))
            time.sleep(0.005)
        if child.returncode != 0:
            raise RuntimeError(f"phase failed: {args}")
        out.seek(0)
        return out.read(), peak


def phases(n: int, repeat: int = 1, index_only: bool = False) -> None:
    """Each phase in a fresh process; with ``repeat`` > 1 the index phases run that many
    times (build and load alternating) and print median (min–max)."""
    cache = Path(tempfile.mkdtemp(prefix="bench-search-"))
    print(
        f"{'phase':20} {'seconds':>16} {'CPU s':>16} {'RSS MB':>8} {'+MB':>8} {'peak MB':>8} {'all MB':>16}"
        "  (all: peak of the process and its helpers together)"
    )

    def spread(values: list[float], digits: int) -> str:
        if len(values) == 1:
            return f"{values[0]:.{digits}f}"
        return (
            f"{statistics.median(values):.{digits}f}"
            f" ({min(values):.{digits}f}–{max(values):.{digits}f})"
        )

    try:
        runs: dict[str, list[tuple[dict[str, object], float]]] = {}
        plan = ["corpus-cache-save"] if index_only else PHASES[:3]
        plan += ["index-build", "index-load"] * repeat
        for phase in plan:
            if phase == "index-build":
                shutil.rmtree(cache / "index", ignore_errors=True)
            stdout, tree_peak = _run_watched(
                [sys.executable, __file__, "--phase", phase, str(n), str(cache)]
            )
            row = json.loads(stdout.strip().splitlines()[-1])
            runs.setdefault(phase, []).append((row, max(tree_peak, float(row["peak"]))))
        for phase, rows in runs.items():
            seconds = [float(r["s"]) for r, _ in rows]  # type: ignore[arg-type]
            cpu = [float(r["cpu"]) for r, _ in rows]  # type: ignore[arg-type]
            last = rows[-1][0]
            print(
                f"{phase:20} {spread(seconds, 2):>16} {spread(cpu, 2):>16} {last['rss']:8.0f} {last['delta']:8.0f}"
                f" {last['peak']:8.0f} {spread([t for _, t in rows], 0):>16}  {last['extra']}"
            )
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def bench(  # noqa: PLR0917
    n: int,
    use_fzf: bool = True,
    with_phases: bool = True,
    repeat: int = 1,
    index_only: bool = False,
    runs: int = 3,
    cache: Path | None = None,
    prepare: bool = True,
) -> None:
    path = corpus_dir(n)
    text_bytes = sum(p.stat().st_size for p in path.glob("*.txt"))
    print(f"\n## {n:,} abstracts ({text_bytes / 1e6:.0f} MB)")
    if with_phases:
        phases(n, repeat, index_only)
        if index_only:
            return
    from abstract_reader.corpus_cache import key_for

    if cache is None:  # (with a cache, the corpus is opened from it: not parsed at all)
        t = time.perf_counter()
        corpus = load_corpus([path])
        load_s = time.perf_counter() - t
        t = time.perf_counter()
        key_for(sorted(path.glob("*.txt")))
        key_s = time.perf_counter() - t
        print(
            f"parse {load_s:.2f} s | corpus cache content key (SHA-256 of the dumps)"
            f" {key_s:.3f} s = {key_s / load_s:.1%} of parsing"
        )
        index = SearchIndex(corpus)
    else:
        from abstract_reader.corpus_cache import load_corpus_cached

        where = cache / str(n)
        t = time.perf_counter()
        corpus = load_corpus_cached([path], where / "corpus", min_bytes=0)
        print(
            f"corpus from its cache (parsed and saved the first time): {time.perf_counter() - t:.2f} s"
        )
        t = time.perf_counter()
        index = SearchIndex(
            corpus, cache_dir=where / "index", cache_key=cache_key_for(corpus.files)
        )
        print(
            f"index {'opened from its cache' if index.loaded_from_cache else 'built'}"
            f" in {time.perf_counter() - t:.2f} s ({len(corpus):,} papers)"
        )
    if prepare:  # as the reader does in the background once the index is ready
        t, c = time.perf_counter(), time.thread_time()
        made = index.prepare_prefix_masks()
        print(
            f"{made} prefix masks made ahead in {time.perf_counter() - t:.2f} s"
            f" ({time.thread_time() - c:.2f} s CPU, {index.prepared_masks_bytes() / 1e6:.1f} MB)"
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
    per_run: list[tuple[float, float, float]] = []
    per_run_cpu: list[tuple[float, float, float]] = []
    per_run_quiet: list[float] = []  # p95 wall of the keys no other process interrupted
    preempted: list[int] = []  # keys during which the scheduler ran another process
    faults: list[int] = []  # minor page faults while typing (fresh or released pages)
    for run in range(runs):
        all_times: list[float] = []
        all_cpu: list[float] = []
        quiet: list[float] = []
        preempted.append(0)
        faults.append(0)
        for query in QUERIES:
            index.clear_query_caches()  # each query typed afresh, as in a new session
            times = []
            for end in range(1, len(query) + 1):
                before = resource.getrusage(resource.RUSAGE_SELF)
                t = time.perf_counter()
                c = time.thread_time()
                result = index.search(query[:end])
                for i in range(min(50, len(result))):  # what the list draws on screen
                    result.paper_at(i)
                times.append((time.perf_counter() - t) * 1000)
                all_cpu.append((time.thread_time() - c) * 1000)
                after = resource.getrusage(resource.RUSAGE_SELF)
                faults[-1] += after.ru_minflt - before.ru_minflt
                if after.ru_nivcsw > before.ru_nivcsw:
                    preempted[-1] += 1
                else:
                    quiet.append(times[-1])
            all_times += times
            if run:
                continue
            row = (
                f"{query:26} {len(query):>4} {statistics.median(times):8.2f} "
                f"{percentile(times, 95):8.2f} {max(times):8.2f} {len(result):>8,}"
            )
            if fzf and lines_file:
                t = time.perf_counter()
                with open(lines_file, "rb") as stdin:
                    subprocess.run(
                        [fzf, "--filter", query],
                        stdin=stdin,
                        stdout=subprocess.DEVNULL,
                        check=False,
                    )
                fzf_ms = (time.perf_counter() - t) * 1000
                index.clear_query_caches()
                t = time.perf_counter()
                index.search(query)
                ours = (time.perf_counter() - t) * 1000
                row += f" {fzf_ms:9.1f} {ours / fzf_ms:9.3f}"
            print(row)
        per_run.append((statistics.median(all_times), percentile(all_times, 95), max(all_times)))
        per_run_cpu.append((statistics.median(all_cpu), percentile(all_cpu, 95), max(all_cpu)))
        per_run_quiet.append(percentile(quiet or [0.0], 95))
        print(
            f"{'all keystrokes, run ' + str(run + 1):26} {len(all_times):>4}"
            f" {per_run[-1][0]:8.2f} {per_run[-1][1]:8.2f} {per_run[-1][2]:8.2f}"
        )
    if lines_file:
        lines_file.unlink()

    print(f"{'bounded work':40} {'cold ms':>9} {'warm ms':>9} {'hits':>8}")
    phrase_cold: dict[str, list[float]] = {}
    for label, query, limit in (
        ('"of the" (default: 2,000 checked)', '"of the"', "default"),
        ('"of the" exact (phrase_limit=None)', '"of the"', None),
        ("of-the (adjacency bonus)", "of-the", "default"),
        ("robust x 150,000 (capped)", "robust " * 150_000, "default"),
    ):
        for _ in range(max(1, runs)):
            cold_warm = []
            for _ in range(2):
                if not cold_warm:
                    index.clear_query_caches()
                t = time.perf_counter()
                if limit == "default":
                    result = index.search(query)
                else:
                    result = index.search(query, phrase_limit=None)
                cold_warm.append((time.perf_counter() - t) * 1000)
            phrase_cold.setdefault(label, []).append(cold_warm[0])
            print(f"{label:40} {cold_warm[0]:9.1f} {cold_warm[1]:9.1f} {len(result):>8,}")

    bounded, exact = list(phrase_cold.values())[:2]

    def spread(values: list[float]) -> str:
        return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"

    print(
        f"\nSUMMARY {n:,}: per keystroke, median (min–max) of {len(per_run)} runs:"
        f" p50 {spread([r[0] for r in per_run])} ms, p95 {spread([r[1] for r in per_run])}"
        f" ms, max {spread([r[2] for r in per_run])} ms;"
        f' "of the" cold {spread(bounded)} ms, exact {spread(exact)} ms;'
        f" load average {os.getloadavg()[0]:.1f}"
    )
    print(  # CPU time of this thread: what the search costs, whatever else runs
        f"SUMMARY {n:,} CPU: per keystroke p50 {spread([r[0] for r in per_run_cpu])} ms,"
        f" p95 {spread([r[1] for r in per_run_cpu])} ms,"
        f" max {spread([r[2] for r in per_run_cpu])} ms"
    )
    print(  # wall ≫ CPU on a busy machine: the keys during which another process ran
        f"SUMMARY {n:,} preempted keys {spread([float(p) for p in preempted])} of"
        f" {len(all_times)} per run; p95 wall of the others {spread(per_run_quiet)} ms;"
        f" minor page faults per run {spread([float(f) for f in faults])}"
    )


def main() -> None:
    if "--phase" in sys.argv:
        at = sys.argv.index("--phase")
        run_phase(sys.argv[at + 1], int(sys.argv[at + 2]), Path(sys.argv[at + 3]))
        return
    use_fzf = "--no-fzf" not in sys.argv
    with_phases = "--no-phases" not in sys.argv
    repeat = 1
    if "--repeat" in sys.argv:
        repeat = int(sys.argv[sys.argv.index("--repeat") + 1])
    index_only = "--index-phases" in sys.argv
    prepare = "--no-prepare" not in sys.argv
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    cache = Path(sys.argv[sys.argv.index("--cache") + 1]) if "--cache" in sys.argv else None
    if "--data" in sys.argv:
        global DATA  # noqa: PLW0603
        DATA = Path(sys.argv[sys.argv.index("--data") + 1])
    options = ("--repeat", "--runs", "--cache", "--data")
    sizes = [
        int(a)
        for i, a in enumerate(sys.argv[1:], 1)
        if a.isdigit() and sys.argv[i - 1] not in options
    ] or [10_000, 100_000]
    print(
        f"Python {sys.version.split()[0]}, {sys.platform},"
        f" load average {os.getloadavg()[0]:.1f} at the start"
    )
    for n in sizes:
        bench(n, use_fzf, with_phases, repeat, index_only, runs, cache, prepare)


if __name__ == "__main__":
    main()
