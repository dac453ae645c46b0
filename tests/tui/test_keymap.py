"""The config file's [keys] settled against the reader's bindings (``tui/keymap.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from textual.widgets import Input

from abstract_reader.config import Config
from abstract_reader.tui.commands import NO_KEY
from abstract_reader.tui.keymap import resolve_keys
from abstract_reader.tui.screens.help import HelpScreen
from abstract_reader.tui.screens.pickers import TagList
from abstract_reader.tui.widgets.paper_view import PaperView

from ..conftest import ROOT
from .conftest import config_file, config_warnings, make_app, settle, until

WIDE = (120, 40)


def test_the_reader_imports_no_private_textual_name() -> None:
    """keymap.py normalised the config's keys with Textual's private ``_normalize_key_list``
    (free to change in any release); Textual's public ``Binding.make_bindings`` does it."""
    private = []
    for path in sorted((ROOT / "src" / "abstract_reader").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("textual"):
                private += [
                    f"{path.name}: {node.module}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_")
                ]
    assert private == []


def test_keys_are_normalised_as_textual_names_them() -> None:
    """`?` is the help's default (``question_mark``): no remap; `!` for bookmark is
    ``exclamation_mark``, and takes triage's key from the list (one warning)."""
    assert resolve_keys(Config(keys={"help": ("?",)})).keymap == {}
    settings = resolve_keys(Config(keys={"bookmark": ("!", "B")}))
    assert settings.keys["bookmark"] == ("exclamation_mark", "B")
    assert settings.keymap["bookmark"] == "exclamation_mark,B"
    assert settings.keys["triage"] == () and settings.keymap["triage"] == NO_KEY
    assert len(settings.warnings) == 1 and "! is also triage's" in settings.warnings[0]


async def test_the_tag_lists_r_and_d_have_ids_and_a_remap_onto_r_wins_and_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tag list's r (rename) and d (delete) had no ids: `taglist_like = "r"` silently
    took r from rename (Textual drops a clashing binding of the same screen), with no
    warning and rename left without a key; `taglist_rename = "R"` was "no such binding
    id". Now the clash is one warning naming both ids, and R renames."""
    config = config_file(
        tmp_path, monkeypatch, '[keys]\ntaglist_like = "r"\ntaglist_delete = "x"\n'
    )
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.main.current_paper()
        assert paper is not None
        app.library.add_tags([paper.id], ["robust"])
        assert config_warnings(app) == [
            f"{config}: line 2: keys.taglist_like: r is also taglist_rename's (the tag list); "
            "the remap wins: r is taglist_like's, taglist_rename loses it; taglist_rename has "
            "no key left"
        ]
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, TagList))
        await pilot.press("d", "d")  # not delete any more: x is
        await pilot.pause()
        assert isinstance(app.screen, TagList)
        assert app.library.snapshot.tags.get(paper.id) == ["robust"]
        await pilot.press("r")  # rank like it
        await until(pilot, lambda: not isinstance(app.screen, TagList))
        assert app.query_one("#filter", Input).value == "like:#robust"


async def test_a_remapped_tag_list_key_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file(tmp_path, monkeypatch, '[keys]\ntaglist_rename = "R"\ntaglist_delete = "x"\n')
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.main.current_paper()
        assert paper is not None
        app.library.add_tags([paper.id], ["robust"])
        assert config_warnings(app) == []
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, TagList))
        rename = app.screen.query_one("#tag-rename", Input)
        await pilot.press("r")
        await pilot.pause()
        assert not rename.display
        await pilot.press("R")
        await until(pilot, lambda: bool(rename.display) and rename.has_focus)
        await pilot.press("escape", "x", "x")  # (Esc leaves the field first)
        await until(pilot, lambda: not isinstance(app.screen, TagList))
        await until(pilot, lambda: not app.library.snapshot.tags.get(paper.id))


