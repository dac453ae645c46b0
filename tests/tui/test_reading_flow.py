"""The reading flow, with real keys on the bundled dumps: a paper being read never leaves the
screen without a key, a paper reached through the filter becomes read, each dump set keeps its
own place, marked papers go out in the list's order, and `u` names what it undid."""

from __future__ import annotations

from pathlib import Path

import bibtexparser
import pytest
from textual.widgets import Input, Select, TextArea

from abstract_reader.corpus import Corpus
from abstract_reader.library import Library, Metadata
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.editors import TagEditor
from abstract_reader.tui.screens.export import ExportDialog
from abstract_reader.tui.screens.pickers import CopyFallback
from abstract_reader.tui.widgets.paper_list import PaperList

from ..conftest import write_dump
from .conftest import (
    config_file,
    current_title,
    listed,
    make_app,
    pause_index_build,
    settle,
    type_filter,
    until,
    view_text,
)

WIDE = (120, 40)


def _current(app: ReaderApp) -> str | None:
    return app.query_one(PaperList).current_id


def _rows(app: ReaderApp) -> list[str]:
    paper_list = app.query_one(PaperList)
    return [paper_list.source.paper_id(i) for i in range(len(paper_list.source))]


def _status(app: ReaderApp) -> str:
    return str(app.query_one("#status").render())


def _messages(app: ReaderApp) -> list[str]:
    return [n.message for n in app._notifications]


def _quick_auto_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ReaderApp:
    """The reader as the user's config file sets it: auto-read after 0.2 s."""
    config_file(tmp_path, monkeypatch, "auto_read_delay = 0.2\n")
    return make_app(tmp_path, read_delay=None, config=None)


# -- 1. the paper being read stays -------------------------------------------------------------


async def test_auto_read_in_an_unread_view_keeps_the_paper_until_the_query_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _quick_auto_read(tmp_path, monkeypatch)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "is:unread")
        await pilot.press("enter", "j")  # the second unread paper, brought into view by a key
        reading = _current(app)
        title = current_title(app)
        assert reading is not None
        await until(pilot, lambda: reading in app.library.snapshot.read)
        await settle(app, pilot)
        # read now, and so no longer unread: still the paper on screen, where it was
        assert _current(app) == reading
        assert app.query_one(PaperList).cursor == 1
        assert title in view_text(app) and "● unread" not in view_text(app)
        assert reading in _rows(app) and "55 of 55" in _status(app)
        # moving away keeps the result as it is; the next paper becomes read in turn
        await pilot.press("j")
        following = _current(app)
        await until(pilot, lambda: following in app.library.snapshot.read)
        await settle(app, pilot)
        assert _current(app) == following and reading in _rows(app)
        assert app.query_one(PaperList).cursor == 2 and "55 of 55" in _status(app)
        read = set(app.library.snapshot.read)  # (the first too, if Enter's timer ran out)
        assert {reading, following} <= read
        # the query typed again: the papers read are gone from it
        await pilot.press("slash", "backspace", "d", "enter")
        await settle(app, pilot)
        assert not read & set(_rows(app))
        assert f"{55 - len(read)} of 55" in _status(app)


async def test_r_b_and_tags_in_a_reading_list_keep_the_paper_while_others_change_it(
    tmp_path: Path, seeds: Corpus
) -> None:
    ids = [p.id for p in seeds.papers[:4]]
    with Library(tmp_path / "lib.sqlite3") as lib:
        lib.add_tags(ids, ["to-read"])
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "#to-read is:unread")
        await pilot.press("enter")
        assert sorted(_rows(app)) == sorted(ids)
        first = _current(app)
        await pilot.press("r")  # read by hand: stays
        await settle(app, pilot)
        assert _current(app) == first and len(_rows(app)) == 4
        assert first in app.library.snapshot.read
        # its tag removed with the tag editor: still there (shift+tab selects the tag)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await pilot.press("shift+tab", "end", "delete", "tab", "enter")
        await until(pilot, lambda: not app.library.snapshot.tags.get(first or ""))
        await settle(app, pilot)
        assert _current(app) == first and len(_rows(app)) == 4
        # another process's change still shows: a paper it marks read leaves the list
        other = next(i for i in _rows(app) if i != first)
        with Library(tmp_path / "lib.sqlite3") as lib:
            lib.set_read([other])
        await until(pilot, lambda: other not in _rows(app))
        assert _current(app) == first and len(_rows(app)) == 3


async def test_in_unread_first_order_a_paper_just_read_keeps_its_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seeds: Corpus
) -> None:
    with Library(tmp_path / "lib.sqlite3") as lib:  # read ones at the bottom of the order
        lib.set_read([p.id for p in seeds.papers[10:13]])
    app = _quick_auto_read(tmp_path, monkeypatch)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        while app.session.sort != "unread":
            await pilot.press("s")
        await settle(app, pilot)
        order = _rows(app)
        await pilot.press("j")
        reading = _current(app)
        await until(pilot, lambda: reading in app.library.snapshot.read)
        await settle(app, pilot)
        # it did not jump down among the read papers: j goes on to the next unread one
        assert _current(app) == reading and app.query_one(PaperList).cursor == 1
        assert _rows(app) == order
        assert order[2] not in app.library.snapshot.read  # (the next one is unread) …
        await pilot.press("j")
        assert _current(app) == order[2]  # … and j goes on to it


# -- 2. a paper reached through the filter is read ----------------------------------------------


async def test_a_paper_reached_through_the_filter_becomes_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _quick_auto_read(tmp_path, monkeypatch)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "spiking")
        await pilot.press("enter")  # the filter left: its first paper is in the pane
        paper = _current(app)
        await until(pilot, lambda: paper in app.library.snapshot.read, timeout=5)
        assert _current(app) == paper


