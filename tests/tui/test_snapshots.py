"""Snapshots of what a person sees (pytest-textual-snapshot). Update with --snapshot-update."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle

WIDE = (120, 40)
SMALL = (70, 24)


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


def _conflict(size: tuple[int, int]) -> Any:
    async def run_before(pilot: Pilot[Any]) -> None:
        from abstract_reader.library import Library

        await _ready(pilot)
        app = pilot.app
        paper_id = app.query_one(PaperList).current_id
        await pilot.press("o", *"my version of the note")
        with Library(app.library.path) as other:  # type: ignore[attr-defined]
            other.set_note(paper_id, "the note another program saved meanwhile")
        # what the once-a-second poll would do, now: the view behind the dialog shows the
        # other program's note in every run (else the picture depends on the poll's timing)
        app.main.refresh_library()  # type: ignore[attr-defined]
        await pilot.pause()
        await pilot.press("ctrl+s")
        await settle(app, pilot)  # type: ignore[arg-type]

    return run_before


def test_note_conflict_dialog(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=(120, 40), run_before=_conflict(WIDE))


def test_note_conflict_dialog_small(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=(70, 24), run_before=_conflict(SMALL))


def test_main_screen_120x40(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=WIDE, run_before=_ready)


def test_main_screen_70x24(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=SMALL, run_before=_ready)


def test_help_screen_70x24(snap_compare: Any, tmp_path: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await pilot.press("question_mark")

    assert snap_compare(make_app(tmp_path), terminal_size=SMALL, run_before=run_before)


def _dialog(*keys: str, tags: bool = False) -> Any:
    """Open a dialog at 70×24 with ``keys`` (after tagging a few papers when ``tags``)."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        app = pilot.app
        if tags:
            paper_list = app.query_one(PaperList)
            for i in range(3):
                paper_id = paper_list.source.paper(i).id
                app.library.add_tags([paper_id], ["robust", f"topic {i}"])  # type: ignore[attr-defined]
            app.main.refresh_library()  # type: ignore[attr-defined]
        await pilot.press(*keys)
        await settle(app, pilot)  # type: ignore[arg-type]
        for field in app.screen.query(Input):
            field.cursor_blink = False

    return run_before


def _saved_searches_open() -> Any:
    """Three saved searches (one with a long query), the list open with a letter typed."""

    async def run_before(pilot: Pilot[Any]) -> None:
        from abstract_reader.saved import save

        await _ready(pilot)
        app = pilot.app
        library = app.library  # type: ignore[attr-defined]
        save(library, "reading", "like:#reading-list is:unread")
        save(library, "graphs", "graph | gnn | 'message passing' !survey")
        save(library, "robust-new", "robust is:new " + "adversarial " * 8)
        await pilot.press("at")
        await pilot.pause()
        pilot.app.screen.query_one("#saved-filter", Input).cursor_blink = False
        await pilot.press("r")
        await pilot.pause()

    return run_before


def test_tag_editor_70x24(snap_compare: Any, tmp_path: Path) -> None:
    run_before = _dialog("t", tags=True)
    assert snap_compare(make_app(tmp_path), terminal_size=SMALL, run_before=run_before)


def test_bulk_tag_editor_70x24(snap_compare: Any, tmp_path: Path) -> None:
    run_before = _dialog("space", "space", "space", "t", tags=True)
    assert snap_compare(make_app(tmp_path), terminal_size=SMALL, run_before=run_before)


def test_note_editor_70x24(snap_compare: Any, tmp_path: Path) -> None:
    run_before = _dialog("o", *"a note", "escape")  # the unsaved-changes warning shows
    assert snap_compare(make_app(tmp_path), terminal_size=SMALL, run_before=run_before)


def test_metadata_editor_70x24(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=SMALL, run_before=_dialog("e"))


def test_citation_formats_70x24(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=SMALL, run_before=_dialog("C"))


def test_tag_list_70x24(snap_compare: Any, tmp_path: Path) -> None:
    run_before = _dialog("T", tags=True)
    assert snap_compare(make_app(tmp_path), terminal_size=SMALL, run_before=run_before)


def test_export_dialog_70x24(snap_compare: Any, tmp_path: Path) -> None:
    run_before = _dialog("space", "space", "E", "ctrl+u", *"/nonexistent/x.bib", "enter")
    assert snap_compare(make_app(tmp_path), terminal_size=SMALL, run_before=run_before)


def test_export_dialog_120x40(snap_compare: Any, tmp_path: Path) -> None:
    run_before = _dialog("E")
    assert snap_compare(make_app(tmp_path), terminal_size=WIDE, run_before=run_before)


def test_saved_searches_120x40(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=WIDE, run_before=_saved_searches_open())


def test_saved_searches_70x24(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=SMALL, run_before=_saved_searches_open())


def _save_dialog_asking() -> Any:
    async def run_before(pilot: Pilot[Any]) -> None:
        from abstract_reader.saved import save

        await _ready(pilot)
        save(pilot.app.library, "rob", "graph")  # type: ignore[attr-defined]
        await pilot.press("slash", *"robust", "enter")
        await settle(pilot.app, pilot)  # type: ignore[arg-type]
        await pilot.press("S")
        await pilot.pause()
        pilot.app.screen.query_one("#save-search-name", Input).cursor_blink = False
        await pilot.press(*"rob", "enter")  # a name already saved: it asks first
        await pilot.pause()

    return run_before


def test_save_search_dialog_120x40(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=WIDE, run_before=_save_dialog_asking())


def test_save_search_dialog_70x24(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(make_app(tmp_path), terminal_size=SMALL, run_before=_save_dialog_asking())