async def test_the_helps_own_keys_have_an_id_and_a_remap_onto_them_wins_and_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The help's Esc / ? / q had no id: `view_up = "q"` (the help scrolls with the paper
    view's keys) met the help's q unchecked and unsaid. Now the remap wins over help_close's
    q (q scrolls the help up), and the one warning names help_close too."""
    config = config_file(tmp_path, monkeypatch, '[keys]\nview_up = "q"\n')
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=(60, 16)) as pilot:
        await settle(app, pilot)
        warned = config_warnings(app)
        assert len(warned) == 1 and "\n" not in warned[0]
        assert warned[0].startswith(f"{config}: line 2: keys.view_up: q is also quit's")
        assert "help_close's (the help)" in warned[0]
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        box = app.screen.query_one("#help-box")
        await pilot.press("j", "j", "q")
        await until(
            pilot,
            lambda: box.scroll_y == 1 and not app.animator.is_being_animated(box, "scroll_y"),
        )
        assert isinstance(app.screen, HelpScreen)  # q scrolled up, did not close
        await pilot.press("question_mark")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))


async def test_the_helps_close_key_can_be_remapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file(tmp_path, monkeypatch, '[keys]\nhelp_close = "x"\n')
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert config_warnings(app) == []
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("question_mark", "escape", "q")  # not help_close's any more
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("x")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))


def test_every_binding_of_the_reader_has_an_id() -> None:
    """A binding without an id cannot be remapped and is not checked for clashes with the
    remaps of its place (the help's Esc / ? / q, the tag list's r / d, the tag editor's
    Del / ⌫ and the saved-search field's ↑ / ↓ / PgUp / PgDn were such)."""
    import importlib
    import pkgutil

    from textual.binding import Binding

    from abstract_reader.tui import screens, widgets

    without: set[tuple[str, str]] = set()
    for package in (screens, widgets):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for name, value in vars(module).items():
                if not isinstance(value, type) or value.__module__ != module.__name__:
                    continue  # (imported, not declared here)
                for binding in vars(value).get("BINDINGS") or ():  # (its own, not inherited)
                    if isinstance(binding, Binding) and not binding.id:
                        without.add((name, binding.key))
    assert without == set()


def test_every_text_naming_a_key_renders_and_the_defaults_read_as_before() -> None:
    """Each ``{binding_id}`` in the command table's and the query language's texts names a
    binding (``with_keys`` raises otherwise); with no remap they read as they always did."""
    from abstract_reader.tui.commands import BY_ID, COMMANDS, command_help, with_keys
    from abstract_reader.tui.screens.help import QUERY, help_content

    for command in COMMANDS:
        assert "{" not in command_help(command), command.id
    for _example, what in QUERY:
        assert "{" not in with_keys(what)
    assert command_help(BY_ID["triage"]).endswith(
        ": b keep, r skip, t tag, l later, p back, u undo, Esc leaves"
    )
    assert command_help(BY_ID["tag_list"]).endswith(
        ": Enter filters, m ranks like it, r renames, d d deletes"
    )
    text = help_content().plain
    assert "(Enter or Esc leaves it)" in text and "(ctrl+s saves, Esc asks" in text
    assert "(S saves the filter, @ lists them)" in text  # (@ was written "at")
    assert text.endswith("Esc, ? or q closes this screen.")


REMAPS = (
    '[keys]\ntriage_keep = "K"\ntriage_leave = ["x", "escape"]\ntaglist_rename = "R"\n'
    'taglist_delete = "X"\nmark = "v"\nsaved_searches = "ctrl+a"\nhelp_close = "z"\n'
    'editor_save = "ctrl+t"\nsaved_delete = "ctrl+r"\nfilter_back = "ctrl+g"\n'
)


async def test_the_help_and_the_palette_name_the_keys_in_effect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With triage's, the tag list's, the editors' … keys remapped, the help's lines still
    said "b keep, r skip", "r renames, d d deletes", "ctrl+s saves", "(space)", "@ lists
    them", "Esc or ? closes" — and so did the command palette: the table's default keys
    written in its prose. They name the keys in effect now."""
    from textual.command import CommandList, CommandPalette

    config_file(tmp_path, monkeypatch, REMAPS)
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=(160, 90)) as pilot:  # (the whole help on screen)
        await settle(app, pilot)
        assert config_warnings(app) == []
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        text = " ".join(str(app.screen.query_one("#help-text").render()).split())
        for said in (
            ": K keep, r skip, t tag, l later, p back, u undo, x leaves",
            ": Enter filters, m ranks like it, R renames, X X deletes",
            "edit the note (ctrl+t saves, Esc asks before dropping changes)",
            "type to filter, Enter runs one, ctrl+r deletes one",
            "focus the filter bar (Enter or ctrl+g leaves it)",
            "the papers marked for a bulk action (v)",
            "a saved search (S saves the filter, ctrl+a lists them)",
        ):
            assert said in text, said
        assert text.endswith("z closes this screen.")
        await pilot.press("z")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"triage")
        options = app.screen.query_one(CommandList)
        await until(pilot, lambda: options.option_count > 0)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        triage = [p for p in prompts if "keep" in p]
        assert len(triage) == 1 and ": K keep, r skip," in triage[0], prompts
        assert "x leaves" in " ".join(triage[0].split())


async def test_messages_that_name_a_key_name_the_remapped_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`O` with no link says which key sets one, and triage's end says which key leaves:
    with `edit_metadata = "ctrl+e"` and `triage_leave = "x"` they name those keys, not
    e and Esc (which no longer do it)."""
    from abstract_reader.tui.screens.triage import TriageScreen

    monkeypatch.setattr("webbrowser.open", lambda *a, **k: pytest.fail("opened"))
    config_file(tmp_path, monkeypatch, '[keys]\nedit_metadata = "ctrl+e"\ntriage_leave = "x"\n')
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("O")
        await settle(app, pilot)
        said = [n.message for n in app._notifications if "No web link" in n.message]
        assert said == ["No web link known for this paper: ctrl+e sets a URL or DOI."]
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        triage = app.screen
        assert isinstance(triage, TriageScreen)
        triage.position = len(triage.paper_ids)  # past the last paper, as after the last key
        triage.show()
        assert triage.progress_text().endswith("· x leaves")
        view = triage.query_one(PaperView)
        assert "p goes back, x leaves triage." in view.header.plain


async def test_dialog_hints_and_questions_name_the_remapped_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dialogs' hint lines and the "Unsaved changes" question named Esc, ctrl+s and d
    whatever the config said: with `editor_cancel = "ctrl+g"`, `editor_save = "ctrl+t"` and
    `cite_default = "D"` they name those keys, and those keys do what they say."""
    from abstract_reader.tui.screens.editors import TagEditor
    from abstract_reader.tui.screens.pickers import CitePicker

    from .test_dialogs_small import box_text

    config_file(
        tmp_path,
        monkeypatch,
        '[keys]\neditor_cancel = "ctrl+g"\neditor_save = "ctrl+t"\ncite_default = "D"\n',
    )
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await pilot.pause()
        assert "ctrl+g: cancel" in box_text(app) and "Esc: cancel" not in box_text(app)
        await pilot.press("x", "ctrl+g")
        asked = "Unsaved changes: ctrl+g again drops them, ctrl+t saves."
        await until(pilot, lambda: asked in box_text(app))
        await pilot.press("ctrl+g")
        await until(pilot, lambda: not isinstance(app.screen, TagEditor))
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, CitePicker))
        await pilot.pause()
        assert "D: copy and make it the default" in box_text(app)
