"""What a person sees: the installed reader in a real pty, the screen rendered by pyte.

    python benchmarks/bench_pty.py [--runs 5] [--sizes 55,10000,100000] [--million] [--library]

(`benchmarks/bench_all.py` runs this and the public-API figures in one go and prints the
README's table; this script alone prints the pty figures of each size.)

For each corpus size (55 = the bundled dumps; others are synthetic, from make_corpus.py) it
starts the installed `abstract-reader` (the script next to this Python) in a pseudo-terminal
of 140×40, feeds everything it writes into a pyte screen, and reads the screen (the status
line is the row above the footer, the filter's text the row under its top border, the
paper's text the pane right of the list) to time, from just before the fork:

- first rows (the status line counts papers > 0) and the first abstract's text (a word of
  the first paper's abstract drawn in the paper pane);
- all loaded (no "loading" left in the status line) and fully indexed (no "loading" nor
  "indexing": the status line says "indexing …" until the index is in use);
- the echo of each key typed into the filter while the status still says loading/indexing
  (the filter row showing exactly what was typed; p95 over the keys sent while busy);
- last key → filtered list on screen: the query typed but its last key, its count on the
  status line, then the last key until the status shows the count of the whole query (both
  counts computed beforehand with the CLI's `list -q`, and different, so the wait cannot
  end on the previous result);
- `m` (papers like the current one) → its ranked list on screen, which waits for the
  similarity model built in the background after the index;
- the caches written (no temporary file left in the cache folder, the index file there);
  the run is ended (SIGTERM) only after that, so the next (warm) run has them.

Memory: a thread samples, every 10 ms, the reader's RSS, its VmHWM and the RSS of the reader
and its children (the tokenising helper), timestamped; each phase (start → first rows →
first text → loaded → indexed → … → end) gets its own peak, so a peak can be attributed.

``--library``: each run's library is not empty but a copy of one where half the papers have
real titles, venues and provenances (`bench_library.py`'s, as `match` or `library import`
leaves it; the query's counts are taken against it too): the reader as a user sees it after
`match`.

Cold = a fresh library, home and cache folder (the OS page cache is warm: the dumps were read
by the CLI count first); warm = the same library and caches again, right after. The bundled
dumps are compared with a bare Textual app (an Input, a 55-item OptionList, a Footer) in the
same pty, run by run alternating with the reader. Nothing here is a test: it prints figures.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pty
import queue
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyte
from pyte.screens import wcwidth  # (pyte's own, cached)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("abstract-reader")
COLS, ROWS = 140, 40
STATUS_COUNT = re.compile(r"\b(\d[\d,]*) (?:of [\d,]+|papers?)\b")
BUSY = re.compile(r"loading|indexing", re.I)
LOADING = re.compile(r"loading", re.I)
#: a dump parsed: "loading file 2/20…" (the second being read). Not "loading 20/20 files…":
#: a warm start shows that too, for a moment, once the corpus cache's rows are final
PARSING = re.compile(r"loading file (?:[2-9]|[1-9]\d)[\d,]*/[\d,]+")
BUILDING = re.compile(r"indexing \d")  # progress: a build (a cached index shows none)
#: keys typed while busy: no binding in the list (should the filter miss one) and none is in
#: the filter's placeholder, so the filter row shows them only once typed
ECHO_KEYS = "zxvy"
ECHO_MAX_LEN = 24  #: then ctrl+u empties the filter (its echo is timed too) and typing goes on
ECHO_GAP_S = 0.15  #: between keys (a typist, not a paste)
ECHO_MAX_KEYS = 200
#: the phases marked on the screen, in the order a person sees them
PHASES = ("first_rows", "first_text", "loaded", "indexed", "last_key", "like", "cached")

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


def _status_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, kB; zeros when it is gone."""
    rss = hwm = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return rss, hwm


def tree_rss_kb(pid: int) -> int:
    """Resident kB of a process and its descendants now (sampled often: the peak of the
    samples is a lower bound of the true peak). Children are looked for under every thread
    (`task/TID/children` lists those that thread started: the tokenising helper is started
    by the index thread). A child between fork and exec (its command line still its
    parent's) shares the parent's pages and is not counted."""
    total = 0
    todo = [pid]
    try:
        own = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return 0
    while todo:
        p = todo.pop()
        try:
            if p != pid and Path(f"/proc/{p}/cmdline").read_bytes() == own:
                continue
            total += _status_kb(p)[0]
            for task in Path(f"/proc/{p}/task").iterdir():  # a child is listed under the
                todo.extend(int(c) for c in (task / "children").read_text().split())  # thread
        except (OSError, ValueError):
            continue
    return total


