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
from abstract_reader.library.drafts import Draft, Drafts, new_slot
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.editors import NoteEditor
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle, until

WIDE = (140, 40)


def _drafts(tmp_path: Path) -> Drafts:
    return Drafts.beside(tmp_path / "lib.sqlite3")  # (make_app's library)


def _papers(drafts: Drafts) -> list[str]:
    """The papers with drafts left, the newest draft's first."""
    return list(dict.fromkeys(d.paper_id for d in drafts.all_left()))


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


def _draft(drafts: Drafts, paper_id: str) -> Draft | None:
    """The newest draft of the paper's note, an open editor's too."""
    found = drafts.left(paper_id)
    return found[0] if found else None


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
        await until(
            pilot, lambda: (d := _draft(drafts, paper_id)) is not None and d.text.endswith("2")
        )
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
        assert _draft(drafts, paper_id) is None  # saved: the draft is gone
        assert _papers(drafts) == []


async def test_the_last_keys_before_the_reader_closes_are_kept(tmp_path: Path) -> None:
    """Keys typed just before the reader goes (within the draft's half second) are kept
    as it closes."""
    drafts = _drafts(tmp_path)
    async with _reader(tmp_path) as (app, pilot, paper_id):
        await pilot.press("o", *"quick")
        assert _note_text(app) == "quick"
    found = _draft(drafts, paper_id)
    assert found is not None and found.text == "quick" and found.base == ""


async def test_a_dropped_edit_and_a_saved_note_leave_no_draft(tmp_path: Path) -> None:
    drafts = _drafts(tmp_path)
    async with _reader(tmp_path) as (app, pilot, paper_id):
        await pilot.press("o", *"not wanted")
        await until(pilot, lambda: _draft(drafts, paper_id) is not None)
        await pilot.press("escape")  # asks first
        assert isinstance(app.screen, NoteEditor)
        await pilot.press("escape")  # dropped
        await until(pilot, lambda: not isinstance(app.screen, NoteEditor))
        assert _draft(drafts, paper_id) is None
        assert paper_id not in app.library.snapshot.notes

        await pilot.press("o", *"wanted")
        await until(pilot, lambda: _draft(drafts, paper_id) is not None)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, NoteEditor))
        assert app.library.snapshot.notes[paper_id] == "wanted"
        assert _draft(drafts, paper_id) is None
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
        assert drafts.put(paper_id, "old note, and my addition", "old note", new_slot()) is None
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
        assert _draft(drafts, paper_id) is None


async def test_a_draft_that_is_the_stored_note_is_not_offered(tmp_path: Path) -> None:
    """Typed back to what is stored (or saved by another reader since): nothing to offer."""
    drafts = _drafts(tmp_path)
    async with _reader(tmp_path) as (app, pilot, paper_id):
        app.library.set_note(paper_id, "same")
        assert drafts.put(paper_id, "same", "", new_slot()) is None
        await pilot.pause()
        await pilot.press("o")
        assert _note_text(app) == "same"
        assert "Restored" not in _editor_says(app)
        await pilot.press("escape")  # no change: closes at once
        await until(pilot, lambda: not isinstance(app.screen, NoteEditor))
        assert _draft(drafts, paper_id) is None


async def test_saving_a_draft_over_a_note_changed_since_shows_both(tmp_path: Path) -> None:
    """The draft was typed over "old note"; the CLI made it "rewritten elsewhere" since:
    ctrl+s does not overwrite that unseen — the conflict dialog shows both, as for a note
    changed while its editor was open."""
    from abstract_reader.tui.screens.editors import NoteConflictDialog

    drafts = _drafts(tmp_path)
    async with _reader(tmp_path) as (app, pilot, paper_id):
        app.library.set_note(paper_id, "rewritten elsewhere")
        assert drafts.put(paper_id, "old note, and my addition", "old note", new_slot()) is None
        await pilot.pause()
        await pilot.press("o", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, NoteConflictDialog))
        shown = _editor_says(app)
        assert "old note, and my addition" in shown and "rewritten elsewhere" in shown
        assert app.library.snapshot.notes[paper_id] == "rewritten elsewhere"
        # not chosen yet: what was typed is still kept, over the note it was typed over,
        # should the terminal close now (offered again with "changed since")
        assert [(d.text, d.base) for d in drafts.left(paper_id)] == [
            ("old note, and my addition", "old note")
        ]
        await pilot.press("m")  # mine
        await until(
            pilot, lambda: app.library.snapshot.notes[paper_id] == "old note, and my addition"
        )
        assert drafts.left(paper_id) == []


