"""A save from an editor that the library does not take (another program holds its write
lock past the wait and the second try, or the disk is full) never loses what was typed:
the editor stays open with exactly the text, says why on one line and how to go on
(ctrl+s again, or Esc, which asks first). (It closed, and the text was gone.)"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from abstract_reader.library import Library, Metadata
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens import main as main_screen
from abstract_reader.tui.screens.editors import (
    MetadataConflictDialog,
    MetadataEditor,
    NoteConflictDialog,
    NoteEditor,
    TagEditor,
)
from abstract_reader.tui.screens.triage import TriageScreen
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle, until
from .test_dialogs_small import box_text

WIDE = (140, 40)
ASKED = "Unsaved changes: Esc again drops them, ctrl+s saves."


@pytest.fixture(autouse=True)
def _short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library's wait for the lock and the pause before the second try, both short
    (the reader's are 2.5 s and 2 s)."""
    monkeypatch.setenv("ABSTRACT_READER_BUSY_TIMEOUT", "0.2")
    monkeypatch.setattr(main_screen, "BUSY_RETRY_S", 0.3)


@contextmanager
def another_writer(db: Path) -> Iterator[sqlite3.Connection]:
    """Another program holding the library's write lock (an sqlite3 shell left in BEGIN)."""
    other = sqlite3.connect(db, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield other
    finally:
        if other.in_transaction:
            other.execute("ROLLBACK")
        other.close()


def stored(db: Path) -> Library:
    return Library(db, backups=False)


def note_text(app: ReaderApp) -> str:
    return app.screen.query_one("#note-text", TextArea).text


async def _failed_twice(app: ReaderApp, pilot: Pilot[Any]) -> None:
    """ctrl+s: busy, said in the editor; the second try busy too: "Not saved" in it."""
    await pilot.press("ctrl+s")
    await until(pilot, lambda: "Not saved:" in box_text(app))


async def test_a_note_saved_while_the_library_stays_busy_stays_in_the_open_editor(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lib.sqlite3"
    typed = "BUSY-DRAFT: two paragraphs of careful notes"
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, NoteEditor))
        await pilot.press(*typed)
        with another_writer(db):
            await _failed_twice(app, pilot)
            shown = box_text(app)
            assert isinstance(app.screen, NoteEditor)
            assert note_text(app) == typed
            assert "Not saved:" in shown and "ctrl+s tries again, Esc drops it." in shown
            assert "busy" in shown
            assert paper_id not in app.library.snapshot.notes
            # Esc asks before dropping the text (the failure took no question's place)
            await pilot.press("escape")
            await until(pilot, lambda: ASKED in box_text(app))
            assert isinstance(app.screen, NoteEditor)
        await pilot.press("ctrl+s")  # the lock is free: saved, and the editor closes
        await until(pilot, lambda: not app.screen.is_modal)
        assert app.library.snapshot.notes.get(paper_id) == typed
    with stored(db) as lib:
        assert lib.snapshot.notes.get(paper_id) == typed


