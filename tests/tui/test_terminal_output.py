"""What the terminal gets: each frame writes only the cells that changed (``tui/output.py``),
and after any keys the terminal shows exactly what a full repaint of the screen shows.

The reader runs with Pilot, but its frames are written as to a real terminal (the headless
driver made to take output), and a terminal emulator (pyte) reads them."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from rich.color import ColorSystem
from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot
from textual.strip import Strip

from abstract_reader.tui.app import ReaderApp

from .conftest import make_app, settle

pyte = pytest.importorskip("pyte")

#: Set in the process that runs a test here for real (see `in_own_process`).
_INNER = "ABSTRACT_READER_TERMINAL_TEST"


def in_own_process(request: pytest.FixtureRequest) -> bool:
    """Run this test again in a fresh Python process and say so (True: its outcome is in).
    Rich keeps a style's SGR codes on the style object, from the first console that drew
    it: apps of earlier tests in the same worker (other themes, other colour systems) would
    decide codes here, and a cell would differ for that reason alone."""
    if os.environ.get(_INNER):
        return False
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            f"{Path(__file__).relative_to(root)}::{request.node.name}",
        ],
        cwd=root,
        env={**os.environ, _INNER: "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return True


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
    """The screen as a full repaint draws it now, in a terminal of its own: every line of
    the compositor, each run of text set in its style and reset after it (as Textual writes
    them, the style's SGR worked out afresh for this console)."""
    width, height = app.size
    screen = pyte.Screen(width, height)
    color_system = app.console._color_system or ColorSystem.TRUECOLOR
    out: list[str] = []
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        out.append(f"\x1b[{y + 1};1H")
        for text, style, _control in strip:
            ansi = "" if style is None else Strip.render_ansi(style, color_system)
            run = f"\x1b[{ansi}m{text}\x1b[0m" if ansi else text
            if style is not None and style._link:
                run = f"\x1b]8;id={style._link_id};{style._link}\x1b\\{run}\x1b]8;;\x1b\\"
            out.append(run)
    pyte.Stream(screen).feed("".join(out))
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
    first = [(y, x, want[y][x], got[y][x]) for y, x in wrong[:3]]
    assert not wrong, f"{len(wrong)} cells differ, first (want, got) {first}: {term.screen.display}"
    return written


@contextlib.asynccontextmanager
async def on_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int] = WIDE
) -> AsyncIterator[tuple[ReaderApp, Pilot[Any], Terminal]]:
    """The reader on the bundled dumps, its frames written to a `Terminal` of ``size``
    (the filter's cursor not blinking: the same screen whenever it is read)."""
    term = Terminal(monkeypatch, *size)
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        app.query_one("#filter").cursor_blink = False
        yield app, pilot, term


async def test_the_terminal_shows_the_screen_after_any_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    if in_own_process(request):
        return
    async with on_terminal(tmp_path, monkeypatch) as (app, pilot, term):
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


def writes(data: str) -> list[tuple[int, int, str]]:
    """What ``data`` wrote where: (row, column, the text put there), both 1-based, the text
    without its escape sequences, one entry per cursor move."""
    out: list[tuple[int, int, str]] = []
    for match in re.finditer(r"\x1b\[(\d+);(\d+)H((?:(?!\x1b\[\d+;\d+H).)*)", data, re.S):
        text = re.sub(r"\x1b\[[0-9;]*m|\x1b\]8;[^\x1b]*\x1b\\\\", "", match.group(3))
        out.append((int(match.group(1)), int(match.group(2)), text))
    return out


async def test_a_row_that_changes_in_one_cell_rewrites_that_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """Bookmarking the paper under the cursor changes one cell of its row (the ★): the
    frame writes that cell, not the row's title, tags and venue again; the terminal then
    shows what a full repaint shows."""
    if in_own_process(request):
        return
    async with on_terminal(tmp_path, monkeypatch) as (app, pilot, term):
        # a row under the cursor that is not the first line's (the first key after start-up
        # repaints the whole screen: the resumed screen's repaint waits for Textual's frame timer)
        await pilot.press("j", "j", "k")
        await same_as_repainted(app, pilot, term)
        row = 4  # the second paper's row (the first is on line 3, under the filter)
        assert "★" not in term.screen.display[row].split("▕", 1)[0]
        await pilot.press("b")
        data = "".join(term.written)
        await same_as_repainted(app, pilot, term)
        assert "★" in term.screen.display[row].split("▕", 1)[0]
        in_list = [
            (column, text) for y, column, text in writes(data) if y == row + 1 and column < 60
        ]
        assert in_list == [(2, "★")], in_list