def caches_written(cache: Path, corpus_too: bool) -> bool:
    """The index cache (and the parsed-corpus cache) are in the cache folder and no
    temporary file of a write in progress is left."""
    if not cache.is_dir() or any(cache.rglob(".tmp-*")):
        return False
    index = cache / "index"
    if not (index.is_dir() and any(index.iterdir())):
        return False
    corpus = cache / "corpus"
    return not corpus_too or (corpus.is_dir() and any(corpus.iterdir()))


class Sampler(threading.Thread):
    """Samples the memory of a process (and its children) every 10 ms, and notes when the
    caches are written; seconds are counted from ``started`` (perf_counter)."""

    def __init__(self, pid: int, started: float, cache: Path | None, corpus_too: bool) -> None:
        super().__init__(daemon=True)
        self.pid, self.started, self.cache, self.corpus_too = pid, started, cache, corpus_too
        self.samples: list[tuple[float, int, int, int]] = []  #: (s, rss, hwm, tree rss) kB
        self.cached_at: float | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        checks = 0
        while not self.stop.is_set():
            rss, hwm = _status_kb(self.pid)
            if rss:
                tree = tree_rss_kb(self.pid)
                now = time.perf_counter() - self.started
                self.samples.append((now, rss, hwm, max(tree, rss)))
            checks += 1
            if (
                self.cache is not None
                and self.cached_at is None
                and checks % 10 == 0
                and caches_written(self.cache, self.corpus_too)
            ):
                self.cached_at = time.perf_counter() - self.started
            self.stop.wait(0.01)


