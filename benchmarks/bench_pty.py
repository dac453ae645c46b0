"""What a person sees: the installed reader in a real pty, the screen rendered by pyte.

    python benchmarks/bench_pty.py [--runs 5] [--sizes 55,10000,100000] [--million]

For each corpus size (55 = the bundled dumps; others are synthetic, from make_corpus.py) it
starts the installed `abstract-reader` (the script next to this Python) in a pseudo-terminal
of 140×40, feeds everything it writes into a pyte screen, and reads the screen to time:

- start → first rows (the status line counts papers) and → the first abstract's text drawn;
- start → fully loaded and indexed (no "loading"/"indexing" left in the status line);
- the echo of a key typed into the filter while the corpus is still loading/indexing (p95);
- last key → filtered list on screen (the status shows the expected count, which the CLI
  computed beforehand with `list -q`);
- peak RSS of the reader process (VmHWM), sampled at first rows, at ready, and at exit.

Cold = empty cache folder; warm = the same caches again. The bundled dumps are compared with a
bare Textual app (an Input, a 55-item OptionList, a Footer) in the same pty, alternating, so
both see the same machine. Medians with min–max of --runs runs. Nothing here is a test: it
prints figures (the README's performance table is made from them).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pty
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyte

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("abstract-reader")
COLS, ROWS = 140, 40
STATUS_COUNT = re.compile(r"\b(\d[\d,]*) (?:of [\d,]+|papers?)\b")
BUSY = re.compile(r"loading|indexing", re.I)

BARE_APP = """
from textual.app import App
from textual.widgets import Footer, Input, OptionList
class Bare(App):
    def compose(self):
        yield Input()
        yield OptionList(*[f"paper {n}" for n in range(55)])
        yield Footer()
Bare().run()
"""


class Term:
    """A program in a pty whose output is rendered into a pyte screen as it arrives."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self.started = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: the program, with the pty as its terminal
            os.execvpe(argv[0], argv, {**env, "TERM": "xterm-256color"})
        self.pid, self.fd = pid, fd
        import fcntl
        import struct
        import termios

        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.peak_kb = 0

    def pump(self, timeout: float = 0.002) -> None:
        while True:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                return
            try:
                data = os.read(self.fd, 1 << 16)
            except OSError:
                return
            if not data:
                return
            self.stream.feed(data)
            timeout = 0

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def status(self) -> str:
        lines = [line for line in self.screen.display if STATUS_COUNT.search(line)]
        return lines[-1] if lines else ""

    def wait(self, condition: Callable[[], bool], limit: float = 600.0) -> float:
        """Seconds since start when `condition` first holds for the rendered screen."""
        deadline = time.perf_counter() + limit
        while time.perf_counter() < deadline:
            self.pump()
            self.sample_rss()
            if condition():
                return time.perf_counter() - self.started
        raise TimeoutError(f"condition not met in {limit} s; screen:\n{self.text()}")

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def sample_rss(self) -> int:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    self.peak_kb = max(self.peak_kb, int(line.split()[1]))
        except OSError:
            pass
        return self.peak_kb

    def close(self) -> None:
        self.sample_rss()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        deadline = time.perf_counter() + 10
        while time.perf_counter() < deadline:
            self.pump(0.01)
            done, _ = os.waitpid(self.pid, os.WNOHANG)
            if done:
                break
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def rows_shown(term: Term) -> bool:
    match = STATUS_COUNT.search(term.status())
    return bool(match) and int(match.group(1).replace(",", "")) > 0


def ready(term: Term) -> bool:
    status = term.status()
    return bool(status) and rows_shown(term) and not BUSY.search(status)


def first_words(paths: list[Path]) -> str:
    """A word of the first abstract's second sentence, to see that the abstract is drawn."""
    sys.path.insert(0, str(ROOT / "src"))
    from abstract_reader.corpus import load_corpus

    corpus = load_corpus([str(p) for p in paths])
    abstract = corpus.papers[0].abstract
    words = re.findall(r"[A-Za-z]{9,}", abstract[60:400])
    return words[0] if words else abstract.split()[5]


