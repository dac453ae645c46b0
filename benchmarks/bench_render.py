"""Rendering time for hostile abstracts of 8, 32 and 128 KB, and stand-in title cost.

    python benchmarks/bench_render.py [--limit N] [--titles N]

Each pattern is repeated to the size and rendered once (the memo cleared first), whole and
with the reader's display limit. Linear rendering shows ~4x per column; the last column is
the 128 KB / 8 KB ratio (16 is linear, 256 quadratic). CPU time (process_time), best of 3.

Then `derive_title` per abstract on the seeds and on N synthetic abstracts
(benchmarks/make_corpus.py; ~60% of them name nothing, the worst case for titles).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

sys.path.insert(0, str(ROOT / "benchmarks"))

from abstract_reader.corpus import parse_text  # noqa: E402
from abstract_reader.text import derive_title, latex, render  # noqa: E402

#: Repeated to the size; each aims at one way rendering could go quadratic.
PATTERNS = {
    "**x ": "**x ",
    "*x ": "*x ",
    "x** ": "x** ",
    "\\( ": "\\( ",
    "$a ": "$a ",
    "$x$ ": "$x$ ",
    "``q ": "``q ",
    "\\textbf{": "\\textbf{",
    "{ } ": "{ } ",
    "-- ~ ": "a--b c~d ",
    "math {^_": "$x^{_{^{a}}}\\frac{\\hat{\\sqrt[\\sqrt[",
    "seed-like": (
        "We propose **RankE** for $\\tilde{O}(\\sqrt{T})$ with ``fast'' 31\\% gains, "
        "\\textbf{Spike-SFT} and *regularized* terms. "
    ),
}
SIZES = (8_192, 32_768, 131_072)


def _time(source: str, limit: int | None) -> float:
    best = float("inf")
    for _ in range(3):
        render.cache_clear()
        latex.latex_to_unicode.cache_clear()
        start = time.process_time()
        render(source, limit)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20_000, help="the display limit")
    parser.add_argument("--titles", type=int, default=20_000, help="synthetic abstracts (0: skip)")
    args = parser.parse_args()
    header = f"{'pattern':<14}" + "".join(f"{s // 1024:>8} KB" for s in SIZES)
    print(f"{header}{'ratio':>8}   (ms, whole text; then with --limit {args.limit})")
    for name, unit in PATTERNS.items():
        for limit in (None, args.limit):
            times = []
            for size in SIZES:
                source = (unit * (size // len(unit) + 1))[:size]
                times.append(_time(source, limit))
            cells = "".join(f"{t * 1000:>11.2f}" for t in times)
            label = name if limit is None else "  limited"
            print(f"{label:<14}{cells}{times[-1] / times[0]:>8.1f}")
    if args.titles:
        _titles(args.titles)


def _abstracts(folder: Path) -> list[str]:
    found: list[str] = []
    for path in sorted(folder.glob("*.txt")):
        found.extend(parse_text(path.read_text(encoding="utf-8"))[2])
    return found


def _titles(n: int) -> None:
    import tempfile

    from make_corpus import make

    with tempfile.TemporaryDirectory() as tmp:
        synthetic = _abstracts(make(n, Path(tmp), 5_000))
    for name, abstracts in (("seeds", _abstracts(ROOT / "seeds")), ("synthetic", synthetic)):
        start = time.process_time()
        for abstract in abstracts:
            derive_title(abstract + " ")  # a fresh string: no memo anywhere helps
        per = (time.process_time() - start) / len(abstracts)
        print(f"titles {name:<10} {len(abstracts):>8} abstracts  {per * 1e6:7.1f} µs each")


if __name__ == "__main__":
    main()