class Term:
    """A program in a pty whose output is rendered into a pyte screen as it arrives."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        *,
        cache: Path | None = None,
        corpus_cache: bool = False,
    ) -> None:
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self._lines = list(self.screen.display)
        self.screen.dirty.clear()
        self.watchers: dict[str, Callable[[], bool]] = {}
        self.marks: dict[str, float] = {}
        self.started = time.perf_counter()
        self.read_at = self.started
        pid, fd = pty.fork()
        if pid == 0:  # the child: the program, with the pty as its terminal
            try:
                os.execvpe(argv[0], argv, {**env, "TERM": "xterm-256color"})
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        import fcntl
        import struct
        import termios

        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.sampler = Sampler(pid, self.started, cache, corpus_cache)
        self.sampler.start()
        # The pty is read by a thread of its own and each read timed as it comes, so a
        # frame's time is when its bytes were on the pty, not when pyte was done with the
        # reads before it (~3.5 µs a byte here; a terminal emulator takes well under a
        # millisecond). A short switch interval: the reader gets the GIL from pyte quickly.
        sys.setswitchinterval(0.0005)
        self._chunks: queue.Queue[tuple[float, bytes] | None] = queue.Queue()
        self._closing = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._closing.is_set():
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.05)
                data = os.read(self.fd, 1 << 16) if ready else None
            except (OSError, ValueError):
                break
            if data == b"":
                break
            if data:
                self._chunks.put((time.perf_counter(), data))
        self._chunks.put(None)

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def pump(self, timeout: float = 0.002) -> bool:
        """Feed one read of what the program wrote; True when something came. Each read is
        looked at on its own (the phases here, the condition of `wait`): a screen is seen
        once the bytes that draw it have come, not after the later frames that came while
        pyte parsed them (a key's list, then its paper, ~4 KB, ~10 ms of pyte here)."""
        try:
            chunk = self._chunks.get(timeout=timeout)
        except queue.Empty:
            return False
        if chunk is None:  # the program's end: nothing more comes
            self._chunks.put(None)
            return False
        #: when the last read's bytes were on the pty (before pyte parsed them)
        self.read_at, data = chunk
        self.stream.feed(data)
        now = self.elapsed()
        for name, seen in list(self.watchers.items()):  # phases, marked when first seen
            if seen():
                self.marks[name] = now
                del self.watchers[name]
        return True

    # -- reading the screen -----------------------------------------------------------------
    def lines(self) -> list[str]:
        """The screen's rows as text (as pyte's ``display``), only the rows drawn over since
        the last call made again (pyte's ``dirty``): a whole display costs several ms."""
        dirty = self.screen.dirty
        if dirty:
            buffer = self.screen.buffer
            for y in dirty:
                if 0 <= y < ROWS:
                    self._lines[y] = _row_text(buffer[y])
            dirty.clear()
        return self._lines

    def text(self) -> str:
        return "\n".join(self.lines())

    def status(self) -> str:
        """The status line: the row above the footer."""
        return self.lines()[ROWS - 2]

    def filter_text(self) -> str:
        """The filter's text (or its placeholder): the row under its top border."""
        return self.lines()[1].strip(" ▊▎▌▐│┃")

    def view_text(self) -> str:
        """The paper pane: what is right of the list's border on each row."""
        return "\n".join(line.split("▕", 1)[1] for line in self.lines()[3:-2] if "▕" in line)

    def count(self) -> int | None:
        match = STATUS_COUNT.search(self.status())
        return int(match.group(1).replace(",", "")) if match else None

    # -- waiting and typing -----------------------------------------------------------------
    def wait(self, condition: Callable[[], bool], limit: float = 600.0) -> float:
        """Seconds since start when ``condition`` first holds for the rendered screen
        (checked on each update of the screen)."""
        deadline = time.perf_counter() + limit
        check = True
        while time.perf_counter() < deadline:
            if check and condition():
                return self.elapsed()
            check = self.pump()
            if not check and self.ended():
                raise RuntimeError(f"the program ended; screen:\n{self.text()}")
        raise TimeoutError(f"condition not met in {limit} s; screen:\n{self.text()}")

    def settle(self, seconds: float) -> None:
        """Let ``seconds`` pass, reading the screen (not measured)."""
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            self.pump(min(0.01, max(0.0, deadline - time.perf_counter())))

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def ended(self) -> bool:
        """The program has ended (and is reaped)."""
        if self.pid and os.waitpid(self.pid, os.WNOHANG)[0]:
            self.pid = 0
        return not self.pid

    def close(self) -> None:
        asked = time.perf_counter()
        if not self.ended():
            os.kill(self.pid, signal.SIGTERM)
        deadline = time.perf_counter() + 10
        while not self.ended() and time.perf_counter() < deadline:
            self.pump(0.01)
        #: seconds from SIGTERM to the process gone (what quitting costs the user)
        self.quit_s = time.perf_counter() - asked
        if not self.ended():
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = 0
        self.sampler.stop.set()
        self.sampler.join()
        self._closing.set()
        self._reader.join()
        os.close(self.fd)


def first_row_words(term: Term) -> str:
    """The first three words of the title in the list's first row (the paper pane shows
    that paper once it follows the list)."""
    row = term.lines()[3].split("▕", 1)[0]
    title = re.sub(r"^[\s★●▌]+", "", row)
    title = re.split(r"\s{2,}|…", title)[0]
    return " ".join(title.split()[:3])


def rows_shown(term: Term) -> bool:
    """A paper's row is drawn in the list (an unread row's "●" left of the paper pane; the
    status line, which can come a frame later, counting papers for a list of read rows)."""
    if any("●" in line.split("▕", 1)[0] for line in term.lines()[3:-2]):
        return True
    return (term.count() or 0) > 0


def loaded(term: Term) -> bool:
    return term.count() is not None and not LOADING.search(term.status())


def indexed(term: Term) -> bool:
    """Loaded and indexed: the status counts papers and says neither loading nor indexing
    (the count may be 0: a query typed while busy)."""
    return term.count() is not None and not BUSY.search(term.status())


def first_word(paths: list[Path]) -> str:
    """A long word of the first paper's abstract, past its first sentence (the list's titles
    may be derived from that), to see that the abstract is drawn. Only the first dump is
    parsed: the reader shows the dumps in the order given."""
    sys.path.insert(0, str(ROOT / "src"))
    from abstract_reader.corpus import load_corpus

    abstract = load_corpus([str(paths[0])]).papers[0].abstract
    words = re.findall(r"[A-Za-z]{9,}", abstract[60:400])
    return words[0] if words else abstract.split()[5]


def count_of(paths: list[Path], query: str, env: dict[str, str], bundled: bool) -> int:
    """How many papers the CLI's `list -q` finds (the count the status line will show)."""
    argv = [str(SCRIPT), "list", "-q", query]
    for p in [] if bundled else paths:
        argv += ["-d", str(p)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])}: {done.stderr.strip()[-300:]}")
    return len(done.stdout.splitlines())


