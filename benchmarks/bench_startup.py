"""Start-up and frame costs of the reader. Prints its figures.

    python benchmarks/bench_startup.py [--runs 5] [--large 100000]

(a) The bundled dumps against a bare Textual app (an Input, a 55-item OptionList, a Footer),
    from process start to the first screen with rows drawn, in the same run, alternating.
    Target: ≤ 1.3× the bare app.
(b) The synthetic corpus of --large abstracts: time to the first rows on screen (target
    ≤ 2 s) and to everything loaded and indexed; then the cost per step of moving the cursor
    and of paging, including drawing every visible row (target < 16 ms, one frame).

Each measurement runs in a fresh process (headless), timed from just before the process is
started to the moment the condition holds after a refresh.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(kind: str, started: float, paths: list[str]) -> None:
    sys.path.insert(0, str(ROOT / "src"))
    if kind == "bare":
        from textual.app import App, ComposeResult
        from textual.widgets import Footer, Input, OptionList

        class Bare(App[None]):
            def compose(self) -> ComposeResult:
                yield Input()
                yield OptionList(*[f"paper {n}" for n in range(55)])
                yield Footer()

            def on_ready(self) -> None:  # the first frame has been painted
                print(json.dumps({"first_rows": time.time() - started}), flush=True)
                self.exit()

        Bare().run(headless=True, size=(140, 40))
        return

    from abstract_reader.tui.app import ReaderApp
    from abstract_reader.tui.widgets.paper_list import PaperList

    class Timed(ReaderApp):
        def on_ready(self) -> None:  # the first frame has been painted
            if len(self.query_one(PaperList).source) > 0:
                figures["first_rows"] = time.time() - started  # rows were in that frame
            super().on_ready()
            self.set_interval(0.005, poll)

    home = Path(os.environ["BENCH_HOME"])
    app = Timed(paths or None, home / "lib.sqlite3", cache_dir=home / "cache")
    figures: dict[str, float] = {}

    def steps(action: str, count: int) -> float:
        paper_list = app.query_one(PaperList)
        height = paper_list.scrollable_content_region.height
        times = []
        for _ in range(count):
            t = time.perf_counter()
            getattr(paper_list, f"action_{action}")()
            for y in range(height):  # draw every visible row, as a frame would
                paper_list.render_line(y)
            times.append((time.perf_counter() - t) * 1000)
        return statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]

    def poll() -> None:
        paper_list = app.query_one(PaperList)
        if "first_rows" not in figures and len(paper_list.source) > 0:
            app.call_after_refresh(lambda: figures.setdefault("first_rows", time.time() - started))
        if "ready" not in figures and app.index is not None and "first_rows" in figures:
            figures["ready"] = time.time() - started
            figures["papers"] = float(app.loaded)
            figures["cursor_p95_ms"] = steps("cursor_down", 300)
            figures["page_p95_ms"] = steps("page_down", 100)
            print(json.dumps(figures), flush=True)
            app.exit()

    app.run(headless=True, size=(140, 40))


def measure(kind: str, paths: list[str], home: Path | None = None) -> dict[str, float]:
    """``home`` holds the library and index cache; a new one means a first-ever start."""
    env = {**os.environ, "BENCH_HOME": str(home or Path(tempfile.mkdtemp()))}
    started = time.time()
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--started", repr(started), *paths],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child")
    parser.add_argument("--started", type=float)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.started, args.paths)
        return

    # An installed wheel comes with compiled bytecode; a checkout under
    # PYTHONDONTWRITEBYTECODE would recompile our modules in every process. Compile once.
    import compileall

    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    home = Path(tempfile.mkdtemp())
    first_ever = measure("reader", [], home)["first_rows"]  # creates the library and cache
    bare, ours = [], []
    for _ in range(args.runs):  # alternate, so that both see the same machine state
        bare.append(measure("bare", [])["first_rows"])
        ours.append(measure("reader", [], home)["first_rows"])
    b, o = statistics.median(bare), statistics.median(ours)
    print(f"(a) bundled dumps, first rows drawn (median of {args.runs}):")
    print(
        f"    bare Textual app {b:.3f} s | abstract-reader {o:.3f} s | ratio {o / b:.2f}× "
        "(target ≤ 1.30×)"
    )
    print(f"    first start ever (creates the library and index cache): {first_ever:.3f} s")

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from make_corpus import make

    large = ROOT / "benchmarks" / "data" / str(args.large)
    if not large.is_dir() or not any(large.glob("*.txt")):
        make(args.large, large, 5000)
    figures = measure("reader", [str(large)])
    print(f"(b) {int(figures['papers']):,} synthetic abstracts:")
    print(
        f"    first rows on screen {figures['first_rows']:.2f} s (target ≤ 2 s) | "
        f"all loaded and indexed {figures['ready']:.2f} s"
    )
    print(
        f"    cursor step p95 {figures['cursor_p95_ms']:.2f} ms | page step p95 "
        f"{figures['page_p95_ms']:.2f} ms (target < 16 ms)"
    )


if __name__ == "__main__":
    main()
