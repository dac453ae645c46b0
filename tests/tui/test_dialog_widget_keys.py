"""A remap of a dialog key meets the keys of the widget that has the focus in the dialog:
its text field (``Input``'s ctrl+a / ctrl+e / ctrl+k …, and every letter), its list
(``OptionList``'s ↑ / ↓ / Enter …), the note's text area. The focused widget runs its own
keys first, so `editor_save = "ctrl+e"` moved the cursor to the end of the tag editor's
field and never saved — while the hint line said "ctrl+e: save" — and a priority binding
(`saved_delete = "ctrl+a"`) took ctrl+a from the saved-search field; neither was said.
Now the first is refused and the second said, each in one warning line (``tui/keymap.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from abstract_reader.config import Config
from abstract_reader.saved import save
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.keymap import resolve_keys
from abstract_reader.tui.screens.editors import MetadataEditor, TagEditor
from abstract_reader.tui.screens.searches import SavedSearches

from .conftest import config_file, config_warnings, make_app, settle, until
from .test_dialogs_small import box_text


def help_text(app: ReaderApp) -> str:
    """The help's text (all of it, scrolled or not)."""
    return str(app.screen.query_one("#help-text", Static).render())


WIDE = (120, 40)


def _problems(keys: dict[str, tuple[str, ...]]) -> list[str]:
    return [w.split(": ", 2)[2] for w in resolve_keys(Config(keys=keys)).warnings]


def test_a_dialog_key_onto_a_key_its_focused_widget_keeps_is_refused() -> None:
    assert _problems({"editor_save": ("ctrl+e",)}) == [
        "ctrl+e is the text field's own key in the tag editor (go to end), which it keeps; "
        "editor_save does not get it; editor_save keeps its default key ctrl+s"
    ]
    # (a refused remap leaves the binding on its default keys: nothing to remap)
    assert resolve_keys(Config(keys={"editor_save": ("ctrl+e",)})).keymap == {}
    assert _problems({"editor_cancel": ("q", "escape")}) == [
        "q is typed as text into the text field in the tag editor; editor_cancel does not get it"
    ]
    assert _problems({"note_external_editor": ("ctrl+z",)}) == [
        "ctrl+z is the text area's own key in the note editor (undo), which it keeps; "
        "note_external_editor does not get it; note_external_editor keeps its default key "
        "ctrl+o"
    ]
    assert _problems({"cite_default": ("enter", "d")}) == [
        "Enter is the list's own key in the citation formats (select), which it keeps; "
        "cite_default does not get it"
    ]


def test_a_priority_dialog_key_takes_the_widgets_key_and_it_is_said() -> None:
    assert _problems({"meta_candidate": ("ctrl+e",)}) == [
        "ctrl+e is also the text field's own key in the metadata editor (go to end); the "
        "remap wins: ctrl+e is meta_candidate's there, the text field loses it"
    ]
    # (a letter stays text: a field must take every letter)
    assert _problems({"saved_delete": ("x",)}) == [
        "x is typed as text into the text field in the saved searches; saved_delete does not "
        "get it; saved_delete keeps its default key ctrl+d"
    ]


def test_keys_no_focused_widget_of_theirs_keeps_are_not_refused() -> None:
    for keys in (
        {"bookmark": ("ctrl+e",)},  # the list's: the filter field keeps it only in the filter
        {"tags_remove": ("x",)},  # acts on the tag editor's list, where x is no text
        {"export_yes": ("j",)},  # asked with the file name field unfocused
        {"copied_close": ("q",)},  # a read-only text takes no letters
        {"taglist_rename": ("R",)},
        {"saved_down": ("ctrl+n",)},
        {"editor_save": ("ctrl+s", "ctrl+t")},
    ):
        assert _problems(keys) == [], keys