async def test_the_merged_notes_are_kept_before_a_key_is_typed(tmp_path: Path) -> None:
    """A note changed elsewhere while typed, "both, in the editor" chosen: the merged text
    is kept as a draft at once (it was kept only after the next key: a terminal closed
    before lost both versions' merge and the user's own)."""
    drafts = _drafts(tmp_path)
    async with _reader(tmp_path) as (app, pilot, paper_id):
        await pilot.press("o", *"mine")
        app.library.set_note(paper_id, "theirs")
        await pilot.press("ctrl+s")
        await pilot.press("g")  # both, in the editor
        await until(pilot, lambda: isinstance(app.screen, NoteEditor))
        assert "mine" in _note_text(app) and "theirs" in _note_text(app)
        await until(pilot, lambda: (d := _draft(drafts, paper_id)) is not None and "mine" in d.text)
        (kept,) = drafts.left(paper_id)
        assert kept.text == _note_text(app) and kept.base == "theirs"


async def test_the_notice_counts_only_the_drafts_that_are_offered(tmp_path: Path) -> None:
    """Left by an earlier session: one draft to offer, one that the stored note now equals
    (saved since by the CLI: it goes without a word), one for a paper not loaded (counted
    apart). The notice goes once the note editor opens with the draft."""
    drafts = _drafts(tmp_path)
    other_dumps_paper = "00000000deadbeef"
    first = make_app(tmp_path)
    async with first.run_test(size=WIDE) as pilot:
        await settle(first, pilot)
        papers = first.session.corpus.papers
        offered, saved_since = papers[0].id, papers[1].id
        first.library.set_note(saved_since, "the same text")
    for paper_id, text in (
        (offered, "to offer"),
        (saved_since, "the same text"),
        (other_dumps_paper, "elsewhere"),
    ):
        assert drafts.put(paper_id, text, "", new_slot()) is None
    again = make_app(tmp_path)
    async with again.run_test(size=WIDE) as pilot:
        await settle(again, pilot)

        def notices() -> list[str]:
            return [f"{n.title}: {n.message}" for n in again._notifications]

        await until(pilot, lambda: any("did not save" in n for n in notices()))
        (notice,) = [n for n in notices() if "did not save" in n]
        assert notice.startswith("2 notes you did not save are kept")
        assert "1 on papers not loaded now" in notice
        assert again.session.describe([again.session.corpus.papers[0]]) in notice
        assert [d.text for d in drafts.left(saved_since)] == []  # gone: it is the note
        await pilot.press("o")
        assert _note_text(again) == "to offer"
        await until(pilot, lambda: not any("did not save" in n for n in notices()))
        assert [d.text for d in drafts.left(other_dumps_paper)] == ["elsewhere"]


async def test_a_draft_of_a_reader_still_ending_is_told_once_it_has_ended(
    tmp_path: Path,
) -> None:
    """The window of a reader closed a moment ago and a new one started at once: the old
    one may still be ending when the new one looks (its drafts are offered only once it
    has ended). The new reader looks again a little later and tells of it then."""
    from abstract_reader.corpus import load_corpus

    from ..conftest import SEEDS, DraftWriter

    paper_id = load_corpus([SEEDS]).papers[0].id
    text = "typed in the reader whose window just closed"
    with DraftWriter(tmp_path / "lib.sqlite3", paper_id, text) as writer:
        async with _reader(tmp_path) as (app, pilot, _current):

            def told() -> bool:
                return any("did not save" in n.title for n in app._notifications)

            await pilot.pause()
            assert not told()  # its writer still runs
            writer.end()
            await until(pilot, told)
            await pilot.press("o")
            assert _note_text(app) == text


async def test_a_note_being_edited_in_another_reader_is_said(tmp_path: Path) -> None:
    """Another reader has the note open with unsaved text: this one's editor says so (its
    text is not offered: it is that reader's, still being typed)."""
    from ..conftest import DraftWriter

    async with _reader(tmp_path) as (app, pilot, paper_id):
        with DraftWriter(tmp_path / "lib.sqlite3", paper_id, "typed over there"):
            await pilot.press("o")
            assert _note_text(app) == ""
            said = _editor_says(app)
            assert "being edited in another reader" in said and "Restored" not in said
            await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, NoteEditor))
        await pilot.press("o")  # that reader gone: its text is offered now
        assert _note_text(app) == "typed over there"
        assert "Restored what you typed" in _editor_says(app)
