"""Pasted text: a bracketed paste holding ESCs, bytes that are not UTF-8 or a megabyte lands
at once (a one-line field takes its first line, up to PASTE_LIMIT characters), its controls
shown as stand-ins (␛), and the reader still takes keys afterwards.

Textual's own parser took an ESC inside a paste for the start of a sequence (the rest came as
keys, nearly every character one, each a filter run) and its input thread died on a byte that
is not UTF-8 (0x9b): no key reached the reader again. See ``tui/driver.py``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual import constants, events
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from abstract_reader.corpus import Corpus
from abstract_reader.search import SearchIndex
from abstract_reader.text import sanitise_paste
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.driver import PasteParser
from abstract_reader.tui.screens.editors import NoteEditor
from abstract_reader.tui.widgets.fitted_input import PASTE_LIMIT

from ..conftest import installed_script
from .conftest import make_app, settle, until
from .test_pty import Terminal, reader_env

START, END = "\x1b[200~", "\x1b[201~"
#: ESC sequences a web page's text can carry once copied: colours, a title, a clear screen,
#: a cursor move, a lone ESC, the start of a paste, the start of its end, an ESC last
HOSTILE = "\x1b[31mred\x1b[0m \x1b]0;pwned\x07 \x1b[2J\x1b[H \x1b x \x1b[200~ \x1b[201 \x1b"
#: a query with sequences that set the terminal's title, clear the screen, set a colour
QUERY = "\x1b]0;pwned\x07\x1b[2J\x1b[31m | starcraft"


# -- the parser: a paste whole, keys as before -------------------------------------------------


def _parsed(reads: list[str]) -> list[tuple[str, str]]:
    parser = PasteParser()
    messages: list[Message] = []
    for data in reads:
        messages.extend(parser.feed(data))
    return [_what(m) for m in messages]


def _what(message: Message) -> tuple[str, str]:
    if isinstance(message, events.Paste):
        return ("paste", message.text)
    if isinstance(message, events.Key):
        return ("key", message.key)
    return (type(message).__name__, "")


def test_a_paste_with_escs_is_one_paste_event_however_the_reads_split_it() -> None:
    stream = "k" + "\x1b[I" + START + HOSTILE + END + "j"
    expected = [("key", "k"), ("AppFocus", ""), ("paste", HOSTILE), ("key", "j")]
    assert _parsed([stream]) == expected
    for cut in range(1, len(stream)):  # the reads end anywhere: in a marker, after an ESC
        assert _parsed([stream[:cut], stream[cut:]]) == expected, cut
    assert _parsed(list(stream)) == expected  # one character per read


def test_keys_around_pastes_are_parsed_as_textual_does() -> None:
    """Keys, mouse and focus sequences, and a paste's NULs, are what Textual makes of them."""
    mouse = "\x1b[<0;5;7M"
    parsed = _parsed(["a\x1b[A", mouse, START + "x\x00y" + END + "\x1b[O" + START + END + "b"])
    assert parsed == [
        ("key", "a"),
        ("key", "up"),
        ("MouseDown", ""),
        ("paste", "xy"),  # (Textual drops NUL from pastes)
        ("AppBlur", ""),
        ("paste", ""),
        ("key", "b"),
    ]


def _ticked(parser: PasteParser) -> list[tuple[str, str]]:
    """What the parser sends once its wait for the rest of a sequence is over."""
    deadline = time.monotonic() + 10 * constants.ESCAPE_DELAY + 5
    while time.monotonic() < deadline:
        if ticked := [_what(m) for m in parser.tick()]:
            return ticked
        time.sleep(0.01)
    raise AssertionError("the parser did not give up waiting")


def test_escape_alone_is_still_the_escape_key() -> None:
    parser = PasteParser()
    assert list(parser.feed("\x1b")) == []
    assert _ticked(parser) == [("key", "escape")]


def test_the_start_of_a_paste_marker_given_up_on_is_keys_not_a_paste() -> None:
    """ESC [ 2 0 arrives, then nothing for longer than a sequence may take: Textual sends it
    as keys, and what comes after is typed, not the rest of a paste marker."""
    parser = PasteParser()
    assert list(parser.feed("\x1b[20")) == []
    assert _ticked(parser)  # alt+[, 2, 0
    assert [_what(m) for m in parser.feed("0~ab")] == [
        ("key", "0"),
        ("key", "tilde"),
        ("key", "a"),
        ("key", "b"),
    ]


