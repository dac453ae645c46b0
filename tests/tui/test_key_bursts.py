"""Keys typed faster than the reader handles them: each goes where the key before sent it.

A terminal delivers a quick burst ("⏎ j j") as keys queued at once; Pilot's `press` waits
for each key to be handled, so these tests post the burst the way the terminal driver does.
"""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.widgets import Input

from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import listed, make_app, settle

WIDE = (140, 40)


def burst(app: ReaderApp, *keys: str) -> None:
    """Queue keys as the terminal driver does: all at once, none handled yet."""
    for key in keys:
        app.post_message(events.Key(key, {"enter": "\r", "escape": "\x1b"}.get(key, key)))


async def test_enter_then_j_j_in_one_burst_moves_in_the_filtered_list(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", "r", "o", "b", "u", "s", "t")
        await settle(app, pilot)
        shown = listed(app)
        assert len(shown) > 3
        burst(app, "enter", "j", "j")
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == "robust"
        assert listed(app) == shown
        assert app.query_one(PaperList).has_focus
        assert app.query_one(PaperList).cursor == 2


async def test_escape_then_j_in_one_burst_moves_in_the_list(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", "n", "e", "t")
        await settle(app, pilot)
        burst(app, "escape", "j")
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == "net"
        assert app.query_one(PaperList).cursor == 1