def pick_query(
    paths: list[Path], candidates: list[str], env: dict[str, str], bundled: bool
) -> tuple[str, int, int]:
    """The first candidate whose last key changes the count (so that the wait for the new
    count cannot end on the previous result): (query, count before, count after)."""
    for query in candidates:
        before = count_of(paths, query[:-1], env, bundled)
        after = count_of(paths, query, env, bundled)
        if before != after and after > 0:
            return query, before, after
    raise RuntimeError(f"no query among {candidates} changes its count with its last key")


def clean_env(home: Path, cache: Path) -> dict[str, str]:
    """The environment of a run: its own library, caches, home and config (nothing of the
    user's: XDG folders and ABSTRACT_READER_* variables are dropped)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("XDG_", "ABSTRACT_READER_")) and k not in ("TMUX", "COLUMNS", "LINES")
    }
    env.update(
        # the library where a new user's is (the default location, under XDG_DATA_HOME): a
        # library named by ABSTRACT_READER_DB that has to be made is announced (a message)
        XDG_DATA_HOME=str(home / "data"),
        ABSTRACT_READER_CACHE=str(cache),
        ABSTRACT_READER_CONFIG=str(home / "config.toml"),  # none: the defaults
        HOME=str(home),
    )
    return env


def library_file(home: Path) -> Path:
    """Where the reader of a run (`clean_env`) finds its library: the default location."""
    return home / "data" / "abstract-reader" / "library.sqlite3"


def install_library(home: Path, library: Path | None) -> None:
    """A copy of ``library`` where the run's reader looks for its library (once per home:
    a warm run finds the cold run's)."""
    target = library_file(home)
    if library is not None and not target.exists():
        from bench_library import copy_library

        copy_library(library, target)


def p95(values: list[float]) -> float:
    """The 95th percentile, interpolated between samples (never beyond the largest)."""
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def _row_text(line: Any) -> str:
    """One row of a pyte screen as text, as ``pyte.Screen.display`` makes it."""
    out: list[str] = []
    wide = False
    for x in range(COLS):
        if wide:  # the stub cell after a wide character
            wide = False
            continue
        char = line[x].data
        wide = wcwidth(char[0]) == 2
        out.append(char)
    return "".join(out)


def echoed(term: Term, typed: str) -> bool:
    """The filter row shows exactly ``typed`` (its placeholder when empty)."""
    shown = term.filter_text()
    return shown == typed if typed else (not shown or "to filter" in shown)


def focus_filter(term: Term) -> None:
    """`/`, then a probe key with no binding in the list ("z") until the filter row shows
    it, then ctrl+u empties the filter again. Never Esc before a key: on a busy machine a
    lone Esc and the next key can reach the app in one read and make one alt+key."""
    for _ in range(3):
        term.send("/")
        term.settle(0.3)  # not measured: the filter takes focus
        term.send(ECHO_KEYS[0])
        with contextlib.suppress(TimeoutError):
            term.wait(lambda: echoed(term, ECHO_KEYS[0]), limit=60)
            term.send("\x15")  # ctrl+u
            term.wait(lambda: echoed(term, ""), limit=60)
            return
    raise TimeoutError(f"the filter never showed a key typed after /; screen:\n{term.text()}")


def _type_echoes(term: Term, figures: dict[str, Any]) -> None:
    """Keys typed into the filter while the status says loading/indexing, one every
    ECHO_GAP_S; each timed until the filter row shows exactly what was typed (ctrl+u
    empties it every ECHO_MAX_LEN keys, and that is timed too). The filter is left
    empty and focused."""
    term.send("/")
    term.settle(0.3)  # not measured: the filter takes focus
    lags: list[float] = []
    on_pty: list[float] = []  #: … until the bytes of the frame that showed it were on the pty
    phases: list[str] = []  #: what the status said when each key was sent
    typed = ""
    while len(lags) < ECHO_MAX_KEYS and not indexed(term):
        phase = "loading" if LOADING.search(term.status()) else "indexing"
        if len(typed) >= ECHO_MAX_LEN:
            key, typed = "\x15", ""  # ctrl+u: everything left of the cursor goes
        else:
            key = ECHO_KEYS[len(typed) % len(ECHO_KEYS)]
            typed += key
        sent = time.perf_counter()
        term.send(key)
        try:
            term.wait(lambda want=typed: echoed(term, want), limit=30)  # type: ignore[misc]
        except TimeoutError:  # said, not hidden: a key that never showed
            figures["echo_lost"] = figures.get("echo_lost", 0) + 1
            break
        lags.append(1000 * (time.perf_counter() - sent))
        on_pty.append(1000 * (term.read_at - sent))
        phases.append(phase)
        term.settle(ECHO_GAP_S)
    figures["echo_ms"] = lags
    figures["echo_bytes_ms"] = on_pty
    figures["echo_phase"] = phases
    if lags:
        figures["echo_p95_ms"] = p95(lags)
    if typed:
        term.send("\x15")  # ctrl+u: the filter empty again, still focused
    term.wait(lambda: echoed(term, ""), limit=60)


