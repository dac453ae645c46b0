"""Rendering time for hostile abstracts of 8, 32 and 128 KB. Prints a table.

    python benchmarks/bench_render.py [--limit N]

Each pattern is repeated to the size and rendered once (the memo cleared first), whole and
with the reader's display limit. Linear rendering shows ~4x per column; the last column is
the 128 KB / 8 KB ratio (16 is linear, 256 quadratic).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from abstract_reader.text import latex, render  # noqa: E402

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


if __name__ == "__main__":
    main()
