"""Esc on an empty filter brings back the query cleared most recently — by Esc, or by
editing the filter empty (``ctrl+u``, backspacing) — never an older one (QA: ``/robust⏎``,
Esc, ``/gauss⏎``, ``/`` ctrl+u ⏎, Esc gave ``robust``)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from .conftest import listed, make_app, settle, until

WIDE = (140, 40)


def _filter(app: object) -> str:
    return str(app.query_one("#filter", Input).value)  # type: ignore[attr-defined]


async def test_esc_brings_back_the_query_cleared_by_editing_not_an_older_one(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"robust", "enter")
        await until(pilot, lambda: len(listed(app)) < 55)
        await pilot.press("escape")  # clears it ("Esc again brings it back")
        await until(pilot, lambda: _filter(app) == "" and len(listed(app)) == 55)
        await pilot.press("slash", *"gauss", "enter")
        await until(pilot, lambda: len(listed(app)) < 55)
        gauss = listed(app)
        await pilot.press("slash", "ctrl+u", "enter")  # cleared by editing
        await until(pilot, lambda: _filter(app) == "" and len(listed(app)) == 55)
        await pilot.press("escape")
        await until(pilot, lambda: _filter(app) != "")
        assert _filter(app) == "gauss"
        await until(pilot, lambda: listed(app) == gauss)


async def test_esc_brings_back_a_query_backspaced_away_whole(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"robust", "enter")
        await pilot.press("escape", "slash", *"gauss", "enter")
        await until(pilot, lambda: _filter(app) == "gauss")
        await pilot.press("slash", *["backspace"] * 5, "enter")
        await until(pilot, lambda: _filter(app) == "" and len(listed(app)) == 55)
        await pilot.press("escape")
        await until(pilot, lambda: _filter(app) != "")
        assert _filter(app) == "gauss"  # the whole query, not its last letter
        # another query typed and cleared: that one is the query cleared most recently
        await pilot.press("slash", "ctrl+u", *"graph", "ctrl+u", "escape")
        await until(pilot, lambda: _filter(app) == "" and len(listed(app)) == 55)
        await pilot.press("escape")
        await until(pilot, lambda: _filter(app) != "")
        assert _filter(app) == "graph"