def run_reader(
    paths: list[Path],
    *,
    home: Path,
    cache: Path,
    bundled: bool,
    word: str,
    query: str,
    counts: tuple[int, int],
    echo: bool = True,
    library: Path | None = None,
) -> dict[str, Any]:
    """One run of the reader; its figures (seconds from start, ms for latencies, MB).
    ``library``: copied to where the reader finds its library, when none is there yet."""
    env = clean_env(home, cache)
    install_library(home, library)
    argv = [str(SCRIPT)] + ([] if bundled else [str(p) for p in paths])
    warm = caches_written(cache, not bundled)  # then "caches written" is no phase
    term = Term(argv, env, cache=None if warm else cache, corpus_cache=not bundled)
    term.watchers = {
        "first_rows": lambda: rows_shown(term),
        "first_text": lambda: word in term.view_text(),
        "loaded": lambda: loaded(term),
        "indexed": lambda: indexed(term),
        # what the status line shows of the work done: dumps parsed ("loading file 3/20"; from
        # the corpus cache "loading 20 files"), the index built ("indexing 5,000 / 20,000…")
        "seen_parsing": lambda: PARSING.search(term.status()) is not None,
        "seen_building": lambda: BUILDING.search(term.status()) is not None,
    }
    figures: dict[str, Any] = {}
    step = "first rows and text"
    try:
        term.wait(lambda: "first_rows" in term.marks and "first_text" in term.marks)
        in_filter = False
        step = "the keys typed while busy"
        if echo and not indexed(term):
            _type_echoes(term, figures)
            in_filter = True
        step = "fully indexed"
        term.wait(lambda: "indexed" in term.marks, limit=120 + len(paths) * 10)

        # last key → filtered list: all but the last key, its count shown, then the last key
        step = "the filter taking keys"
        if not in_filter:
            focus_filter(term)
        before, after = counts
        for ch in query[:-1]:  # a fast typist: 30 ms a key
            term.send(ch)
            term.settle(0.03)
        step = f"{query[:-1]!r} in the filter and {before:,} on the status line"
        term.wait(lambda: echoed(term, query[:-1]), limit=60)
        term.wait(lambda: term.count() == before and " of " in term.status(), limit=120)
        term.settle(0.3)  # not measured: nothing left running from the earlier keys
        step = f"the last key: {after:,} on the status line"
        sent = time.perf_counter()
        term.send(query[-1])
        term.wait(lambda: term.count() == after and " of " in term.status(), limit=120)
        figures["last_key_ms"] = 1000 * (time.perf_counter() - sent)
        figures["last_key_bytes_ms"] = 1000 * (term.read_at - sent)
        term.marks["last_key"] = term.elapsed()
        step = "the last key: the list's first paper in the paper pane"
        term.wait(lambda: first_row_words(term) in term.view_text(), limit=60)
        figures["last_key_paper_ms"] = 1000 * (time.perf_counter() - sent)

        # m → the papers like the current one (waits for the similarity model, if still built)
        step = "the filter emptied, then Enter"
        term.send("\x15")  # ctrl+u: the filter empty, all papers listed
        term.wait(lambda: echoed(term, "") and " of " not in term.status(), limit=60)
        term.send("\r")  # Enter: back to the list (no Esc: see focus_filter)
        term.settle(0.3)
        step = "m → like: list"
        sent = time.perf_counter()
        term.send("m")  # like:ID in the filter, then its ranked list and count (status cut)
        term.wait(
            lambda: term.filter_text().startswith("like:") and " of " in term.status(),
            limit=300,
        )
        figures["like_ms"] = 1000 * (time.perf_counter() - sent)
        term.marks["like"] = term.elapsed()

        step = "caches written"
        # the caches are written before the run ends: the next (warm) run has them
        deadline = time.perf_counter() + 300
        while not warm and term.sampler.cached_at is None and time.perf_counter() < deadline:
            term.settle(0.05)
        if term.sampler.cached_at is not None:
            term.marks["cached"] = term.sampler.cached_at
        elif not warm:
            figures["caches_missing"] = True
    except (TimeoutError, RuntimeError) as error:
        figures["error"] = f"{step}: {str(error).splitlines()[0]}"
        figures["screen"] = term.text()
    finally:
        term.close()
    figures.update({name: term.marks[name] for name in PHASES if name in term.marks})
    figures["parsed"] = "seen_parsing" in term.marks  # else the corpus cache, or too quick
    figures["built"] = "seen_building" in term.marks  # else the index cache, or too quick
    figures.update(memory(term))
    figures["quit_s"] = term.quit_s
    return figures


