"""A/B of the echo of keys typed while the reader is busy: two installs, starts alternated.

    python benchmarks/ab_echo.py SIZE VENV_A VENV_B [--rounds 6] [--cache DIR]

Each round starts the reader of each venv (``VENV/bin/abstract-reader``, in the order A B,
then B A, …) on ``benchmarks/data/SIZE`` in a real pty rendered by pyte (`bench_pty.Term`),
types a key every 0.15 s while the status says loading/indexing (`bench_pty._type_echoes`, as
bench_all does), and prints each start's keys, then per venv: the keys' median, p95 and
maximum, and the starts' time to "fully indexed". Without ``--cache`` every start is cold (a
fresh cache folder); with it, every start uses that folder's caches (warm, once an earlier
run wrote them — the two venvs must share the cache formats). Machine speed drifts: compare
only A and B of one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_pty as bp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("size", type=int)
    parser.add_argument("venvs", nargs=2, type=Path)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--cache", type=Path, help="warm starts from this cache folder")
    args = parser.parse_args()
    paths = sorted((bp.ROOT / "benchmarks" / "data" / str(args.size)).glob("*.txt"))
    if not paths:
        sys.exit(f"no dumps in benchmarks/data/{args.size}: run make_corpus.py {args.size}")
    keys: dict[Path, list[float]] = {v: [] for v in args.venvs}
    indexed: dict[Path, list[float]] = {v: [] for v in args.venvs}
    with tempfile.TemporaryDirectory(prefix="ab-echo-") as tmp:
        for r in range(args.rounds):
            for venv in args.venvs if r % 2 == 0 else args.venvs[::-1]:
                home = Path(tempfile.mkdtemp(dir=tmp))
                cache = args.cache or home / "cache"
                env = bp.clean_env(home, cache)
                argv = [str(venv / "bin" / "abstract-reader"), *map(str, paths)]
                term = bp.Term(argv, env, cache=cache)
                try:
                    term.wait(lambda t=term: bp.rows_shown(t), limit=900)  # type: ignore[misc]
                    figures: dict[str, Any] = {}
                    if not bp.indexed(term):
                        bp._type_echoes(term, figures)
                    done = term.wait(lambda t=term: bp.indexed(t), limit=900)  # type: ignore[misc]
                finally:
                    term.close()
                lags = figures.get("echo_ms", [])
                keys[venv].extend(lags)
                indexed[venv].append(done)
                print(f"{venv.name}: indexed {done:.2f} s, keys {[round(x) for x in lags]}")
    for venv in args.venvs:
        lags = keys[venv]
        times = indexed[venv]
        summary = (
            f"{len(lags)} keys: median {statistics.median(lags):.0f} ms,"
            f" p95 {bp.p95(lags):.0f} ms, max {max(lags):.0f} ms"
            if lags
            else "no key typed while busy"
        )
        print(
            f"{venv}: {summary}; fully indexed median {statistics.median(times):.2f} s"
            f" ({min(times):.2f}–{max(times):.2f})"
        )


if __name__ == "__main__":
    main()
