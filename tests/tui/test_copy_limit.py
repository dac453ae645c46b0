"""Every copy in the reader follows the CLI's OSC 52 rule (``clipboard.send_osc52``): a text
over ~100 KB of OSC 52 is not sent, the reader says so in one line with the size, and shows
the text to select (cut at `SHOWN_MAX` characters, sanitised). Before, the reader sent any
size through OSC 52 and said "Copied", though terminals drop such a sequence silently.

The reader runs with Pilot; what it writes to the terminal is captured from the driver (made
to take output, as in ``test_terminal_output.py``), with no system clipboard and no tmux."""

from __future__ import annotations

import base64
import math
from pathlib import Path

import pytest
from textual.drivers.headless_driver import HeadlessDriver
from textual.notifications import Notification
from textual.pilot import Pilot
from textual.widgets import Static, TextArea

from abstract_reader.cite import format_records
from abstract_reader.clipboard import OSC52_MAX, OSC52_NOTE
from abstract_reader.formats import FORMAT_NAMES, FORMATS
from abstract_reader.library import Metadata
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.pickers import CitePicker, CopyFallback

from ..conftest import write_dump
from .conftest import make_app, run_palette_command, settle, until

WIDE = (120, 40)
OSC52 = "\x1b]52;c;"
SHOWN_MAX = 100_000  #: characters the fallback dialog shows (pickers.SHOWN_MAX)


def osc52_size(text: str) -> int:
    """Bytes of the text's base64 payload in OSC 52 (what the limit is on)."""
    return len(base64.b64encode(text.encode("utf-8")))


def text_kb(text: str) -> int:
    """The text's size as said to the user: its UTF-8 bytes in KB, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / 1000)


REFUSED = "KB is too long for OSC 52 (terminals drop over ~75 KB of text, 100 KB once encoded)"


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the reader writes to its terminal; no system clipboard tool, not inside tmux."""
    written: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "is_headless", property(lambda _self: False))
    monkeypatch.setattr(HeadlessDriver, "write", lambda _self, data: written.append(data))
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "TMUX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    return written


def _messages(app: ReaderApp) -> list[str]:
    return [n.message for n in app._notifications if isinstance(n, Notification)]


