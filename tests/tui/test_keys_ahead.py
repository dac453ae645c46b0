"""Keys typed right after the key that opens a dialog land in the dialog, in the order typed.

Textual's `push_screen` makes the dialog the current screen at once but mounts it later: a
key that came from the terminal meanwhile went to a screen with no widget focused, where a
letter did nothing and Enter ran after the keys behind it ("E ⏎ n" exported to
"papers.bibn"). These tests post keys as the terminal driver does at that moment — the
dialog pushed, not mounted yet — which is what a fast typist or tmux's `send-keys E Enter n`
does on a busy machine (Pilot's `press` waits for each key, and its keys came too late).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandInput, CommandPalette
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Static, TextArea

from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.editors import MetadataEditor, NoteEditor, TagEditor
from abstract_reader.tui.screens.export import ExportDialog
from abstract_reader.tui.screens.help import HelpScreen
from abstract_reader.tui.screens.searches import SavedSearches, SaveSearchDialog
from abstract_reader.tui.screens.triage import TriageScreen
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle, type_filter, until
from .test_key_bursts import burst

WIDE = (120, 40)


def type_while_mounting(app: ReaderApp, kind: type[Screen[Any]], *keys: str) -> list[str]:
    """Post ``keys`` as the terminal does the moment a ``kind`` screen is pushed (before it
    is mounted: checked). The returned list says so, once they were posted."""
    posted: list[str] = []

    def pushed(screen: Screen[Any]) -> None:
        if isinstance(screen, kind) and not posted:
            assert not screen.is_mounted
            posted.extend(keys)
            burst(app, *keys)

    app.screen_change_signal.subscribe(app, pushed, immediate=True)
    return posted


def _text(widget: Widget) -> str:
    if isinstance(widget, TextArea):
        return widget.text
    assert isinstance(widget, Input)
    return widget.value


@pytest.mark.parametrize(
    ("opener", "kind", "field", "before"),
    [
        ("t", TagEditor, "#tag-input", ""),
        ("o", NoteEditor, "#note-text", ""),
        ("e", MetadataEditor, "#meta-title", ""),
        ("at", SavedSearches, "#saved-filter", ""),
        ("S", SaveSearchDialog, "#save-search-name", ""),
        ("E", ExportDialog, "#export-path", "papers.bib"),
        ("ctrl+p", CommandPalette, "CommandInput", ""),
    ],
)
async def test_letters_typed_while_a_dialog_opens_are_typed_into_it_in_order(
    tmp_path: Path, opener: str, kind: type[Screen[Any]], field: str, before: str
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "robust")  # (S saves the filter's query)
        await pilot.press("enter")
        await settle(app, pilot)
        posted = type_while_mounting(app, kind, "x", "y", "z")
        await pilot.press(opener)
        await until(pilot, lambda: bool(posted) and isinstance(app.screen, kind))
        widget = app.screen.query_one(field)
        await until(pilot, lambda: widget.has_focus and len(_text(widget)) >= len(before) + 3)
        await pilot.press("w")  # a key typed after them goes after them
        await until(pilot, lambda: _text(widget) == before + "xyzw")
        assert app.query_one("#filter", Input).value == "robust"  # none in the main filter
        if isinstance(widget, CommandInput):
            await pilot.press("escape")


async def test_the_tag_editor_opened_in_triage_takes_the_letters_typed_while_it_opens(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        first = app.query_one(PaperList).current_id
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        await pilot.pause()
        posted = type_while_mounting(app, TagEditor, "x", "y", "enter", "enter")
        await pilot.press("t")
        await until(pilot, lambda: bool(posted) and isinstance(app.screen, TriageScreen))
        await settle(app, pilot)
        assert first is not None
        assert app.library.snapshot.tags.get(first) == ["xy"]


def _message(app: ReaderApp) -> str:
    return str(app.screen.query_one("#export-message", Static).render())


async def test_e_enter_n_exports_and_n_answers_the_overwrite_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bug as found: E, Enter, n in one burst. E opens the export dialog, Enter exports
    under the default name, n answers "Overwrite papers.bib? y/n"."""
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "papers.bib"
    target.write_bytes(b"my own bibliography\n")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        posted = type_while_mounting(app, ExportDialog, "enter", "n")
        burst(app, "E")
        await until(pilot, lambda: bool(posted) and isinstance(app.screen, ExportDialog))
        await until(pilot, lambda: "unchanged" in _message(app))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert _message(app) == f"Not exported; {target} is unchanged."
        assert target.read_bytes() == b"my own bibliography\n"
        assert sorted(p.name for p in tmp_path.glob("papers*")) == ["papers.bib"]
        field = app.screen.query_one("#export-path", Input)
        assert field.value == "papers.bib" and field.has_focus


async def test_e_enter_with_no_file_in_the_way_exports_under_the_default_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No question to answer: the n typed behind Enter names no file (as in test_export's
    keys typed ahead of an export that needs no question)."""
    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        cursor = app.query_one(PaperList).cursor
        posted = type_while_mounting(app, ExportDialog, "enter", "n")
        burst(app, "E")
        await until(pilot, lambda: bool(posted) and not isinstance(app.screen, ExportDialog))
        await settle(app, pilot)
        assert sorted(p.name for p in tmp_path.glob("papers*")) == ["papers.bib"]
        assert "@" in (tmp_path / "papers.bib").read_text("utf-8")
        assert app.query_one(PaperList).cursor == cursor


async def test_keys_before_and_after_the_push_keep_their_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """E and Enter reach the list before E's dialog is pushed (the list hands Enter on), n
    comes while the dialog is being mounted: Enter still comes first (the question), then
    n (its answer)."""
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "papers.bib"
    target.write_bytes(b"my own bibliography\n")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        posted = type_while_mounting(app, ExportDialog, "n")
        burst(app, "E", "enter")
        await until(pilot, lambda: bool(posted) and isinstance(app.screen, ExportDialog))
        await until(pilot, lambda: "unchanged" in _message(app))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert target.read_bytes() == b"my own bibliography\n"
        assert sorted(p.name for p in tmp_path.glob("papers*")) == ["papers.bib"]
        assert app.screen.query_one("#export-path", Input).value == "papers.bib"


@pytest.mark.parametrize("while_mounting", [False, True])
async def test_the_help_opened_and_closed_in_one_burst_then_the_list_takes_the_keys(
    tmp_path: Path, while_mounting: bool
) -> None:
    """?, Esc, j: the help opens, closes, and j moves down the list — Esc and j typed before
    the help was mounted, or while it was. (Posted again by the app, Esc stopped at the
    dialog on its way up and never ran its binding: the help stayed open.)"""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        assert paper_list.cursor == 0
        if while_mounting:
            posted = type_while_mounting(app, HelpScreen, "escape", "j")
            burst(app, "question_mark")
        else:
            posted = ["escape", "j"]
            burst(app, "question_mark", *posted)
        await until(pilot, lambda: bool(posted) and paper_list.cursor == 1)
        await settle(app, pilot)
        assert app.screen is app.main and paper_list.has_focus and paper_list.cursor == 1
