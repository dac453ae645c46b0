"""Snapshots of what a person sees (pytest-textual-snapshot). Update with --snapshot-update."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle


async def _ready(pilot: Pilot[Any]) -> None:
    app = pilot.app
    await settle(app, pilot)  # type: ignore[arg-type]
    app.query_one("#filter", Input).cursor_blink = False


def test_main_screen_on_the_seeds(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=(140, 40), run_before=_ready)


def test_narrow_layout(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=(80, 30), run_before=_ready)


def test_help_screen(snap_compare: Any, tmp_path: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await pilot.press("question_mark")

    assert snap_compare(make_app(tmp_path), terminal_size=(120, 50), run_before=run_before)


def test_math_heavy_paper_with_a_filter(snap_compare: Any, tmp_path: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await pilot.press("slash", *"regret", "enter")
        await settle(pilot.app, pilot)  # type: ignore[arg-type]
        pilot.app.query_one(PaperList).cursor = 0

    assert snap_compare(make_app(tmp_path), terminal_size=(140, 40), run_before=run_before)


def test_narrow_paper_screen(snap_compare: Any, tmp_path: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await pilot.press("j", "enter")
        await pilot.pause()

    assert snap_compare(make_app(tmp_path), terminal_size=(80, 30), run_before=run_before)