def _shown(app: ReaderApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def _copied_or_shown(app: ReaderApp, pilot: Pilot[object], before: int) -> None:
    """Until the copy is done: the fallback dialog, or a notification after ``before``."""
    await until(pilot, lambda: isinstance(app.screen, CopyFallback) or len(_messages(app)) > before)
    await settle(app, pilot)


def _long_abstract(chars: int) -> str:
    words = "We measure robust estimators of the Gaussian mean under heavy contamination "
    return ("We propose Longform, " + words * (chars // len(words) + 1))[:chars] + "."


async def test_an_abstract_over_the_osc52_limit_is_not_sent_and_is_shown(
    tmp_path: Path, terminal: list[str]
) -> None:
    big = _long_abstract(80_000)  # ~107 KB of OSC 52: over the limit, under SHOWN_MAX
    assert osc52_size(big) > OSC52_MAX
    dump = write_dump(tmp_path / "d.txt", "We propose Shortform, a small abstract.", big)
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        # under the limit: sent, and said so
        small = app.main.current_paper()
        assert small is not None and "Shortform" in small.abstract
        await run_palette_command(app, pilot, "copy abstract")
        await settle(app, pilot)
        assert f"Copied the abstract ({OSC52_NOTE})" in _messages(app)
        sent = base64.b64encode(small.abstract.encode()).decode()
        assert f"{OSC52}{sent}\x07" in "".join(terminal)
        # over the limit: nothing sent, one line with the size, the text to select
        await pilot.press("j")
        paper = app.main.current_paper()
        assert paper is not None and "Longform" in paper.abstract
        terminal.clear()
        before = len(_messages(app))
        await run_palette_command(app, pilot, "copy abstract")
        await _copied_or_shown(app, pilot, before)
        assert _messages(app)[before:] == []  # no "Copied the abstract (terminal, OSC 52 …)"
        assert OSC52 not in "".join(terminal)
        assert _shown(app, "#copy-title") == "Not copied: the abstract"
        reason = _shown(app, "#copy-reason")
        assert f"{text_kb(paper.abstract)} {REFUSED}; not copied" in reason
        assert "\n" not in reason and reason.startswith("no clipboard tool")
        assert app.screen.query_one("#copy-text", TextArea).text == paper.abstract
        assert not app.screen.query("#copy-cut")  # all of it is shown


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_citation_over_the_osc52_limit_is_not_sent_in_any_format(
    tmp_path: Path, terminal: list[str], fmt: str
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.main.current_paper()
        assert paper is not None
        authors = tuple(f"Ada{n} " + "Lovelace" * 250 for n in range(45))  # 45 × 2,000
        app.library.set_metadata(paper.id, Metadata(title="Long Names", authors=authors))
        await settle(app, pilot)
        text = format_records([app.session.record(paper)], fmt)
        assert osc52_size(text) > OSC52_MAX
        terminal.clear()
        await pilot.press("C")
        assert isinstance(app.screen, CitePicker)
        before = len(_messages(app))
        await pilot.press(*["down"] * FORMATS.index(fmt), "enter")
        await _copied_or_shown(app, pilot, before)
        assert _messages(app)[before:] == []  # no "Copied … (terminal, OSC 52 …)"
        assert OSC52 not in "".join(terminal)
        assert _shown(app, "#copy-title") == f"Not copied: {FORMAT_NAMES[fmt]} for 1 paper"
        assert f"{text_kb(text)} {REFUSED}" in _shown(app, "#copy-reason")
        assert app.screen.query_one("#copy-text", TextArea).text == text


async def test_ctrl_c_on_a_selection_over_the_limit_is_refused_with_the_size(
    tmp_path: Path, terminal: list[str]
) -> None:
    """Textual's own copy (ctrl+c in a text area, a field, a screen selection) goes through
    the same rule: it used to send any size, silently."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        big = _long_abstract(90_000)
        app.push_screen(CopyFallback(big, "reason"))
        await until(pilot, lambda: isinstance(app.screen, CopyFallback))
        await pilot.pause()
        terminal.clear()
        await pilot.press("ctrl+c")  # the whole text is selected
        await pilot.pause()
        assert OSC52 not in "".join(terminal)
        assert f"The selection: {text_kb(big)} {REFUSED}; not copied" in _messages(app)
        # a selection under the limit is copied as before
        await pilot.press("home", "shift+end", "ctrl+c")
        await pilot.pause()
        assert OSC52 in "".join(terminal)


async def test_the_fallback_shows_a_huge_text_cut_and_sanitised(tmp_path: Path) -> None:
    """A 3 MB text in the dialog's TextArea took ~30 s to open and as long for each key
    that moved far: it shows the first SHOWN_MAX characters and says so. The text is
    untrusted: no escape sequence of it reaches the terminal, no markup of it is read."""
    evil = "\x1b]52;c;ZXZpbA==\x07 [@click=app.quit]x[/] "
    huge = evil + _long_abstract(300_000)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        app.push_screen(CopyFallback(huge, "[/] no clipboard [b]here[/b]"))
        await until(pilot, lambda: isinstance(app.screen, CopyFallback))
        await pilot.pause()
        shown = app.screen.query_one("#copy-text", TextArea).text
        assert len(shown) == SHOWN_MAX and "\x1b" not in shown and "\x07" not in shown
        assert shown.startswith("␛]52;c;ZXZpbA==␇ [@click=app.quit]x[/] ")
        assert _shown(app, "#copy-cut") == (
            f"Only the first {SHOWN_MAX:,} of its {len(huge):,} characters are shown."
        )
        assert _shown(app, "#copy-reason") == "[/] no clipboard [b]here[/b]"
        output = app.screen._compositor.render_full_update().render_segments(app.console)
        assert "\x1b]52" not in output and "\x07" not in output
        await pilot.press("escape")
        assert app.is_running and not isinstance(app.screen, CopyFallback)


@pytest.mark.parametrize("where", ["terminal", "tmux", "dumb terminal"])
async def test_the_readers_copies_and_textuals_write_osc52_by_one_rule(
    tmp_path: Path, terminal: list[str], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The palette's copies (c's chain, when no clipboard tool works) and Textual's (ctrl+c on
    a selection) wrote OSC 52 two ways: inside tmux the first wrapped it for tmux and the
    second did not; with TERM=dumb the first said "no terminal" and the second wrote the
    sequence anyway. One function writes both now: the same sequence, the same refusal."""
    from abstract_reader.clipboard import osc52_sequence

    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # no xclip, no tmux to ask
    if where == "tmux":
        monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    if where == "dumb terminal":
        monkeypatch.setenv("TERM", "dumb")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.main.current_paper()
        assert paper is not None
        before = len(_messages(app))
        await run_palette_command(app, pilot, "copy id")
        await _copied_or_shown(app, pilot, before)
        selection = "Selected text ✓"
        if where == "dumb terminal":
            assert "no terminal to send OSC 52 to" in _shown(app, "#copy-reason")
            await pilot.press("escape")
        else:
            assert f"Copied the id ({OSC52_NOTE})" in _messages(app)
        app.push_screen(CopyFallback(selection, "reason"))
        await until(pilot, lambda: isinstance(app.screen, CopyFallback))
        await pilot.pause()
        await pilot.press("ctrl+c")  # the whole text is selected
        await pilot.pause()
        written = "".join(terminal)
        if where == "dumb terminal":
            assert OSC52 not in written
            assert "The selection: no terminal to send OSC 52 to" in _messages(app)
            return
        inside = where == "tmux"
        sequences = [osc52_sequence(paper.id, tmux=inside), osc52_sequence(selection, tmux=inside)]
        assert [s for s in sequences if s in written] == sequences
        assert written.count(OSC52) == 2 and (written.count("\x1bPtmux;") == 2) == inside
        assert app.clipboard == selection  # (what ctrl+v pastes into the reader's fields)
