"""Enter in a dialog's field takes effect before the keys typed behind it.

A field's Enter posted ``Input.Submitted``, handled only after the keys already queued
behind it had been typed into the field: "beta⏎gamma⏎" in the tag editor added one tag,
"betagamma", and the Enter after it saved twice — the dialog was dismissed twice and the
reader crashed. Keys typed in one burst are what a fast typist does on a busy machine, and
what a terminal hands over at once (tmux's ``send-keys``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input

from abstract_reader.library import Library
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.editors import MetadataEditor, TagEditor
from abstract_reader.tui.screens.main import MainScreen
from abstract_reader.tui.screens.pickers import TagList
from abstract_reader.tui.screens.searches import SavedSearches, SaveSearchDialog
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import config_file, config_warnings, make_app, settle, type_filter, until
from .test_key_bursts import burst

WIDE = (120, 40)


async def open_dialog(
    app: ReaderApp,
    pilot: Pilot[Any],
    key: str,
    kind: type[Screen[Any]],
    field: str | type[Widget],
) -> Widget:
    """Press ``key`` and wait for its ``kind`` dialog with ``field`` focused."""
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, kind))
    widget = app.screen.query_one(field)
    await until(pilot, lambda: widget.has_focus)
    return widget


async def test_tags_typed_in_one_burst_are_separate_tags_and_the_editor_saves_once(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        papers = app.query_one(PaperList)
        first = papers.current_id
        field = await open_dialog(app, pilot, "t", TagEditor, "#tag-input")
        assert isinstance(field, Input)
        burst(app, *"beta", "enter", *"gamma", "enter", "enter", "j")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(app, pilot)
        assert first is not None
        assert app.library.snapshot.tags.get(first) == ["beta", "gamma"]
        assert papers.cursor == 1  # the j after the dialog closed moved in the list
        assert app.is_running
    with Library(tmp_path / "lib.sqlite3") as fresh:
        assert fresh.snapshot.tags.get(first) == ["beta", "gamma"]


async def test_keys_typed_after_the_metadata_editors_enter_are_not_saved_into_it(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        papers = app.query_one(PaperList)
        first = papers.current_id
        field = await open_dialog(app, pilot, "e", MetadataEditor, "#meta-title")
        assert isinstance(field, Input)
        burst(app, *"Real", "enter", "j", "j")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(app, pilot)
        assert first is not None
        assert app.library.snapshot.metadata[first].title == "Real"
        assert papers.cursor == 2


async def test_a_search_name_typed_then_enter_then_keys_saves_that_name(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "robust")
        await pilot.press("enter")
        await settle(app, pilot)
        papers = app.query_one(PaperList)
        field = await open_dialog(app, pilot, "S", SaveSearchDialog, "#save-search-name")
        assert isinstance(field, Input)
        burst(app, *"rob", "enter", "j")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(app, pilot)
        assert app.library.setting("search:rob") == "robust"
        assert app.library.setting("search:robj") is None
        assert papers.cursor == 1


async def test_the_saved_search_run_by_enter_is_the_one_typed_before_it(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        app.library.set_setting("search:rob", "robust")
        app.library.set_setting("search:robx", "graph")
        field = await open_dialog(app, pilot, "at", SavedSearches, "#saved-filter")
        assert isinstance(field, Input)
        burst(app, *"rob", "enter", "x")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(app, pilot)
        # "rob" runs @rob (its query goes into the filter); the x after it is a key of the
        # list, not a letter of the name (@robx is "graph")
        assert app.query_one("#filter", Input).value == "robust"


async def test_a_tag_renamed_with_keys_typed_after_enter_gets_the_name_typed_before(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        first = app.query_one(PaperList).current_id
        assert first is not None
        app.library.add_tags([first], ["old"])
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, TagList))
        await pilot.press("r")
        field = app.screen.query_one("#tag-rename", Input)
        await until(pilot, lambda: field.has_focus and field.value == "old")
        burst(app, "ctrl+u", *"new", "enter", *"zz")
        await until(pilot, lambda: "new" in app.library.snapshot.tag_names)
        await settle(app, pilot)
        assert app.library.snapshot.tags.get(first) == ["new"]
        assert field.value != "newzz"


async def test_a_note_saved_with_ctrl_s_keeps_only_what_was_typed_before_it(
    tmp_path: Path,
) -> None:
    """ "o x ctrl+s j": the dialog's save key (not the field's) took effect only after the
    "j" had been typed into the note, which was saved as "xj"."""
    from textual.widgets import TextArea

    from abstract_reader.tui.screens.editors import NoteEditor

    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        papers = app.query_one(PaperList)
        first = papers.current_id
        await open_dialog(app, pilot, "o", NoteEditor, TextArea)
        burst(app, "x", "ctrl+s", "j")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(app, pilot)
        assert first is not None
        assert app.library.snapshot.notes.get(first) == "x"
        assert papers.cursor == 1


async def test_tags_saved_with_ctrl_s_then_a_key_keep_the_tag_typed_before(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        papers = app.query_one(PaperList)
        first = papers.current_id
        field = await open_dialog(app, pilot, "t", TagEditor, "#tag-input")
        assert isinstance(field, Input)
        burst(app, *"xy", "ctrl+s", "j")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(app, pilot)
        assert first is not None
        assert app.library.snapshot.tags.get(first) == ["xy"]
        assert papers.cursor == 1


async def test_esc_then_keys_in_one_burst_leave_the_dialog_and_go_to_the_list(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        papers = app.query_one(PaperList)
        first = papers.current_id
        field = await open_dialog(app, pilot, "t", TagEditor, "#tag-input")
        assert isinstance(field, Input)
        burst(app, "escape", "j", "j")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(app, pilot)
        assert first is not None and first not in app.library.snapshot.tags
        assert papers.cursor == 2


async def test_a_remapped_move_in_the_saved_search_field_runs_in_the_order_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`saved_down = "ctrl+n"`: in a burst "rob ctrl+n ctrl+n ⏎" the moves take effect as
    they reach the field, before the Enter typed after them — the third search runs, not
    the first. (The field's own bindings are read with the config file's remaps; read as
    declared, ctrl+n ran only once it had gone up to the app, after Enter.) The declared
    ↓ is not a move any more: "rob ↓ ⏎" runs the first."""
    config_file(tmp_path, monkeypatch, '[keys]\nsaved_down = "ctrl+n"\n')
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert config_warnings(app) == []
        app.library.set_setting("search:roba", "robust")
        app.library.set_setting("search:robb", "graph")
        app.library.set_setting("search:robc", "gaussian")
        field = await open_dialog(app, pilot, "at", SavedSearches, "#saved-filter")
        assert isinstance(field, Input)
        burst(app, *"rob", "ctrl+n", "ctrl+n", "enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == "gaussian"
        await pilot.press("escape")  # (the filter: back to the list)
        field = await open_dialog(app, pilot, "at", SavedSearches, "#saved-filter")
        burst(app, *"rob", "down", "enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == "robust"
