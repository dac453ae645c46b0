"""A note typed and not saved survives the reader closing (the terminal closed, the reader
killed): the note editor keeps it as a draft beside the library while it is typed, the next
session says so, and that paper's note opens with it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Static, TextArea

from abstract_reader.library import Library
from abstract_reader.library.drafts import Drafts
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.editors import NoteEditor
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle, until

WIDE = (140, 40)


def _drafts(tmp_path: Path) -> Drafts:
    return Drafts.beside(tmp_path / "lib.sqlite3")  # (make_app's library)


@asynccontextmanager
async def _reader(tmp_path: Path) -> AsyncIterator[tuple[ReaderApp, Pilot[Any], str]]:
    """The reader on the bundled dumps with make_app's library, loaded: (app, pilot, the
    current paper's id)."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id
        assert paper_id is not None
        yield app, pilot, paper_id


def _note_text(app: object) -> str:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, NoteEditor)
    return screen.query_one("#note-text", TextArea).text


def _editor_says(app: object) -> str:
    screen = app.screen  # type: ignore[attr-defined]
    return " ".join(str(s.render()) for s in screen.query(Static))


async def test_a_note_typed_and_not_saved_comes_back_in_the_next_session(
    tmp_path: Path,
) -> None:
    drafts = _drafts(tmp_path)
    async with _reader(tmp_path) as (app, pilot, paper_id):
        await pilot.press("o", *"half a thought about lemma 2")
        # kept while the editor is still open: a terminal closed now loses nothing
        await until(pilot, lambda: (d := drafts.get(paper_id)) is not None and d.text.endswith("2"))
        assert isinstance(app.screen, NoteEditor)
    # the reader went with the editor open, nothing saved
    with Library(tmp_path / "lib.sqlite3") as library:
        assert paper_id not in library.snapshot.notes

    again = make_app(tmp_path)
    async with again.run_test(size=WIDE) as pilot:
        await settle(again, pilot)
        await until(
            pilot,
            lambda: any("did not save" in n.title for n in again._notifications),
        )
        assert again.query_one(PaperList).current_id == paper_id
        await pilot.press("o")
        assert _note_text(again) == "half a thought about lemma 2"
        assert "Restored what you typed" in _editor_says(again)
        await pilot.press(*" and 3", "ctrl+s")
        await until(pilot, lambda: not isinstance(again.screen, NoteEditor))
        assert again.library.snapshot.notes[paper_id] == "half a thought about lemma 2 and 3"
        assert drafts.get(paper_id) is None  # saved: the draft is gone
        assert drafts.paper_ids() == []


async def test_the_last_keys_before_the_reader_closes_are_kept(tmp_path: Path) -> None:
    """Keys typed just before the reader goes (within the draft's half second) are kept
    as it closes."""
    drafts = _drafts(tmp_path)
    async with _reader(tmp_path) as (app, pilot, paper_id):
        await pilot.press("o", *"quick")
        assert _note_text(app) == "quick"
    found = drafts.get(paper_id)
    assert found is not None and found.text == "quick" and found.base == ""


async def test_a_dropped_edit_and_a_saved_note_leave_no_draft(tmp_path: Path) -> None:
    drafts = _drafts(tmp_path)
    async with _reader(tmp_path) as (app, pilot, paper_id):
        await pilot.press("o", *"not wanted")
        await until(pilot, lambda: drafts.get(paper_id) is not None)
        await pilot.press("escape")  # asks first
        assert isinstance(app.screen, NoteEditor)
        await pilot.press("escape")  # dropped
        await until(pilot, lambda: not isinstance(app.screen, NoteEditor))
        assert drafts.get(paper_id) is None
        assert paper_id not in app.library.snapshot.notes

        await pilot.press("o", *"wanted")
        await until(pilot, lambda: drafts.get(paper_id) is not None)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, NoteEditor))
        assert app.library.snapshot.notes[paper_id] == "wanted"
        assert drafts.get(paper_id) is None
    again = make_app(tmp_path)
    async with again.run_test(size=WIDE) as pilot:
        await settle(again, pilot)
        await pilot.press("o")
        assert _note_text(again) == "wanted"  # the stored note, no draft over it
        assert "Restored" not in _editor_says(again)
        assert not any("did not save" in n.title for n in again._notifications)


async def test_a_draft_over_a_note_changed_since_says_so_and_esc_asks(tmp_path: Path) -> None:
    """The stored note changed after the typing began (the CLI's `note`, another reader):
    the draft is offered, the editor says the stored note changed, and Esc asks before
    dropping what was typed; dropping it keeps the stored note."""
    drafts = _drafts(tmp_path)
    async with _reader(tmp_path) as (app, pilot, paper_id):
        assert drafts.put(paper_id, "old note, and my addition", "old note")
        app.library.set_note(paper_id, "rewritten elsewhere")
        await pilot.pause()
        await pilot.press("o")
        assert _note_text(app) == "old note, and my addition"
        said = _editor_says(app)
        assert "Restored what you typed" in said and "changed since" in said
        await pilot.press("escape")
        assert isinstance(app.screen, NoteEditor)  # asked
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, NoteEditor))
        assert app.library.snapshot.notes[paper_id] == "rewritten elsewhere"
        assert drafts.get(paper_id) is None


async def test_a_draft_that_is_the_stored_note_is_not_offered(tmp_path: Path) -> None:
    """Typed back to what is stored (or saved by another reader since): nothing to offer."""
    drafts = _drafts(tmp_path)
    async with _reader(tmp_path) as (app, pilot, paper_id):
        app.library.set_note(paper_id, "same")
        assert drafts.put(paper_id, "same", "")
        await pilot.pause()
        await pilot.press("o")
        assert _note_text(app) == "same"
        assert "Restored" not in _editor_says(app)
        await pilot.press("escape")  # no change: closes at once
        await until(pilot, lambda: not isinstance(app.screen, NoteEditor))
        assert drafts.get(paper_id) is None
