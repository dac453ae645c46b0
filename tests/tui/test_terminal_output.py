"""What the terminal gets: each frame writes only the cells that changed (``tui/output.py``),
and after any keys the terminal shows exactly what a full repaint of the screen shows.

The reader runs with Pilot, but its frames are written as to a real terminal (the headless
driver made to take output), and a terminal emulator (pyte) reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual._compositor import LayoutUpdate
from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot

from abstract_reader.tui.app import ReaderApp

from .conftest import make_app, settle

pyte = pytest.importorskip("pyte")

WIDE = (140, 40)


class Terminal:
    """What the app wrote, fed to an emulated terminal of the app's size."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, width: int, height: int) -> None:
        self.screen = pyte.Screen(width, height)
        self.stream = pyte.Stream(self.screen)
        self.written: list[str] = []
        monkeypatch.setattr(HeadlessDriver, "is_headless", property(lambda _self: False))
        monkeypatch.setattr(HeadlessDriver, "write", lambda _self, data: self.written.append(data))

    def take(self) -> int:
        """Feed what was written since the last call; how many characters it was."""
        data = "".join(self.written)
        self.written.clear()
        self.stream.feed(data)
        return len(data)


def look(cell: Any) -> tuple[object, ...]:
    """What a cell looks like: a space shows its background only, unless a line is drawn
    across it or it is in reverse video."""
    if cell.data == " " and not (cell.underscore or cell.strikethrough or cell.reverse):
        return (" ", cell.bg)
    return (
        cell.data,
        cell.fg,
        cell.bg,
        cell.bold,
        cell.italics,
        cell.underscore,
        cell.reverse,
        cell.strikethrough,
    )


def cells(screen: Any) -> list[list[tuple[object, ...]]]:
    return [[look(screen.buffer[y][x]) for x in range(screen.columns)] for y in range(screen.lines)]


def repainted(app: ReaderApp) -> Any:
    """The screen as a full repaint draws it now, in a terminal of its own."""
    width, height = app.size
    screen = pyte.Screen(width, height)
    strips = app.screen._compositor.render_strips()
    update = LayoutUpdate([[strip] for strip in strips], app.size.region)
    pyte.Stream(screen).feed(update.render_segments(app.console))
    return screen


async def same_as_repainted(app: ReaderApp, pilot: Pilot[Any], term: Terminal) -> int:
    """Once the screen is idle: the terminal shows what a full repaint would. Returns how
    many characters were written since the last check."""
    await settle(app, pilot)
    written = term.take()
    want = cells(repainted(app))
    got = cells(term.screen)
    wrong = [
        (y, x) for y in range(len(want)) for x in range(len(want[y])) if want[y][x] != got[y][x]
    ]
    assert not wrong, f"{len(wrong)} cells differ, first {wrong[:5]}: {term.screen.display}"
    return written


async def test_the_terminal_shows_the_screen_after_any_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    term = Terminal(monkeypatch, *WIDE)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        app.query_one("#filter").cursor_blink = False  # the same screen whenever it is read
        await same_as_repainted(app, pilot, term)
        steps: list[tuple[str, ...]] = [
            ("slash", *"robust"),
            ("space", "e", "s", "t"),
            ("backspace", "backspace"),
            tuple("imation"),
            ("enter", "j", "j", "j"),
            ("G",),
            ("g",),
            ("b",),  # a bookmark: the row's flag and the view change
            ("slash", "ctrl+u"),  # every paper again
            ("enter", "j"),
            ("question_mark",),  # help over the list, then back
            ("escape",),
            ("slash", *"zzzzqq"),  # nothing matches
            ("ctrl+u",),
        ]
        for keys in steps:
            await pilot.press(*keys)
            await same_as_repainted(app, pilot, term)
        await pilot.press("slash", *"robust estimatio")
        full = await same_as_repainted(app, pilot, term)
        await pilot.press("n")
        key = await same_as_repainted(app, pilot, term)
        # the last key rewrote the filter's line, the rows that changed and the status line:
        # not the borders, the blank rows, the paper pane (the whole screen is ~20 KB)
        assert 0 < key < 2000, (key, full)


async def test_a_full_repaint_after_a_resize_is_written_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a resize nothing on the terminal is taken as known: every cell is written."""
    term = Terminal(monkeypatch, 100, 30)
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.query_one("#filter").cursor_blink = False
        await pilot.press("slash", *"robust")
        await same_as_repainted(app, pilot, term)
        await pilot.resize_terminal(90, 30)
        await settle(app, pilot)
        term.take()
        term.screen = pyte.Screen(100, 30)  # a terminal that kept nothing of what it showed
        term.stream = pyte.Stream(term.screen)
        await pilot.resize_terminal(100, 30)
        await same_as_repainted(app, pilot, term)