def test_a_megabyte_paste_in_terminal_reads_is_one_paste_event() -> None:
    text = "\n".join(f"line {n} {HOSTILE}" for n in range(20_000))
    assert len(text) > 1_000_000
    stream = START + text + END + "q"
    reads = [stream[at : at + 4096] for at in range(0, len(stream), 4096)]
    assert _parsed(reads) == [("paste", text), ("key", "q")]


# -- the app: what a field shows of a paste ----------------------------------------------------


def test_sanitise_paste_keeps_lines_and_shows_controls() -> None:
    assert sanitise_paste("a\x1b[31mb\r\nc\rd\te\x9bf\u202eg") == "a␛[31mb\nc\nd\te\ufffdf\ufffdg"


async def test_a_paste_into_the_filter_shows_its_controls_as_stand_ins(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        field = app.screen.query_one("#filter", Input)
        app.post_message(events.Paste("robust \x1b[1mestimation\x1b[0m\rsecond line"))
        await until(pilot, lambda: field.value != "")
        assert field.value == "robust ␛[1mestimation␛[0m"  # the first line, as Input takes


async def test_a_megabyte_line_pasted_into_the_filter_is_cut_with_a_notice(
    tmp_path: Path,
) -> None:
    """Textual's Input measures its whole value every frame: a 1 MB line took seconds to
    show and as long for every key after it. A field takes the first PASTE_LIMIT
    characters and says so."""
    line = "".join(f"starcraft {n} {HOSTILE} " for n in range(20_000))
    assert len(line) > 1_000_000
    app = make_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        field = app.screen.query_one("#filter", Input)
        await _pasted_line_is_cut(app, pilot, field, line)


async def _pasted_line_is_cut(app: ReaderApp, pilot: Pilot[Any], field: Input, line: str) -> None:
    """Paste ``line`` (then a second line) into the focused ``field``: it takes the line's
    first PASTE_LIMIT characters, a notice gives the line's length, and a key typed next
    goes at the end."""
    app.post_message(events.Paste(line + "\rsecond line"))
    await until(pilot, lambda: field.value != "")
    assert field.value == sanitise_paste(line)[:PASTE_LIMIT]
    notices = [n.message for n in app._notifications]
    assert any(f"the line pasted had {len(line):,}" in notice for notice in notices)
    await pilot.press("x")  # typing goes on at the end of what was pasted
    await until(pilot, lambda: field.value.endswith("x"))
    assert len(field.value) == PASTE_LIMIT + 1


async def test_a_megabyte_line_pasted_into_the_command_palette_is_cut_with_a_notice(
    tmp_path: Path,
) -> None:
    """The command palette's field (Textual's, not the reader's own) took a 1 MB paste whole:
    6.7 s before it showed, then 2.4–2.9 s for each key typed after it. It takes the first
    PASTE_LIMIT characters and says so, as the reader's fields do."""
    from textual.command import CommandInput, CommandPalette

    line = "".join(f"starcraft {n} {HOSTILE} " for n in range(20_000))
    assert len(line) > 1_000_000
    app = make_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        field = app.screen.query_one(CommandInput)
        await until(pilot, lambda: field.has_focus)
        await _pasted_line_is_cut(app, pilot, field, line)


async def test_a_paste_into_the_note_keeps_its_lines_and_shows_its_controls(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, NoteEditor))
        area = app.screen.query_one("#note-text", TextArea)
        app.post_message(events.Paste("one\x1b[2J\r\ntwo\rthree\x07"))
        await until(pilot, lambda: area.text != "")
        assert area.text == "one␛[2J\ntwo\nthree␇"


# -- the real reader in a real terminal --------------------------------------------------------


@contextlib.contextmanager
def _reader(tmp_path: Path) -> Iterator[Terminal]:
    """The installed reader in a pty (140×40) showing the 55 bundled papers; killed if a
    test fails before it exits."""
    env = reader_env(tmp_path)
    term = Terminal(installed_script(), env)
    try:
        term.read_until(b"55 papers")
        yield term
    finally:
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(term.pid, os.WNOHANG) == (0, 0):
                os.kill(term.pid, 9)
                os.waitpid(term.pid, 0)
        os.close(term.fd)


