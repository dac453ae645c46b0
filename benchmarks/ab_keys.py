"""A/B of key → filtered list on screen, many keys a start: two installs, starts alternated.

    python benchmarks/ab_keys.py SIZE VENV_A VENV_B [--rounds 4] [--cache DIR]

Each round starts the reader of each venv (``VENV/bin/abstract-reader``; A B, then B A, …)
on ``benchmarks/data/SIZE`` in a real pty rendered by pyte (`bench_pty.Term`), warm from one
cache folder (written by a first start that is not timed), and once it is fully indexed
types the queries of `bench_pty.QUERIES` one key at a time. A key whose prefix has another
count than the one before (counted first by VENV_A's CLI) is timed until the status line
shows its count; 0.3 s of quiet before each key. Prints each start's median, then per venv
the keys' median, p95 and min–max: the figure `bench_all`'s "last key → filtered list"
takes once a start, here over every such key. Machine speed drifts: compare only A and B of
one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import time

import bench_pty as bp


def timed_keys(paths: list[Path], env: dict[str, str], cli: Path) -> list[tuple[str, int]]:
    """(prefix, its count) for every key of the queries whose count differs from the
    prefix's before it; the first of each query is counted from the whole corpus."""
    keys: list[tuple[str, int]] = []
    for query in bp.QUERIES:
        before = -1
        for end in range(1, len(query) + 1):
            prefix = query[:end]
            if prefix.endswith(" "):
                continue
            count = _count(paths, prefix, env, cli)
            if count != before:
                keys.append((prefix, count))
            before = count
    return keys


def _count(paths: list[Path], query: str, env: dict[str, str], cli: Path) -> int:
    import subprocess

    argv = [str(cli), "list", "-q", query]
    for p in paths:
        argv += ["-d", str(p)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=3600, check=True)
    return len(done.stdout.splitlines())


def one_start(
    venv: Path, paths: list[Path], env: dict[str, str], keys: list[tuple[str, int]], cache: Path
) -> list[float]:
    argv = [str(venv / "bin" / "abstract-reader"), *map(str, paths)]
    term = bp.Term(argv, env, cache=None)
    lags: list[float] = []
    timed = dict(keys)
    try:
        term.wait(lambda: bp.indexed(term), limit=900)
        bp.focus_filter(term)
        for query in bp.QUERIES:
            for end in range(1, len(query) + 1):
                prefix = query[:end]
                term.settle(0.3)
                sent = time.perf_counter()
                term.send(query[end - 1])
                if prefix in timed:
                    want = timed[prefix]
                    term.wait(
                        lambda w=want: term.count() == w and " of " in term.status(), limit=60
                    )
                    lags.append(1000 * (time.perf_counter() - sent))
                else:
                    term.wait(lambda p=prefix: bp.echoed(term, p), limit=60)
            term.send("\x15")  # ctrl+u: every paper again
            term.wait(lambda: bp.echoed(term, "") and " of " not in term.status(), limit=60)
    finally:
        term.close()
    return lags


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("size", type=int)
    parser.add_argument("venvs", nargs=2, type=Path)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--cache", type=Path, help="the warm caches' folder (kept)")
    args = parser.parse_args()
    paths = sorted((bp.ROOT / "benchmarks" / "data" / str(args.size)).glob("*.txt"))
    if not paths:
        sys.exit(f"no dumps in benchmarks/data/{args.size}: run make_corpus.py {args.size}")
    lags: dict[Path, list[float]] = {v: [] for v in args.venvs}
    with tempfile.TemporaryDirectory(prefix="ab-keys-") as tmp:
        cache = args.cache or Path(tmp) / "cache"
        home = Path(tempfile.mkdtemp(dir=tmp))
        env = bp.clean_env(home, cache)
        keys = timed_keys(paths, env, args.venvs[0] / "bin" / "abstract-reader")
        print(f"{len(keys)} timed keys a start: {[k for k, _ in keys]}", flush=True)
        for venv in args.venvs:  # caches written (each venv's, if their formats differ)
            one_start(venv, paths, env, keys[:1], cache)
        for r in range(args.rounds):
            for venv in args.venvs if r % 2 == 0 else args.venvs[::-1]:
                got = one_start(venv, paths, env, keys, cache)
                lags[venv].extend(got)
                print(
                    f"{venv.name}: median {statistics.median(got):.1f} ms, "
                    f"{[round(x) for x in got]}",
                    flush=True,
                )
    for venv, values in lags.items():
        print(
            f"{venv}: {len(values)} keys, median {statistics.median(values):.1f} ms, "
            f"p95 {bp.p95(values):.1f} ms, min–max {min(values):.1f}–{max(values):.1f} ms"
        )


if __name__ == "__main__":
    main()
