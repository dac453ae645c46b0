"""Sorting a large corpus by title never stops the reader: the title order is made once, on a
worker, while the keys go on; the list then takes it with its cursor on the same paper, and
every later search is ordered from it without sorting titles again."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from abstract_reader import session as session_module
from abstract_reader import sorting
from abstract_reader.papertable import PaperTable
from abstract_reader.sorting import title_key
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import listed, make_app, settle, until

WIDE = (140, 40)


def _status(app: ReaderApp) -> str:
    return str(app.main.query_one("#status").render())


def _in_title_order(titles: list[str]) -> bool:
    return titles == sorted(titles, key=title_key)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, list[PaperTable]]:
    """The 55 bundled papers count as a large corpus, and the title order waits for a word
    from the test before it is made (the real one, made when the event is set)."""
    monkeypatch.setattr(session_module, "TITLE_ORDER_NOW_MAX", 10)
    release = threading.Event()
    made: list[PaperTable] = []
    real_init = sorting.TitleOrder.__init__

    def waiting_init(
        self: sorting.TitleOrder, papers: PaperTable, step: Callable[[], object]
    ) -> None:
        assert threading.current_thread() is not threading.main_thread()  # a worker's
        assert release.wait(30)
        made.append(papers)
        real_init(self, papers, step)

    monkeypatch.setattr(sorting.TitleOrder, "__init__", waiting_init)
    return release, made


async def test_keys_go_on_while_the_title_order_is_made(
    tmp_path: Path, held: tuple[threading.Event, list[PaperTable]]
) -> None:
    release, made = held
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        dump_order = [p.title for p in app.session.corpus.papers]
        await pilot.press("s")  # relevance → title (no query: no dump-order step)
        await until(pilot, lambda: "sorting by title…" in _status(app))
        assert listed(app) == dump_order  # meanwhile: the order it had
        await pilot.press("j", "j", "j")  # the list still moves …
        await until(pilot, lambda: paper_list.cursor == 3)
        assert paper_list.current_id == app.session.corpus.papers[3].id
        await pilot.press("slash", *"learning")  # … and the filter still filters
        await until(pilot, lambda: app.query_one("#filter").value == "learning")  # type: ignore[attr-defined]
        await until(pilot, lambda: "of 55" in _status(app))
        assert "sorting by title…" in _status(app)
        matching = listed(app)
        matching_ids = [paper_list.source.row(i).paper_id for i in range(len(matching))]
        assert 0 < len(matching) < 55 and not _in_title_order(matching)
        await pilot.press("enter", "escape")  # to the list; Esc clears the filter
        await until(pilot, lambda: len(listed(app)) == 55)
        assert listed(app) == dump_order and "sorting by title…" in _status(app)
        await pilot.press("j", "j")
        await until(pilot, lambda: paper_list.current_id not in (None, matching_ids[0]))
        kept = paper_list.current_id
        assert not made  # nothing was sorted by title yet

        release.set()
        await until(pilot, lambda: "sorted by title" in _status(app))
        assert _in_title_order(listed(app)) and listed(app) != dump_order
        assert paper_list.current_id == kept  # the cursor stayed on its paper
        assert len(made) == 1

        await pilot.press("slash", *"learning")  # a search: ordered from the same order
        await until(pilot, lambda: listed(app) == sorted(matching, key=title_key))
        assert "sorted by title" in _status(app)
        assert len(made) == 1  # made once, not per search


async def test_another_order_chosen_before_the_title_order_is_made(
    tmp_path: Path, held: tuple[threading.Event, list[PaperTable]]
) -> None:
    release, _made = held
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("s")  # title: waits
        await until(pilot, lambda: "sorting by title…" in _status(app))
        await pilot.press("s")  # year, newest first: at once
        await until(pilot, lambda: "sorted by year, newest first" in _status(app))
        by_year = listed(app)
        release.set()
        await settle(app, pilot)
        assert "sorted by year, newest first" in _status(app)  # the late title order:
        assert listed(app) == by_year  # kept, not shown
