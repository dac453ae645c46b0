"""Shared fixtures. Every test gets its own library and cache: nothing touches ~."""

from __future__ import annotations

import asyncio
import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from textual import _wait as _pilot_wait
from textual import app as _textual_app
from textual import pilot as _textual_pilot

from abstract_reader.corpus import Corpus, Paper, load_corpus

# No test asserts wall-clock time (speed is measured in benchmarks/): Hypothesis's default
# 200 ms deadline per example and its slow-data health check only failed tests when the
# machine was loaded ("Unreliable test timings"). A test's own @settings inherit this.
settings.register_profile(
    "abstract-reader", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("abstract-reader")

# Pilot waits, after each key it presses and in each `pause()`, until the process looks
# idle (textual._wait.wait_for_idle): it sleeps 20 ms at a time until a sleep used under 1 ms
# of CPU. Most of a key's ~110 ms was that sampling, not the reader's work; a test typing an
# 80-character path spent 9 s in it. Here the same rule (under 5% of the CPU over a sample)
# samples every 5 ms, and the process is idle only when the screen owes no frame either (a
# layout, recompose or repaint asked for: Textual draws them on a 1/60 s timer, which a 20 ms
# sample nearly always spanned and a 5 ms one may not: a key's layout then came during the
# next key). On 2 cores the README's test command took 11 min instead of 16 (CPU: 21 min
# instead of 25). What a test waits for, it waits on (`until`, workers, messages), never on
# this.
_IDLE_SAMPLE_S = 0.005


def _screen_owes_a_frame() -> bool:
    from textual._context import active_app

    try:
        screen = active_app.get().screen
    except Exception:  # (no app running, or no screen yet: nothing owed)
        return False
    return bool(
        screen._layout_required
        or screen._recompose_required
        or screen._scroll_required
        or screen._dirty_widgets
    )


async def _wait_for_idle(min_sleep: float = _IDLE_SAMPLE_S, max_sleep: float = 1) -> None:
    """`textual._wait.wait_for_idle` with 5 ms samples and the frame owed counted as work."""
    start = time.monotonic()
    while True:
        cpu = time.process_time()
        await asyncio.sleep(_IDLE_SAMPLE_S)
        used = time.process_time() - cpu
        elapsed = time.monotonic() - start
        if elapsed >= max_sleep:
            break
        if elapsed > min_sleep and used < _IDLE_SAMPLE_S / 20 and not _screen_owes_a_frame():
            break


for _module in (_pilot_wait, _textual_app, _textual_pilot):  # (each imported it by name)
    _module.wait_for_idle = _wait_for_idle  # type: ignore[attr-defined]

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "seeds"
DATA = Path(__file__).resolve().parent / "data"


@pytest.hookimpl(optionalhook=True)  # (a pytest run without xdist has no such hook)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """What ``-n auto`` (the README's test command) means: half again as many workers as
    cores. The UI tests spend much of their time waiting (for workers, the next frame, a
    CLI process), so a core runs more than one of them: on 2 cores, tests/tui/test_reader.py
    with tests/test_cli.py took 79 s with 2 workers, 60 s with 3 and 58 s with 4."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(2, (cores or 1) * 3 // 2)


@pytest.fixture(scope="session")
def _empty_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty library made once: copied, it is each test's library (making one is ~50 ms)."""
    from abstract_reader.library import Library

    path = tmp_path_factory.mktemp("empty-library") / "library.sqlite3"
    Library(path).close()  # closed: the WAL is checkpointed into the file and removed
    return path


@pytest.fixture(autouse=True)
def _isolated(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    _empty_library: Path,
) -> Iterator[None]:
    # The user's library as it is on every run after the first: there already, empty (a
    # library named by ABSTRACT_READER_DB or --db that a command has to make is announced on
    # stderr, and is made only in a folder that exists; the tests of that name their own
    # path). Outside tmp_path, which tests may want to find as they left it.
    home = tmp_path_factory.mktemp("home")
    shutil.copyfile(_empty_library, home / "library.sqlite3")
    monkeypatch.setenv("ABSTRACT_READER_DB", str(home / "library.sqlite3"))
    monkeypatch.setenv("ABSTRACT_READER_CACHE", str(tmp_path / "cache"))
    # never the user's own config.toml (tests that want one write their own)
    monkeypatch.setenv("ABSTRACT_READER_CONFIG", str(tmp_path / "config" / "config.toml"))
    yield


@pytest.fixture(scope="session")
def seeds() -> Corpus:
    return load_corpus([SEEDS])


def cli(
    *args: str,
    db: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    new_session: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m abstract_reader ARGS`` as a user would, capturing its output."""
    import sys

    full = [*args, "--db", str(db)] if db is not None else list(args)
    return subprocess.run(
        [sys.executable, "-m", "abstract_reader", *full],
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        env=env,
        start_new_session=new_session,
    )


_DRAFT_WRITER = """
import sys
from pathlib import Path
from abstract_reader.library.drafts import Drafts, new_slot
drafts = Drafts.beside(Path(sys.argv[1]))
assert drafts.put(sys.argv[2], sys.argv[3], "", new_slot()) is None
print("kept", flush=True)
sys.stdin.read()  # until the test lets it end
"""


class DraftWriter:
    """Another process that kept a note's draft (as another reader's editor does) and runs
    until `end` (or the ``with`` block's end)."""

    def __init__(self, library: Path, paper_id: str, text: str) -> None:
        import sys

        self.process = subprocess.Popen(
            [sys.executable, "-c", _DRAFT_WRITER, str(library), paper_id, text],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == "kept\n"

    def end(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=30)

    def __enter__(self) -> DraftWriter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.end()


def installed_script() -> list[str]:
    """The console script installed next to this interpreter (a venv's ``bin/``, found even
    when the venv is not activated), else ``python -m abstract_reader``."""
    import sys

    script = Path(sys.executable).parent / "abstract-reader"
    return [str(script)] if script.exists() else [sys.executable, "-m", "abstract_reader"]


def paper_with(corpus: Corpus, phrase: str) -> Paper:
    """The one paper whose abstract contains ``phrase`` (found by reading, not searching)."""
    found = [p for p in corpus.papers if phrase in p.abstract]
    assert len(found) == 1, f"{phrase!r} is in {len(found)} abstracts"
    return found[0]


def write_dump(path: Path, *abstracts: str, header: str | None = "TestConf 2025 Papers") -> Path:
    parts = ([header] if header else []) + list(abstracts)
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return path


def run_as_nobody(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run Python ``code`` as the unprivileged user ``nobody`` (for permission tests as root).

    Modules are imported as root first (the interpreter may live in root's home)."""
    import os
    import pwd
    import sys

    nobody = pwd.getpwnam("nobody")
    script = (
        "import os,sys,sqlite3,json,argparse,gettext,locale,errno,stat,tempfile\n"
        "import abstract_reader.cli, abstract_reader.corpus, abstract_reader.library\n"
        "import abstract_reader.cite, abstract_reader.text, abstract_reader.paths\n"
        "abstract_reader.cli.build_parser(); gettext.translation('x', fallback=True)\n"
        f"os.setgid({nobody.pw_gid}); os.setuid({nobody.pw_uid})\n" + code
    )
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def world_dir(prefix: str = "ar-nobody-") -> Path:
    """A fresh directory under /tmp that ``nobody`` can enter and write (removed when the
    test process ends: each run left hundreds of them in /tmp)."""
    import atexit
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o777)
    atexit.register(shutil.rmtree, path, True)
    return path


# -- a real X clipboard (Xvfb + xclip) ---------------------------------------------------------

REQUIRE_CLIPBOARD = os.environ.get("ABSTRACT_READER_REQUIRE_CLIPBOARD") == "1"


def skip_or_fail(reason: str) -> None:
    """Skip a clipboard test here; in CI (ABSTRACT_READER_REQUIRE_CLIPBOARD=1) fail it."""
    if REQUIRE_CLIPBOARD:
        pytest.fail(f"clipboard test required in CI but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def display() -> Iterator[str]:
    """A private X display (Xvfb) for the clipboard tests."""
    if not shutil.which("Xvfb") or not shutil.which("xclip"):
        skip_or_fail("Xvfb and xclip are not installed")
    # -displayfd: Xvfb picks a free display and writes its number to the pipe, so parallel
    # test workers never collide on one display.
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-nolisten", "tcp", "-screen", "0", "640x480x24"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(write_fd,),
    )
    os.close(write_fd)
    number = b""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not number.endswith(b"\n") and proc.poll() is None:
        ready, _, _ = select.select([read_fd], [], [], 0.2)
        if ready:
            chunk = os.read(read_fd, 16)
            if not chunk:
                break
            number += chunk
    os.close(read_fd)
    if not number.strip().isdigit():
        proc.kill()
        skip_or_fail("Xvfb did not start")
    yield f":{number.strip().decode()}"
    proc.terminate()
    proc.wait(timeout=10)


def read_clipboard_when(display: str, expected: str, timeout: float = 10.0) -> str:
    """The X clipboard's text, polled until it equals ``expected`` (or time runs out)."""
    deadline = time.monotonic() + timeout
    got = ""
    while time.monotonic() < deadline:
        got = subprocess.run(
            ["xclip", "-selection", "clipboard", "-o"],
            capture_output=True,
            env={**os.environ, "DISPLAY": display},
            timeout=10,
        ).stdout.decode("utf-8", "replace")
        if got == expected:
            break
        time.sleep(0.05)
    return got
