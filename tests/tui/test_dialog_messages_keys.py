"""The dialogs' questions and refusals name the keys in effect, as their hint lines do
(``test_keymap.py``): the saved searches' "Delete @name? ctrl+d again deletes it, Esc keeps
it", the save prompt's "Esc keeps it" / "Esc to cancel", and the note and metadata
conflicts' "Choose m, t or g" / "Choose m or t" named the default keys whatever the config
file said — keys that, once remapped, no longer did it."""

from __future__ import annotations

from pathlib import Path

import pytest

from abstract_reader import cli
from abstract_reader.library import Library
from abstract_reader.saved import save
from abstract_reader.tui.screens.editors import (
    MetadataConflictDialog,
    MetadataEditor,
    NoteConflictDialog,
    NoteEditor,
)
from abstract_reader.tui.screens.main import MainScreen
from abstract_reader.tui.screens.searches import SavedSearches, SaveSearchDialog

from ..conftest import SEEDS
from .conftest import config_file, config_warnings, make_app, settle, type_filter, until
from .test_dialogs_small import box_text

WIDE = (140, 40)

REMAPS = (
    '[keys]\neditor_cancel = "ctrl+g"\nsaved_delete = "ctrl+r"\nsaved_close = "ctrl+g"\n'
    'conflict_mine = "M"\nconflict_theirs = "T"\nconflict_merge = "G"\n'
)


async def test_the_saved_search_questions_name_the_remapped_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file(tmp_path, monkeypatch, REMAPS)
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert config_warnings(app) == []
        save(app.library, "alpha", "graph")
        await pilot.press("at")
        await until(pilot, lambda: isinstance(app.screen, SavedSearches))
        await until(pilot, lambda: "@alpha" in box_text(app))
        await pilot.press("ctrl+r")
        await until(
            pilot,
            lambda: "Delete @alpha? ctrl+r again deletes it, ctrl+g keeps it." in box_text(app),
        )
        await pilot.press("ctrl+g")  # keeps it, as said
        await until(pilot, lambda: "Kept." in box_text(app))
        await pilot.press("ctrl+g")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await type_filter(app, pilot, "robust")
        await pilot.press("enter")
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, SaveSearchDialog))
        await pilot.press(*"alpha", "enter")
        await until(
            pilot,
            lambda: (
                "@alpha is saved as “graph”: Enter again replaces it, ctrl+g keeps it."
                in box_text(app)
            ),
        )
        await pilot.press("ctrl+g")
        await until(
            pilot,
            lambda: (
                "Kept the stored search: type another name, or ctrl+g to cancel." in box_text(app)
            ),
        )
        await pilot.press("ctrl+g")  # cancels, as said
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.library.setting("search:alpha") == "graph"


async def test_the_conflicts_refusals_name_the_remapped_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file(tmp_path, monkeypatch, REMAPS)
    app = make_app(tmp_path, config=None)
    db = tmp_path / "lib.sqlite3"
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.main.current_paper()
        assert paper is not None
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, NoteEditor))
        with Library(db) as other:
            other.set_note(paper.id, "their note")
        await pilot.press(*"my note", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, NoteConflictDialog))
        await pilot.press("escape")  # (conflict_cancel: drops nothing, says why)
        await until(pilot, lambda: "Choose M, T or G: one version would be lost" in box_text(app))
        await pilot.press("M")
        await until(pilot, lambda: not app.screen.is_modal)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, MetadataEditor))
        assert cli.main(["meta", "-d", str(SEEDS), "--db", str(db), paper.id, "--title", "X"]) == 0
        await pilot.press(*"Mine", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, MetadataConflictDialog))
        await pilot.press("escape")
        await until(pilot, lambda: "Choose M or T: one of the two values" in box_text(app))
        await pilot.press("T")
        await until(pilot, lambda: not app.screen.is_modal)