async def test_the_reader_says_so_and_the_keys_do_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `editor_save = "ctrl+e"`: one warning; ctrl+e still goes to the end of the
    tag editor's field (it never saved), and the metadata editor's hint names ctrl+s, the
    save key still in effect, not ctrl+e. With `saved_delete = ["ctrl+d", "ctrl+a"]`: one warning; ctrl+a
    in the saved-search field asks to delete, as it says."""
    config = config_file(
        tmp_path,
        monkeypatch,
        '[keys]\neditor_save = "ctrl+e"\nsaved_delete = ["ctrl+d", "ctrl+a"]\n',
    )
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert config_warnings(app) == [
            f"{config}: line 2: keys.editor_save: ctrl+e is the text field's own key in the "
            "tag editor (go to end), which it keeps; editor_save does not get it; editor_save "
            "keeps its default key ctrl+s",
            f"{config}: line 3: keys.saved_delete: ctrl+a is also the text field's own key in "
            "the saved searches (go to start); the remap wins: ctrl+a is saved_delete's there, "
            "the text field loses it",
        ]
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        field = app.screen.query_one("#tag-input", Input)
        await pilot.press(*"abc", "home", "ctrl+e")
        await until(pilot, lambda: field.cursor_position == 3)
        assert isinstance(app.screen, TagEditor)
        await pilot.press("ctrl+u", "escape")  # (nothing typed any more: closes)
        await until(pilot, lambda: not isinstance(app.screen, TagEditor))
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, MetadataEditor))
        await until(pilot, lambda: "ctrl+s: save" in box_text(app))  # (its default, kept)
        assert "ctrl+e" not in box_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, MetadataEditor))
        save(app.library, "alpha", "robust")
        await pilot.press("at")
        await until(pilot, lambda: isinstance(app.screen, SavedSearches))
        await until(pilot, lambda: "@alpha" in box_text(app))
        await pilot.press("a", "l", "ctrl+a")
        await until(pilot, lambda: "Delete @alpha?" in box_text(app))
        assert app.screen.query_one("#saved-filter", Input).cursor_position == 2


async def test_a_refused_remap_leaves_the_binding_on_its_default_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remap refused whole — onto a key the focused field keeps (`editor_save =
    "ctrl+e"`), or onto a key an earlier remap has (`toggle_read = "x"` after `bookmark =
    "x"`) — never took effect, so its binding keeps its default keys: ctrl+s saves the tag
    editor and r toggles read, and the hints and the help name them. (The binding was
    left with no key at all, the hints "(no key)".)"""
    config = config_file(
        tmp_path,
        monkeypatch,
        '[keys]\neditor_save = "ctrl+e"\nbookmark = "x"\ntoggle_read = "x"\n',
    )
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert config_warnings(app) == [
            f"{config}: line 2: keys.editor_save: ctrl+e is the text field's own key in the "
            "tag editor (go to end), which it keeps; editor_save does not get it; editor_save "
            "keeps its default key ctrl+s",
            f"{config}: line 4: keys.toggle_read: x is already bookmark's in the list (set "
            "earlier in the file, which wins); toggle_read does not get it; toggle_read keeps "
            "its default key r",
        ]
        paper = app.main.current_paper()
        assert paper is not None
        await pilot.press("r")  # toggle_read's default key, still in effect
        await until(pilot, lambda: paper.id in app.library.snapshot.read)
        await pilot.press("x")  # bookmark's (the remap that won)
        await until(pilot, lambda: paper.id in app.library.snapshot.bookmarks)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await until(pilot, lambda: "Esc: cancel" in box_text(app))
        assert "(no key)" not in box_text(app)
        await pilot.press(*"abc", "enter", "ctrl+s")  # ctrl+s saves, as by default
        await until(pilot, lambda: not isinstance(app.screen, TagEditor))
        await until(pilot, lambda: app.library.snapshot.tags.get(paper.id) == ["abc"])
        await pilot.press("question_mark")
        await until(pilot, lambda: "read on/off" in help_text(app))
        assert "(no key)" not in help_text(app)
        assert any(
            line.split()[:1] == ["r"] and "read on/off" in line
            for line in help_text(app).splitlines()
        )
