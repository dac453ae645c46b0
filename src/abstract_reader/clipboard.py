"""Copy text to the clipboard, honestly.

The chain: a system clipboard tool (the ones pyperclip knows: wl-copy, xclip, xsel, pbcopy,
clip.exe; pyperclip itself on Windows) run with stderr captured — a tool that fails is
detected, never trusted, and prints nothing over the screen; inside tmux, ``tmux load-buffer
-w -`` (the tmux buffer, and the outer terminal's clipboard through tmux's own OSC 52),
checked with ``tmux show-buffer`` — tmux ≥ 3.3 drops an application's wrapped OSC 52 unless
``allow-passthrough`` is on; then OSC 52 through the terminal, refused for payloads over
~100 KB (terminals drop them silently). Every result says which way it went.

One rule for OSC 52, the CLI's and the reader's (its own copies and Textual's, ctrl+c on a
selection): `send_osc52` is the only place a sequence is written, and a text over the limit
is refused there with the size in one line (`osc52_refusal`) — nothing is sent. Over the
limit, tmux is asked for its buffer only (``load-buffer`` without ``-w``: tmux would pass it
on with its own OSC 52, which terminals drop the same way), and the result says so.

A tool runs in its own process group and is killed with its children if it hangs.
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

TOOL_TIMEOUT_S = 5.0
OSC52_NOTE = "terminal, OSC 52 — your terminal must allow clipboard writes"
OSC52_MAX = 100_000  #: bytes of base64 payload; many terminals drop longer OSC 52 silently
#: the longest text (UTF-8 bytes) whose payload is within OSC52_MAX: what users are told
OSC52_TEXT_MAX = OSC52_MAX // 4 * 3
TMUX_NOTE = "tmux buffer via load-buffer -w; tmux passes it to your terminal's clipboard"
TMUX_OLD_NOTE = "tmux buffer only (tmux < 3.2 cannot pass it to your terminal's clipboard)"
TMUX_LONG_NOTE = (
    "tmux buffer only: {size} KB is over the ~{limit} KB of text terminals take through"
    " OSC 52, so not passed to your terminal's clipboard"
)


@dataclass(frozen=True, slots=True)
class CopyResult:
    ok: bool
    method: str  #: "xclip", "wl-copy", … or OSC52_NOTE
    detail: str = ""  #: why it failed, or what was tried


def _candidates() -> list[tuple[str, list[str]]]:
    """(name, argv) of the system tools that could work here, best first."""
    tools: list[tuple[str, list[str]]] = []
    if sys.platform == "darwin":
        tools.append(("pbcopy", ["pbcopy"]))
    if os.environ.get("WAYLAND_DISPLAY"):
        tools.append(("wl-copy", ["wl-copy"]))
    if os.environ.get("DISPLAY"):
        tools.append(("xclip", ["xclip", "-selection", "clipboard", "-in"]))
        tools.append(("xsel", ["xsel", "--clipboard", "--input"]))
    if "microsoft" in _uname_release() or sys.platform == "cygwin":
        tools.append(("clip.exe", ["clip.exe"]))
    return [(name, argv) for name, argv in tools if shutil.which(argv[0])]


def _uname_release() -> str:
    try:
        return os.uname().release.lower()
    except AttributeError:  # pragma: no cover - Windows
        return ""


def _run_tool(name: str, argv: list[str], text: str) -> CopyResult:
    # xclip and xsel stay behind to serve the selection, holding their stdout/stderr open:
    # stdout goes to /dev/null and stderr to a file, so that we never wait on a pipe. The tool
    # gets its own process group, so that a hanging one is killed with everything it started.
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
            )
        except OSError as exc:
            return CopyResult(False, name, f"{name} failed: {exc}")
        try:
            proc.communicate(text.encode("utf-8"), timeout=TOOL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return CopyResult(False, name, f"{name} timed out after {TOOL_TIMEOUT_S:g} s (killed)")
        except OSError as exc:  # a tool that exits without reading its input
            proc.wait()
            if proc.returncode == 0:
                return CopyResult(True, name)
            return CopyResult(False, name, f"{name} failed: {exc}")
        err.seek(0)
        message = err.read(2000).decode("utf-8", "replace").strip().splitlines()
    if proc.returncode != 0:
        reason = message[0] if message else f"exit code {proc.returncode}"
        return CopyResult(False, name, f"{name} failed: {reason}")
    return CopyResult(True, name)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.wait()


def copy_with_system_tool(text: str) -> CopyResult:
    """Try the system clipboard tools in turn, then (inside tmux) the tmux buffer; the first
    that succeeds wins."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        try:
            import pyperclip

            pyperclip.copy(text)
            return CopyResult(True, "Windows clipboard")
        except Exception as exc:
            return CopyResult(False, "pyperclip", f"Windows clipboard failed: {exc}")
    failures: list[str] = []
    for name, argv in _candidates():
        result = _run_tool(name, argv, text)
        if result.ok:
            return result
        failures.append(result.detail)
    tmux = copy_with_tmux(text)  # the reader calls this function too: tmux is part of it
    if tmux is not None:
        if tmux.ok:
            return tmux
        failures.append(tmux.detail)
    if not failures:
        return CopyResult(
            False,
            "",
            "no clipboard tool (no display, or none of wl-copy, xclip, xsel, pbcopy installed)",
        )
    return CopyResult(False, "", "; ".join(failures))


