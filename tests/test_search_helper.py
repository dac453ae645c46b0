"""The tokenising helper process: isolated from the working directory, dies with its parent,
leaves no temporary files behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from abstract_reader.search import postings

from .conftest import write_dump

HELPER_DOCS = postings.PARALLEL_MIN_DOCS  # the size from which the helper starts


def _wait_for(condition: object, timeout: float = 60.0) -> bool:
    assert callable(condition)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def test_code_in_the_working_directory_never_runs(tmp_path: Path) -> None:
    """An ``abstract_reader/`` package in the cwd must not be imported by the helper."""
    dump = write_dump(
        tmp_path / "big.txt", *(f"Abstract number {n} studies lemons." for n in range(HELPER_DOCS))
    )
    cwd = tmp_path / "hostile"
    (cwd / "abstract_reader").mkdir(parents=True)
    marker = tmp_path / "ran"
    (cwd / "abstract_reader" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').write('code from the cwd ran')\n"
    )
    entry = Path(sys.executable).parent / "abstract-reader"
    result = subprocess.run(
        [str(entry), "list", "-q", "number 17 ", "-d", str(dump)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    assert "Abstract number 17 " in result.stdout
    assert not marker.exists()


_PARENT = """
import os, signal, subprocess, sys, time
from pathlib import Path
from abstract_reader.search import postings

ready = Path(sys.argv[1])


class Stopped(subprocess.Popen):  # the helper is stopped at once: it cannot finish first
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        os.kill(self.pid, signal.SIGSTOP)
        ready.write_text(str(self.pid))


def stall(texts):  # this process's chunk never ends: its helper is at work when it is killed
    while True:
        time.sleep(1)


subprocess.Popen = Stopped
postings._index_chunk = stall
postings._FieldIndex.build([f"text {n} about lemons" for n in range(10_000)], parallel=True)
"""


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_helper_dies_with_its_parent_and_removes_its_files(
    tmp_path: Path, sig: signal.Signals
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    ready = tmp_path / "ready"
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, str(ready)],
        env={**os.environ, "TMPDIR": str(temp)},
        stdin=subprocess.DEVNULL,
    )
    try:
        assert _wait_for(lambda: ready.exists() and ready.read_text())
        helper = int(ready.read_text())
        assert _children(parent.pid) == [helper]
        assert list(temp.iterdir())  # its folder: the texts and (soon) the answer
        os.kill(parent.pid, sig)
        parent.wait(timeout=30)
        os.kill(helper, signal.SIGCONT)
        assert _wait_for(lambda: not Path(f"/proc/{helper}").exists() or _zombie(helper))
        assert _wait_for(lambda: not list(temp.iterdir()))
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except OSError:
        return True


@pytest.mark.skipif(os.name != "posix", reason="process liveness via kill(pid, 0)")
def test_stale_helper_folders_of_dead_processes_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead_pid = int(gone.stdout)
    stale = tmp_path / f"{postings.HELPER_DIR_PREFIX}{dead_pid}-abc"
    stale.mkdir()
    (stale / "in").write_bytes(b"x" * 1000)
    alive = tmp_path / f"{postings.HELPER_DIR_PREFIX}{os.getppid()}-def"
    alive.mkdir()
    target = tmp_path / "keep"
    target.mkdir()
    (target / "precious").write_text("x")
    link = tmp_path / f"{postings.HELPER_DIR_PREFIX}{dead_pid}-lnk"
    link.symlink_to(target)
    texts = [f"text {n} about lemons" for n in range(50)]
    postings._FieldIndex.build(texts, parallel=True)
    assert not stale.exists()
    assert alive.is_dir()
    assert (target / "precious").exists()  # a link is never followed
    assert not [
        p
        for p in tmp_path.iterdir()
        if p.name.startswith(f"{postings.HELPER_DIR_PREFIX}{os.getpid()}-")
    ]
