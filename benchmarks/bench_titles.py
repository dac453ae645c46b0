"""Stand-in title cost: `derive_title` and `disambiguate`, µs per paper.

    python benchmarks/bench_titles.py [100000 ...] [--runs 5] [--against REV]

On the bundled seeds and on synthetic corpora (benchmarks/make_corpus.py, made under
benchmarks/data/N when missing; ~60% of their abstracts name nothing, the worst case for
titles). Each run times every paper of the corpus once (CPU time, `process_time`); the table
shows the median of the runs' µs per paper with their min–max, then the spread of single
calls in one run (p50 / p99 / max, wall clock). Numbers on a shared machine are noisy: compare
runs made side by side and give the load (`uptime`). ``--against REV`` times the
`derive_title` of git revision REV too, run for run in turn with today's (the same load for
both), and prints the ratio of their medians.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from abstract_reader.corpus import paper_id, parse_text  # noqa: E402
from abstract_reader.text import derive_title, disambiguate  # noqa: E402


def _abstracts(folder: Path) -> list[str]:
    found: list[str] = []
    for path in sorted(folder.glob("*.txt")):
        found.extend(parse_text(path.read_text(encoding="utf-8"))[2])
    return list(dict.fromkeys(found))  # unique, as the corpus holds them


def _corpus(n: int) -> Path:
    path = ROOT / "benchmarks" / "data" / str(n)
    if not path.is_dir() or not any(path.glob("*.txt")):
        from make_corpus import make

        make(n, path, 5000)
    return path


def _derive_at(rev: str) -> Callable[[str], str]:
    """`derive_title` as it was at git revision ``rev`` (its titles.py, today's helpers)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:src/abstract_reader/text/titles.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    folder = Path(tempfile.mkdtemp())
    path = folder / "titles_at_rev.py"
    path.write_text(
        source.replace("from .render import", "from abstract_reader.text.render import")
    )
    spec = importlib.util.spec_from_file_location("titles_at_rev", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    derive: Callable[[str], str] = module.derive_title
    return derive


def _fmt(values: list[float]) -> str:
    return f"{statistics.median(values):8.2f} ({min(values):.2f}–{max(values):.2f})"


def _bench(name: str, abstracts: list[str], runs: int, old: Callable[[str], str] | None) -> None:
    fresh = [a + " " for a in abstracts]  # new strings: no memo anywhere helps
    keys = [paper_id(a) for a in abstracts]
    derive: list[float] = []
    before: list[float] = []
    distinct: list[float] = []
    titles: list[str] = []
    for _ in range(runs):
        if old is not None:  # in turn with today's, so that both see the same load
            start = time.process_time()
            for abstract in fresh:
                old(abstract)
            before.append((time.process_time() - start) / len(fresh) * 1e6)
        start = time.process_time()
        titles = [derive_title(a) for a in fresh]
        derive.append((time.process_time() - start) / len(fresh) * 1e6)
        start = time.process_time()
        disambiguate(titles, keys)
        distinct.append((time.process_time() - start) / len(fresh) * 1e6)
    single: list[float] = []
    clock = time.perf_counter_ns
    for abstract in fresh:
        start_ns = clock()
        derive_title(abstract)
        single.append((clock() - start_ns) / 1e3)
    single.sort()
    p99 = single[min(len(single) - 1, int(len(single) * 0.99))]
    print(
        f"{name:<10}{len(abstracts):>9,}  derive_title {_fmt(derive)}  "
        f"disambiguate {_fmt(distinct)}  single calls p50 {statistics.median(single):.1f}"
        f" / p99 {p99:.1f} / max {single[-1]:.0f}"
    )
    if before:
        speedup = statistics.median(before) / statistics.median(derive)
        print(f"{'':<19}derive_title at the other revision {_fmt(before)}  ({speedup:.1f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "sizes", type=int, nargs="*", default=[100_000], help="synthetic corpus sizes"
    )
    parser.add_argument("--runs", type=int, default=5, help="runs per corpus (median shown)")
    parser.add_argument("--against", metavar="REV", help="also time derive_title at git REV")
    args = parser.parse_args()
    old = _derive_at(args.against) if args.against else None
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs")
    print("µs per paper: median of the runs (min–max)")
    _bench("seeds", _abstracts(ROOT / "seeds"), max(args.runs, 20), old)
    for n in args.sizes:
        _bench(f"synth {n // 1000}k", _abstracts(_corpus(n)), args.runs, old)


if __name__ == "__main__":
    main()