def memory(term: Term) -> dict[str, Any]:
    """Peak RSS overall and per phase (MB): the reader's own (VmHWM, exact), and sampled:
    the reader's RSS and the reader with its children."""
    samples = term.sampler.samples
    out: dict[str, Any] = {}
    if not samples:
        return out
    out["rss_peak_mb"] = max(s[2] for s in samples) / 1024
    out["rss_tree_peak_mb"] = max(s[3] for s in samples) / 1024
    marks = sorted((t, name) for name, t in term.marks.items() if name in PHASES)
    bounds = [*marks, (samples[-1][0] + 1, "end")]
    phases: dict[str, dict[str, float]] = {}
    begin = 0.0
    for end, name in bounds:
        inside = [s for s in samples if begin <= s[0] < end]
        if not inside:  # no sample in it (a phase ended in the same frame as the one before)
            inside = [s for s in samples if s[0] < end][-1:]
        if inside:
            phases[name] = {
                "from_s": begin,
                "to_s": min(end, samples[-1][0]),
                "rss_mb": max(s[1] for s in inside) / 1024,
                "tree_mb": max(s[3] for s in inside) / 1024,
                "hwm_mb": inside[-1][2] / 1024,
            }
        begin = end
    out["phases"] = phases
    # the samples themselves (s, reader MB, with its children MB), for the JSON file
    out["rss_series"] = [
        [round(t, 3), round(r / 1024, 1), round(x / 1024, 1)] for t, r, _, x in samples
    ]
    return out


def run_bare() -> float:
    """A bare Textual app (an Input, a 55-item OptionList, a Footer): start → its rows."""
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


QUERIES = ["robust estimation", "graph neural", "gaussian mean", "diffusion model safety"]


def prepare_size(
    size: int, tmpdir: Path, queries: list[str], library: bool = False
) -> dict[str, Any]:
    """What the runs of one size need: the dumps, a word of the first abstract, a query whose
    last key changes the count, and both counts (from the CLI; this also reads the dumps
    once, so every run finds them in the OS page cache). ``library``: a library with half
    the papers matched is made (`bench_library.prepare`) and the counts are taken with it."""
    paths, bundled = corpus_for(size)
    home = tmpdir / "count"
    home.mkdir(exist_ok=True)
    made: Path | None = None
    built: dict[str, Any] = {}
    if library:
        from bench_library import prepare

        made = tmpdir / "matched-library.sqlite3"
        built = prepare(paths, made)
        install_library(home, made)
    env = clean_env(home, tmpdir / "count-cache")
    query, before, after = pick_query(paths, queries, env, bundled)
    return {
        "paths": paths,
        "bundled": bundled,
        "word": first_word(paths),
        "query": query,
        "counts": (before, after),
        "library": made,
        "library_built": built,
    }


