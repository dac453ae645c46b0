"""The paper view draws its own lines (`PaperView`, a ``ScrollView``): a new paper is no
layout of the screen, and the text stays the user's to select with the mouse and to scroll,
whatever the scroll position."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.widgets.paper_view import PaperView

from ..conftest import write_dump
from .conftest import make_app, settle, until

WIDE = (120, 30)


def _sentences(tag: str, count: int) -> str:
    return " ".join(f"{tag} sentence {i:03d} ends here." for i in range(count))


def _dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "long.txt", _sentences("Alpha", 120), _sentences("Beta", 3))


def _line_of(view: PaperView, text: str) -> int:
    """The line of the pane (0 = its top) that shows ``text``."""
    height = view.scrollable_content_region.height
    for y in range(height):
        if text in view.render_line(y).text:
            return y
    raise AssertionError(f"{text!r} is not on screen")


async def _drag(pilot: Pilot[Any], view: PaperView, y: int, x0: int, x1: int) -> None:
    """Press the mouse at column ``x0`` of the pane's line ``y``, move to ``x1``, release."""
    top, left = view.styles.padding.top, view.styles.padding.left
    await pilot.mouse_down(view, offset=(left + x0, top + y))
    await pilot.hover(view, offset=(left + x1, top + y))
    await pilot.mouse_up(view, offset=(left + x1, top + y))


async def test_the_mouse_selects_the_words_under_it_scrolled_or_not(tmp_path: Path) -> None:
    app = make_app(tmp_path, [_dump(tmp_path)])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        view = app.query_one(PaperView)
        assert view.details is not None and "Alpha" in view.body.plain
        assert view.max_scroll_y > 20  # a long abstract: it scrolls
        y = _line_of(view, "Alpha sentence 000")
        line = view.render_line(y).text
        start = line.index("Alpha sentence 000")
        await _drag(pilot, view, y, start, start + len("Alpha sentence 000") - 1)
        await until(pilot, lambda: app.screen.get_selected_text() is not None)
        assert app.screen.get_selected_text() == "Alpha sentence 000"

        # scrolled down: the words under the mouse, not those the top of the text had
        view.focus()
        for _ in range(3):
            await pilot.press("space")
        await until(pilot, lambda: view.scroll_offset.y > 0)
        await pilot.pause()
        target = next(
            text
            for text in (f"Alpha sentence {i:03d}" for i in range(120))
            if any(text in view.render_line(y).text for y in range(5, 15))
        )
        y = _line_of(view, target)
        start = view.render_line(y).text.index(target)
        await _drag(pilot, view, y, start, start + len(target) - 1)
        await until(pilot, lambda: app.screen.get_selected_text() == target)


async def test_a_new_paper_is_drawn_without_laying_the_screen_out(tmp_path: Path) -> None:
    """j from a long paper to a short one: the pane shows the new paper, from its top, and its
    scrolling fits it; the screen was not laid out for it."""
    app: ReaderApp = make_app(tmp_path, [_dump(tmp_path)])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        view = app.query_one(PaperView)
        view.focus()
        await pilot.press("space", "space")
        await until(pilot, lambda: view.scroll_offset.y > 0)
        await pilot.press("escape")
        layouts = 0
        refresh_layout = app.screen._refresh_layout

        def counted(*args: Any, **kwargs: Any) -> None:
            nonlocal layouts
            layouts += 1
            refresh_layout(*args, **kwargs)

        app.screen._refresh_layout = counted  # type: ignore[method-assign]
        await pilot.press("j")
        await until(pilot, lambda: "Beta sentence 000" in view.body.plain)
        await pilot.pause()
        assert view.scroll_offset.y == 0
        assert _line_of(view, "Beta sentence 000") > 0
        assert view.max_scroll_y == 0  # the short paper fits the pane
        await pilot.press("k")  # and back: long again, scrolls again, from its top
        await until(pilot, lambda: "Alpha" in view.body.plain)
        await pilot.pause()
        assert view.max_scroll_y > 20 and view.scroll_offset.y == 0
        assert _line_of(view, "Alpha sentence 000") > 0
        # the scrollbar came and went (a layout each); no other layout for a new paper
        assert layouts <= 2, layouts
