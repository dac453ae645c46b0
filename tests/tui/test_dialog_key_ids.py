"""The tag editor's Del / ⌫ (remove the selected tag) and the saved-search field's
↑ / ↓ / PgUp / PgDn (move through the list below it) had no binding ids: the config file
could not remap them (`tags_remove = …` was "no such binding id"), and a remap onto them
(`editor_save = "delete"`, `saved_page_up = "escape"`) was not checked for clashes — Textual
silently dropped them for the remap, with no warning. Now they are `tags_remove`,
`saved_up`, `saved_down`, `saved_page_up` and `saved_page_down` (docs/keys.md), settled
by the keymap's rule like every other binding (``tui/keymap.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from abstract_reader.saved import save
from abstract_reader.tui.screens.editors import TagEditor
from abstract_reader.tui.screens.searches import SavedSearches

from .conftest import config_file, config_warnings, make_app, settle, until
from .test_dialogs_small import box_text

WIDE = (120, 40)


async def test_the_tag_editors_remove_key_is_remapped_and_a_clash_on_it_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tags_remove = "ctrl+r"`: ctrl+r removes the selected tag, Del no longer does, and
    in the empty field ctrl+r selects the last tag first (as Del and ⌫ did). A later remap
    of ctrl+r in the same dialog (`editor_save`) does not get it: one warning line."""
    config = config_file(
        tmp_path,
        monkeypatch,
        '[keys]\ntags_remove = "ctrl+r"\neditor_save = ["ctrl+s", "ctrl+r"]\n',
    )
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert config_warnings(app) == [
            f"{config}: line 3: keys.editor_save: ctrl+r is already tags_remove's in the tag "
            "editor (set earlier in the file, which wins); editor_save does not get it"
        ]
        paper = app.main.current_paper()
        assert paper is not None
        app.library.add_tags([paper.id], ["alpha", "beta"])
        app.main.refresh_library()
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await until(pilot, lambda: "#alpha" in box_text(app) and "#beta" in box_text(app))
        assert "ctrl+r removes one" in box_text(app)  # (the hint said Del)
        options = app.screen.query_one("#tag-current", OptionList)
        await pilot.press("up")  # the list, its last tag (beta) selected
        await until(pilot, lambda: options.has_focus and options.highlighted == 1)
        await pilot.press("delete")  # not tags_remove's any more: removes nothing
        await pilot.press("ctrl+r")  # removes beta (had Del removed it, alpha would go)
        await until(pilot, lambda: "#beta" not in box_text(app))
        assert "#alpha" in box_text(app) and isinstance(app.screen, TagEditor)  # not saved
        await pilot.press("tab")  # back to the (empty) field
        await until(pilot, lambda: not options.has_focus)
        await pilot.press("ctrl+r")  # from the empty field: selects the last tag first
        await until(pilot, lambda: options.has_focus)
        assert "#alpha" in box_text(app)
        await pilot.press("ctrl+r", "ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, TagEditor))
        await settle(app, pilot)
        assert not app.library.snapshot.tags.get(paper.id)


async def test_a_remap_onto_the_tag_editors_del_is_refused_and_del_still_removes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`editor_save = ["ctrl+s", "delete"]` took Del from the tag editor's remove without a
    word (and in its field Del deletes a letter: it never saved there). Del is the field's
    own key: the remap does not get it, the warning says so, and Del on the list still
    removes the selected tag."""
    config = config_file(tmp_path, monkeypatch, '[keys]\neditor_save = ["ctrl+s", "delete"]\n')
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert config_warnings(app) == [
            f"{config}: line 2: keys.editor_save: Del is the text field's own key in the tag "
            "editor (delete character right), which it keeps; editor_save does not get it"
        ]
        paper = app.main.current_paper()
        assert paper is not None
        app.library.add_tags([paper.id], ["alpha", "beta"])
        app.main.refresh_library()
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await until(pilot, lambda: "#beta" in box_text(app))
        await pilot.press("backspace", "backspace")  # select the last tag, remove it
        await until(pilot, lambda: "#beta" not in box_text(app))
        await pilot.press("delete")  # on the list: removes alpha too, does not save
        await until(pilot, lambda: "#alpha" not in box_text(app))
        assert isinstance(app.screen, TagEditor)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, TagEditor))
        await settle(app, pilot)
        assert not app.library.snapshot.tags.get(paper.id)


async def test_the_saved_search_fields_moves_are_remapped_and_clashes_are_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`saved_down = "ctrl+n"`, `saved_up = "ctrl+b"`: they move through the list from the
    filter field, and ↓ no longer does. A later remap onto ctrl+n (`saved_delete`) does not
    get it, and `saved_page_up = "escape"` takes Esc from `saved_close`: one warning line
    each."""
    config = config_file(
        tmp_path,
        monkeypatch,
        '[keys]\nsaved_down = "ctrl+n"\nsaved_up = "ctrl+b"\n'
        'saved_delete = ["ctrl+d", "ctrl+n"]\nsaved_page_up = "escape"\n',
    )
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert config_warnings(app) == [
            f"{config}: line 4: keys.saved_delete: ctrl+n is already saved_down's in the saved "
            "searches (set earlier in the file, which wins); saved_delete does not get it",
            f"{config}: line 5: keys.saved_page_up: Esc is also saved_close's (the saved "
            "searches); the remap wins: Esc is saved_page_up's, saved_close loses it; "
            "saved_close has no key left",
        ]
        for name in ("alpha", "beta", "gamma"):
            save(app.library, name, f"{name} query")
        await pilot.press("at")
        await until(pilot, lambda: isinstance(app.screen, SavedSearches))
        options = app.screen.query_one("#saved-list", OptionList)
        await until(pilot, lambda: options.option_count == 3)
        assert options.highlighted == 0
        await pilot.press("down")  # not saved_down's any more: stays
        await pilot.press("ctrl+n")  # moves one (two, had ↓ moved too)
        await until(pilot, lambda: options.highlighted == 1)
        await pilot.press("ctrl+n")  # moves, and does not ask to delete
        await until(pilot, lambda: options.highlighted == 2)
        await pilot.press("ctrl+b")
        await until(pilot, lambda: options.highlighted == 1)
        assert "Delete" not in box_text(app)
        await pilot.press("escape")  # saved_page_up's now: the top, not closed
        await until(pilot, lambda: options.highlighted == 0)
        assert isinstance(app.screen, SavedSearches)
        await pilot.press("enter")  # runs alpha
        await until(pilot, lambda: not isinstance(app.screen, SavedSearches))
