"""The clipboard chain, for real: Xvfb + xclip, a stale DISPLAY, no DISPLAY (OSC 52)."""

from __future__ import annotations

import base64
import contextlib
import os
import pty
import select
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from abstract_reader.clipboard import (
    TMUX_NOTE,
    CopyResult,
    copy,
    copy_with_system_tool,
    osc52_sequence,
)

from .conftest import cli, read_clipboard_when, skip_or_fail

SAMPLE = "Copied: Köhler–Šmíd ℓ₂ ✓ 日本語 & $\\mu$"


@pytest.mark.clipboard
def test_copy_through_the_real_system_clipboard(
    display: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPLAY", display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    result = copy(SAMPLE, terminal=None)
    assert result.ok and result.method in ("xclip", "xsel")
    assert read_clipboard_when(display, SAMPLE) == SAMPLE


@pytest.mark.clipboard
def test_cli_cite_copy_reads_back(display: str, seeds_first_id: str) -> None:
    env = {**os.environ, "DISPLAY": display}
    env.pop("WAYLAND_DISPLAY", None)
    result = cli("cite", seeds_first_id, "--copy", env=env)
    assert result.returncode == 0, result.stderr
    assert "Copied BibTeX for 1 paper (xclip)" in result.stderr
    assert read_clipboard_when(display, result.stdout) == result.stdout


@pytest.fixture
def seeds_first_id() -> str:
    from abstract_reader.corpus import load_corpus

    return load_corpus().papers[0].id


def test_stale_display_is_detected_not_silent(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    if not shutil.which("xclip") and not shutil.which("xsel"):
        skip_or_fail("no xclip/xsel to fail")
    monkeypatch.setenv("DISPLAY", ":98")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    result = copy_with_system_tool("hello")
    assert not result.ok
    assert "xclip failed" in result.detail or "xsel failed" in result.detail
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # nothing printed over the screen


def test_no_display_and_no_terminal_fails_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    result = copy("x", terminal=None)
    assert not result.ok and "no clipboard tool" in result.detail


def test_osc52_wraps_for_tmux() -> None:
    plain = osc52_sequence("hi", tmux=False)
    assert plain == "\x1b]52;c;" + base64.b64encode(b"hi").decode() + "\x07"
    wrapped = osc52_sequence("hi", tmux=True)
    assert wrapped.startswith("\x1bPtmux;\x1b\x1b]52;c;") and wrapped.endswith("\x1b\\")


def _run_in_pty(args: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    pid, fd = pty.fork()
    if pid == 0:  # child
        os.execvpe(sys.executable, [sys.executable, "-m", "abstract_reader", *args], env)
    output = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), output


def test_cli_without_display_falls_back_to_osc52_and_says_so(seeds_first_id: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "TMUX")}
    code, output = _run_in_pty(["cite", seeds_first_id[:8], "--copy", "-f", "text"], env)
    assert code == 0, output
    start = output.index(b"\x1b]52;c;") + len(b"\x1b]52;c;")
    payload = output[start : output.index(b"\x07", start)]
    copied = base64.b64decode(payload).decode("utf-8")
    assert seeds_first_id[:12] in copied
    assert b"OSC 52" in output and b"terminal must allow clipboard writes" in output


def test_cli_with_no_display_and_no_terminal_exits_1(seeds_first_id: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    # a new session: no controlling terminal to send OSC 52 to
    result = cli("cite", seeds_first_id, "--copy", env=env, new_session=True)
    assert result.returncode == 1
    assert "could not copy" in result.stderr and len(result.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------
# tmux, OSC 52 limits, hanging tools (issue #11)
# ---------------------------------------------------------------------------------------


@pytest.fixture
def tmux_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A real tmux server on its own socket; TMUX points at it as inside a pane."""
    import subprocess

    if not shutil.which("tmux"):
        skip_or_fail("no tmux")
    name = f"abstract-reader-test-{os.getpid()}-{time.monotonic_ns()}"
    base = ["tmux", "-L", name, "-f", "/dev/null"]
    subprocess.run([*base, "new-session", "-d", "-s", "t"], check=True, timeout=30)
    socket = ""
    try:
        info = subprocess.run(
            [*base, "display-message", "-p", "#{socket_path},#{pid}"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()
        socket = info.rsplit(",", 1)[0]
        monkeypatch.setenv("TMUX", f"{info},0")
        monkeypatch.delenv("DISPLAY", raising=False)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        yield name
    finally:
        subprocess.run([*base, "kill-server"], check=False, timeout=30)
        if socket:  # (kill-server leaves the socket file: one per test in /tmp/tmux-UID)
            with contextlib.suppress(OSError):
                os.unlink(socket)


def _tmux_buffer(name: str) -> str:
    import subprocess

    return subprocess.run(
        ["tmux", "-L", name, "show-buffer"], capture_output=True, check=True, timeout=30
    ).stdout.decode("utf-8")


def test_tmux_load_buffer_round_trip(tmux_server: str) -> None:
    def terminal(text: str) -> CopyResult:
        raise AssertionError("OSC 52 must not be needed inside tmux")

    result = copy(SAMPLE, terminal=terminal)
    assert result.ok and result.method == TMUX_NOTE
    assert _tmux_buffer(tmux_server) == SAMPLE


def test_cli_cite_copy_inside_tmux_says_so(tmux_server: str, seeds_first_id: str) -> None:
    result = cli("cite", seeds_first_id, "--copy", "-f", "text", new_session=True)
    assert result.returncode == 0, result.stderr
    assert "(tmux buffer via load-buffer -w;" in result.stderr
    assert _tmux_buffer(tmux_server) == result.stdout


def test_tmux_over_the_osc52_limit_fills_the_buffer_only_and_says_so(tmux_server: str) -> None:
    """Over the limit tmux is not asked to pass the text on (load-buffer without -w: its own
    OSC 52 would be dropped as ours is), and the result does not claim it was."""
    text = "x" * 80_000  # ~107 KB of OSC 52

    def terminal(text: str) -> CopyResult:
        raise AssertionError("OSC 52 must not be needed inside tmux")

    result = copy(text, terminal=terminal)
    assert result.ok and result.method == (
        "tmux buffer only: 80 KB is over the ~75 KB of text terminals take through OSC 52,"
        " so not passed to your terminal's clipboard"
    )
    assert _tmux_buffer(tmux_server) == text


def test_cli_cite_copy_of_a_long_citation_inside_tmux_says_buffer_only(
    tmux_server: str, tmp_path: Path
) -> None:
    from abstract_reader.corpus import load_corpus

    from .conftest import write_dump

    dump = write_dump(tmp_path / "long.txt", "We propose Longform, " + "a robust mean " * 6_000)
    paper_id = load_corpus([dump]).papers[0].id
    result = cli(
        "cite", paper_id, "-d", str(dump), "-f", "bibtex", "--abstract", "--copy",
        new_session=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "(tmux buffer only: " in result.stderr and "load-buffer -w" not in result.stderr
    assert "KB is over the ~75 KB of text terminals take through OSC 52" in result.stderr
    assert _tmux_buffer(tmux_server) == result.stdout


def test_osc52_payloads_over_100kb_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("TMUX", raising=False)
    sent: list[str] = []

    def terminal(text: str) -> CopyResult:
        sent.append(text)
        return CopyResult(True, "terminal")

    assert copy("x" * 70_000, terminal=terminal).ok  # ~93 KB of base64: fine
    result = copy("x" * 80_000, terminal=terminal)
    assert not result.ok and "too long for OSC 52" in result.detail
    assert len(sent) == 1


def test_a_refusal_gives_the_texts_size_not_its_encoded_size() -> None:
    """A 189 KB text was refused as "252 KB" (its base64, which users never see): the
    message gives the text's size and the limit in text; the check stays on the payload."""
    from abstract_reader.clipboard import OSC52_MAX, osc52_refusal, osc52_size

    refused = osc52_refusal("é" * 94_500)  # 189,000 bytes of UTF-8, 252,000 of base64
    assert refused is not None and refused.detail == (
        "189 KB is too long for OSC 52 (terminals drop over ~75 KB of text, 100 KB once"
        " encoded); not copied"
    )
    assert osc52_size("x" * 75_000) == OSC52_MAX and osc52_refusal("x" * 75_000) is None
    over = osc52_refusal("x" * 75_001)  # one byte over: "76 KB", never "75 KB … over ~75"
    assert over is not None and over.detail.startswith("76 KB is too long")


def test_a_hanging_tool_is_killed_with_its_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import abstract_reader.clipboard as clipboard

    pidfile = tmp_path / "child.pid"
    fake = tmp_path / "bin" / "xclip"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pidfile}\nsleep 300\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    monkeypatch.setenv("DISPLAY", ":97")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.setattr(clipboard, "TOOL_TIMEOUT_S", 1.0)
    result = clipboard.copy_with_system_tool("hello")
    assert not result.ok and "xclip timed out after 1 s (killed)" in result.detail
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status