async def test_the_second_try_saves_when_the_lock_is_freed_meanwhile_with_what_is_typed_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The busy library's second try is kept: it saves, and the editor closes, as before.
    What the user typed while it waited is part of what it saves."""
    monkeypatch.setattr(main_screen, "BUSY_RETRY_S", 3.0)  # time to type, the lock held
    db = tmp_path / "lib.sqlite3"
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, NoteEditor))
        await pilot.press(*"first")
        with another_writer(db) as other:
            await pilot.press("ctrl+s")
            await until(pilot, lambda: "Trying again in 3 s." in box_text(app))
            assert isinstance(app.screen, NoteEditor)
            await pilot.press(*" and more")
            assert "Not saved" not in box_text(app)  # (still waiting for the second try)
            other.execute("ROLLBACK")
            await until(pilot, lambda: not app.screen.is_modal)
        assert app.library.snapshot.notes.get(paper_id) == "first and more"


async def test_a_title_saved_while_the_library_stays_busy_stays_in_the_open_editor(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lib.sqlite3"
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, MetadataEditor))
        await pilot.press(*"Carefully typed real title", "tab", *"Ada Lovelace; Alan Turing")
        with another_writer(db):
            await _failed_twice(app, pilot)
            assert isinstance(app.screen, MetadataEditor)
            assert app.screen.query_one("#meta-title", Input).value == (
                "Carefully typed real title"
            )
            assert app.screen.query_one("#meta-authors", Input).value == (
                "Ada Lovelace; Alan Turing"
            )
            assert paper_id not in app.library.snapshot.metadata
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not app.screen.is_modal)
    with stored(db) as lib:
        meta = lib.snapshot.metadata[paper_id]
        assert meta.title == "Carefully typed real title"
        assert meta.authors == ("Ada Lovelace", "Alan Turing")


async def test_tags_saved_while_the_library_stays_busy_stay_in_the_open_editor(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lib.sqlite3"
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await pilot.press(*"keep-me", "enter", *"and-me")
        with another_writer(db):
            await _failed_twice(app, pilot)
            editor = app.screen
            assert isinstance(editor, TagEditor)
            assert editor.tags == ["keep-me", "and-me"]  # (ctrl+s added the one typed)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not app.screen.is_modal)
    with stored(db) as lib:
        assert sorted(lib.snapshot.tags.get(paper_id, [])) == ["and-me", "keep-me"]


async def test_a_tag_saved_in_triage_while_the_library_stays_busy_stays_in_the_editor(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lib.sqlite3"
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        triage = app.screen
        assert isinstance(triage, TriageScreen)
        paper_id = triage.current_id or ""
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await pilot.press(*"triaged")
        with another_writer(db):
            await _failed_twice(app, pilot)
            assert isinstance(app.screen, TagEditor)
            assert app.screen.query_one("#tag-input", Input).value == "triaged"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.screen is triage)
    with stored(db) as lib:
        assert lib.snapshot.tags.get(paper_id) == ["triaged"]


async def test_a_note_saved_on_a_full_disk_stays_in_the_open_editor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's "disk is full" at the store's write (injected: filling a disk needs root)."""
    from abstract_reader.library import store

    db = tmp_path / "lib.sqlite3"
    full = True
    real_begin = store.begin_write

    def begin_write(conn: sqlite3.Connection, timeout: float) -> None:
        if full:
            exc = sqlite3.OperationalError("database or disk is full")
            exc.sqlite_errorcode = sqlite3.SQLITE_FULL
            raise exc
        real_begin(conn, timeout)

    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, NoteEditor))
        await pilot.press(*"typed on a full disk")
        monkeypatch.setattr(store, "begin_write", begin_write)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "the disk is full" in box_text(app))
        assert "Not saved:" in box_text(app)
        assert isinstance(app.screen, NoteEditor)
        assert note_text(app) == "typed on a full disk"
        full = False  # space freed
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not app.screen.is_modal)
    with stored(db) as lib:
        assert lib.snapshot.notes.get(paper_id) == "typed on a full disk"


async def test_keeping_mine_in_a_note_conflict_while_the_library_is_busy_reopens_the_editor(
    tmp_path: Path,
) -> None:
    """The note conflict's "keep mine" saves with no editor open: when the library does not
    take it, the note editor opens again with the text, saying why (it was dropped)."""
    db = tmp_path / "lib.sqlite3"
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, NoteEditor))
        with stored(db) as cli:
            cli.set_note(paper_id, "cli note")
        await pilot.press(*"my note", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, NoteConflictDialog))
        with another_writer(db):
            await pilot.press("m")
            await until(pilot, lambda: isinstance(app.screen, NoteEditor))
            await until(pilot, lambda: "Not saved:" in box_text(app))
            assert note_text(app) == "my note"
            await pilot.press("escape")  # the text differs from the stored note: it asks
            await until(pilot, lambda: ASKED in box_text(app))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not app.screen.is_modal)
    with stored(db) as lib:
        assert lib.snapshot.notes.get(paper_id) == "my note"