async def test_a_full_repaint_after_a_resize_is_written_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """After a resize nothing on the terminal is taken as known: every cell is written."""
    if in_own_process(request):
        return
    async with on_terminal(tmp_path, monkeypatch, (100, 30)) as (app, pilot, term):
        await pilot.press("slash", *"robust")
        await same_as_repainted(app, pilot, term)
        await pilot.resize_terminal(90, 30)
        await settle(app, pilot)
        term.take()
        term.screen = pyte.Screen(100, 30)  # a terminal that kept nothing of what it showed
        term.stream = pyte.Stream(term.screen)
        await pilot.resize_terminal(100, 30)
        await same_as_repainted(app, pilot, term)


async def test_a_new_result_shows_rows_count_and_its_paper_in_one_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """Typing a query whose best paper is another one: the frame that first shows the new
    count shows the new rows with it, and the paper pane the best paper, its matched word
    marked (the pane no longer waits a frame: drawing its own lines, a new paper costs it
    no layout), and the cursor is on it."""
    if in_own_process(request):
        return
    from abstract_reader.tui.widgets.paper_list import PaperList
    from abstract_reader.tui.widgets.paper_view import PaperView

    async with on_terminal(tmp_path, monkeypatch) as (app, pilot, term):
        await same_as_repainted(app, pilot, term)
        assert "StarCraft" not in term.screen.display[3]  # another paper is first
        await pilot.press("slash", *"starcraf")
        await settle(app, pilot)
        frames = list(term.written)
        for frame in frames:  # as the terminal got them
            term.stream.feed(frame)
            lines = term.screen.display
            if "1 of 55" in lines[-2]:
                assert "StarCraft Motion" in lines[3].split("▕", 1)[0]  # the first row
                pane = "\n".join(line.split("▕", 1)[1] for line in lines[3:-2])
                assert "StarCraft Motion" in pane  # its paper, in the same frame
                break
        else:
            raise AssertionError(f"no frame showed the count: {term.screen.display}")
        term.written[:] = frames[frames.index(frame) + 1 :]
        await same_as_repainted(app, pilot, term)  # the rest of the frames
        pane = "\n".join(line.split("▕", 1)[1] for line in term.screen.display[3:-2])
        assert "StarCraft Motion" in pane
        paper_list = app.query_one(PaperList)
        view = app.query_one(PaperView)
        assert paper_list.cursor == 0
        assert view.details is not None and view.details.paper_id == paper_list.current_id
        assert view.details.title_spans  # "starcraf" marked in the title


class _Rows:
    """``count`` plain rows for the list."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __len__(self) -> int:
        return self.count

    def row(self, index: int) -> Any:
        from abstract_reader.tui.widgets.paper_list import Row

        return Row(f"p{index}", f"paper {index}", "", (), False, True, False)

    def paper_id(self, index: int) -> str:
        return f"p{index}"


async def test_the_scrollbar_of_a_long_list_is_right_after_the_count_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """10,000 rows narrowed to 9,000 keep a one-cell thumb (not drawn again); scrolled to the
    end, the thumb is at the bottom: the terminal shows what a full repaint shows."""
    if in_own_process(request):
        return
    from textual.scrollbar import ScrollBar

    from abstract_reader.tui.widgets.paper_list import PaperList

    async with on_terminal(tmp_path, monkeypatch) as (app, pilot, term):
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        for count in (10_000, 9_000, 1_000, 40, 10_000):  # 1,000: a longer thumb
            paper_list.set_source(_Rows(count))
            await same_as_repainted(app, pilot, term)
            bar = paper_list.vertical_scrollbar
            assert isinstance(bar, ScrollBar) and bar.window_virtual_size == count
            before = cells(term.screen)
            bar.refresh()  # drawn again from what it holds now: no cell changes
            await same_as_repainted(app, pilot, term)
            assert cells(term.screen) == before
        await pilot.press("G")
        await same_as_repainted(app, pilot, term)
        assert "paper 9999" in term.screen.display[-3]


def test_the_cells_written_of_a_changed_chop_are_those_that_differ() -> None:
    """Whatever runs two lines are cut into, what is written of the new one starts at the
    first cell that looks different and ends after the last (none: nothing is written)."""
    import random

    from rich.style import Style

    from abstract_reader.tui.output import changed_span

    plain, marked = Style(color="color(253)"), Style(bold=True, underline=True)
    rng = random.Random(7)

    def runs(cells: list[tuple[str, Style]]) -> tuple[tuple[str, Style | None], ...]:
        out: list[tuple[str, Style | None]] = []
        for character, style in cells:
            if out and out[-1][1] is style and rng.random() < 0.6:
                out[-1] = (out[-1][0] + character, style)
            else:
                out.append((character, style))
        return tuple(out)

    for _ in range(5000):
        size = rng.randint(1, 12)
        old = [(rng.choice("ab"), rng.choice((plain, marked))) for _ in range(size)]
        new = list(old)
        for _ in range(rng.randint(0, 3)):
            new[rng.randrange(size)] = (rng.choice("ab"), rng.choice((plain, marked)))
        differ = [x for x in range(size) if old[x] != new[x]]
        want = (differ[0], differ[-1] + 1) if differ else None
        assert changed_span(runs(old), runs(new)) == want, (old, new)