def osc52_sequence(text: str, tmux: bool | None = None) -> str:
    payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
    sequence = f"\x1b]52;c;{payload}\x07"
    if tmux if tmux is not None else bool(os.environ.get("TMUX")):
        sequence = "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return sequence


NO_TERMINAL = "no terminal to send OSC 52 to"


def send_osc52(
    text: str, write: Callable[[str], object] | None, tmux: bool | None = None
) -> CopyResult:
    """OSC 52 through ``write`` (the CLI's terminal, the reader's driver; None: there is no
    terminal): the one place a sequence is sent. A text over the limit is refused first
    (the size is the reason, terminal or not) and nothing is written. Wrapped for tmux when
    inside tmux ($TMUX), unless ``tmux`` says otherwise."""
    refused = osc52_refusal(text)
    if refused is not None:
        return refused
    if write is None:
        return CopyResult(False, "", NO_TERMINAL)
    write(osc52_sequence(text, tmux))
    return CopyResult(True, OSC52_NOTE)


def copy_via_tty(text: str) -> CopyResult:
    """OSC 52 written straight to the controlling terminal (the CLI's fallback)."""
    refused = osc52_refusal(text)  # before looking for a terminal: the size is the reason
    if refused is not None:
        return refused
    try:
        fd = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY)
    except OSError:
        return CopyResult(False, "", NO_TERMINAL)
    try:
        return send_osc52(text, lambda sequence: os.write(fd, sequence.encode("ascii")))
    except OSError as exc:
        return CopyResult(False, "", f"writing OSC 52 to the terminal failed: {exc}")
    finally:
        os.close(fd)


def copy_with_tmux(text: str) -> CopyResult | None:
    """Inside tmux: ``tmux load-buffer -w -``, checked with ``tmux show-buffer``. None when
    not inside tmux (or no tmux client)."""
    if not os.environ.get("TMUX") or not shutil.which("tmux"):
        return None
    if osc52_size(text) > OSC52_MAX:  # the buffer only: tmux's OSC 52 would be dropped too
        result = _run_tool("tmux", ["tmux", "load-buffer", "-"], text)
        method = TMUX_LONG_NOTE.format(size=text_kb(text), limit=OSC52_TEXT_MAX // 1000)
    else:
        result = _run_tool("tmux", ["tmux", "load-buffer", "-w", "-"], text)
        method = TMUX_NOTE
    if not result.ok and method == TMUX_NOTE and "-w" in result.detail:  # tmux < 3.2: no -w
        result = _run_tool("tmux", ["tmux", "load-buffer", "-"], text)
        method = TMUX_OLD_NOTE
    if not result.ok:
        return CopyResult(False, "tmux", result.detail.replace("tmux failed", "tmux load-buffer"))
    try:
        shown = subprocess.run(
            ["tmux", "show-buffer"],
            capture_output=True,
            timeout=TOOL_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return CopyResult(False, "tmux", f"tmux show-buffer failed: {exc}")
    if shown.returncode != 0 or shown.stdout != text.encode("utf-8"):
        return CopyResult(False, "tmux", "the tmux buffer does not hold the text after load-buffer")
    return CopyResult(True, method)


def osc52_size(text: str) -> int:
    """Bytes of ``text``'s base64 payload in an OSC 52 sequence (what terminals limit)."""
    return (len(text.encode("utf-8")) + 2) // 3 * 4


def text_kb(text: str) -> int:
    """The size of ``text`` as users think of it — its UTF-8 bytes, not its base64 — in KB,
    rounded up: a text refused for being over a limit never reads as the limit itself."""
    return -(-len(text.encode("utf-8")) // 1000)


def osc52_refusal(text: str) -> CopyResult | None:
    """A refusal when the text is too long for OSC 52, else None: the CLI's and the reader's
    message, one line with the size. The check is on the encoded payload (what terminals
    limit); the message gives the text's size and the limit in text (a 189 KB abstract was
    said to be "252 KB", its base64)."""
    if osc52_size(text) > OSC52_MAX:
        return CopyResult(
            False,
            "",
            f"{text_kb(text)} KB is too long for OSC 52 (terminals drop over ~"
            f"{OSC52_TEXT_MAX // 1000} KB of text, {OSC52_MAX // 1000} KB once encoded);"
            " not copied",
        )
    return None


def copy(text: str, terminal: Callable[[str], CopyResult] | None = copy_via_tty) -> CopyResult:
    """The whole chain. ``terminal`` is the OSC 52 fallback (the reader passes its own)."""
    system = copy_with_system_tool(text)
    if system.ok:
        return system
    if terminal is not None:
        result = osc52_refusal(text) or terminal(text)
        if result.ok:
            return result
        return CopyResult(False, "", f"{system.detail}; {result.detail}")
    return system
