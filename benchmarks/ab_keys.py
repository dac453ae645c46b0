"""A/B of key → filtered list, and → its first paper in the paper pane: two installs, many
keys a start, starts alternated.

    python benchmarks/ab_keys.py SIZE VENV_A VENV_B [--rounds 4] [--cache DIR]

Each round starts the reader of each venv (``VENV/bin/abstract-reader``; A B, then B A, …)
on ``benchmarks/data/SIZE`` in a real pty rendered by pyte (`bench_pty.Term`), warm from one
cache folder (written by a first start of each that is not timed), and once it is fully
indexed types the queries of `bench_pty.QUERIES` one key at a time, with 0.3 s of quiet
before each key. A key whose prefix has another count than the one before (counted first by
VENV_A's CLI) is timed twice: until the status line shows its count ("list": the figure
`bench_all`'s "last key → filtered list" takes once a start), and until the paper pane
shows the title of the list's first row ("paper": the new paper drawn too). Prints each
start's medians, then per venv and figure the median, p95 and min–max over every key.
Machine speed drifts: compare only A and B of one run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_pty as bp

FIGURES = ("list", "paper")


def timed_keys(paths: list[Path], env: dict[str, str], cli: Path) -> dict[str, int]:
    """Prefix → its count, for every key of the queries whose count differs from the
    prefix's before it."""
    keys: dict[str, int] = {}
    for query in bp.QUERIES:
        before = -1
        for end in range(1, len(query) + 1):
            prefix = query[:end]
            if prefix.endswith(" "):
                continue
            argv = [str(cli), "list", "-q", prefix]
            for p in paths:
                argv += ["-d", str(p)]
            done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
            count = len(done.stdout.splitlines())
            if count != before:
                keys[prefix] = count
            before = count
    return keys


def one_start(
    venv: Path, paths: list[Path], env: dict[str, str], keys: dict[str, int]
) -> dict[str, list[float]]:
    argv = [str(venv / "bin" / "abstract-reader"), *map(str, paths)]
    term = bp.Term(argv, env, cache=None)
    lags: dict[str, list[float]] = {name: [] for name in FIGURES}
    try:
        term.wait(lambda: bp.indexed(term), limit=900)
        bp.focus_filter(term)
        for query in bp.QUERIES:
            for end in range(1, len(query) + 1):
                prefix = query[:end]
                term.settle(0.3)
                sent = time.perf_counter()
                term.send(query[end - 1])
                if prefix not in keys:
                    shown = prefix.rstrip()  # (the filter row's trailing space is not seen)
                    term.wait(lambda p=shown: bp.echoed(term, p), limit=60)
                    continue
                want = keys[prefix]
                term.wait(lambda w=want: term.count() == w and " of " in term.status(), limit=60)
                lags["list"].append(1000 * (time.perf_counter() - sent))
                term.wait(lambda: bp.first_row_words(term) in term.view_text(), limit=60)
                lags["paper"].append(1000 * (time.perf_counter() - sent))
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
    lags = {v: {name: [] for name in FIGURES} for v in args.venvs}
    with tempfile.TemporaryDirectory(prefix="ab-keys-") as tmp:
        cache = args.cache or Path(tmp) / "cache"
        env = bp.clean_env(Path(tempfile.mkdtemp(dir=tmp)), cache)
        keys = timed_keys(paths, env, args.venvs[0] / "bin" / "abstract-reader")
        print(f"{len(keys)} timed keys a start", flush=True)
        for venv in args.venvs:  # the caches written (each venv's, if their formats differ)
            one_start(venv, paths, env, dict(list(keys.items())[:1]))
        for r in range(args.rounds):
            for venv in args.venvs if r % 2 == 0 else args.venvs[::-1]:
                got = one_start(venv, paths, env, keys)
                for name in FIGURES:
                    lags[venv][name].extend(got[name])
                print(
                    f"{venv.name}: "
                    + ", ".join(f"{n} median {statistics.median(got[n]):.1f} ms" for n in FIGURES),
                    flush=True,
                )
    for venv, figures in lags.items():
        for name, values in figures.items():
            print(
                f"{venv} {name}: {len(values)} keys, median {statistics.median(values):.1f} ms, "
                f"p95 {bp.p95(values):.1f} ms, min–max {min(values):.1f}–{max(values):.1f} ms"
            )


if __name__ == "__main__":
    main()
