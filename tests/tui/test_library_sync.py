"""One library, many views: the reader with a second writer on the same file (as the CLI or
another reader would be), read marks only when the user read, undo, and failures that do not
end the session."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from abstract_reader.corpus import Corpus
from abstract_reader.library import Library, Metadata
from abstract_reader.session import dump_set_key, save_place
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.editors import NoteConflictDialog, NoteEditor, TagEditor
from abstract_reader.tui.screens.paper import PaperScreen
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import listed, make_app, settle, type_filter, until, view_text

WIDE = (140, 40)


def _db(tmp_path: Path) -> Path:
    return tmp_path / "lib.sqlite3"


def _current(app: ReaderApp) -> str:
    paper_id = app.query_one(PaperList).current_id
    assert paper_id is not None
    return paper_id


def _status(app: ReaderApp) -> str:
    return str(app.main.query_one("#status").render())


def _messages(app: ReaderApp) -> list[str]:
    return [n.message for n in app._notifications]


# -- lost writes -------------------------------------------------------------------------------


async def test_a_tag_edit_keeps_a_tag_another_writer_added_meanwhile(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = _current(app)
        await pilot.press("t")
        assert isinstance(app.screen, TagEditor)
        with Library(_db(tmp_path)) as cli:  # while the editor is open
            cli.add_tags([paper_id], ["fromcli"])
        await pilot.press(*"fromtui", "enter", "enter")
        await until(pilot, lambda: not isinstance(app.screen, TagEditor))
    with Library(_db(tmp_path)) as fresh:
        assert sorted(fresh.snapshot.tags[paper_id]) == ["fromcli", "fromtui"]


async def test_removing_a_tag_removes_only_that_tag(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = _current(app)
        app.library.add_tags([paper_id], ["old"])
        await pilot.press("t")
        with Library(_db(tmp_path)) as cli:
            cli.add_tags([paper_id], ["fromcli"])
        await pilot.press("shift+tab", "end", "delete", "ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, TagEditor))
    with Library(_db(tmp_path)) as fresh:
        assert fresh.snapshot.tags[paper_id] == ["fromcli"]


@pytest.mark.parametrize("choice", ["m", "t", "g"])
async def test_a_note_changed_elsewhere_is_never_overwritten_unseen(
    tmp_path: Path, choice: str
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = _current(app)
        await pilot.press("o")
        assert isinstance(app.screen, NoteEditor)
        with Library(_db(tmp_path)) as cli:
            cli.set_note(paper_id, "cli note")
        await pilot.press(*"my note", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, NoteConflictDialog))
        shown = str(app.screen.query_one("#conflict-mine").render()) + str(
            app.screen.query_one("#conflict-theirs").render()
        )
        assert "my note" in shown and "cli note" in shown
        await pilot.press("escape")  # drops nothing: the dialog stays
        assert isinstance(app.screen, NoteConflictDialog)
        await pilot.press(choice)
        if choice == "g":
            await until(pilot, lambda: isinstance(app.screen, NoteEditor))
            await pilot.press("ctrl+s")
        await until(pilot, lambda: not app.screen.is_modal)
        await settle(app, pilot)
    with Library(_db(tmp_path)) as fresh:
        note = fresh.snapshot.notes[paper_id]
    if choice == "m":
        assert note == "my note"
    elif choice == "t":
        assert note == "cli note"
    else:
        assert "my note" in note and "cli note" in note


async def test_the_reader_sees_other_writers_without_a_restart(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = _current(app)
        with Library(_db(tmp_path)) as cli:
            cli.set_bookmark([paper_id])
            cli.set_read([paper_id])
            cli.add_tags([paper_id], ["fromcli"])
            cli.set_note(paper_id, "cli note")
            cli.set_metadata(paper_id, Metadata(title="A Title From The CLI"))
        paper_list = app.query_one(PaperList)
        await until(pilot, lambda: paper_list.source.row(paper_list.cursor).bookmarked)
        row = paper_list.source.row(paper_list.cursor)
        assert row.read and row.tags == ("fromcli",) and row.title == "A Title From The CLI"
        text = view_text(app)
        assert "★ bookmarked" in text and "#fromcli" in text and "cli note" in text
        assert "1 bookmarked" in _status(app) and "54 unread" in _status(app)
        # a search for the new title finds it: the index follows the library's titles
        await type_filter(app, pilot, "title:cli")
        assert listed(app) == ["A Title From The CLI"]


# -- stale results -----------------------------------------------------------------------------


async def test_own_tag_write_re_runs_a_query_on_tags(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "!is:tagged")
        await pilot.press("enter", "j", "j")
        assert len(listed(app)) == 55
        paper_list = app.query_one(PaperList)
        position, tagged = paper_list.cursor, paper_list.current_id
        await pilot.press("t", *"x", "enter", "enter")
        await settle(app, pilot)
        assert tagged in app.library.snapshot.tags
        # the paper being read stays where it is while the query is the same (session.hold)
        assert len(listed(app)) == 55 and "55 of 55" in _status(app)
        assert (paper_list.cursor, paper_list.current_id) == (position, tagged)
        # a marked paper tagged leaves at once
        await pilot.press("j")
        following = paper_list.current_id
        await pilot.press("space", "t", *"y", "enter", "enter")  # marks it, moves down
        await settle(app, pilot)
        assert len(listed(app)) == 54 and "54 of 55" in _status(app)
        assert following not in [paper_list.source.paper_id(i) for i in range(54)]
        # the query typed again: the paper tagged first leaves too
        await pilot.press("escape", "slash", "backspace", "d", "enter")
        await settle(app, pilot)
        assert len(listed(app)) == 53 and tagged not in [
            paper_list.source.paper_id(i) for i in range(53)
        ]


@pytest.mark.parametrize(
    ("query", "key", "before", "after"),
    [
        ("IS:unread", "r", 55, 54),
        ("is:UNREAD", "r", 55, 54),
        ("Is:Read", "r", 0, 1),
        ("Is:bookmarked", "b", 0, 1),
        ("!IS:bookmarked", "b", 55, 54),
    ],
)
async def test_own_writes_re_run_state_queries_in_any_case(
    tmp_path: Path, query: str, key: str, before: int, after: int
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, query)
        await pilot.press("enter")
        assert len(listed(app)) == before
        if before == 0:  # nothing listed: act on a paper by clearing the filter first
            await pilot.press("escape")
            await settle(app, pilot)
            await pilot.press(key)
            await pilot.press("escape")  # Esc brings the query back
        else:  # marked (space), so that it is not the paper being read (session.hold)
            await pilot.press("space", key)
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == query
        assert len(listed(app)) == after


@pytest.mark.parametrize(
    ("query", "write"),
    [
        ("IS:unread", lambda lib, pid: lib.set_read([pid])),
        ("Is:bookmarked", lambda lib, pid: lib.set_bookmark([pid])),
        ("#FromCli", lambda lib, pid: lib.add_tags([pid], ["fromcli"])),
        ("is:NOTED", lambda lib, pid: lib.set_note(pid, "n")),
        ("!Is:Tagged", lambda lib, pid: lib.add_tags([pid], ["t"])),
        ("title:zanzibar", lambda lib, pid: lib.set_metadata(pid, Metadata(title="Zanzibar"))),
    ],
)
async def test_other_writers_re_run_state_queries_in_any_case(
    tmp_path: Path, query: str, write: Any
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, query)
        before = len(listed(app))
        with Library(_db(tmp_path)) as cli:
            write(cli, app.session.corpus.papers[7].id)
        await until(pilot, lambda: len(listed(app)) != before)
        assert abs(len(listed(app)) - before) == 1


async def test_marks_re_run_a_query_on_marks(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("space", "space")
        await type_filter(app, pilot, "IS:Marked")
        await pilot.press("enter")
        assert len(listed(app)) == 2
        await pilot.press("space")  # unmark the first of them
        await settle(app, pilot)
        assert len(listed(app)) == 1


# -- read means read ---------------------------------------------------------------------------


async def test_a_start_with_no_key_changes_nothing(tmp_path: Path, seeds: Corpus) -> None:
    with Library(_db(tmp_path)) as lib:  # a paper restored from the last session
        save_place(lib, dump_set_key(None), "", seeds.papers[3].id)
    app = make_app(tmp_path, read_delay=0.01)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert _current(app) == seeds.papers[3].id
        assert app.main._read_timer is None  # nothing is waiting to mark it read
        assert not app.library.snapshot.read
    with Library(_db(tmp_path)) as fresh:
        assert not fresh.snapshot.read and not fresh.snapshot.bookmarks
        assert not fresh.snapshot.tags and not fresh.snapshot.notes


@pytest.mark.parametrize("size", [WIDE, (80, 30)])
async def test_quick_enter_and_escape_leave_the_paper_unread(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(tmp_path, read_delay=3600)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("j", "enter")
        assert app.main._read_timer is not None  # opened: it would become read …
        await pilot.press("escape")
        assert app.main._read_timer is None  # … but it was left before the delay
        assert not isinstance(app.screen, PaperScreen)
        assert not app.library.snapshot.read


async def test_a_paper_kept_in_view_after_a_key_becomes_read(tmp_path: Path) -> None:
    app = make_app(tmp_path, read_delay=0.05)
    async with app.run_test(size=(80, 30)) as pilot:  # narrow: read once opened
        await settle(app, pilot)
        await pilot.press("j")
        assert app.main._read_timer is None  # the list alone does not show the paper
        await pilot.press("enter")
        paper_id = _current(app)
        await until(pilot, lambda: paper_id in app.library.snapshot.read)
        assert [paper_id] == list(app.library.snapshot.read)


# -- undo --------------------------------------------------------------------------------------


async def _undo(app: ReaderApp, pilot: Pilot[Any]) -> str:
    app.clear_notifications()
    await pilot.press("u")
    await settle(app, pilot)
    undone = [m for m in _messages(app) if m.startswith("Undone")]
    assert undone, _messages(app)
    return undone[-1]


async def test_u_undoes_each_kind_of_change(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        snap = lambda: app.library.snapshot  # noqa: E731
        first = _current(app)
        await pilot.press("b")
        assert first in snap().bookmarks
        await _undo(app, pilot)
        assert first not in snap().bookmarks
        await pilot.press("r")
        assert first in snap().read
        await _undo(app, pilot)
        assert first not in snap().read
        await pilot.press("t", *"alpha", "enter", "enter")
        await settle(app, pilot)
        assert snap().tags.get(first) == ["alpha"]
        await _undo(app, pilot)
        assert not snap().tags.get(first)
        await pilot.press("o", *"a note", "ctrl+s")
        await settle(app, pilot)
        assert snap().notes.get(first) == "a note"
        await _undo(app, pilot)
        assert first not in snap().notes
        await pilot.press("e", *"Real Title", "ctrl+s")
        await settle(app, pilot)
        assert snap().metadata[first].title == "Real Title"
        await _undo(app, pilot)
        assert first not in snap().metadata
        # bulk: two marked papers bookmarked at once, undone at once
        await pilot.press("space", "space", "b")
        second = app.session.corpus.papers[1].id
        assert {first, second} <= set(snap().bookmarks)
        await _undo(app, pilot)
        assert not snap().bookmarks
        await pilot.press("escape")  # clear the marks
        # a tag rename and a tag delete on every paper
        app.library.add_tags([first, second], ["theroy"])
        await pilot.press("T", "r", "ctrl+u", *"theory", "enter")
        await settle(app, pilot)
        assert app.library.tag_counts() == [("theory", 2)]
        await _undo(app, pilot)
        assert app.library.tag_counts() == [("theroy", 2)]
        await pilot.press("T", "d", "d")
        await settle(app, pilot)
        assert app.library.tag_counts() == []
        await _undo(app, pilot)
        assert app.library.tag_counts() == [("theroy", 2)]
        # an auto-read
        app.main.read_delay = 0.05
        await pilot.press("j")
        third = _current(app)
        await until(pilot, lambda: third in snap().read)
        message = await _undo(app, pilot)
        assert third not in snap().read and "read" in message
        assert app.main._read_timer is None  # and it is not marked read again at once
        await _undo(app, pilot)  # the tags added outside the keys above (through app.library)
        app.clear_notifications()
        await pilot.press("u")
        assert _messages(app) == ["Nothing to undo."]


# -- failures ----------------------------------------------------------------------------------


async def test_a_failing_search_is_reported_and_the_reader_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from abstract_reader.search import SearchIndex

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("index exploded")

    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        monkeypatch.setattr(SearchIndex, "search", broken)
        await type_filter(app, pilot, "robust")
        await until(pilot, lambda: any("Searching failed" in m for m in _messages(app)))
        assert app.is_running
        assert any("index exploded" in m for m in _messages(app))
        await pilot.press("enter", "b")  # and keys still work
        assert len(app.library.snapshot.bookmarks) == 1


async def test_a_failing_copy_is_reported_and_the_reader_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str) -> None:
        raise OSError("clipboard on fire")

    monkeypatch.setattr("abstract_reader.clipboard.copy_with_system_tool", broken)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        await until(pilot, lambda: any("Copying failed" in m for m in _messages(app)))
        assert app.is_running


def test_an_unexpected_error_ends_with_a_non_zero_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.app import App

    from abstract_reader.tui import app as app_module
    from abstract_reader.tui.screens.main import MainScreen

    def boom(self: MainScreen) -> None:
        raise RuntimeError("a bug")

    def headless_run(self: ReaderApp) -> int | None:
        return App.run(self, headless=True, size=WIDE)

    monkeypatch.setattr(MainScreen, "first_frame", boom)
    monkeypatch.setattr(ReaderApp, "run", headless_run)
    assert app_module.run(None, str(_db(tmp_path))) == 1


# -- random interleavings ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
async def test_random_interleavings_of_reader_keys_and_other_writers(
    tmp_path: Path, seed: int
) -> None:
    """Reader keys (bookmark, read, tag, move) and another writer's changes in a random order:
    afterwards the store holds every acknowledged change, and what the reader shows equals a
    fresh load of the library."""
    rng = random.Random(seed)
    app = make_app(tmp_path)
    bookmarks: set[str] = set()
    read: set[str] = set()
    tags: dict[str, set[str]] = {}
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        ids = [p.id for p in app.session.corpus.papers[:6]]
        other = Library(_db(tmp_path))
        for _ in range(30):
            step = rng.choice(["j", "k", "b", "r", "t", "cli-b", "cli-r", "cli-t", "cli-u"])
            current = _current(app)
            seen = app.library.snapshot
            if step in ("j", "k"):
                await pilot.press(step)
            elif step == "b":
                on = current not in seen.bookmarks  # what the reader shows decides
                await pilot.press("b")
                (bookmarks.add if on else bookmarks.discard)(current)
            elif step == "r":
                on = current not in seen.read
                await pilot.press("r")
                (read.add if on else read.discard)(current)
            elif step == "t":
                tag = rng.choice(["a", "b", "c"])
                await pilot.press("t", tag, "enter", "enter")
                await until(pilot, lambda: not app.screen.is_modal)
                if tag not in seen.tags.get(current, []):  # shown already: no change to send
                    tags.setdefault(current, set()).add(tag)
            else:
                target = rng.choice(ids)
                if step == "cli-b":
                    on = rng.random() < 0.5
                    other.set_bookmark([target], on)
                    (bookmarks.add if on else bookmarks.discard)(target)
                elif step == "cli-r":
                    other.set_read([target])
                    read.add(target)
                elif step == "cli-t":
                    tag = rng.choice(["a", "b", "c"])
                    other.add_tags([target], [tag])
                    tags.setdefault(target, set()).add(tag)
                else:
                    tag = rng.choice(["a", "b", "c"])
                    other.remove_tags([target], [tag])
                    tags.setdefault(target, set()).discard(tag)
            if rng.random() < 0.3:
                await pilot.pause(0.05)
        other.close()
        fresh = Library(_db(tmp_path))
        snap = fresh.snapshot
        assert set(snap.bookmarks) == bookmarks
        assert set(snap.read) == read
        assert {k: set(v) for k, v in snap.tags.items() if v} == {
            k: v for k, v in tags.items() if v
        }
        paper_list = app.query_one(PaperList)
        await until(pilot, lambda: app.library.snapshot.tags == snap.tags)
        await until(pilot, lambda: set(app.library.snapshot.read) == set(snap.read))
        await until(pilot, lambda: set(app.library.snapshot.bookmarks) == set(snap.bookmarks))
        for i in range(len(paper_list.source)):
            row = paper_list.source.row(i)
            assert row.bookmarked == (row.paper_id in snap.bookmarks)
            assert row.read == (row.paper_id in snap.read)
            assert row.tags == tuple(snap.tags.get(row.paper_id, ()))
        fresh.close()


async def test_the_tag_under_the_cursor_stays_under_it_when_another_process_adds_one(
    tmp_path: Path,
) -> None:
    """The tag editor's list follows the library while open; a tag another process added
    that sorts before the one under the cursor moved the cursor onto the new tag (the list
    kept the cursor's place, not its tag), and Delete then removed the other process's tag
    instead of the one the user chose."""
    from textual.widgets import OptionList

    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = _current(app)
        app.library.add_tags([paper_id], ["old"])
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await pilot.press("shift+tab", "end")  # the cursor on "old"
        with Library(_db(tmp_path)) as cli:
            cli.add_tags([paper_id], ["fromcli"])  # sorts before it
        app.main.refresh_library()  # (the reader's poll, at once)
        options = app.screen.query_one("#tag-current", OptionList)
        await until(pilot, lambda: options.option_count == 2)
        await pilot.press("delete", "ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, TagEditor))
    with Library(_db(tmp_path)) as fresh:
        assert fresh.snapshot.tags[paper_id] == ["fromcli"]