async def test_a_query_left_before_the_index_is_ready_reads_the_paper_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _quick_auto_read(tmp_path, monkeypatch)
    go_on = pause_index_build(monkeypatch)
    async with app.run_test(size=WIDE) as pilot:
        try:
            await until(pilot, lambda: "indexing 20 / 55" in _status(app), timeout=60)
            await pilot.press("slash", *"spiking", "enter")  # the filter waits for the index
            assert app.main._read_timer is None
        finally:
            go_on.set()
        await until(pilot, lambda: len(_rows(app)) == 2, timeout=60)
        paper = _current(app)
        await until(pilot, lambda: paper in app.library.snapshot.read, timeout=5)
        assert _current(app) == paper


async def test_tagging_the_paper_shown_at_start_up_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _quick_auto_read(tmp_path, monkeypatch)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = _current(app)
        assert app.main._read_timer is None  # shown at start-up: not read
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await pilot.press(*"later", "enter", "enter")
        await until(pilot, lambda: paper in app.library.snapshot.read, timeout=5)
        assert app.library.snapshot.tags.get(paper or "") == ["later"]


# -- 3. each dump set keeps its own place ---------------------------------------------------------


async def test_the_filter_and_paper_are_kept_per_dump_set(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    write_dump(folder / "a.txt", "Zebras are studied here at length.", "Another zebra paper.")
    other = tmp_path / "theirs"
    other.mkdir()
    write_dump(other / "b.txt", "Okapis are a different subject.")

    mine = make_app(tmp_path, [folder])
    async with mine.run_test(size=WIDE) as pilot:
        await settle(mine, pilot)
        await type_filter(mine, pilot, "zebra")
        await pilot.press("enter", "j")
        kept = _current(mine)
        await pilot.press("q")

    for paths in (None, [other]):  # the bundled dumps, another folder: not mine's filter
        app = make_app(tmp_path, paths)
        async with app.run_test(size=WIDE) as pilot:
            await settle(app, pilot)
            assert app.query_one("#filter", Input).value == ""
            assert "No paper matches" not in view_text(app)
            if paths is None:
                assert len(listed(app)) == 55
                await type_filter(app, pilot, "spiking")
                await pilot.press("enter")
            await pilot.press("q")

    again = make_app(tmp_path, [folder])
    async with again.run_test(size=WIDE) as pilot:
        await settle(again, pilot)
        assert again.query_one("#filter", Input).value == "zebra"
        assert _current(again) == kept
    bundled = make_app(tmp_path)
    async with bundled.run_test(size=WIDE) as pilot:  # its own filter, kept meanwhile
        await settle(bundled, pilot)
        assert bundled.query_one("#filter", Input).value == "spiking"
        assert len(listed(bundled)) == 2


# -- 4. marked papers in the list's order ---------------------------------------------------------


async def _by_title_and_all_marked(app: ReaderApp, pilot: object) -> list[str]:
    from textual.pilot import Pilot

    assert isinstance(pilot, Pilot)
    await type_filter(app, pilot, "robust")
    await pilot.press("enter")
    while app.session.sort != "title":
        await pilot.press("s")
    await settle(app, pilot)
    shown = listed(app)
    assert shown == sorted(shown, key=str.casefold) and len(shown) > 2
    await pilot.press("g", *["space"] * len(shown))
    assert len(app.session.marks) == len(shown)
    # the list's order is not the corpus's (what was used before)
    corpus_order = sorted(_rows(app), key=app.session.corpus.index_of)
    assert corpus_order != _rows(app)
    return shown


async def test_c_copies_the_marked_papers_in_the_lists_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("TMUX", raising=False)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        app.library.set_setting("cite_format", "text")  # (each title on its own line)
        shown = await _by_title_and_all_marked(app, pilot)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, CopyFallback))
        text = app.screen.query_one("#copy-text", TextArea).text
        at = [text.find(title) for title in shown]
        assert -1 not in at and at == sorted(at)


async def test_e_exports_the_marked_papers_in_the_lists_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # (a short name to type: the file goes to the current folder)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await _by_title_and_all_marked(app, pilot)
        order = _rows(app)
        await pilot.press("E")
        await until(pilot, lambda: isinstance(app.screen, ExportDialog))
        await pilot.pause()
        assert app.screen.query_one("#export-what", Select).value == "marked"
        target = tmp_path / "marked.bib"
        await pilot.press("end", "ctrl+u", *target.name)
        await pilot.press("enter")
        await until(pilot, lambda: target.exists() and not isinstance(app.screen, ExportDialog))
        entries = bibtexparser.parse_string(target.read_text("utf-8")).entries
        assert [entry["note"].rsplit(" ", 1)[1] for entry in entries] == order


# -- 5. u names what it undid ---------------------------------------------------------------------


async def test_undo_names_the_paper_or_counts_the_papers(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.main.current_paper()
        assert paper is not None
        # a title with markup and a control character: said as text, harmlessly
        title = "[bold]Loud[/] results \x1b[31m on graphs and more words past fifty columns"
        app.library.set_metadata(paper.id, Metadata(title=title))
        app.main.refresh_library()
        await pilot.press("r", "u")
        await pilot.pause()
        said = _messages(app)[-1]
        shown = app.session.title_of(paper)
        assert "\x1b" not in shown
        assert said == f"Undone: read mark on “{shown[:50]}…”"
        assert said.startswith("Undone: read mark on “[bold]Loud[/] results")
        await pilot.press("b", "u")
        await pilot.pause()
        assert _messages(app)[-1] == f"Undone: bookmark on “{shown[:50]}…”"
        await pilot.press("space", "space", "b", "u")  # two marked papers: counted
        await pilot.pause()
        assert _messages(app)[-1] == "Undone: bookmark on 2 papers"
        assert app.is_running