async def test_keeping_mine_in_a_metadata_conflict_while_the_library_is_busy_reopens_the_editor(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lib.sqlite3"
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, MetadataEditor))
        with stored(db) as cli:
            cli.set_metadata(paper_id, Metadata(title="CLI title"))
        await pilot.press(*"Reader title", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, MetadataConflictDialog))
        with another_writer(db):
            await pilot.press("m")
            await until(pilot, lambda: isinstance(app.screen, MetadataEditor))
            await until(pilot, lambda: "Not saved:" in box_text(app))
            assert app.screen.query_one("#meta-title", Input).value == "Reader title"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not app.screen.is_modal)
    with stored(db) as lib:
        assert lib.snapshot.metadata[paper_id].title == "Reader title"


async def test_a_search_name_typed_while_the_library_stays_busy_stays_in_the_open_dialog(
    tmp_path: Path,
) -> None:
    """`S`'s name prompt is an editor too: a save the library does not take keeps the
    dialog open with the name typed (it closed, and the name was gone with a toast)."""
    from abstract_reader.tui.screens.searches import SaveSearchDialog

    from .test_saved_searches import press_text, type_filter

    db = tmp_path / "lib.sqlite3"
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "robust")
        await pilot.press("enter")
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, SaveSearchDialog))
        await press_text(pilot, "my_robust")
        with another_writer(db):
            await pilot.press("enter")
            await until(pilot, lambda: "Not saved:" in box_text(app))
            assert isinstance(app.screen, SaveSearchDialog)
            assert app.screen.query_one("#save-search-name", Input).value == "my_robust"
            assert "busy" in box_text(app)
            assert app.library.setting("search:my_robust") is None
        await pilot.press("enter")  # the lock is free: saved, and the dialog closes
        await until(pilot, lambda: not app.screen.is_modal)
        assert app.library.setting("search:my_robust") == "robust"
    with stored(db) as lib:
        assert lib.setting("search:my_robust") == "robust"


async def test_a_tag_rename_or_delete_the_library_does_not_take_stays_in_the_tag_list(
    tmp_path: Path,
) -> None:
    """The tag list's rename and delete are written with the list still open: a library
    that stays busy leaves the new name in the field and says so; Enter (or d) tries again.
    (The list closed first, and the name typed went with a toast.)"""
    from abstract_reader.tui.screens.pickers import TagList

    db = tmp_path / "lib.sqlite3"
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        ids = [app.session.corpus.papers[3].id, app.session.corpus.papers[7].id]
        app.library.add_tags(ids, ["theroy"])
        await pilot.press("T", "r", "ctrl+u", *"theory")
        with another_writer(db):
            await pilot.press("enter")
            await until(pilot, lambda: "Not renamed:" in box_text(app))
            assert isinstance(app.screen, TagList)
            assert "busy" in box_text(app) and "Enter tries again, Esc cancels." in box_text(app)
            assert app.screen.query_one("#tag-rename", Input).value == "theory"
        await pilot.press("enter")  # the lock is free: renamed, and the list closes
        await until(pilot, lambda: not app.screen.is_modal)
        assert app.library.tag_counts() == [("theory", 2)]

        await pilot.press("T", "d")  # asks
        with another_writer(db):
            await pilot.press("d")
            await until(pilot, lambda: "Not deleted:" in box_text(app))
            assert isinstance(app.screen, TagList)
            assert "d tries again, Esc cancels." in box_text(app)
        await pilot.press("d")
        await until(pilot, lambda: not app.screen.is_modal)
        assert app.library.tag_counts() == []
    with stored(db) as lib:
        assert not any(lib.snapshot.tags.values())
