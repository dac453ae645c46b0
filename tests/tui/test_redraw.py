"""What is drawn again after a key is only what changed: the list's lines that look
different after a new result or a cursor move (``PaperList.set_source``), the paper's text
restyled without laying the screen out when only the marked words changed
(``PaperView._update``). Whatever keys were pressed, the screen shows what a screen laid out
and drawn from scratch shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget

from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.widgets.paper_list import PaperList
from abstract_reader.tui.widgets.paper_view import PaperView

from .conftest import make_app, settle

WIDE = (140, 40)


def shown(app: ReaderApp) -> list[list[tuple[str, object]]]:
    """Every cell of the screen as the compositor holds it (text, style)."""
    return [
        [(char, segment.style) for segment in strip for char in segment.text]
        for strip in app.screen._compositor.render_strips()
    ]


async def same_as_drawn_afresh(app: ReaderApp, pilot: Pilot[Any]) -> None:
    """The screen now equals the screen after every widget forgets all it drew (the list its
    rows too) and the screen is laid out and drawn again."""
    await settle(app, pilot)
    before = shown(app)
    paper_list = app.query_one(PaperList)
    paper_list._strips.clear()
    paper_list._drawn.clear()
    app.query_one(PaperView)._lines = None
    for widget in app.screen.walk_children(with_self=True):
        widget._styles_cache.clear()
        widget.refresh(layout=True)
    await settle(app, pilot)
    after = shown(app)
    wrong = [y for y, (b, a) in enumerate(zip(before, after, strict=True)) if b != a]
    assert not wrong, (
        f"lines {wrong} were not drawn again: {[''.join(c for c, _ in before[y]) for y in wrong[:3]]}"
    )


async def test_the_screen_after_any_keys_is_as_drawn_afresh(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        app.query_one("#filter").cursor_blink = False
        await same_as_drawn_afresh(app, pilot)
        await pilot.press("slash")
        for key in ["r", "o", "b", "u", "s", "t", "space", "e", "s", "t", "i", "m", "a"]:
            await pilot.press(key)  # each key a new result: rows move, come and go
            await same_as_drawn_afresh(app, pilot)
        steps: list[tuple[str, ...]] = [
            ("backspace", "backspace", "backspace"),
            ("enter", "j", "j"),  # the cursor moves: two lines
            ("k",),
            ("b",),  # a flag changes on the row, and the paper's header
            ("enter", "space", "space"),  # the paper pane has focus: paged down
            ("escape", "j"),  # back to the list: the next paper, from its top
            ("G",),  # the last row: scrolled
            ("slash", "ctrl+u"),  # every paper again, from the top
            ("enter", "j", "r"),  # read: the row's look changes
            ("space",),  # marked, and the cursor moves down
            ("slash", *"zzzzqq"),  # nothing matches: the message
            ("ctrl+u",),  # rows again
            ("g",),
        ]
        for keys in steps:
            await pilot.press(*keys)
            await same_as_drawn_afresh(app, pilot)


def _list_lines_both_ways(paper_list: PaperList, crop: Region) -> tuple[list[Any], list[Any]]:
    """The list's lines ``crop`` as it draws them, and as Textual's styling pass draws them
    (its cache of lines emptied first)."""
    ours = [list(strip) for strip in paper_list.render_lines(crop)]
    paper_list._styles_cache.clear()
    theirs = [list(strip) for strip in Widget.render_lines(paper_list, crop)]
    return ours, theirs


async def test_the_list_draws_its_lines_as_textuals_styling_does(tmp_path: Path) -> None:
    """The list adds its background and right border to its rows itself (Textual's pass
    costs ~130 µs a line, ~5 ms of a key's frame when every row is new). Whatever the
    state — focused or not, the cursor, read, marked and bookmarked rows, matched words,
    scrolled, the no-match message, a narrow screen where the list has no border — its
    lines are the very segments Textual's pass makes, whole or cropped."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        app.query_one("#filter").cursor_blink = False
        steps: list[tuple[str, ...]] = [
            (),  # the list focused, at start
            ("slash", *"robust"),  # the filter focused: the list's border blurred; matches
            ("enter", "j", "j"),  # the cursor moved down
            ("r", "space", "b"),  # read, marked, bookmarked
            ("G",),  # scrolled to the last row
            ("slash", *"zzzzqq"),  # no paper matches: the message
            ("ctrl+u", "enter"),  # every paper again
        ]
        for size in (WIDE, (70, 24)):
            await pilot.resize_terminal(*size)
            for keys in steps:
                await pilot.press(*keys)
                await settle(app, pilot)
                paper_list = app.query_one(PaperList)
                edges = paper_list._plain_edges()
                assert edges is not None, "Textual's own pass drew the list"
                assert (edges.right is None) == (size != WIDE)  # narrow: no border
                width, height = paper_list.region.size
                for crop in (Region(0, 0, width, height), Region(3, 2, width // 2, 5)):
                    ours, theirs = _list_lines_both_ways(paper_list, crop)
                    assert ours == theirs, (size, keys, crop)
                    assert len(ours) == crop.height


async def test_the_abstract_wraps_at_one_width_whether_or_not_the_paper_scrolls(
    tmp_path: Path,
) -> None:
    """The paper pane keeps its scrollbar's column when the paper fits: moving from a paper
    that fits to one longer than the pane, the abstract is not wrapped again a frame later
    one column narrower when the scrollbar comes (its lines jumped, ~50 ms after the
    first draw), nor wider when it goes."""
    dump = tmp_path / "two.txt"
    short = "A short abstract on robust mean estimation."
    long = " ".join(
        f"Sentence {i} of a long abstract on robust mean estimation." for i in range(90)
    )
    dump.write_text(f"Test 2026 Papers\n\n{short}\n\n{long}\n\n{short} Again.\n", "utf-8")
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        view = app.query_one(PaperView)
        seen: dict[bool, set[int]] = {True: set(), False: set()}
        for key in ("j", "j", "k", "k"):
            assert view.details is not None
            scrolls = view.max_scroll_y > 0
            assert scrolls == view.details.body.text.startswith("Sentence 0")
            seen[scrolls].add(view.scrollable_content_region.width)
            await pilot.press(key)
            await settle(app, pilot)
        assert seen[True] and seen[False]  # both kinds of paper were shown
        assert seen[True] == seen[False], seen  # at one width