def run_size(
    size: int,
    runs: int,
    tmpdir: Path,
    queries: list[str],
    log: Callable[[str], None],
    *,
    library: bool = False,
) -> dict[str, Any]:
    """``runs`` × (bare app when bundled, reader cold, reader warm), alternating.
    ``library``: each run's library a copy of one with half the papers matched."""
    setup = prepare_size(size, tmpdir, queries, library)
    if library:
        built = setup["library_built"]
        log(
            f"  {size:,}: library of {built['matched']:,} matched papers made in "
            f"{built['build_s']:.1f} s"
        )
    cold: list[dict[str, Any]] = []
    warm: list[dict[str, Any]] = []
    bare: list[float] = []
    for n in range(runs):
        home = tmpdir / f"home{n}"
        home.mkdir()
        cache = tmpdir / f"cache{n}"
        if setup["bundled"]:
            bare.append(run_bare())
        for kind, rows in (("cold", cold), ("warm", warm)):
            figures = run_reader(
                setup["paths"],
                home=home,
                cache=cache,
                bundled=setup["bundled"],
                word=setup["word"],
                query=setup["query"],
                counts=setup["counts"],
                library=setup["library"],
            )
            rows.append(figures)
            log(
                f"  {size:,} run {n + 1}/{runs} {kind}: first rows "
                f"{figures.get('first_rows', float('nan')):.2f} s, indexed "
                f"{figures.get('indexed', float('nan')):.2f} s, peak "
                f"{figures.get('rss_peak_mb', 0):.0f} MB, quit "
                f"{figures.get('quit_s', float('nan')):.2f} s"
                + (f" — {figures['error']}" if "error" in figures else "")
            )
    return {
        "size": size,
        "runs": runs,
        "library": library,
        "query": setup["query"],
        "counts": list(setup["counts"]),
        "word": setup["word"],
        "cold": cold,
        "warm": warm,
        "bare": bare,
    }


def print_size(result: dict[str, Any]) -> None:
    size, runs = result["size"], result["runs"]
    label = "bundled dumps (55)" if size == 55 else f"{size:,} synthetic abstracts"
    if result.get("library"):
        label += ", half of them matched in the library"
    before, after = result["counts"]
    print(f"\n== {label}: medians (min–max) of {runs} run(s)")

    def col(rows: list[dict[str, Any]], key: str, unit: str = "s", scale: float = 1.0) -> str:
        return summary([r[key] for r in rows if key in r], unit, scale)

    for name in ("cold", "warm"):
        rows = result[name]
        print(
            f"  {name}: first rows {col(rows, 'first_rows')} | first abstract text "
            f"{col(rows, 'first_text')} | loaded {col(rows, 'loaded')} | indexed "
            f"{col(rows, 'indexed')}"
        )
        keys = sum(len(r.get("echo_ms", [])) for r in rows)
        print(
            f"        key echo while busy p95 {col(rows, 'echo_p95_ms', 'ms')} ({keys} keys)"
            f" | last key of {result['query']!r} ({before:,} → {after:,} rows) "
            f"{col(rows, 'last_key_ms', 'ms')} (its frame on the pty "
            f"{col(rows, 'last_key_bytes_ms', 'ms')}; its first paper in the pane "
            f"{col(rows, 'last_key_paper_ms', 'ms')}) | m → like list {col(rows, 'like_ms', 'ms')}"
            + (" | keys never shown!" if any("echo_lost" in r for r in rows) else "")
        )
        print(
            f"        peak RSS {col(rows, 'rss_peak_mb', 'MB')}"
            f" | with its helper process {col(rows, 'rss_tree_peak_mb', 'MB')}"
        )
        for problem in {r["error"] for r in rows if "error" in r}:
            print(f"        failed run(s): {problem}")
    if result["bare"]:
        print(f"  bare Textual app, first rows {summary(result['bare'])}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="55,10000,100000")
    parser.add_argument("--million", action="store_true", help="also 1,000,000 (1 run)")
    parser.add_argument(
        "--library",
        action="store_true",
        help="start the reader on a library with half the papers matched (bench_library.py)",
    )
    args = parser.parse_args()
    check_install()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.million:
        sizes.append(1_000_000)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, pty {COLS}×{ROWS}")
    for size in sizes:
        runs = args.runs if size <= 100_000 else 1
        with tempfile.TemporaryDirectory(prefix="bench-pty-") as tmp:
            result = run_size(
                size,
                runs,
                Path(tmp),
                QUERIES,
                lambda line: print(line, flush=True),
                library=args.library,
            )
        print_size(result)


def check_install() -> None:
    """The installed script must exist; the reader's modules are compiled once, as an
    installed wheel has them (under PYTHONDONTWRITEBYTECODE a checkout would recompile them
    at every start, and only the reader's: Textual's come compiled)."""
    if not SCRIPT.exists():
        sys.exit(f"no installed script at {SCRIPT}: pip install . first")
    import compileall

    compileall.compile_dir(str(ROOT / "src"), quiet=1)


if __name__ == "__main__":
    main()