def expected_count(paths: list[Path], query: str, env: dict[str, str]) -> int:
    argv = [str(SCRIPT), "list", "-q", query]
    for p in paths:
        argv += ["-d", str(p)]
    out = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=900, check=False
    ).stdout
    return len(out.splitlines())


def run_reader(
    paths: list[Path],
    *,
    home: Path,
    cache: Path,
    bundled: bool,
    word: str,
    query: str,
    expected: int,
    echo: bool,
) -> dict[str, float]:
    env = {
        **os.environ,
        "ABSTRACT_READER_DB": str(home / "lib.sqlite3"),
        "ABSTRACT_READER_CACHE": str(cache),
        "HOME": str(home),
    }
    argv = [str(SCRIPT)] + ([] if bundled else [str(p) for p in paths])
    term = Term(argv, env)
    figures: dict[str, float] = {}
    try:
        figures["first_rows"] = term.wait(lambda: rows_shown(term))
        figures["rss_first_rows_mb"] = term.sample_rss() / 1024
        figures["first_text"] = term.wait(lambda: word in term.text())
        if echo and not ready(term):  # keys typed while it is still busy
            term.send("/")
            time.sleep(0.3)  # not measured: the filter takes focus
            lags = []
            typed = ""
            for letter in "zqxjzqxjzqxjzqxjzqxj":
                if ready(term):
                    break
                typed += letter
                term.send(letter)
                sent = time.perf_counter()
                try:
                    term.wait(lambda t=typed: t in term.text(), limit=20)  # type: ignore[misc]
                except TimeoutError:  # said, not hidden: a key that never showed
                    figures["echo_lost"] = figures.get("echo_lost", 0) + 1
                    break
                lags.append(time.perf_counter() - sent)
                time.sleep(0.05)
            if lags:
                figures["echo_p95_ms"] = 1000 * (
                    statistics.quantiles(lags, n=20)[-1] if len(lags) > 1 else lags[0]
                )
            term.send("\x1b")  # Esc: leave the filter …
            time.sleep(0.3)  # (a lone Esc is told from an escape sequence by a pause)
            term.send("\x1b")  # … and Esc in the list clears it
            time.sleep(0.3)  # (else the next key would read as alt+key)
        figures["ready"] = term.wait(lambda: ready(term), limit=1800)
        figures["rss_ready_mb"] = term.sample_rss() / 1024
        # last key → filtered list: type all but the last letter, let it settle, then time it
        term.send("/")
        time.sleep(0.3)  # not measured: the filter takes focus before the keys arrive
        for ch in query[:-1]:  # a fast typist: 30 ms a key
            term.send(ch)
            time.sleep(0.03)
            term.pump()
        time.sleep(0.5)  # not measured: lets the earlier keys' searches finish
        term.pump()
        sent = time.perf_counter()
        term.send(query[-1])
        want = f"{expected:,} of "
        term.wait(lambda: want in term.status(), limit=60)
        figures["last_key_ms"] = 1000 * (time.perf_counter() - sent)
    finally:
        term.close()
        figures["rss_peak_mb"] = term.peak_kb / 1024
    return figures


def run_bare() -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(BARE_APP)
    term = Term([sys.executable, f.name], dict(os.environ))
    try:
        return term.wait(lambda: "paper 3" in term.text(), limit=60)
    finally:
        term.close()
        os.unlink(f.name)


def summary(values: list[float], unit: str = "s", scale: float = 1.0) -> str:
    if not values:
        return "–"
    vals = [v * scale for v in values]
    fmt = "{:.0f}" if unit in ("ms", "MB") else "{:.2f}"
    med = fmt.format(statistics.median(vals))
    if len(vals) == 1:
        return f"{med} {unit}"
    return f"{med} {unit} ({fmt.format(min(vals))}–{fmt.format(max(vals))})"


