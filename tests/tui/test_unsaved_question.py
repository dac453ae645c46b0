"""Esc in an editor with unsaved changes asks first ("Unsaved changes: Esc again drops
them"); any change made after that question takes it back: its message goes, and the next
Esc asks again instead of dropping what was done since. (The note editor's own test, at a
tiny size, is in test_dialogs_small.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.screen import ModalScreen

from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.editors import MetadataEditor, TagEditor
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle, until
from .test_dialogs_small import box_text

SIZE = (100, 30)
ASKED = "Unsaved changes: Esc again drops them, ctrl+s saves."


def _asked(app: ReaderApp) -> bool:
    """The question is on screen, in the dialog's box."""
    return isinstance(app.screen, ModalScreen) and ASKED in box_text(app)


async def _asked_again_then_dropped(app: ReaderApp, pilot: Pilot[Any]) -> None:
    """Esc asks again (the dialog stays, the question shows), and a second Esc closes it."""
    await pilot.press("escape")
    await until(pilot, lambda: _asked(app) or not isinstance(app.screen, ModalScreen))
    assert isinstance(app.screen, ModalScreen), "Esc dropped the changes without asking"
    await pilot.press("escape")
    await until(pilot, lambda: not isinstance(app.screen, ModalScreen))


async def _refused_then_asked_again(
    app: ReaderApp, pilot: Pilot[Any], save: str, refusal: str
) -> None:
    """Esc asks; ``save`` is refused, ``refusal`` replacing the question on screen; then Esc
    asks again (it does not drop the work), and a second Esc closes the dialog."""
    await pilot.press("escape")
    await until(pilot, lambda: _asked(app))
    await pilot.press(save)
    await until(pilot, lambda: refusal in box_text(app))
    assert not _asked(app)
    await _asked_again_then_dropped(app, pilot)


async def _draft_tag_asked_about(app: ReaderApp, pilot: Pilot[Any]) -> str:
    """``t``, "draft" typed in the tag editor, Esc: the question stands. The paper's id."""
    await settle(app, pilot)
    paper_id = app.query_one(PaperList).current_id or ""
    await pilot.press("t", *"draft")
    await until(pilot, lambda: isinstance(app.screen, TagEditor))
    await pilot.press("escape")
    await until(pilot, lambda: _asked(app))
    return paper_id


async def test_typing_in_the_tag_editor_after_the_question_takes_it_back(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        paper_id = await _draft_tag_asked_about(app, pilot)
        await pilot.press(*"-two")  # typing on
        await until(pilot, lambda: "draft-two" in box_text(app))
        assert not _asked(app)  # taken back
        await _asked_again_then_dropped(app, pilot)
        assert not app.library.snapshot.tags.get(paper_id)


async def test_adding_a_tag_after_the_question_takes_it_back(tmp_path: Path) -> None:
    """Enter after the question adds the tag typed (and empties the field and the message
    line): Esc dropped the tag at once, with nothing on screen saying it would."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        paper_id = await _draft_tag_asked_about(app, pilot)
        await pilot.press("enter")  # adds #draft
        await until(pilot, lambda: "#draft" in box_text(app))
        assert not _asked(app)
        await _asked_again_then_dropped(app, pilot)
        assert not app.library.snapshot.tags.get(paper_id)


async def test_removing_a_tag_after_the_question_takes_it_back(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        app.library.add_tags([paper_id], ["alpha", "beta", "gamma"])
        app.main.refresh_library()
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await pilot.press("up", "delete")  # the current tags: the last one, removed
        await until(pilot, lambda: "#gamma" not in box_text(app))
        await pilot.press("escape")
        await until(pilot, lambda: _asked(app))
        await pilot.press("delete")  # another one
        await until(pilot, lambda: "#beta" not in box_text(app))
        assert not _asked(app)
        await _asked_again_then_dropped(app, pilot)
        assert app.library.snapshot.tags[paper_id] == ["alpha", "beta", "gamma"]


async def test_editing_metadata_after_the_question_takes_it_back(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, MetadataEditor))
        await until(pilot, lambda: app.screen.query_one("#meta-title").has_focus)
        await pilot.press(*"A title", "escape")
        await until(pilot, lambda: _asked(app))
        await pilot.press("tab", *"Ada Lovelace")  # another field
        await until(pilot, lambda: "Ada Lovelace" in box_text(app))
        assert not _asked(app)
        await _asked_again_then_dropped(app, pilot)
        assert paper_id not in app.library.snapshot.metadata


async def test_a_refused_save_after_the_question_makes_the_next_esc_ask_again(
    tmp_path: Path,
) -> None:
    """Esc asked; ctrl+s was refused (a tag over 64 characters), its error replacing the
    question on screen; the next Esc closed the editor and dropped the tag without a word.
    Now the question must be on screen for Esc to drop anything: Esc asks again."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await pilot.press(*("x" * 70))
        await _refused_then_asked_again(app, pilot, "ctrl+s", "at most 64 characters")
        assert not app.library.snapshot.tags.get(paper_id)


async def test_a_refused_metadata_save_after_the_question_makes_the_next_esc_ask_again(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, MetadataEditor))
        await until(pilot, lambda: app.screen.query_one("#meta-title").has_focus)
        await pilot.press(*"A title", "tab", "tab", "tab", "tab", *"12")  # the year: refused
        await _refused_then_asked_again(app, pilot, "ctrl+s", "Year must have four digits")
        assert paper_id not in app.library.snapshot.metadata


async def test_a_refused_search_name_after_the_question_makes_the_next_esc_ask_again(
    tmp_path: Path,
) -> None:
    """The save-search dialog (S) too: Esc asked, Enter refused the name ("a b" has a space),
    its reason replacing the question; the next Esc asks again, it does not drop the name."""
    from abstract_reader.tui.screens.searches import SaveSearchDialog

    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"robust", "enter")
        await settle(app, pilot)
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, SaveSearchDialog))
        await pilot.press("a", "space", "b")  # the space: refused
        await _refused_then_asked_again(app, pilot, "enter", "a saved search's name is")
        assert not any(k.startswith("search:") for k in app.library.snapshot.settings)
