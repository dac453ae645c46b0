"""Triage (`!`): the filter's papers one at a time; each decision is a library change that a
second process on the same file sees, and `u` undoes."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from abstract_reader.corpus import Corpus
from abstract_reader.library import Library
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.editors import TagEditor
from abstract_reader.tui.screens.triage import TriageScreen
from abstract_reader.tui.widgets.paper_list import PaperList
from abstract_reader.tui.widgets.paper_view import PaperView

from .conftest import make_app, settle, type_filter, until

WIDE = (140, 40)
SMALL = (70, 24)


def _db(tmp_path: Path) -> Path:
    return tmp_path / "lib.sqlite3"


def _triage(app: ReaderApp) -> TriageScreen:
    screen = app.screen
    assert isinstance(screen, TriageScreen)
    return screen


def _progress(app: ReaderApp) -> str:
    return str(app.screen.query_one("#triage-progress").render())


def _screen_text(app: ReaderApp) -> list[str]:
    """The terminal's lines as a person sees them."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text().splitlines()


async def test_each_triage_key_is_a_library_change_another_process_sees(
    tmp_path: Path, seeds: Corpus
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "is:unread")
        await pilot.press("enter")
        total = len(app.query_one(PaperList).source)
        assert total == len(seeds.papers)
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        triage = _triage(app)
        ids = triage.paper_ids
        assert _progress(app) == f"1 of {total} · 0 kept · 0 skipped"

        await pilot.press("b")  # keep: bookmarked, next
        await pilot.press("r")  # skip: read, next
        await pilot.press("l")  # later: untouched, next
        await pilot.press("t")  # tag: the tag editor on this paper, then stay
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await pilot.press(*"triaged", "enter", "enter")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        assert triage.current_id == ids[3]
        await pilot.press("p")  # back to the paper left for later
        assert triage.current_id == ids[2]
        assert _progress(app) == f"3 of {total} · 1 kept · 1 skipped"

        with Library(_db(tmp_path)) as other:  # another process, same file, while open
            snap = other.snapshot
            assert ids[0] in snap.bookmarks and ids[0] not in snap.read
            assert ids[1] in snap.read and ids[1] not in snap.bookmarks
            assert ids[2] not in snap.read and ids[2] not in snap.bookmarks
            assert snap.tags.get(ids[3]) == ["triaged"]
            assert ids[3] not in snap.read

        # the list behind shows the same state; Esc leaves triage
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TriageScreen))
        assert ids[0] in app.library.snapshot.bookmarks


async def test_u_in_triage_undoes_the_decision_and_returns_to_the_paper(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        triage = _triage(app)
        first, second = triage.paper_ids[:2]
        await pilot.press("b", "r")
        assert "2 kept" not in _progress(app) and "1 kept · 1 skipped" in _progress(app)
        await pilot.press("u")  # undoes the skip: unread again, and shown again
        assert triage.current_id == second
        assert _progress(app).endswith("1 kept · 0 skipped")
        with Library(_db(tmp_path)) as other:
            assert second not in other.snapshot.read
            assert first in other.snapshot.bookmarks
        await pilot.press("u")
        assert triage.current_id == first
        with Library(_db(tmp_path)) as other:
            assert first not in other.snapshot.bookmarks
        assert any("Undone" in n.message for n in app._notifications)


async def test_triage_starts_at_the_current_paper_and_says_when_done(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        last = len(paper_list.source) - 1
        paper_list.move(last, by_user=True)
        await pilot.pause()
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        assert _triage(app).current_id == paper_list.current_id
        await pilot.press("l")
        assert _progress(app).startswith(f"Done: all {last + 1} seen")
        await pilot.press("q")  # q leaves triage, not the reader
        await until(pilot, lambda: not isinstance(app.screen, TriageScreen))
        assert app.is_running


async def test_triage_fits_70x24(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        await pilot.pause()
        triage = _triage(app)
        paper = app.session.corpus.get(triage.current_id or "")
        assert paper is not None
        lines = _screen_text(app)
        assert len(lines) == 24
        assert lines[0].strip().startswith("1 of 55 · 0 kept · 0 skipped")
        text = " ".join(line.strip() for line in lines)
        title_words = app.session.title_of(paper).split()
        assert " ".join(title_words[:4]) in text  # the title, wrapped, not cut
        for label in ("Keep", "Skip", "Tag", "Later", "Back", "Undo", "Leave"):
            assert label in lines[-1], label  # every decision key is in the footer


async def test_undo_after_keeping_an_already_kept_paper_takes_back_the_real_change(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        triage = _triage(app)
        first, second = triage.paper_ids[:2]
        app.library.set_bookmark([second], True)  # kept before triage: b changes nothing
        await pilot.press("r", "b")
        assert _progress(app).endswith("1 kept · 1 skipped")
        await pilot.press("u")  # the skip is the latest change
        assert triage.current_id == first
        assert _progress(app).endswith("1 kept · 0 skipped")
        with Library(_db(tmp_path)) as other:
            assert first not in other.snapshot.read
            assert second in other.snapshot.bookmarks


async def test_triage_shows_a_change_another_process_made_to_the_paper(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        paper_id = _triage(app).current_id
        assert paper_id is not None
        with Library(_db(tmp_path)) as cli:
            cli.add_tags([paper_id], ["fromcli"])
        view = app.screen.query_one(PaperView)
        await until(pilot, lambda: "#fromcli" in view.header.plain)


async def test_help_asked_in_triage_shows_triage_keys_first(tmp_path: Path) -> None:
    """`?` in triage: the help opens on triage's own keys (it showed only the main screen's,
    where b, r and l mean other things); Esc comes back to the same paper."""
    from abstract_reader.tui.screens.help import HelpScreen

    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        current = _triage(app).current_id
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        text = "\n".join(_screen_text(app))
        assert "Triage (this screen)" in text
        first = text.index("Triage (this screen)")
        for words in ("keep: bookmark", "skip: mark it read", "later: leave it unread", "undo"):
            assert words in text[first:], words
        assert first < text.index("Moving")  # before the main screen's keys
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        assert _triage(app).current_id == current