def corpus_for(size: int) -> tuple[list[Path], bool]:
    if size == 55:
        return sorted((ROOT / "seeds").glob("*.txt")), True
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from make_corpus import make

    folder = ROOT / "benchmarks" / "data" / str(size)
    if not folder.is_dir() or not any(folder.glob("*.txt")):
        make(size, folder, 5000)
    return sorted(folder.glob("*.txt")), False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="55,10000,100000")
    parser.add_argument("--million", action="store_true", help="also 1,000,000 (~10 min)")
    parser.add_argument("--query", default="robust estimation")
    args = parser.parse_args()
    if not SCRIPT.exists():
        sys.exit(f"no installed script at {SCRIPT}: pip install . first")
    # An installed wheel comes with compiled bytecode (so does Textual in this environment);
    # a checkout under PYTHONDONTWRITEBYTECODE would recompile the reader's modules in every
    # start, and only the reader's. Compile once, as bench_startup.py does.
    import compileall

    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.million:
        sizes.append(1_000_000)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, pty {COLS}×{ROWS}")
    for size in sizes:
        paths, bundled = corpus_for(size)
        word = first_words(paths)
        runs = args.runs if size <= 100_000 else 1
        with tempfile.TemporaryDirectory() as tmp:
            tmpdir = Path(tmp)
            env = {
                **os.environ,
                "ABSTRACT_READER_DB": str(tmpdir / "count.sqlite3"),
                "ABSTRACT_READER_CACHE": str(tmpdir / "count-cache"),
            }
            expected = expected_count(paths, args.query, env)
            cold: list[dict[str, float]] = []
            warm: list[dict[str, float]] = []
            bare: list[float] = []
            for n in range(runs):
                home = tmpdir / f"home{n}"
                home.mkdir()
                cache = tmpdir / f"cache{n}"
                if bundled:
                    bare.append(run_bare())
                cold.append(
                    run_reader(
                        paths,
                        home=home,
                        cache=cache,
                        bundled=bundled,
                        word=word,
                        query=args.query,
                        expected=expected,
                        echo=size >= 10_000,
                    )
                )
                warm.append(
                    run_reader(
                        paths,
                        home=home,
                        cache=cache,
                        bundled=bundled,
                        word=word,
                        query=args.query,
                        expected=expected,
                        echo=size >= 10_000,
                    )
                )
        label = "bundled dumps (55)" if bundled else f"{size:,} synthetic abstracts"
        print(f"\n== {label}: medians (min–max) of {runs} run(s)")

        def col(rows: list[dict[str, float]], key: str, unit: str = "s", scale: float = 1.0) -> str:
            return summary([r[key] for r in rows if key in r], unit, scale)

        for name, rows in (("cold", cold), ("warm", warm)):
            print(
                f"  {name}: first rows {col(rows, 'first_rows')} | first abstract text "
                f"{col(rows, 'first_text')} | loaded+indexed {col(rows, 'ready')}"
            )
            print(
                f"        key echo while busy p95 {col(rows, 'echo_p95_ms', 'ms')} | last key → "
                f"filtered list ({expected:,} rows) {col(rows, 'last_key_ms', 'ms')}"
                + (" | keys never shown!" if any("echo_lost" in r for r in rows) else "")
            )
            print(
                f"        RSS at first rows {col(rows, 'rss_first_rows_mb', 'MB')} | at ready "
                f"{col(rows, 'rss_ready_mb', 'MB')} | peak {col(rows, 'rss_peak_mb', 'MB')}"
            )
        if bare:
            b = statistics.median(bare)
            fr = statistics.median([r["first_rows"] for r in warm])
            ft = statistics.median([r["first_text"] for r in warm])
            print(
                f"  bare Textual app, first rows {summary(bare)}: abstract-reader/bare = "
                f"{fr / b:.2f}× first rows, {ft / b:.2f}× first abstract text (target ≤ 1.3×)"
            )


if __name__ == "__main__":
    main()