def _paste(term: Terminal, text: bytes) -> None:
    """Write ``text`` as a terminal writes a bracketed paste, reading what the reader draws
    meanwhile (a pty's buffers are small: a large paste needs both sides to keep reading)."""
    left = memoryview(START.encode() + text + END.encode())
    flags = fcntl.fcntl(term.fd, fcntl.F_GETFL)
    fcntl.fcntl(term.fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    try:
        deadline = time.monotonic() + 60
        while left:
            assert time.monotonic() < deadline, "the reader stopped reading the paste"
            readable, writable, _ = select.select([term.fd], [term.fd], [], 0.5)
            try:
                if readable:
                    data = os.read(term.fd, 1 << 16)
                    term.output += data
                    term.stream.feed(data)
                if writable:
                    left = left[os.write(term.fd, left[:4096]) :]
            except BlockingIOError:
                continue
            except OSError as exc:  # EIO: the reader has exited
                raise AssertionError(
                    f"the reader exited during the paste; screen:\n{term.text()}"
                ) from exc
    finally:
        fcntl.fcntl(term.fd, fcntl.F_SETFL, flags)


def _quits(term: Terminal) -> None:
    """Enter takes the filter's query and the focus to the list; q quits: the reader still
    takes keys."""
    term.send("\r")
    term.until(lambda: "Apply" not in term.text(), "Enter did not leave the filter")
    term.send("q")
    assert term.wait() == 0


@pytest.mark.slow
def test_escape_sequences_pasted_into_the_filter_in_a_terminal(
    tmp_path: Path, seeds: Corpus
) -> None:
    shown = sanitise_paste(QUERY)
    assert shown == "␛]0;pwned␇␛[2J␛[31m | starcraft"
    expected = len(SearchIndex(seeds).search(shown))  # (the filter searches what it shows)
    assert 0 < expected < 55
    with _reader(tmp_path) as term:
        term.send("/")
        term.read_until(b"Apply")
        _paste(term, QUERY.encode())
        term.read_until(f"{expected} of 55".encode())
        term.until(lambda: shown in term.text(), f"the filter does not show {shown!r}")
        assert "pwned" not in term.screen.title  # no sequence of the paste reached the terminal
        _quits(term)


@pytest.mark.slow
def test_a_byte_that_is_not_utf8_pasted_or_typed_leaves_the_reader_taking_keys(
    tmp_path: Path,
) -> None:
    """0x9b (C1 CSI, not UTF-8 on its own) ended Textual's input thread: no key reached the
    reader again, q did not quit. It is U+FFFD now, in a paste and typed."""
    with _reader(tmp_path) as term:
        term.send("/")
        term.read_until(b"Apply")
        _paste(term, b"star\x9bcraft")
        term.read_until("star\ufffdcraft".encode())
        os.write(term.fd, b"\x9b")
        term.read_until("star\ufffdcraft\ufffd".encode())
        term.send("\x15starcraft")  # ctrl+u clears the filter; then a query typed
        term.until(
            lambda: "\ufffd" not in term.text() and "1 of 55" in term.text(),
            "ctrl+u and the query typed after the 0x9b bytes did not filter",
        )
        _quits(term)


@pytest.mark.slow
def test_a_megabyte_paste_with_escapes_lands_whole_in_the_filter(
    tmp_path: Path, seeds: Corpus
) -> None:
    """1 MB with ESCs on every line (Textual made a key of nearly every character, each a
    filter run). The filter takes its first line; the reader goes on."""
    rest = "".join(f"\r{n} {HOSTILE} \x9b more text" for n in range(16_000))
    pasted = QUERY.encode() + rest.encode().replace("\u009b".encode(), b"\x9b")
    assert len(pasted) > 1_000_000 and pasted.count(b"\x1b") > 100_000
    shown = sanitise_paste(QUERY)
    expected = len(SearchIndex(seeds).search(shown))
    assert 0 < expected < 55
    with _reader(tmp_path) as term:
        term.send("/")
        term.read_until(b"Apply")
        _paste(term, pasted)
        term.read_until(f"{expected} of 55".encode())
        term.until(lambda: shown in term.text(), f"the filter does not show {shown!r}")
        _quits(term)
